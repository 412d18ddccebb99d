import { describe, expect, test } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { Command, END, START, Send, StateGraph, messagesState } from "../../src/graph/index.js";
import type { CheckpointStore } from "../../src/persistence/types.js";
import { chainGraph, harness, logKey } from "./helpers.js";

/** The error a promise rejects with (or a function throws); fails the test when there is none. */
async function errorOf(run: () => unknown): Promise<GraphdockError> {
  let caught: unknown;
  try {
    await run();
  } catch (err) {
    caught = err;
  }
  expect(GraphdockError.is(caught, "invalid_input"), `expected invalid_input, got ${String(caught)}`).toBe(true);
  return caught as GraphdockError;
}

/** Everything the store holds for a thread: checkpoints with their pending writes. */
const contents = async (store: CheckpointStore, threadId: string) => JSON.stringify(await store.listCheckpoints(threadId));

/** START -> a; `w` takes a `Send` argument. */
function sendGraph() {
  return new StateGraph({ log: logKey })
    .addNode("a", () => ({ log: "a" }))
    .addNode("w", (arg: unknown) => ({ log: `w:${String((arg as { n: number }).n)}` }))
    .addEdge(START, "a")
    .compile();
}

/** p1 and p2 each ask one `interrupt()` in the same step. */
function twoAsksGraph() {
  return new StateGraph({ log: logKey })
    .addNode("p1", (_s, ctx) => ({ log: `p1=${ctx.interrupt<string>("p1?")}` }))
    .addNode("p2", (_s, ctx) => ({ log: `p2=${ctx.interrupt<string>("p2?")}` }))
    .addEdge(START, "p1")
    .addEdge(START, "p2")
    .compile();
}

describe("validateInput without a thread (static checks)", () => {
  test("accepts null, undefined, a state object and a Command; refuses any other input, naming the state keys", async () => {
    const g = sendGraph();
    for (const ok of [null, undefined, {}, { log: ["x"] }, new Command({ goto: "a" })]) await g.validateInput(ok);
    for (const bad of [5, "x", ["hi"], true]) {
      const err = await errorOf(() => g.validateInput(bad));
      expect(err.message).toMatch(/must be an object with state keys \(log\)/);
    }
  });

  test("input a state key refuses (messages that cannot be coerced) is refused, naming the key", async () => {
    const g = new StateGraph(messagesState).addNode("n", () => undefined).addEdge(START, "n").compile();
    await g.validateInput({ messages: ["hi", { role: "user", content: "x" }] });
    const err = await errorOf(() => g.validateInput({ messages: [42] }));
    expect(err.message).toContain('"messages"');
  });

  test("Command.goto naming an unknown node is refused in every form, naming the node and the known ones", async () => {
    const g = sendGraph();
    const forms = ["nope", ["a", "nope"], new Send("nope", { n: 1 }), { node: "nope", input: {} }, [{ node: "nope" }]];
    for (const goto of forms) {
      const err = await errorOf(() => g.validateInput(new Command({ goto: goto as never })));
      expect(err.message).toContain('"nope"');
      expect(err.message).toContain("a, w");
    }
    for (const goto of [5, 5n, [null]]) await errorOf(() => g.validateInput(new Command({ goto: goto as never })));
    // As LangGraph, a null goto (the wire form of "none") goes nowhere.
    await g.validateInput(new Command({ goto: null as never }));
    await errorOf(() => g.validateInput(new Command({ goto: new Send(END, {}) })));
    for (const goto of ["a", END, [new Send("w", { n: 1 }), "a"], { node: "w", input: { n: 2 } }]) {
      await g.validateInput(new Command({ goto: goto as never }));
    }
  });

  test("Command.update must be an object or a list of [key, value] pairs; execute applies pairs", async () => {
    const g = sendGraph();
    for (const update of [5, "x", [["log"]], [[1, "x"]], [["log", "a"], ["log", "b"]]]) {
      const err = await errorOf(() => g.validateInput(new Command({ update })));
      expect(err.message).toContain("Command.update");
    }
    await g.validateInput(new Command({ update: { log: "a" } }));
    await g.validateInput(new Command({ update: [["log", "p"]] }));
    const h = harness(g);
    await h.run({});
    const r = await h.run(new Command({ update: [["log", "p"]], goto: "a" }));
    expect(r.values.log).toEqual(["a", "p", "a"]);
  });

  test("breakpoints naming unknown nodes are refused by validateInput, per run by execute (writing nothing) and at compile; '*' passes", async () => {
    const g = chainGraph().compile();
    const err = await errorOf(() => g.validateInput(null, undefined, { interruptBefore: ["b", "zz"] }));
    expect(err.message).toContain('"zz"');
    expect(err.message).not.toContain('"b"');
    await errorOf(() => g.validateInput(null, undefined, { interruptAfter: "all" as never }));
    await g.validateInput(null, undefined, { interruptBefore: "*", interruptAfter: ["a", "c"] });

    const h = harness(g);
    const perRun = await errorOf(() => h.run({}, { interruptAfter: ["zz"] }));
    expect(perRun.message).toContain("interruptAfter");
    expect(await h.store.getCheckpoint({ thread_id: h.threadId })).toBeUndefined();

    await errorOf(() => chainGraph().compile({ interruptAfter: ["zz"] }));
    // A list holding "*" stops before every node, like "*".
    const r = await h.run({}, { interruptBefore: ["*"] });
    expect(r.status).toBe("interrupted");
    expect((await g.getState(h.store, h.threadId)).next).toEqual(["a"]);
  });
});

describe("validateInput against a thread", () => {
  test("resume with nothing to resume, an unknown interrupt id, an ambiguous plain value, an unknown checkpoint: invalid_input, nothing written", async () => {
    const g = twoAsksGraph();
    const h = harness(g);
    const state = { store: h.store, threadId: h.threadId };
    // Without a state the resume cannot be judged, so it passes the static checks.
    await g.validateInput(new Command({ resume: 1 }));
    expect((await errorOf(() => g.validateInput(new Command({ resume: 1 }), state))).message).toContain("no checkpoint");

    await h.run({});
    const snap = await g.getState(h.store, h.threadId);
    const [id1, id2] = snap.interrupts.map((i) => i.id);
    const before = await contents(h.store, h.threadId);

    const ambiguous = await errorOf(() => g.validateInput(new Command({ resume: "?" }), state));
    expect(ambiguous.message).toContain(id1!);
    const unknown = await errorOf(() => g.validateInput(new Command({ resume: { ["f".repeat(32)]: 1 } }), state));
    expect(unknown.message).toContain("f".repeat(32));
    const missing = await errorOf(() => g.validateInput(null, { ...state, checkpointId: "00000000-0000-4000-9000-0000000fffff" }));
    expect(missing.message).toContain("00000000-0000-4000-9000-0000000fffff");
    expect(await contents(h.store, h.threadId)).toBe(before);

    // What validateInput accepts, execute accepts.
    await g.validateInput(new Command({ resume: { [id1!]: "A", [id2!]: "B" } }), state);
    await g.validateInput(null, { ...state, checkpointId: snap.checkpoint_id! });
    expect(await contents(h.store, h.threadId)).toBe(before);
    const r = await h.run(new Command({ resume: { [id1!]: "A", [id2!]: "B" } }));
    expect(r.status).toBe("done");
    expect(r.values.log).toEqual(["p1=A", "p2=B"]);

    const done = await errorOf(() => g.validateInput(new Command({ resume: "late" }), state));
    expect(done.message).toContain("no pending interrupt");
  });

  test("a resume on a forked checkpoint is judged against that checkpoint, not the latest", async () => {
    const g = new StateGraph({ log: logKey, skip: {} as { default?: () => boolean } })
      .addNode("n", (s, ctx) => ({ log: s.skip ? "skipped" : `n=${ctx.interrupt<string>("?")}` }))
      .addEdge(START, "n")
      .compile();
    const h = harness(g);
    await h.run({});
    const interrupted = await g.getState(h.store, h.threadId);
    const id = interrupted.interrupts[0]!.id;
    await h.run({ skip: true });
    const state = { store: h.store, threadId: h.threadId };
    await errorOf(() => g.validateInput(new Command({ resume: { [id]: "A" } }), state));
    await g.validateInput(new Command({ resume: { [id]: "A" } }), { ...state, checkpointId: interrupted.checkpoint_id! });
    await g.validateInput(new Command({ resume: "A" }), { ...state, checkpointId: interrupted.checkpoint_id! });
  });
});

describe("graph building errors", () => {
  test("declaration and compile errors are invalid_input with messages naming the problem", async () => {
    const cases: Array<[() => unknown, RegExp]> = [
      [() => new StateGraph({ __start__: {} }), /reserved/],
      [() => new StateGraph({ a: 5 as never }), /must be declared/],
      [() => new StateGraph({}).addNode("__end__", () => undefined), /reserved/],
      [() => new StateGraph({}).addNode("a", () => undefined).addNode("a", () => undefined), /already present/],
      [() => new StateGraph({}).addNode("a", 5 as never), /must be a function/],
      [() => new StateGraph({}).addEdge(END, "a"), /END cannot be the source/],
      [() => new StateGraph({}).addNode("a", () => undefined).compile(), /no entry point/],
      [() => new StateGraph({}).addNode("a", () => undefined).addEdge(START, "b").compile(), /Edge target "b" is not a node/],
      [() => new StateGraph({}).addNode("a", () => undefined).addEdge(START, "a").addConditionalEdges("a", () => END, { x: "q" }).compile(), /target "q"/],
    ];
    for (const [build, message] of cases) expect((await errorOf(build)).message).toMatch(message);
  });
});
