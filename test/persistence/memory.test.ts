import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { MAX_DEPTH, checkJson } from "../../src/json.js";
import { MemoryRunEvents } from "../../src/persistence/memory-events.js";
import { MemoryData, MemoryStore, memoryStore } from "../../src/persistence/memory.js";
import type { RunEventRecord } from "../../src/persistence/types.js";
import { checkpoint, cpId, messages, storeContract, thread } from "./contract.js";

storeContract({
  name: "memoryStore",
  create: async () => {
    const store = memoryStore();
    await store.open();
    return store;
  },
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Exposes the data of a memory store to look at how it holds checkpoints. */
class InspectableStore extends MemoryStore {
  get inner(): MemoryData {
    return this.data;
  }
}

const storedMessages = (store: InspectableStore, threadId: string, i: number) =>
  store.inner.checkpoints.get(threadId)!.list[i]!.channel_values.messages as unknown;

describe("checkJson", () => {
  const problem = (value: unknown, where = "v") => {
    try {
      checkJson(value, where);
    } catch (err) {
      expect(GraphdockError.is(err, "invalid_input")).toBe(true);
      return (err as GraphdockError).problems![0]!;
    }
    return undefined;
  };

  it("accepts JSON, undefined properties and objects without a prototype", () => {
    expect(problem({ a: [1, "x", null, true, { b: -0.5 }], c: undefined })).toBeUndefined();
    expect(problem(Object.assign(Object.create(null), { a: 1 }))).toBeUndefined();
    expect(problem(Object.freeze({ a: Object.freeze([1]) }))).toBeUndefined();
    expect(problem("plain")).toBeUndefined();
  });

  it("names the path of the first problem", () => {
    expect(problem({ a: [1, { f: () => 1 }] })).toEqual({ path: "v.a[1].f", message: "is a function, which JSON cannot hold" });
    expect(problem({ "odd key": [Number.NaN] }, "doc")?.path).toBe('doc["odd key"][0]');
    expect(problem([undefined])?.message).toMatch(/undefined/);
    expect(problem({ n: BigInt(1) })?.message).toMatch(/bigint/);
    expect(problem({ d: new Date(0) })?.message).toMatch(/a Date, not a plain object/);
    expect(problem(new Map())?.message).toMatch(/a Map/);
    expect(problem({ s: Symbol("x") })?.message).toMatch(/symbol/);
    expect(problem(Number.NEGATIVE_INFINITY)?.message).toMatch(/-Infinity/);
  });

  it("tells cycles from deep nesting, and allows exactly MAX_DEPTH levels", () => {
    const cycle: Record<string, unknown> = {};
    cycle.next = [cycle];
    expect(problem(cycle)?.message).toMatch(/cycle/);
    const nest = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(problem(nest(MAX_DEPTH))).toBeUndefined();
    expect(problem(nest(MAX_DEPTH + 1))?.message).toBe(`nests deeper than ${MAX_DEPTH} levels`);
    expect(problem(nest(100_000))?.message).toMatch(/nests deeper/);
    // A value placed deeper has fewer levels left.
    expect(() => checkJson(nest(MAX_DEPTH - 2), "v", 2)).not.toThrow();
    expect(() => checkJson(nest(MAX_DEPTH - 1), "v", 2)).toThrow(/nests deeper/);
  });
});

describe("memory store: shared array prefixes", () => {
  it("keeps a growing list once: each checkpoint refers to a prefix of one log", async () => {
    const store = new InspectableStore();
    let msgs: readonly unknown[] = [];
    const cps = [];
    for (let i = 0; i < 30; i++) {
      msgs = Object.freeze([...msgs, Object.freeze({ id: `m${i}` })]);
      cps.push(checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: msgs }));
      await store.commit([{ op: "checkpoint.put", checkpoint: cps[i]! }]);
    }
    const first = storedMessages(store, "t1", 1) as { log: unknown[]; n: number };
    const last = storedMessages(store, "t1", 29) as { log: unknown[]; n: number };
    expect(Array.isArray(first)).toBe(false);
    expect(last.log).toBe(first.log);
    expect([first.n, last.n, last.log.length]).toEqual([2, 30, 30]);
    // Reads are plain frozen arrays, equal to what was put, sharing the items.
    const read = (await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(10) }))!.checkpoint.channel_values.messages as unknown[];
    expect(read).toEqual(cps[10]!.checkpoint.channel_values.messages);
    expect(Object.isFrozen(read)).toBe(true);
    expect(read[3]).toBe(msgs[3]);
    // The latest reads back cheaply: twice the same object.
    const a = await store.getCheckpoint({ thread_id: "t1" });
    expect(await store.getCheckpoint({ thread_id: "t1" })).toBe(a);
  });

  it("starts a new log for a fork whose items differ, and leaves the old one intact", async () => {
    const store = new InspectableStore();
    const base = (n: number) => messages(n);
    for (let i = 0; i < 5; i++) await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: base(i + 1) }) }]);
    // Fork from checkpoint 2 (3 items) with a different 4th item.
    const fork = checkpoint("t1", cpId(10), cpId(2), { messages: [...base(3), { id: "other" }, { id: "more" }] });
    // And a sibling of checkpoint 3 that agrees with the log: it reuses it.
    const sibling = checkpoint("t1", cpId(11), cpId(2), { messages: base(4) });
    await store.commit([{ op: "checkpoint.put", checkpoint: fork }, { op: "checkpoint.put", checkpoint: sibling }]);
    const main = storedMessages(store, "t1", 4) as { log: unknown[] };
    const forked = storedMessages(store, "t1", 5) as { log: unknown[] };
    const sib = storedMessages(store, "t1", 6) as { log: unknown[] };
    expect(forked.log).not.toBe(main.log);
    expect(sib.log).toBe(main.log);
    expect(main.log).toHaveLength(5);
    for (let i = 0; i < 5; i++) {
      expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(i) }))!.checkpoint.channel_values.messages).toEqual(base(i + 1));
    }
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(10) }))!.checkpoint).toEqual(fork.checkpoint);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(11) }))!.checkpoint).toEqual(sibling.checkpoint);
  });

  it("shares by JSON equality when identities differ (data that went through JSON)", async () => {
    const store = new InspectableStore();
    for (let i = 0; i < 4; i++) {
      const cp = JSON.parse(JSON.stringify(checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: messages(i + 1) })));
      await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    }
    expect((storedMessages(store, "t1", 3) as { log: unknown[] }).log).toBe((storedMessages(store, "t1", 1) as { log: unknown[] }).log);
    expect((await store.getCheckpoint({ thread_id: "t1" }))!.checkpoint.channel_values.messages).toEqual(messages(4));
  });

  it("undoes appends to a log when the commit fails", async () => {
    const store = new InspectableStore();
    for (let i = 0; i < 3; i++) await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: messages(i + 1) }) }]);
    const log = (storedMessages(store, "t1", 2) as { log: unknown[] }).log;
    await expect(
      store.commit([
        { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(3), cpId(2), { messages: messages(4) }) },
        { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(4), cpId(3), { messages: [...messages(4), { bad: () => 1 }] }) },
      ]),
    ).rejects.toThrow(/checkpoint\.checkpoint\.channel_values\.messages\[4\]\.bad is a function/);
    expect(log).toHaveLength(3);
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(3), cpId(2), { messages: [...messages(3), { id: "x" }] }) }]);
    expect((await store.getCheckpoint({ thread_id: "t1" }))!.checkpoint.channel_values.messages).toEqual([...messages(3), { id: "x" }]);
  });

  it("checks thread values that mirror the latest checkpoint without walking them again, but checks new ones", async () => {
    const store = new InspectableStore();
    const msgs = Object.freeze(messages(3).map((m) => Object.freeze(m)));
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(0), null, { messages: msgs }) }]);
    await store.commit([{ op: "thread.put", thread: thread("t1", { values: { messages: msgs } }) }]);
    const err = await store.commit([{ op: "thread.put", thread: thread("t1", { values: { messages: [...msgs, { n: Number.NaN }] } }) }]).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    expect((err as Error).message).toMatch(/thread\.values\.messages\[3\]\.n is NaN/);
  });
});

describe("memory store: checkpoint ids", () => {
  const ids = (cps: readonly { checkpoint: { id: string } }[]) => cps.map((c) => c.checkpoint.id);

  it("keeps canonical UUID ids short until another id is put, and hands back every id as given", async () => {
    const store = new InspectableStore();
    const space = () => store.inner.checkpoints.get("t1")!;
    // A parent that is not stored, in a form other than canonical.
    const upper = cpId(99).toUpperCase();
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(0), upper, { messages: messages(1) }) }]);
    for (let i = 1; i < 3; i++) await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(i), cpId(i - 1), { messages: messages(i + 1) }) }]);
    expect(space().compact).toBe(true);
    expect(space().list[1]!.id).toHaveLength(8);
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1).toUpperCase() })).toBeUndefined();
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: space().list[1]!.id })).toBeUndefined();
    // A failed put of another id changes nothing.
    await expect(
      store.commit([
        { op: "checkpoint.put", checkpoint: checkpoint("t1", "odd", cpId(2), { messages: messages(4) }) },
        { op: "writes.put", thread_id: "t1", checkpoint_id: "no-such", task_id: "task", writes: [] },
      ]),
    ).rejects.toThrow(/no such checkpoint/);
    expect(space().compact).toBe(true);
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", "odd", cpId(2), { messages: messages(4) }) }]);
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(3), "odd", { messages: messages(5) }) }]);
    expect(space().compact).toBe(false);
    const listed = await store.listCheckpoints("t1");
    expect(ids(listed)).toEqual([cpId(3), "odd", cpId(2), cpId(1), cpId(0)]);
    expect(listed.map((c) => c.parent_checkpoint_id)).toEqual(["odd", cpId(2), cpId(1), cpId(0), upper]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) }))?.checkpoint.id).toBe(cpId(1));
    expect(ids(await store.listCheckpoints("t1", { before: cpId(2) }))).toEqual([cpId(1), cpId(0)]);
  });

  it("finds checkpoints by id with no index while ids ascend, and with one once they do not", async () => {
    const store = new InspectableStore();
    for (let i = 0; i < 4; i++) await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: messages(i + 1) }) }]);
    expect(store.inner.checkpoints.get("t1")!.index).toBeUndefined();
    // Ids that do not sort in put order (a client's own ids): a put that lands below the last.
    const odd = ["z-last", "a-first", "m-middle"];
    let parent = cpId(3);
    for (const id of odd) {
      await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", id, parent, { messages: messages(5) }) }]);
      parent = id;
    }
    expect(store.inner.checkpoints.get("t1")!.index).toBeDefined();
    for (const id of [cpId(0), cpId(2), ...odd]) expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: id }))?.checkpoint.id).toBe(id);
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "b-absent" })).toBeUndefined();
    expect(ids(await store.listCheckpoints("t1", { before: "a-first" }))).toEqual(["z-last", cpId(3), cpId(2), cpId(1), cpId(0)]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "a-first" }))?.parent_checkpoint_id).toBe("z-last");
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: "a-first", task_id: "task", writes: [["task", "messages", 1]] }]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "a-first" }))?.pending_writes).toEqual([["task", "messages", 1]]);
    // A failed commit takes its put back out of the index too.
    await expect(
      store.commit([
        { op: "checkpoint.put", checkpoint: checkpoint("t1", "b-failed", "m-middle", { messages: messages(5) }) },
        { op: "writes.put", thread_id: "t1", checkpoint_id: "no-such", task_id: "task", writes: [] },
      ]),
    ).rejects.toThrow(/no such checkpoint/);
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "b-failed" })).toBeUndefined();
    expect(ids(await store.listCheckpoints("t1", { limit: 1 }))).toEqual(["m-middle"]);
    // Deleting the checkpoints out of order leaves ascending ids: found without an index again.
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: ["z-last", "a-first", "m-middle"] }]);
    expect(store.inner.checkpoints.get("t1")!.index).toBeUndefined();
    for (let i = 0; i < 4; i++) expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(i) }))?.checkpoint.id).toBe(cpId(i));
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "a-first" })).toBeUndefined();
  });

  it("hands back a checkpoint with other keys, or its keys in another order, exactly as put", async () => {
    const store = new InspectableStore();
    const puts = [];
    for (let i = 0; i < 4; i++) {
      const base = checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: messages(i + 1), n: i });
      const { v, id, ts, channel_values, channel_versions, versions_seen } = base.checkpoint;
      // Another order, and a key the engine does not write (as a LangGraph.js checkpoint may have).
      const cp = i % 2 ? { id, v, ts, channel_versions, versions_seen, channel_values, pending_sends: [] } : { v, id, ts, channel_values, channel_versions, versions_seen, extra: { i } };
      puts.push({ ...base, checkpoint: cp as typeof base.checkpoint });
      await store.commit([{ op: "checkpoint.put", checkpoint: puts[i]! }]);
    }
    // The growing list is still shared between them.
    expect(Array.isArray(storedMessages(store, "t1", 3))).toBe(false);
    for (let i = 0; i < 4; i++) {
      const read = await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(i) });
      expect(JSON.stringify(read)).toBe(JSON.stringify(puts[i]));
    }
    expect((await store.listCheckpoints("t1")).map((c) => JSON.stringify(c))).toEqual(puts.map((c) => JSON.stringify(c)).reverse());
  });

  it("keeps pending writes per task, replacing a task's earlier writes", async () => {
    const store = new InspectableStore();
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(0), null, { messages: messages(1) }) }]);
    const write = (task: string, writes: [string, string, unknown][]) =>
      store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: task, writes }]);
    await write("a", [["a", "x", 1]]);
    await write("b", [["b", "x", 2], ["b", "y", 3]]);
    await write("a", [["a", "x", 4]]);
    const read = (await store.getCheckpoint({ thread_id: "t1" }))!.pending_writes;
    expect(read).toEqual([["b", "x", 2], ["b", "y", 3], ["a", "x", 4]]);
    expect(Object.isFrozen(read)).toBe(true);
  });
});

describe("memory store: checkpoint metadata", () => {
  it("keeps the metadata a thread's checkpoints share once, and hands back each checkpoint's as put", async () => {
    const store = new InspectableStore();
    const parents = Object.freeze({});
    const run = (runId: string, by = "system") => ({ created_by: by, run_id: runId, run_attempt: 1 });
    const metas = [
      { ...run("r1"), source: "input", step: -1, parents, writes: { __start__: { messages: [] } } },
      { ...run("r1"), source: "loop", step: 0, parents, writes: null },
      { ...run("r1"), source: "loop", step: 1, parents, writes: { echo: { n: 1 } } },
      // Another run: the same base.
      { ...run("r2"), source: "input", step: 2, parents, writes: null },
      // Children of the last with their keys in another order, an extra key, an object equal but
      // not the same, another value, a source or a step the engine does not write: kept whole.
      { run_id: "r2", created_by: "system", run_attempt: 1, source: "loop", step: 3, parents, writes: null },
      { ...run("r2"), source: "loop", step: 3, parents, writes: null, extra: true },
      { ...run("r2"), source: "loop", step: 3, parents: {}, writes: null },
      { ...run("r2", "user"), source: "loop", step: 3, parents, writes: null },
      { ...run("r2"), source: "elsewhere", step: 3, parents, writes: null },
      { ...run("r2"), source: "loop", step: 3.5, parents, writes: null },
      { ...run("r2"), source: "loop", step: 2 ** 40, parents, writes: null },
      { ...run("r2"), source: "loop", step: -0, parents, writes: null },
      // Not frozen: kept as given.
      { ...run("r2"), source: "loop", step: 3, parents, writes: null },
    ];
    const puts = metas.map((m, i) => ({
      ...checkpoint("t1", cpId(i), i === 0 ? null : cpId(Math.min(i - 1, 3)), { messages: messages(i + 1) }),
      metadata: (i === metas.length - 1 ? m : Object.freeze(m)) as never,
    }));
    for (const cp of puts) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const list = store.inner.checkpoints.get("t1")!.list;
    expect(list[1]!.meta).toBe(puts[0]!.metadata);
    expect(list[2]!.meta).toBe(puts[0]!.metadata);
    expect(list[3]!.meta).toBe(puts[0]!.metadata);
    for (let i = 4; i < puts.length; i++) expect(list[i]!.meta).toBe(puts[i]!.metadata);
    for (let i = 0; i < puts.length; i++) {
      const read = (await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(i) }))!;
      expect(JSON.stringify(read.metadata)).toBe(JSON.stringify(puts[i]!.metadata));
      expect(Object.is(read.metadata.step, metas[i]!.step)).toBe(true);
      expect(Object.isFrozen(read.metadata)).toBe(Object.isFrozen(puts[i]!.metadata));
    }
    const loops = await store.listCheckpoints("t1", { filter: { source: "loop", run_id: "r1" } });
    expect(loops.map((c) => c.metadata.step)).toEqual([1, 0]);
  });
});

describe("memory store: checkpoint times", () => {
  it("hands back every time as put: the engine's form, others, years apart", async () => {
    const store = new InspectableStore();
    const times = [
      "2026-01-01T00:00:00.000Z",
      "2026-01-01T00:00:00.007Z",
      "2025-12-31T23:59:59.999Z",
      "2031-06-15T12:00:00.000Z",
      "1970-01-01T00:00:00.000Z",
      "2026-01-01 00:00:00.000Z",
      "2026-01-01T00:00:00Z",
      "not a time at all, 24 ch",
      "",
    ];
    for (const [i, ts] of times.entries()) {
      const cp = checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: messages(i + 1) });
      await store.commit([{ op: "checkpoint.put", checkpoint: { ...cp, checkpoint: { ...cp.checkpoint, ts } } }]);
    }
    expect(typeof store.inner.checkpoints.get("t1")!.list[1]!.ts).toBe("number");
    const listed = await store.listCheckpoints("t1");
    expect(listed.map((c) => c.checkpoint.ts)).toEqual([...times].reverse());
  });
});

describe("memory store: pending writes", () => {
  it("hands back every task id as written, and replaces only that task's writes", async () => {
    const store = new InspectableStore();
    await store.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(0), null, { messages: messages(1) }) }]);
    const uuid = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
    // The same UUID in other forms, and an id of 8 characters whose code units are those of the UUID's digits.
    const lookalike = String.fromCharCode(0x0a1b, 0x2c3d, 0x4e5f, 0x6789, 0xabcd, 0xef01, 0x2345, 0x6789);
    const tasks = [uuid, uuid.toUpperCase(), uuid.replaceAll("-", ""), lookalike, "00000000-0000-0000-0000-000000000000"];
    for (const [i, task] of tasks.entries()) {
      await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: task, writes: [[task, "x", i], [task, "y", i]] }]);
    }
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: lookalike, writes: [[lookalike, "z", 9]] }]);
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: uuid, writes: [] }]);
    const read = (await store.getCheckpoint({ thread_id: "t1" }))!.pending_writes;
    expect(read).toEqual([
      [tasks[1], "x", 1],
      [tasks[1], "y", 1],
      [tasks[2], "x", 2],
      [tasks[2], "y", 2],
      [tasks[4], "x", 4],
      [tasks[4], "y", 4],
      [lookalike, "z", 9],
    ]);
  });
});

describe("MemoryData.apply", () => {
  it("replays ops accepted before without their expectations, still all or nothing", () => {
    const data = new MemoryData();
    const foreign = thread("t1");
    const ops = [
      { op: "thread.put" as const, thread: thread("t1"), expect: { exists: false } },
      { op: "thread.put" as const, thread: thread("t1", { status: "busy" }), expect: { sameAs: foreign } },
    ];
    expect(() => data.apply(ops)).toThrow(/changed since it was read/);
    expect(data.threads.size).toBe(0);
    data.apply(ops, { replay: true });
    expect(data.threads.get("t1")?.status).toBe("busy");
    expect(() =>
      data.apply(
        [
          { op: "thread.put", thread: thread("t2") },
          { op: "writes.put", thread_id: "t1", checkpoint_id: "missing", task_id: "k", writes: [] },
        ],
        { replay: true },
      ),
    ).toThrow(/no such checkpoint/);
    expect(data.threads.has("t2")).toBe(false);
    // Checking is back on after a replay.
    expect(() => data.apply([{ op: "doc.put", collection: "datasets", id: "d", parent: null, doc: { n: Number.NaN } }])).toThrow(/NaN/);
  });
});

describe("memory store: indexes", () => {
  it("answers pending/running queries from the active set, and runs of a thread from its queue", async () => {
    const store = new InspectableStore();
    const ops = [];
    for (let i = 0; i < 200; i++) ops.push({ op: "run.put" as const, run: { ...runRecord(`r${i}`, `t${i % 10}`), status: i % 50 === 0 ? ("pending" as const) : ("success" as const) } });
    await store.commit(ops);
    expect([...store.inner.activeRuns.keys()]).toEqual(["r0", "r50", "r100", "r150"]);
    expect(store.inner.runsByThread.get("t0")!.map((e) => e.run.run_id)).toHaveLength(20);
    await store.commit([{ op: "run.put", run: { ...runRecord("r50", "t0"), status: "success" } }]);
    expect((await store.queryRuns({ status: "pending", sortBy: "queue" })).map((r) => r.run_id)).toEqual(["r0", "r100", "r150"]);
  });
});

const runRecord = (run_id: string, thread_id: string) => ({
  run_id,
  thread_id,
  assistant_id: "a",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  status: "pending" as const,
  metadata: {},
  kwargs: {},
  multitask_strategy: null,
});

describe("memory run events: bounds", () => {
  it("stops a reader of a non-resumable log that falls too far behind", async () => {
    const ev = new MemoryRunEvents({ maxBacklog: 100 });
    ev.open("r1", { resumable: false });
    const slow = ev.read("r1", { after: -1 })[Symbol.asyncIterator]();
    const fast = collect(ev.read("r1", { after: -1 }));
    for (let i = 0; i < 150; i++) {
      ev.publish("r1", "e", i);
      if (i % 20 === 0) await sleep(0);
    }
    ev.end("r1");
    await expect(slow.next()).rejects.toThrow(/fell more than 100 events behind/);
    expect((await fast).length).toBe(150);
  });

  it("keeps nothing for a non-resumable log without readers, and only the unread part with readers", async () => {
    const ev = new MemoryRunEvents();
    ev.open("r1", { resumable: false });
    for (let i = 0; i < 10; i++) ev.publish("r1", "e", i);
    const reader = ev.read("r1", { after: -1 })[Symbol.asyncIterator]();
    ev.publish("r1", "e", 10);
    expect((await reader.next()).value).toEqual({ seq: 10, event: "e", data: 10 });
    await reader.return!();
  });

  it("evicts the least recently read ended logs beyond the count bound, ending their readers at once", async () => {
    const ev = new MemoryRunEvents({ maxEndedLogs: 3 });
    for (const id of ["a", "b", "c", "d"]) {
      ev.open(id, { resumable: true });
      ev.publish(id, "e", id);
      if (id === "d") expect(await collect(ev.read("a", { after: -1 }))).toHaveLength(1); // touches "a"
      ev.end(id);
    }
    // "b" was the least recently used when "d" ended.
    const t0 = Date.now();
    expect(await collect(ev.read("b", { after: -1 }))).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(500);
    for (const id of ["a", "c", "d"]) expect((await collect(ev.read(id, { after: -1 }))).map((e) => e.data)).toEqual([id]);
  });

  it("evicts beyond the byte bound but always keeps the latest ended log", async () => {
    const ev = new MemoryRunEvents({ maxEndedBytes: 10_000 });
    const big = "x".repeat(4000);
    for (const id of ["a", "b", "c"]) {
      ev.open(id, { resumable: true });
      ev.publish(id, "e", big);
      ev.end(id);
    }
    expect(await collect(ev.read("a", { after: -1 }))).toEqual([]);
    expect(await collect(ev.read("b", { after: -1 }))).toHaveLength(1);
    expect(await collect(ev.read("c", { after: -1 }))).toHaveLength(1);
    ev.open("huge", { resumable: true });
    ev.publish("huge", "e", "y".repeat(50_000));
    ev.end("huge");
    expect(await collect(ev.read("huge", { after: -1 }))).toHaveLength(1);
    expect(await collect(ev.read("c", { after: -1 }))).toEqual([]);
  });

  it("drop ends attached readers; publishing to a log that is not open does nothing", async () => {
    const ev = new MemoryRunEvents();
    ev.publish("nope", "e", 1);
    ev.open("r1", { resumable: true });
    ev.publish("r1", "e", 1);
    const reader = collect(ev.read("r1", { after: -1 }));
    await sleep(10);
    ev.drop("r1");
    expect((await reader).map((e: RunEventRecord) => e.data)).toEqual([1]);
    ev.publish("r1", "e", 2);
    const late = new AbortController();
    const waiting = collect(ev.read("r1", { after: -1, signal: late.signal }));
    await sleep(10);
    late.abort();
    expect(await waiting).toEqual([]);
  });

  it("is shared by everything using one store instance", async () => {
    const store = memoryStore();
    const seen = collect(store.events.read("r1", { after: -1 }));
    await store.events.open("r1", { resumable: false });
    store.events.publish("r1", "e", 1);
    await store.events.end("r1");
    expect(await seen).toEqual([{ seq: 0, event: "e", data: 1 }]);
    const shared = new MemoryRunEvents();
    expect(new MemoryStore({ events: shared }).events).toBe(shared);
  });
});
