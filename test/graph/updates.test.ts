import { describe, expect, test } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { END, START, StateGraph, messagesState, type Message, type Superstep } from "../../src/graph/index.js";
import { chainGraph, echoGraph, harness, logKey, steps } from "./helpers.js";

const chatGraph = () =>
  new StateGraph(messagesState)
    .addNode("call_model", () => ({ messages: [{ type: "ai", content: "Hello!" }] }))
    .addEdge(START, "call_model")
    .addEdge("call_model", END)
    .compile();

const strip = (messages: unknown) => (messages as Message[]).map(({ id: _id, ...rest }) => rest);

describe("updates and supersteps", () => {
  test("7.6.22: __input__, __start__, call_model supersteps give steps -1, 0, 1 (input, update, update) and a real run's values", async () => {
    const g = chatGraph();
    const h = harness(g);
    const supersteps: Superstep[] = [
      { updates: [{ values: {}, as_node: "__input__" }] },
      { updates: [{ values: { messages: [{ type: "human", content: "hello" }] }, as_node: "__start__" }] },
      { updates: [{ values: { messages: [{ type: "ai", content: "Hello!" }] }, as_node: "call_model" }] },
    ];
    const last = await g.bulkUpdateState(h.store, h.threadId, supersteps, { ids: h.ids, clock: h.clock });
    const hist = (await g.getHistory(h.store, h.threadId)).reverse();
    expect(steps(hist)).toEqual([
      [-1, "input"],
      [0, "update"],
      [1, "update"],
    ]);
    expect(hist.map((s) => s.next)).toEqual([["__start__"], ["call_model"], []]);
    expect(last.checkpoint_id).toBe(hist[2]!.checkpoint_id);
    expect(hist[0]!.parent_checkpoint).toBeNull();
    const real = harness(g, "real");
    const r = await real.run({ messages: [{ role: "user", content: "hello" }] });
    expect(strip(hist[2]!.values.messages)).toEqual(strip(r.values.messages));
  });

  test("7.6.23: a lone __input__ superstep gives one input entry; a null-input run then executes __start__ and call_model", async () => {
    const g = chatGraph();
    const h = harness(g);
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { messages: ["hi"] }, as_node: "__input__" }] }], { ids: h.ids, clock: h.clock });
    const [only] = await g.getHistory(h.store, h.threadId);
    expect(only).toMatchObject({ next: ["__start__"], values: { messages: [] }, metadata: { step: -1, source: "input" } });
    const r = await h.run(null);
    expect(strip(r.values.messages)).toMatchObject([{ type: "human", content: "hi" }, { type: "ai", content: "Hello!" }]);
    expect(steps(await g.getHistory(h.store, h.threadId))).toEqual([
      [1, "loop"],
      [0, "loop"],
      [-1, "input"],
    ]);
  });

  test("7.6.24: an update as __start__ (or without as_node) on an empty thread is step 0, update, no parent, next = START's successors", async () => {
    const g = chatGraph();
    for (const as_node of ["__start__", undefined]) {
      const h = harness(g);
      await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { messages: ["hi"] }, ...(as_node ? { as_node } : {}) }] }], { ids: h.ids, clock: h.clock });
      const state = await g.getState(h.store, h.threadId);
      expect(state).toMatchObject({ next: ["call_model"], parent_checkpoint: null, metadata: { step: 0, source: "update" } });
      expect(state.metadata!.writes).toEqual({ __start__: { messages: [expect.objectContaining({ content: "hi", type: "human" })] } });
    }
  });

  test("7.6.25: without as_node the update goes to the node that ran last; ambiguous after a parallel step; unknown nodes and unnamed multi-updates are refused", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    await h.run({}, { interruptAfter: ["a"] });
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { x: 1 } }] }], { ids: h.ids, clock: h.clock });
    const state = await g.getState(h.store, h.threadId);
    expect(state.metadata!.writes).toEqual({ a: { x: 1 } });
    expect(state.next).toEqual(["b"]);

    const par = new StateGraph({ log: logKey })
      .addNode("b1", () => ({ log: "b1" }))
      .addNode("b2", () => ({ log: "b2" }))
      .addEdge(START, "b1")
      .addEdge(START, "b2")
      .compile();
    const hp = harness(par);
    await hp.run({});
    const count = (await hp.store.listCheckpoints(hp.threadId)).length;
    const refuse = async (supersteps: Superstep[], message: RegExp) => {
      const err = await par.bulkUpdateState(hp.store, hp.threadId, supersteps, { ids: hp.ids, clock: hp.clock }).catch((e: unknown) => e);
      expect(GraphdockError.is(err, "invalid_input")).toBe(true);
      expect((err as Error).message).toMatch(message);
    };
    await refuse([{ updates: [{ values: { log: "x" } }] }], /Ambiguous update/);
    await refuse([{ updates: [{ values: { log: "x" }, as_node: "nope" }] }], /Node "nope" does not exist/);
    await refuse([{ updates: [{ values: { log: "x" }, as_node: "b1" }, { values: { log: "y" } }] }], /each must name its node/);
    // A later bad superstep rolls back the earlier good ones: nothing is written.
    await refuse([{ updates: [{ values: { log: "ok" }, as_node: "b1" }] }, { updates: [{ values: {}, as_node: "nope" }] }], /nope/);
    expect(await hp.store.listCheckpoints(hp.threadId)).toHaveLength(count);
  });

  test("7.6.26: an update as b while b is interrupted adds an update checkpoint with next [c] and no interrupts; continuing runs c", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("a", () => ({ log: "a" }))
      .addNode("b", (_s, ctx) => ({ log: `b=${ctx.interrupt<string>("?")}` }))
      .addNode("c", () => ({ log: "c" }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("b", "c")
      .compile();
    const h = harness(g);
    await h.run({});
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { log: "b=manual" }, as_node: "b" }] }], { ids: h.ids, clock: h.clock });
    const state = await g.getState(h.store, h.threadId);
    expect(state).toMatchObject({ next: ["c"], interrupts: [], metadata: { source: "update", step: 2 } });
    expect(state.tasks.every((t) => t.interrupts.length === 0)).toBe(true);
    const r = await h.run(null);
    expect(r.values.log).toEqual(["a", "b=manual", "c"]);
  });

  test("7.6.27: an update as a node with a conditional edge routes on the state plus the new values", async () => {
    const g = new StateGraph({ mood: {} as { default?: () => string }, log: logKey })
      .addNode("judge", () => ({ mood: "sad" }))
      .addNode("cheer", () => ({ log: "cheer" }))
      .addNode("party", () => ({ log: "party" }))
      .addEdge(START, "judge")
      .addConditionalEdges("judge", (s) => (s.mood === "happy" ? "party" : "cheer"))
      .compile();
    const h = harness(g);
    await h.run({}, { interruptAfter: ["judge"] });
    expect((await g.getState(h.store, h.threadId)).next).toEqual(["cheer"]);
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { mood: "happy" }, as_node: "judge" }] }], { ids: h.ids, clock: h.clock });
    expect((await g.getState(h.store, h.threadId)).next).toEqual(["party"]);
  });

  test("7.6.28: updateState(null, __end__) gives an update entry with next []; __copy__ forks a sibling with step+1 and the same values", async () => {
    const g = chainGraph().compile({ interruptBefore: ["b"] });
    const h = harness(g);
    await h.run({});
    const paused = await g.getState(h.store, h.threadId);
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: null, as_node: "__end__" }] }], { ids: h.ids, clock: h.clock });
    const ended = await g.getState(h.store, h.threadId);
    expect(ended).toMatchObject({ next: [], metadata: { source: "update", step: 2 }, values: paused.values });
    expect((await h.run(null)).values.log).toEqual(["a"]);

    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: null, as_node: "__copy__" }] }], { ids: h.ids, clock: h.clock });
    const fork = await g.getState(h.store, h.threadId);
    expect(fork.metadata).toMatchObject({ source: "fork", step: 3 });
    expect(fork.parent_checkpoint_id).toBe(ended.parent_checkpoint_id);
    expect(fork.values).toEqual(ended.values);
  });

  test("7.6.29: new input while paused before a drops the pending task; the input entry has the old values and next [__start__]", async () => {
    const runs: string[] = [];
    const g = new StateGraph({ log: logKey })
      .addNode("a", () => (runs.push("a"), { log: "a" }))
      .addEdge(START, "a")
      .compile({ interruptBefore: ["a"] });
    const h = harness(g);
    await h.run({ log: "first" });
    expect((await g.getState(h.store, h.threadId)).next).toEqual(["a"]);
    await h.run({ log: "second" });
    const hist = await g.getHistory(h.store, h.threadId);
    const input = hist.find((s) => s.metadata!.step === 1)!;
    expect(input.metadata!.source).toBe("input");
    expect(input.next).toEqual(["__start__"]);
    expect(input.values.log).toEqual(["first"]);
    const state = await g.getState(h.store, h.threadId);
    expect(state.next).toEqual(["a"]);
    expect(state.tasks).toHaveLength(1);
    expect(runs).toEqual([]);
  });

  test("7.6.30: getState at an interrupted step's checkpoint shows the stored values; the latest read adds finished siblings' writes", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("ask", (_s, ctx) => ({ log: `ask=${ctx.interrupt<string>("?")}` }))
      .addNode("done", () => ({ log: "done" }))
      .addEdge(START, "ask")
      .addEdge(START, "done")
      .compile();
    const h = harness(g);
    await h.run({});
    const latest = await g.getState(h.store, h.threadId);
    const at = await g.getState(h.store, h.threadId, { checkpointId: latest.checkpoint_id! });
    expect(latest.values.log).toEqual(["done"]);
    expect(latest.next).toEqual(["ask"]);
    expect(at.values.log).toEqual([]);
    expect(at.next).toEqual(["ask", "done"]);
    expect(at.tasks.find((t) => t.name === "done")!.result).toEqual({ log: "done" });
    await expect(g.getState(h.store, h.threadId, { checkpointId: "00000000-0000-4000-9000-0000000fffff" })).rejects.toMatchObject({ code: "not_found" });
  });

  test("one superstep of two updates, as b1 and as b2, while paused before them: one checkpoint with both writes, next [c]", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("b1", () => ({ log: "b1" }))
      .addNode("b2", () => ({ log: "b2" }))
      .addNode("c", () => ({ log: "c" }))
      .addEdge(START, "b1")
      .addEdge(START, "b2")
      .addEdge(["b1", "b2"], "c")
      .compile({ interruptBefore: ["b1", "b2"] });
    const h = harness(g);
    await h.run({});
    const count = (await h.store.listCheckpoints(h.threadId)).length;
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { log: "x1" }, as_node: "b1" }, { values: { log: "x2" }, as_node: "b2" }] }], { ids: h.ids, clock: h.clock });
    expect(await h.store.listCheckpoints(h.threadId)).toHaveLength(count + 1);
    const state = await g.getState(h.store, h.threadId);
    expect(state.values.log).toEqual(["x1", "x2"]);
    expect(state.next).toEqual(["c"]);
    expect(state.metadata!.writes).toEqual({ b1: { log: "x1" }, b2: { log: "x2" } });
    expect((await h.run(null)).values.log).toEqual(["x1", "x2", "c"]);
  });

  test("forking: a run from an older checkpointId continues from it, and the new entry's parent is that checkpoint", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run({ messages: ["one"] });
    const first = await g.getState(h.store, h.threadId);
    await h.run({ messages: ["two"] });
    const r = await h.run({ messages: ["three"] }, { checkpointId: first.checkpoint_id! });
    expect((r.values.messages as Message[]).map((m) => m.content)).toEqual(["one", "echo: one", "three", "echo: three"]);
    const hist = await g.getHistory(h.store, h.threadId, { limit: 3 });
    expect(hist[2]!.parent_checkpoint_id).toBe(first.checkpoint_id);
  });
});
