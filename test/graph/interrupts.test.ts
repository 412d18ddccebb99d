import { describe, expect, test } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { Command, END, GraphRecursionError, START, StateGraph } from "../../src/graph/index.js";
import { chainGraph, harness, logKey, steps } from "./helpers.js";

/** a -> b -> c where b asks `interrupt(question)` `asks` times. */
function askGraph(asks = 1) {
  const calls = { b: 0, answers: [] as unknown[] };
  const g = new StateGraph({ log: logKey, x: {} as { default?: () => unknown } })
    .addNode("a", () => ({ log: "a" }))
    .addNode("b", (s, ctx) => {
      calls.b++;
      const answers: unknown[] = [];
      for (let i = 0; i < asks; i++) answers.push(ctx.interrupt({ q: "ok?", i }));
      calls.answers = answers;
      return { log: `b:${answers.join(",")}:x=${String(s.x)}` };
    })
    .addNode("c", () => ({ log: "c" }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile();
  return { g, calls };
}

describe("static interrupts", () => {
  test("7.6.12: interruptBefore b stops with no step-2 checkpoint; next [b] without interrupts; a null-input run adds steps 2 and 3 only", async () => {
    const g = chainGraph().compile({ interruptBefore: ["b"] });
    const h = harness(g);
    const r = await h.run({});
    expect(r.status).toBe("interrupted");
    expect(r.interrupts).toEqual([]);
    expect(h.events.filter(([m]) => m === "values").at(-1)![1]).toEqual({ __interrupt__: [] });
    const state = await g.getState(h.store, h.threadId);
    expect(state.metadata!.step).toBe(1);
    expect(state.next).toEqual(["b"]);
    expect(state.tasks[0]!.interrupts).toEqual([]);
    const r2 = await h.run(null);
    expect(r2.status).toBe("done");
    const hist = await g.getHistory(h.store, h.threadId);
    expect(steps(hist)).toEqual([
      [3, "loop"],
      [2, "loop"],
      [1, "loop"],
      [0, "loop"],
      [-1, "input"],
    ]);
    expect(r2.values.log).toEqual(["a", "b", "c"]);
  });

  test("7.6.13: interruptAfter a leaves the checkpoint with a's writes as latest, next [b]", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    const r = await h.run({}, { interruptAfter: ["a"] });
    expect(r.status).toBe("interrupted");
    const state = await g.getState(h.store, h.threadId);
    expect(state.values.log).toEqual(["a"]);
    expect(state.next).toEqual(["b"]);
    expect(state.metadata!.writes).toEqual({ a: { log: "a" } });
    // "*" pauses after every node.
    const h2 = harness(g, "t2");
    expect((await h2.run({}, { interruptAfter: "*" })).values.log).toEqual(["a"]);
    expect((await h2.run(null, { interruptAfter: "*" })).values.log).toEqual(["a", "b"]);
  });
});

describe("dynamic interrupts", () => {
  test("7.6.14: interrupt() in b adds no checkpoint; latest is step 1 with next [b] and the interrupt; the output has __interrupt__", async () => {
    const { g } = askGraph();
    const h = harness(g);
    const r = await h.run({});
    expect(r.status).toBe("interrupted");
    expect(r.values.__interrupt__).toEqual([{ value: { q: "ok?", i: 0 }, id: expect.stringMatching(/^[0-9a-f]{32}$/) }]);
    expect(r.interrupts).toEqual(r.values.__interrupt__);
    expect(h.events).toContainEqual(["updates", { __interrupt__: r.interrupts }]);
    const state = await g.getState(h.store, h.threadId);
    expect(state.metadata!.step).toBe(1);
    expect(state.checkpoint_id).toBe(r.checkpointId);
    expect(state.next).toEqual(["b"]);
    expect(state.tasks[0]!.interrupts).toEqual(r.interrupts);
    expect(state.interrupts).toEqual(r.interrupts);
    // What the runtime stores as thread.interrupts: task id -> its interrupts.
    const byTask = Object.fromEntries(state.tasks.filter((t) => t.interrupts.length).map((t) => [t.id, t.interrupts]));
    expect(Object.keys(byTask)).toEqual([state.tasks[0]!.id]);
    expect((await g.getHistory(h.store, h.threadId)).map((s) => s.metadata!.step)).toEqual([1, 0, -1]);
  });

  test("7.6.15: Command({ resume }) re-runs b from its start; interrupt() returns the value; the step-2 entry's parent is step 1, which keeps its interrupt", async () => {
    const { g, calls } = askGraph();
    const h = harness(g);
    const first = await h.run({});
    const r = await h.run(new Command({ resume: "yes" }));
    expect(r.status).toBe("done");
    expect(calls.b).toBe(2);
    expect(calls.answers).toEqual(["yes"]);
    const hist = await g.getHistory(h.store, h.threadId);
    const step2 = hist.find((s) => s.metadata!.step === 2)!;
    const step1 = hist.find((s) => s.metadata!.step === 1)!;
    expect(step2.metadata!.source).toBe("loop");
    expect(step2.parent_checkpoint_id).toBe(step1.checkpoint_id);
    expect(step1.tasks[0]!.interrupts).toEqual(first.interrupts);
    expect(step1.tasks[0]!.result).toBeNull();
    expect(hist.some((s) => s.metadata!.source === "input" && s.metadata!.step > -1)).toBe(false);
  });

  test("7.6.16: two interrupt() calls need two resumes; answers come back in order; the body runs 3 times", async () => {
    const { g, calls } = askGraph(2);
    const h = harness(g);
    await h.run({});
    const r1 = await h.run(new Command({ resume: "A" }));
    expect(r1.status).toBe("interrupted");
    expect(r1.interrupts).toMatchObject([{ value: { q: "ok?", i: 1 } }]);
    const state = await g.getState(h.store, h.threadId);
    expect(state.next).toEqual(["b"]); // deliberate deviation: stays in next after a partial resume
    const r2 = await h.run(new Command({ resume: "B" }));
    expect(r2.status).toBe("done");
    expect(calls.answers).toEqual(["A", "B"]);
    expect(calls.b).toBe(3);
    expect(r2.values.log).toEqual(["a", "b:A,B:x=undefined", "c"]);
  });

  test("7.6.17: p1, p2 interrupt while p3 succeeds; resuming p1 by id never re-runs p3; resuming p2 finishes the step in one checkpoint", async () => {
    const runs = { p1: 0, p2: 0, p3: 0 };
    const g = new StateGraph({ log: logKey })
      .addNode("p1", (_s, ctx) => (runs.p1++, { log: `p1=${ctx.interrupt<string>("p1?")}` }))
      .addNode("p2", (_s, ctx) => (runs.p2++, { log: `p2=${ctx.interrupt<string>("p2?")}` }))
      .addNode("p3", () => (runs.p3++, { log: "p3" }))
      .addEdge(START, "p1")
      .addEdge(START, "p2")
      .addEdge(START, "p3")
      .compile();
    const h = harness(g);
    const r = await h.run({});
    expect(r.interrupts).toHaveLength(2);
    const state = await g.getState(h.store, h.threadId);
    expect(state.values.log).toEqual(["p3"]);
    expect(state.next).toEqual(["p1", "p2"]);
    const id1 = state.tasks.find((t) => t.name === "p1")!.interrupts[0]!.id;
    const id2 = state.tasks.find((t) => t.name === "p2")!.interrupts[0]!.id;
    // A plain value is ambiguous with two pending interrupts.
    const err = await h.run(new Command({ resume: "?" })).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    expect((err as Error).message).toContain(id1);
    const before = (await h.store.listCheckpoints(h.threadId)).length;
    const r1 = await h.run(new Command({ resume: { [id1]: "A" } }));
    expect(r1.status).toBe("interrupted");
    expect(r1.interrupts.map((i) => i.id)).toEqual([id2]);
    expect(runs.p3).toBe(1);
    expect((await g.getState(h.store, h.threadId)).next).toEqual(["p2"]);
    const r2 = await h.run(new Command({ resume: { [id2]: "B" } }));
    expect(r2.status).toBe("done");
    expect(runs.p3).toBe(1);
    expect(runs.p1).toBe(2);
    expect(await h.store.listCheckpoints(h.threadId)).toHaveLength(before + 1);
    expect(r2.values.log).toEqual(["p1=A", "p2=B", "p3"]);
  });

  test("7.6.18: Command({ resume, update }) lets the resumed node see the update, without an input checkpoint", async () => {
    const { g } = askGraph();
    const h = harness(g);
    await h.run({});
    const r = await h.run(new Command({ resume: "R", update: { x: 42 } }));
    expect(r.values.log).toContain("b:R:x=42");
    const hist = await g.getHistory(h.store, h.threadId);
    expect(steps(hist)).toEqual([
      [3, "loop"],
      [2, "loop"],
      [1, "loop"],
      [0, "loop"],
      [-1, "input"],
    ]);
    // The interrupted checkpoint's history entry already shows the update (null writes).
    expect(hist[2]!.values.x).toBe(42);
  });

  test("resume errors: unknown interrupt id, and resume with nothing interrupted, are invalid_input and write nothing", async () => {
    const { g } = askGraph();
    const h = harness(g);
    expect(GraphdockError.is(await h.run(new Command({ resume: 1 })).catch((e: unknown) => e), "invalid_input")).toBe(true);
    await h.run({});
    const bad = await h.run(new Command({ resume: { ["f".repeat(32)]: 1 } })).catch((e: unknown) => e);
    expect(GraphdockError.is(bad, "invalid_input")).toBe(true);
    expect((bad as Error).message).toContain("f".repeat(32));
    const r = await h.run(new Command({ resume: "ok" }));
    expect(r.status).toBe("done");
    const again = await h.run(new Command({ resume: "late" })).catch((e: unknown) => e);
    expect(GraphdockError.is(again, "invalid_input")).toBe(true);
  });

  test("7.6.19: Command({ goto: b }) on a finished thread adds an input entry at step n+1 with next [b], then b runs", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    await h.run({});
    const r = await h.run(new Command({ goto: "b" }));
    const hist = await g.getHistory(h.store, h.threadId);
    const input = hist.find((s) => s.metadata!.step === 4)!;
    expect(input.metadata!.source).toBe("input");
    expect(input.next).toEqual(["b"]);
    expect(r.values.log).toEqual(["a", "b", "c", "b", "c"]);
  });

  test("Command input errors are invalid_input and write nothing; goto accepts the wire form of Send", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("a", () => ({ log: "a" }))
      .addNode("w", (arg: unknown) => ({ log: `w:${String((arg as { n: number }).n)}` }))
      .addEdge(START, "a")
      .compile();
    const h = harness(g);
    await h.run({});
    const count = (await h.store.listCheckpoints(h.threadId)).length;
    for (const cmd of [new Command({ goto: "nope" }), new Command({ update: 5 })]) {
      const err = await h.run(cmd).catch((e: unknown) => e);
      expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    }
    expect(await h.store.listCheckpoints(h.threadId)).toHaveLength(count);
    const r = await h.run(new Command({ goto: [{ node: "w", input: { n: 1 } } as never, "a"] }));
    expect(r.values.log).toEqual(["a", "a", "w:1"]);
  });

  test("7.6.20: a throwing node fails the run with no checkpoint; the state shows the error; a null-input retry re-runs only that node", async () => {
    let failing = true;
    const runs = { ok: 0, flaky: 0 };
    const g = new StateGraph({ log: logKey })
      .addNode("ok", () => (runs.ok++, { log: "ok" }))
      .addNode("flaky", () => {
        runs.flaky++;
        if (failing) throw new RangeError("boom");
        return { log: "flaky" };
      })
      .addEdge(START, "ok")
      .addEdge(START, "flaky")
      .compile();
    const h = harness(g);
    await expect(h.run({})).rejects.toThrow(RangeError);
    const state = await g.getState(h.store, h.threadId);
    expect(state.metadata!.step).toBe(0);
    expect(state.next).toEqual(["flaky"]);
    const task = state.tasks.find((t) => t.name === "flaky")!;
    expect(task.error).toBe("boom");
    failing = false;
    const r = await h.run(null);
    expect(r.status).toBe("done");
    expect(runs).toEqual({ ok: 1, flaky: 2 });
    expect(r.values.log).toEqual(["flaky", "ok"]);
  });

  test("7.6.21: recursion limit 3 on a 3-node chain fails after checkpoints -1..3; limit 4 succeeds", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    const err = await h.run({}, { config: { configurable: {}, recursion_limit: 3 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GraphRecursionError);
    expect(err).toMatchObject({ name: "GraphRecursionError", message: expect.stringContaining("Recursion limit of 3 reached") });
    expect((await g.getHistory(h.store, h.threadId)).map((s) => s.metadata!.step)).toEqual([3, 2, 1, 0, -1]);
    const h2 = harness(g, "t2");
    expect((await h2.run({}, { config: { configurable: {}, recursion_limit: 4 } })).status).toBe("done");
  });
});
