import { describe, expect, test } from "vitest";
import { END, START, StateGraph, Send, copyThreadOps, type StateSnapshot } from "../../src/graph/index.js";
import { chainGraph, echoGraph, harness, logKey, steps } from "./helpers.js";

const hi = { messages: [{ role: "user", content: "hi" }] };

describe("run history", () => {
  test("7.6.1: an echo run leaves steps 1, 0, -1 (loop, loop, input) with next [], [echo], [__start__]", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run(hi);
    const hist = await g.getHistory(h.store, h.threadId);
    expect(steps(hist)).toEqual([
      [1, "loop"],
      [0, "loop"],
      [-1, "input"],
    ]);
    expect(hist.map((s) => s.next)).toEqual([[], ["echo"], ["__start__"]]);
  });

  test("7.6.2: each entry's parent is the entry after it; the oldest has none; ids sort in creation order", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run(hi);
    await h.run(hi);
    const hist = await g.getHistory(h.store, h.threadId);
    expect(hist).toHaveLength(6);
    for (let i = 0; i < hist.length - 1; i++) {
      expect(hist[i]!.parent_checkpoint!.checkpoint_id).toBe(hist[i + 1]!.checkpoint_id);
      expect(hist[i]!.parent_checkpoint_id).toBe(hist[i + 1]!.checkpoint_id);
      expect(hist[i]!.checkpoint_id! > hist[i + 1]!.checkpoint_id!).toBe(true);
    }
    expect(hist[5]!.parent_checkpoint).toBeNull();
    expect(hist[5]!.parent_checkpoint_id).toBeNull();
  });

  test("7.6.3: the input entry holds the default values and the __start__ task's result; step 0 shows echo's ai result", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run(hi);
    const [last, mid, first] = await g.getHistory(h.store, h.threadId);
    expect(first!.values).toEqual({ messages: [] });
    expect(first!.tasks).toHaveLength(1);
    const start = first!.tasks[0]!;
    expect(start).toMatchObject({ name: "__start__", path: ["__pregel_pull", "__start__"], interrupts: [], error: null });
    expect((start.result as { messages: Array<{ content: string; type: string }> }).messages).toMatchObject([{ content: "hi", type: "human" }]);
    expect(mid!.tasks[0]!.name).toBe("echo");
    expect((mid!.tasks[0]!.result as { messages: Array<{ type: string }> }).messages[0]!.type).toBe("ai");
    expect(last!.tasks).toEqual([]);
    expect(first!.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("7.6.4: task ids are stable across getState and history reads", async () => {
    const g = chainGraph().compile({ interruptBefore: ["b"] });
    const h = harness(g);
    await h.run({});
    const s1 = await g.getState(h.store, h.threadId);
    const s2 = await g.getState(h.store, h.threadId);
    const [latest] = await g.getHistory(h.store, h.threadId, { limit: 1 });
    expect(s1.tasks[0]!.id).toBe(s2.tasks[0]!.id);
    expect(latest!.tasks[0]!.id).toBe(s1.tasks[0]!.id);
    expect(s1.tasks[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The task that then runs writes against that same id.
    await h.run(null);
    const stored = await h.store.getCheckpoint({ thread_id: h.threadId, checkpoint_id: s1.checkpoint_id! });
    expect(stored!.pending_writes.map((w) => w[0])).toContain(s1.tasks[0]!.id);
  });

  test("7.6.8: a second run adds an input entry at step 2 with the previous final values, then loop steps 3 and 4", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    const first = await h.run(hi);
    await h.run({ messages: [{ role: "user", content: "again" }] });
    const hist = await g.getHistory(h.store, h.threadId);
    expect(steps(hist.slice(0, 3))).toEqual([
      [4, "loop"],
      [3, "loop"],
      [2, "input"],
    ]);
    expect(hist[2]!.values).toEqual(first.values);
    expect(hist[2]!.next).toEqual(["__start__"]);
    expect((hist[0]!.values.messages as unknown[]).length).toBe(4);
  });
});

describe("copy, metadata, ordering", () => {
  test("copyThreadOps copies every checkpoint namespace, with pending writes", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run(hi);
    const latest = (await h.store.getCheckpoint({ thread_id: h.threadId }))!;
    const sub = (id: string, parent: string | null) => ({ ...latest, checkpoint_ns: "child:task", checkpoint: { ...latest.checkpoint, id }, parent_checkpoint_id: parent, metadata: { ...latest.metadata, thread_id: h.threadId } });
    await h.store.commit([
      { op: "checkpoint.put", checkpoint: sub("s1", null) },
      { op: "checkpoint.put", checkpoint: sub("s2", "s1") },
      { op: "writes.put", thread_id: h.threadId, checkpoint_ns: "child:task", checkpoint_id: "s2", task_id: "k", writes: [["k", "messages", "w"]] },
    ]);
    await h.store.commit(await copyThreadOps(h.store, h.threadId, "copy"));
    expect(await h.store.listCheckpointNamespaces("copy")).toEqual(["", "child:task"]);
    const copied = await h.store.listCheckpoints("copy", { checkpoint_ns: "child:task" });
    expect(copied.map((c) => [c.checkpoint.id, c.parent_checkpoint_id, c.thread_id, c.metadata.thread_id])).toEqual([
      ["s2", "s1", "copy", "copy"],
      ["s1", null, "copy", "copy"],
    ]);
    expect(copied[0]!.pending_writes).toEqual([["k", "messages", "w"]]);
    expect((await h.store.listCheckpoints("copy")).map((c) => c.checkpoint.id)).toEqual((await h.store.listCheckpoints(h.threadId)).map((c) => c.checkpoint.id));
  });

  test("7.6.31: a copied thread has the same history (ids, values, next) under the new thread id, and runs on it leave the original alone", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run(hi);
    await h.store.commit(await copyThreadOps(h.store, h.threadId, "copy"));
    const orig = await g.getHistory(h.store, h.threadId);
    const copy = await g.getHistory(h.store, "copy");
    expect(copy.map((s) => s.checkpoint_id)).toEqual(orig.map((s) => s.checkpoint_id));
    expect(copy.map((s) => s.values)).toEqual(orig.map((s) => s.values));
    expect(copy.map((s) => s.next)).toEqual(orig.map((s) => s.next));
    expect(copy.map((s) => s.tasks)).toEqual(orig.map((s) => s.tasks));
    expect(copy.every((s) => s.metadata!.thread_id === "copy" && s.checkpoint!.thread_id === "copy")).toBe(true);
    await g.execute({ store: h.store, threadId: "copy", input: hi, config: { configurable: {} }, ids: h.ids, clock: h.clock });
    expect(await g.getHistory(h.store, "copy")).toHaveLength(6);
    expect(await g.getHistory(h.store, h.threadId)).toEqual(orig);
  });

  test("7.6.32: metadata has parents {} and the run metadata; writes follow the legacy meaning", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    await h.run({ x: 7 }, { config: { configurable: {}, metadata: { graph_id: "chain", run_id: "r1" } } });
    const hist = await g.getHistory(h.store, h.threadId);
    for (const s of hist) expect(s.metadata).toMatchObject({ parents: {}, graph_id: "chain", run_id: "r1", thread_id: h.threadId, checkpoint_id: s.checkpoint_id });
    const byStep = new Map(hist.map((s) => [s.metadata!.step, s.metadata!.writes]));
    expect(byStep.get(-1)).toEqual({ __start__: { x: 7 } });
    expect(byStep.get(0)).toBeNull();
    expect(byStep.get(1)).toEqual({ a: { log: "a" } });
    await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { x: 9 }, as_node: "b" }] }], { ids: h.ids, clock: h.clock, metadata: { graph_id: "chain" } });
    const [upd] = await g.getHistory(h.store, h.threadId, { limit: 1 });
    expect(upd!.metadata).toMatchObject({ source: "update", writes: { b: { x: 9 } }, graph_id: "chain", parents: {} });
  });

  test("7.6.33: history paginates newest-first with limit and before, and filters on metadata", async () => {
    const g = chainGraph().compile();
    const h = harness(g);
    await h.run({});
    const all = await g.getHistory(h.store, h.threadId);
    expect(all.map((s) => s.metadata!.step)).toEqual([3, 2, 1, 0, -1]);
    const page1 = await g.getHistory(h.store, h.threadId, { limit: 2 });
    const page2 = await g.getHistory(h.store, h.threadId, { limit: 2, before: page1[1]!.checkpoint_id! });
    expect([...page1, ...page2].map((s) => s.checkpoint_id)).toEqual(all.slice(0, 4).map((s) => s.checkpoint_id));
    const loops = await g.getHistory(h.store, h.threadId, { filter: { source: "loop" } });
    expect(loops.map((s) => s.metadata!.step)).toEqual([3, 2, 1, 0]);
    const fromOld = await g.getHistory(h.store, h.threadId, { checkpointId: all[2]!.checkpoint_id!, limit: 2 });
    expect(fromOld.map((s) => s.metadata!.step)).toEqual([1, 0]);
  });

  test("history asks the store for only `limit` checkpoints", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    for (let i = 0; i < 5; i++) await h.run(hi);
    const asked: unknown[] = [];
    const spy = { ...h.store, getCheckpoint: h.store.getCheckpoint.bind(h.store), commit: h.store.commit.bind(h.store), listCheckpoints: (t: string, o?: object) => (asked.push(o), h.store.listCheckpoints(t, o)) };
    const page = await g.getHistory(spy, h.threadId, { limit: 2, filter: { source: "loop" } });
    expect(page).toHaveLength(2);
    expect(asked).toEqual([{ checkpoint_ns: "", limit: 2, filter: { source: "loop" } }]);
  });

  test("7.6.34: snapshots list tasks in declaration order (__start__ first), the loop in sorted order, Send tasks first", async () => {
    // Declared z before y: the snapshot keeps declaration order, the loop starts them sorted.
    const g = new StateGraph({ log: logKey })
      .addNode("z", () => ({ log: "z" }))
      .addNode("y", () => ({ log: "y" }))
      .addNode("w", (s: unknown) => ({ log: `w:${String((s as { n: number }).n)}` }))
      .addConditionalEdges(START, () => ["z", "y", new Send("w", { n: 1 }), new Send("w", { n: 2 })])
      .compile({ interruptBefore: ["z"] });
    const h = harness(g);
    await h.run({});
    const state = await g.getState(h.store, h.threadId);
    expect(state.next).toEqual(["w", "w", "z", "y"]);
    expect(state.tasks.map((t) => t.path)).toEqual([
      ["__pregel_push", 0],
      ["__pregel_push", 1],
      ["__pregel_pull", "z"],
      ["__pregel_pull", "y"],
    ]);
    const started: string[] = [];
    await h.run(null, { emit: (mode, data) => mode === "tasks" && "input" in (data as object) && started.push((data as { name: string }).name) });
    expect(started).toEqual(["w", "w", "y", "z"]);
    const final = await g.getState(h.store, h.threadId);
    // Reducer order follows task paths: pulls by name, then pushes by index.
    expect(final.values.log).toEqual(["y", "z", "w:1", "w:2"]);
  });
});

test("supersteps __input__, __start__, then a node give steps -1, 0, 1", async () => {
  const g = new StateGraph({ messages: { reducer: (a: unknown[], b: unknown[]) => [...a, ...b], default: () => [] as unknown[] } })
    .addNode("call_model", () => ({ messages: ["x"] }))
    .addEdge(START, "call_model")
    .addEdge("call_model", END)
    .compile();
  const h = harness(g);
  await g.bulkUpdateState(
    h.store,
    h.threadId,
    [
      { updates: [{ values: {}, as_node: "__input__" }] },
      { updates: [{ values: { messages: ["hello"] }, as_node: "__start__" }] },
      { updates: [{ values: { messages: ["Hello!"] }, as_node: "call_model" }] },
    ],
    { ids: h.ids, clock: h.clock },
  );
  const hist: StateSnapshot[] = (await g.getHistory(h.store, h.threadId)).reverse();
  expect(steps(hist)).toEqual([
    [-1, "input"],
    [0, "update"],
    [1, "update"],
  ]);
  expect(hist.at(-1)!.values).toEqual({ messages: ["hello", "Hello!"] });
  // Command as an update value is accepted too.
  await g.bulkUpdateState(h.store, h.threadId, [{ updates: [{ command: { goto: "call_model" }, as_node: "__start__" }] }], { ids: h.ids, clock: h.clock });
  expect((await g.getState(h.store, h.threadId)).next).toEqual(["call_model"]);
});

test("works over a store that serializes what it stores (JSON round trip, nothing frozen)", async () => {
  const g = echoGraph().compile();
  const h = harness(g);
  const inner = h.store;
  const json = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
  const store = {
    commit: (ops: Parameters<typeof inner.commit>[0]) => inner.commit(json(ops)),
    getCheckpoint: async (key: Parameters<typeof inner.getCheckpoint>[0]) => json(await inner.getCheckpoint(key)),
    listCheckpoints: async (t: string, o?: Parameters<typeof inner.listCheckpoints>[1]) => json(await inner.listCheckpoints(t, o)),
    listCheckpointNamespaces: (t: string) => inner.listCheckpointNamespaces(t),
  };
  const reference = harness(g, "ref");
  for (let i = 0; i < 40; i++) {
    await g.execute({ store, threadId: "t", input: { messages: [`m${i}`] }, config: { configurable: {} }, ids: h.ids, clock: h.clock });
    await reference.run({ messages: [`m${i}`] });
  }
  const a = await g.getState(store, "t");
  const b = await g.getState(reference.store, reference.threadId);
  const contents = (s: StateSnapshot) => (s.values.messages as Array<{ content: string }>).map((m) => m.content);
  expect(contents(a)).toEqual(contents(b));
  expect(contents(a)).toHaveLength(80);
  expect((await g.getHistory(store, "t", { limit: 3 })).map((s) => s.next)).toEqual([[], ["echo"], ["__start__"]]);
});
