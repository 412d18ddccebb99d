/**
 * The Store contract: every store (memory, JSON file, IndexedDB in Node and in Chromium) passes
 * this suite. Imports only `vitest` and core-safe src modules, so the browser harness can bundle it.
 *
 * `create` returns a fresh, opened, empty store; `reopen` closes a store and opens it again on
 * the same data (persistent stores only). The suite closes the stores it gets.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import type { Lease, Store, StoredCheckpoint, WriteOp } from "../../src/persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../../src/types.js";
import { itemsContract } from "./items-contract.js";
import { cronStoreContract } from "./cron-contract.js";

export interface StoreContractOptions {
  name: string;
  create: () => Promise<Store>;
  reopen?: (store: Store) => Promise<Store>;
}

const T0 = "2026-01-01T00:00:00.000Z";

export const assistant = (id: string, over: Partial<AssistantRecord> = {}): AssistantRecord => ({
  assistant_id: id,
  graph_id: "echo",
  name: `assistant ${id}`,
  description: null,
  config: { configurable: { model: "m" } },
  context: { lang: "en" },
  metadata: { owner: "ann" },
  version: 1,
  created_at: T0,
  updated_at: T0,
  ...over,
});

export const version = (id: string, v: number): AssistantVersionRecord => ({
  assistant_id: id,
  graph_id: "echo",
  name: `v${v}`,
  description: null,
  config: {},
  context: null,
  metadata: { v },
  version: v,
  created_at: T0,
});

export const thread = (id: string, over: Partial<ThreadRecord> = {}): ThreadRecord => ({
  thread_id: id,
  created_at: T0,
  updated_at: T0,
  state_updated_at: T0,
  metadata: { user: "ann" },
  status: "idle",
  config: {},
  values: {},
  interrupts: {},
  ...over,
});

export const run = (id: string, threadId: string, over: Partial<RunRecord> = {}): RunRecord => ({
  run_id: id,
  thread_id: threadId,
  assistant_id: "a1",
  created_at: T0,
  updated_at: T0,
  status: "success",
  metadata: {},
  kwargs: { input: { messages: [{ type: "human", content: "hi" }] } },
  multitask_strategy: null,
  ...over,
});

export const checkpoint = (
  threadId: string,
  id: string,
  parent: string | null,
  values: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): StoredCheckpoint => ({
  thread_id: threadId,
  checkpoint_ns: "",
  checkpoint: {
    v: 1,
    id,
    ts: T0,
    channel_values: values,
    channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])),
    versions_seen: { __input__: {} },
  },
  metadata: { source: "loop", step: 0, parents: {}, ...metadata },
  parent_checkpoint_id: parent,
  pending_writes: [],
});

export const message = (i: number) => ({ type: i % 2 ? "ai" : "human", content: `message ${i}`, id: `m${i}` });
export const messages = (n: number) => Array.from({ length: n }, (_, i) => message(i));

/** Checkpoint ids that sort in put order. */
export const cpId = (i: number) => `1f000000-0000-6000-8000-${String(i).padStart(12, "0")}`;

/** A chain of `n` checkpoints whose message list grows by one each step; returns them in order. */
export function chain(threadId: string, n: number, start = 0): StoredCheckpoint[] {
  const out: StoredCheckpoint[] = [];
  for (let i = 0; i < n; i++) {
    const parent = i === 0 ? (start === 0 ? null : cpId(start - 1)) : out[i - 1]!.checkpoint.id;
    out.push(checkpoint(threadId, cpId(start + i), parent, { messages: messages(start + i + 1), step: start + i }, { step: start + i }));
  }
  return out;
}

const puts = (cps: StoredCheckpoint[]): WriteOp[] => cps.map((c) => ({ op: "checkpoint.put", checkpoint: c }));
const ids = (cps: readonly StoredCheckpoint[]) => cps.map((c) => c.checkpoint.id);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  return undefined;
}


const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until `cond` holds (deliveries may be asynchronous), failing after `ms`. */
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error("timed out waiting for a condition");
    await sleep(2);
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Everything the suite's tests write, read back, to compare a store before and after a failed commit. */
async function snapshot(store: Store) {
  const threadIds = ["t1", "t2", "t9"];
  return {
    threads: await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc" }),
    threadCount: await store.countThreads({}),
    assistants: await store.queryAssistants({ sortBy: "assistant_id", sortOrder: "asc" }),
    versions: await store.queryAssistantVersions({ assistant_id: "a1" }),
    runs: await store.queryRuns({ sortBy: "queue" }),
    active: await store.queryRuns({ status: ["pending", "running"], sortBy: "queue" }),
    checkpoints: await Promise.all(
      threadIds.map(async (t) => ({
        namespaces: await store.listCheckpointNamespaces(t),
        list: await store.listCheckpoints(t),
        latest: await store.getCheckpoint({ thread_id: t }),
      })),
    ),
    cancels: await Promise.all(["r1", "r9"].map((r) => store.getCancelRequest(r))),
    lease: await store.getLease("thread:t1"),
    docs: await store.listDocs("datasets"),
  };
}

export function storeContract({ name, create, reopen }: StoreContractOptions): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await create();
    });
    afterEach(async () => {
      await store.close();
    });

    describe("assistants", () => {
      it("puts, gets, lists and replaces assistants", async () => {
        await store.commit([{ op: "assistant.put", assistant: assistant("a1") }, { op: "assistant.put", assistant: assistant("a2") }]);
        expect(await store.getAssistant("a1")).toEqual(assistant("a1"));
        expect(await store.getAssistant("nope")).toBeUndefined();
        await store.commit([{ op: "assistant.put", assistant: assistant("a1", { name: "renamed", version: 2 }) }]);
        expect((await store.getAssistant("a1"))?.name).toBe("renamed");
        const all = await store.queryAssistants({});
        expect(all.map((a) => a.assistant_id).sort()).toEqual(["a1", "a2"]);
      });

      it("lists versions ascending, replaces a version, and deletes them with the assistant", async () => {
        await store.commit([
          { op: "assistant.put", assistant: assistant("a1") },
          { op: "assistant_version.put", version: version("a1", 2) },
          { op: "assistant_version.put", version: version("a1", 1) },
          { op: "assistant_version.put", version: version("a2", 1) },
        ]);
        await store.commit([{ op: "assistant_version.put", version: { ...version("a1", 2), name: "again" } }]);
        const vs = await store.queryAssistantVersions({ assistant_id: "a1", sortOrder: "asc" });
        expect(vs.map((v) => [v.version, v.name])).toEqual([[1, "v1"], [2, "again"]]);
        await store.commit([{ op: "assistant.delete", assistant_id: "a1" }]);
        expect(await store.getAssistant("a1")).toBeUndefined();
        expect(await store.queryAssistantVersions({ assistant_id: "a1", sortOrder: "asc" })).toEqual([]);
        expect(await store.queryAssistantVersions({ assistant_id: "a2" })).toHaveLength(1);
      });
    });

    describe("threads and runs", () => {
      it("puts, gets and lists threads with their values", async () => {
        const values = { messages: messages(12), summary: "s", flags: [1, 2] };
        await store.commit([{ op: "thread.put", thread: thread("t1", { values }) }, { op: "thread.put", thread: thread("t2") }]);
        expect(await store.getThread("t1")).toEqual(thread("t1", { values }));
        expect(await store.getThread("nope")).toBeUndefined();
        expect((await store.queryThreads({})).map((t) => t.thread_id).sort()).toEqual(["t1", "t2"]);
      });

      it("keeps thread values that mirror the latest checkpoint exact as both change", async () => {
        for (const cp of chain("t1", 6)) {
          await store.commit([
            { op: "checkpoint.put", checkpoint: cp },
            { op: "thread.put", thread: thread("t1", { values: cp.checkpoint.channel_values, status: "busy" }) },
          ]);
        }
        // Thread values put before the checkpoint they mirror, and values that diverge from it.
        const next = chain("t1", 1, 6)[0]!;
        const diverged = { messages: [...messages(3), { type: "ai", content: "edited" }], step: 99 };
        await store.commit([
          { op: "thread.put", thread: thread("t1", { values: next.checkpoint.channel_values }) },
          { op: "checkpoint.put", checkpoint: next },
        ]);
        expect((await store.getThread("t1"))?.values).toEqual(next.checkpoint.channel_values);
        await store.commit([{ op: "thread.put", thread: thread("t1", { values: diverged }) }]);
        expect((await store.getThread("t1"))?.values).toEqual(diverged);
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.channel_values).toEqual(next.checkpoint.channel_values);
      });

      it("puts, updates, lists by thread and deletes runs", async () => {
        await store.commit([
          { op: "run.put", run: run("r1", "t1", { status: "pending" }) },
          { op: "run.put", run: run("r2", "t1") },
          { op: "run.put", run: run("r3", "t2") },
        ]);
        await store.commit([{ op: "run.put", run: run("r1", "t1", { status: "running" }) }]);
        expect((await store.getRun("r1"))?.status).toBe("running");
        expect((await store.queryRuns({ thread_id: "t1" })).map((r) => r.run_id).sort()).toEqual(["r1", "r2"]);
        expect((await store.queryRuns({})).map((r) => r.run_id).sort()).toEqual(["r1", "r2", "r3"]);
        expect(await store.queryRuns({ thread_id: "none" })).toEqual([]);
        await store.commit([{ op: "run.delete", run_id: "r1" }, { op: "run.delete", run_id: "missing" }]);
        expect(await store.getRun("r1")).toBeUndefined();
        expect((await store.queryRuns({ thread_id: "t1" })).map((r) => r.run_id)).toEqual(["r2"]);
      });

      it("thread.delete removes the thread, its checkpoints, writes and runs, and nothing else", async () => {
        await store.commit([
          { op: "thread.put", thread: thread("t1") },
          { op: "thread.put", thread: thread("t2") },
          ...puts(chain("t1", 5)),
          ...puts(chain("t2", 5)),
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(4), task_id: "k", writes: [["k", "messages", 1]] },
          { op: "run.put", run: run("r1", "t1") },
          { op: "run.put", run: run("r2", "t2") },
        ]);
        await store.commit([{ op: "thread.delete", thread_id: "t1" }]);
        expect(await store.getThread("t1")).toBeUndefined();
        expect(await store.getCheckpoint({ thread_id: "t1" })).toBeUndefined();
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(2) })).toBeUndefined();
        expect(await store.listCheckpoints("t1")).toEqual([]);
        expect(await store.getRun("r1")).toBeUndefined();
        expect(await store.queryRuns({ thread_id: "t1" })).toEqual([]);
        expect(await store.getThread("t2")).toBeDefined();
        expect(ids(await store.listCheckpoints("t2"))).toEqual(ids(chain("t2", 5)).reverse());
        expect((await store.getCheckpoint({ thread_id: "t2" }))?.checkpoint.channel_values).toEqual(chain("t2", 5)[4]!.checkpoint.channel_values);
        expect(await store.getRun("r2")).toBeDefined();
        // The id can be used again from scratch.
        await store.commit(puts(chain("t1", 2)));
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(1), cpId(0)]);
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.channel_values).toEqual({ messages: messages(2), step: 1 });
      });
    });

    describe("checkpoints", () => {
      it("returns the last put as latest, any by id, and undefined for unknown ones", async () => {
        const cps = chain("t1", 4);
        await store.commit(puts(cps.slice(0, 2)));
        await store.commit(puts(cps.slice(2)));
        expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(cps[3]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) })).toEqual(cps[1]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "unknown" })).toBeUndefined();
        expect(await store.getCheckpoint({ thread_id: "t9" })).toBeUndefined();
      });

      it("lists newest first with limit, before and a metadata filter", async () => {
        const cps = chain("t1", 10).map((c, i) => ({ ...c, metadata: { ...c.metadata, source: i % 3 ? "loop" : "input", tags: { even: i % 2 === 0 } } } as StoredCheckpoint));
        await store.commit(puts(cps));
        const newestFirst = ids(cps).reverse();
        expect(ids(await store.listCheckpoints("t1"))).toEqual(newestFirst);
        expect(ids(await store.listCheckpoints("t1", { limit: 3 }))).toEqual(newestFirst.slice(0, 3));
        expect(ids(await store.listCheckpoints("t1", { before: cpId(5) }))).toEqual(newestFirst.slice(5));
        expect(ids(await store.listCheckpoints("t1", { before: cpId(5), limit: 2 }))).toEqual([cpId(4), cpId(3)]);
        expect(ids(await store.listCheckpoints("t1", { filter: { source: "input" } }))).toEqual([cpId(9), cpId(6), cpId(3), cpId(0)]);
        expect(ids(await store.listCheckpoints("t1", { filter: { tags: { even: true } }, limit: 2 }))).toEqual([cpId(8), cpId(6)]);
        expect(ids(await store.listCheckpoints("t1", { filter: { source: "input" }, before: cpId(6) }))).toEqual([cpId(3), cpId(0)]);
        expect(await store.listCheckpoints("t1", { before: "unknown" })).toEqual([]);
        expect(await store.listCheckpoints("t1", { limit: 0 })).toEqual([]);
        expect(await store.listCheckpoints("none")).toEqual([]);
        const listed = await store.listCheckpoints("t1", { limit: 4 });
        expect(listed).toEqual(cps.slice(6).reverse());
      });

      it("orders by put, not by id", async () => {
        const a = checkpoint("t1", "b-second-id", null, { x: 1 });
        const b = checkpoint("t1", "a-first-id", "b-second-id", { x: 2 });
        await store.commit(puts([a, b]));
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe("a-first-id");
        expect(ids(await store.listCheckpoints("t1"))).toEqual(["a-first-id", "b-second-id"]);
      });

      it("replaces a checkpoint with the same id in place", async () => {
        const cps = chain("t1", 3);
        await store.commit(puts(cps));
        const replaced = { ...cps[1]!, metadata: { ...cps[1]!.metadata, replaced: true } };
        await store.commit(puts([replaced]));
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(1), cpId(0)]);
        expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) }))?.metadata.replaced).toBe(true);
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe(cpId(2));
      });

      it("deletes checkpoints by id", async () => {
        await store.commit(puts(chain("t1", 4)));
        await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(3), cpId(1), "unknown"] }]);
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(0)]);
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.channel_values).toEqual(chain("t1", 4)[2]!.checkpoint.channel_values);
        await store.commit([{ op: "checkpoint.delete", thread_id: "none", checkpoint_ids: [cpId(0)] }]);
      });

      it("records pending writes in order and replaces a task's writes", async () => {
        await store.commit(puts(chain("t1", 2)));
        await store.commit([
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "a", writes: [["a", "x", 1], ["a", "y", { deep: [1] }]] },
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "b", writes: [["b", "__error__", { message: "boom" }]] },
        ]);
        await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "a", writes: [["a", "x", 2]] }]);
        expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(0) }))?.pending_writes).toEqual([
          ["b", "__error__", { message: "boom" }],
          ["a", "x", 2],
        ]);
        expect((await store.getCheckpoint({ thread_id: "t1" }))?.pending_writes).toEqual([]);
        expect((await store.listCheckpoints("t1", { before: cpId(1) }))[0]!.pending_writes).toHaveLength(2);
      });

      it("rebuilds every checkpoint's values exactly: growth, forks, edits, shrinking, scalars", async () => {
        const base = chain("t1", 8);
        const parent = base[7]!.checkpoint.id;
        const forkA = checkpoint("t1", cpId(20), parent, { messages: [...messages(8), { type: "ai", content: "fork A" }], step: 20 });
        const forkB = checkpoint("t1", cpId(21), parent, { messages: [...messages(8), { type: "ai", content: "fork B" }, message(99)], step: 21 });
        const afterA = checkpoint("t1", cpId(22), cpId(20), { messages: [...messages(8), { type: "ai", content: "fork A" }, message(50)], step: 22 });
        const edited = checkpoint("t1", cpId(23), cpId(22), { messages: [{ ...message(0), content: "edited" }, ...messages(9).slice(1)], step: 23 });
        const shrunk = checkpoint("t1", cpId(24), cpId(23), { messages: messages(2), step: 24, extra: [] });
        const nested = checkpoint("t1", cpId(25), cpId(24), { messages: [[1, 2], [3], null, { a: [1] }, "x"], step: 25, n: null });
        const all = [...base, forkA, forkB, afterA, edited, shrunk, nested];
        for (const cp of all) await store.commit(puts([cp]));
        for (const cp of all) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
        expect(await store.listCheckpoints("t1")).toEqual([...all].reverse());
        // A child put in the same commit as its parent.
        const pair = chain("t2", 6);
        await store.commit(puts(pair));
        for (const cp of pair) expect(await store.getCheckpoint({ thread_id: "t2", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
      });

      it("returns values that survive a JSON round trip unchanged", async () => {
        const cps = chain("t1", 5);
        await store.commit(puts(cps));
        const got = await store.getCheckpoint({ thread_id: "t1" });
        expect(JSON.parse(JSON.stringify(got))).toEqual(cps[4]);
      });
    });

    describe("documents", () => {
      it("puts, gets and lists documents in insertion order, by parent", async () => {
        await store.commit([
          { op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: { name: "one" } },
          { op: "doc.put", collection: "examples", id: "e2", parent: "d1", doc: { n: 2 } },
          { op: "doc.put", collection: "examples", id: "e1", parent: "d1", doc: { n: 1 } },
          { op: "doc.put", collection: "examples", id: "e3", parent: "d2", doc: { n: 3 } },
        ]);
        await store.commit([{ op: "doc.put", collection: "examples", id: "e2", parent: "d1", doc: { n: 22 } }]);
        expect(await store.getDoc("datasets", "d1")).toEqual({ id: "d1", parent: null, doc: { name: "one" } });
        expect(await store.getDoc("datasets", "e1")).toBeUndefined();
        expect((await store.listDocs("examples")).map((d) => d.id)).toEqual(["e2", "e1", "e3"]);
        expect(await store.listDocs("examples", "d1")).toEqual([
          { id: "e2", parent: "d1", doc: { n: 22 } },
          { id: "e1", parent: "d1", doc: { n: 1 } },
        ]);
        await store.commit([{ op: "doc.delete", collection: "examples", id: "e2" }, { op: "doc.delete", collection: "feedback", id: "x" }]);
        expect((await store.listDocs("examples")).map((d) => d.id)).toEqual(["e1", "e3"]);
        expect(await store.listDocs("experiments")).toEqual([]);
      });
    });

    // Cron records: ./cron-contract.ts
    cronStoreContract({ store: () => store, ...(reopen ? { reopen: async () => (store = await reopen(store)) } : {}) });

    describe("commits", () => {
      it("applies a commit's ops in order", async () => {
        await store.commit([
          { op: "thread.put", thread: thread("t1") },
          { op: "thread.delete", thread_id: "t1" },
          { op: "run.put", run: run("r1", "t2") },
          { op: "thread.put", thread: thread("t2", { status: "busy" }) },
          { op: "thread.put", thread: thread("t2", { status: "idle" }) },
        ]);
        expect(await store.getThread("t1")).toBeUndefined();
        expect((await store.getThread("t2"))?.status).toBe("idle");
      });

      it("is all or nothing: a failing op leaves no trace of its commit", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1") }, ...puts(chain("t1", 5))]);
        const err = await rejection(
          store.commit([
            { op: "thread.put", thread: thread("t1", { status: "busy" }) },
            { op: "assistant.put", assistant: assistant("a1") },
            ...puts(chain("t1", 3, 5)),
            { op: "run.put", run: run("r1", "t1") },
            { op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: {} },
            { op: "writes.put", thread_id: "t1", checkpoint_id: "unknown", task_id: "k", writes: [] },
          ]),
        );
        expect(err).toBeInstanceOf(Error);
        expect((await store.getThread("t1"))?.status).toBe("idle");
        expect(await store.getAssistant("a1")).toBeUndefined();
        expect(await store.getRun("r1")).toBeUndefined();
        expect(await store.getDoc("datasets", "d1")).toBeUndefined();
        expect(ids(await store.listCheckpoints("t1"))).toEqual(ids(chain("t1", 5)).reverse());
        // The store keeps working, and the failed commit's list items left nothing behind.
        await store.commit(puts(chain("t1", 3, 5)));
        for (const cp of chain("t1", 8)) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
      });

      it("lands every commit issued concurrently", async () => {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.commit([{ op: "thread.put", thread: thread(`t${i}`) }, { op: "run.put", run: run(`r${i}`, `t${i}`) }]),
          ),
        );
        expect(await store.queryThreads({})).toHaveLength(20);
        expect(await store.queryRuns({})).toHaveLength(20);
      });
    });

    describe("thread queries", () => {
      const T = (i: number) => `2026-01-0${i}T00:00:00.000Z`;
      const fixture = (): ThreadRecord[] => [
        thread("t1", { created_at: T(1), updated_at: T(5), state_updated_at: T(2), status: "idle", metadata: { user: "ann", tags: ["a", "b"], n: 1 }, values: { topic: "x", messages: [{ id: "m1" }] } }),
        thread("t2", { created_at: T(2), updated_at: T(4), state_updated_at: T(2), status: "busy", metadata: { user: "bob", tags: ["b"], n: 2 }, values: { topic: "y" } }),
        thread("t3", { created_at: T(2), updated_at: T(3), state_updated_at: T(1), status: "idle", metadata: { user: "ann", nested: { deep: true } }, values: { topic: "x", extra: 1 } }),
        thread("t4", { created_at: T(4), updated_at: T(2), state_updated_at: T(3), status: "error", metadata: { user: "", tags: [] }, values: {} }),
        thread("t5", { created_at: T(5), updated_at: T(1), state_updated_at: T(3), status: "interrupted", metadata: {}, values: { topic: "z" } }),
      ];
      const tids = (ts: readonly ThreadRecord[]) => ts.map((t) => t.thread_id);
      beforeEach(async () => {
        await store.commit(fixture().map((t): WriteOp => ({ op: "thread.put", thread: t })));
      });

      it("filters by ids, status, metadata and values containment", async () => {
        expect(tids(await store.queryThreads({}))).toEqual(["t5", "t4", "t3", "t2", "t1"]);
        expect(tids(await store.queryThreads({ ids: ["t3", "t1", "nope"] }))).toEqual(["t3", "t1"]);
        expect(tids(await store.queryThreads({ status: "idle" }))).toEqual(["t3", "t1"]);
        expect(tids(await store.queryThreads({ metadata: { user: "ann" } }))).toEqual(["t3", "t1"]);
        expect(tids(await store.queryThreads({ metadata: { tags: ["b"] } }))).toEqual(["t2", "t1"]);
        expect(tids(await store.queryThreads({ metadata: { nested: { deep: true } } }))).toEqual(["t3"]);
        expect(tids(await store.queryThreads({ metadata: { user: "ann", n: 1 } }))).toEqual(["t1"]);
        expect(tids(await store.queryThreads({ metadata: { missing: null } }))).toEqual([]);
        expect(tids(await store.queryThreads({ values: { topic: "x" } }))).toEqual(["t3", "t1"]);
        expect(tids(await store.queryThreads({ values: { messages: [{ id: "m1" }] } }))).toEqual(["t1"]);
        expect(tids(await store.queryThreads({ values: { topic: "x" }, status: "idle", ids: ["t3"] }))).toEqual(["t3"]);
        expect(await store.queryThreads({ status: "busy", metadata: { user: "ann" } })).toEqual([]);
        // Records come back whole.
        expect((await store.queryThreads({ ids: ["t1"] }))[0]).toEqual(fixture()[0]);
      });

      it("applies the authorization filter: equality, $eq and $contains", async () => {
        expect(tids(await store.queryThreads({ auth: { user: "ann" } }))).toEqual(["t3", "t1"]);
        expect(tids(await store.queryThreads({ auth: { user: { $eq: "bob" } } }))).toEqual(["t2"]);
        expect(tids(await store.queryThreads({ auth: { user: { $eq: "" } } }))).toEqual(["t4"]);
        expect(tids(await store.queryThreads({ auth: { tags: { $contains: "b" } } }))).toEqual(["t2", "t1"]);
        expect(tids(await store.queryThreads({ auth: { tags: { $contains: ["a", "b"] } } }))).toEqual(["t1"]);
        expect(tids(await store.queryThreads({ auth: { user: "ann", n: 1 } }))).toEqual(["t1"]);
        expect(tids(await store.queryThreads({ auth: { user: "nobody" } }))).toEqual([]);
        expect(await store.countThreads({ auth: { user: "ann" } })).toBe(2);
        expect(await store.countThreads({ auth: { tags: { $contains: "b" } }, status: "busy" })).toBe(1);
      });

      it("sorts by every field in both orders, ties broken by id in the same direction", async () => {
        const all = fixture();
        const expected = (field: keyof ThreadRecord, order: "asc" | "desc") => {
          const dir = order === "asc" ? 1 : -1;
          return tids(
            [...all].sort((a, b) => {
              const x = String(a[field]);
              const y = String(b[field]);
              return dir * (x < y ? -1 : x > y ? 1 : a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0);
            }),
          );
        };
        for (const sortBy of ["thread_id", "status", "created_at", "updated_at", "state_updated_at"] as const) {
          for (const sortOrder of ["asc", "desc"] as const) {
            expect(tids(await store.queryThreads({ sortBy, sortOrder })), `${sortBy} ${sortOrder}`).toEqual(expected(sortBy, sortOrder));
          }
          expect(tids(await store.queryThreads({ sortBy })), `${sortBy} default desc`).toEqual(expected(sortBy, "desc"));
        }
        // Spot checks of the ties: t2 and t3 share created_at, t1 t2 share state_updated_at.
        expect(tids(await store.queryThreads({ sortBy: "created_at", sortOrder: "asc" }))).toEqual(["t1", "t2", "t3", "t4", "t5"]);
        expect(tids(await store.queryThreads({ sortBy: "state_updated_at", sortOrder: "desc" }))).toEqual(["t5", "t4", "t2", "t1", "t3"]);
        expect(tids(await store.queryThreads({ sortBy: "status", sortOrder: "asc" }))).toEqual(["t2", "t4", "t1", "t3", "t5"]);
      });

      it("pages with limit and offset after sorting, and counts ignore paging", async () => {
        expect(tids(await store.queryThreads({ limit: 2 }))).toEqual(["t5", "t4"]);
        expect(tids(await store.queryThreads({ limit: 2, offset: 2 }))).toEqual(["t3", "t2"]);
        expect(tids(await store.queryThreads({ offset: 3 }))).toEqual(["t2", "t1"]);
        expect(tids(await store.queryThreads({ limit: 10, offset: 4 }))).toEqual(["t1"]);
        expect(await store.queryThreads({ offset: 5 })).toEqual([]);
        expect(await store.queryThreads({ limit: 0 })).toEqual([]);
        expect(tids(await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc", limit: 2, offset: 1, metadata: { user: "ann" } }))).toEqual(["t3"]);
        expect(await store.countThreads({})).toBe(5);
        expect(await store.countThreads({ status: "idle" })).toBe(2);
        expect(await store.countThreads({ status: "idle", limit: 1, offset: 1 })).toBe(2);
        expect(await store.countThreads({ values: { topic: "x" }, metadata: { nested: {} } })).toBe(1);
        expect(await store.countThreads({ ids: ["nope"] })).toBe(0);
      });

      it("sees puts and deletes", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1", { ...fixture()[0], status: "busy" }) }, { op: "thread.delete", thread_id: "t2" }]);
        expect(tids(await store.queryThreads({ status: "busy" }))).toEqual(["t1"]);
        expect(await store.countThreads({})).toBe(4);
      });
    });

    describe("assistant queries", () => {
      const A = (i: number) => `2026-02-0${i}T00:00:00.000Z`;
      const fixture = (): AssistantRecord[] => [
        assistant("a1", { graph_id: "chat", name: "Support Bot", created_at: A(1), updated_at: A(4), metadata: { team: "x", tags: ["p"] } }),
        assistant("a2", { graph_id: "echo", name: "echo", created_at: A(2), updated_at: A(3), metadata: { team: "y" } }),
        assistant("a3", { graph_id: "chat", name: "SUPPORT (eu)", created_at: A(2), updated_at: A(2), metadata: { team: "x" } }),
        assistant("a4", { graph_id: "chat", name: "research", created_at: A(3), updated_at: A(1), metadata: { team: "y", tags: ["p", "q"] } }),
      ];
      const aids = (as: readonly AssistantRecord[]) => as.map((a) => a.assistant_id);
      beforeEach(async () => {
        await store.commit(fixture().map((a): WriteOp => ({ op: "assistant.put", assistant: a })));
      });

      it("filters by ids, graph_id, name substring (any case), metadata and auth", async () => {
        expect(aids(await store.queryAssistants({}))).toEqual(["a4", "a3", "a2", "a1"]);
        expect(aids(await store.queryAssistants({ ids: ["a1", "a4"] }))).toEqual(["a4", "a1"]);
        expect(aids(await store.queryAssistants({ graph_id: "chat" }))).toEqual(["a4", "a3", "a1"]);
        expect(aids(await store.queryAssistants({ name: "support" }))).toEqual(["a3", "a1"]);
        expect(aids(await store.queryAssistants({ name: "PORT (E" }))).toEqual(["a3"]);
        expect(aids(await store.queryAssistants({ metadata: { team: "y" } }))).toEqual(["a4", "a2"]);
        expect(aids(await store.queryAssistants({ metadata: { tags: ["q"] } }))).toEqual(["a4"]);
        expect(aids(await store.queryAssistants({ auth: { team: "x" } }))).toEqual(["a3", "a1"]);
        expect(aids(await store.queryAssistants({ auth: { tags: { $contains: "p" } }, graph_id: "chat" }))).toEqual(["a4", "a1"]);
        expect(aids(await store.queryAssistants({ auth: { team: { $eq: "y" } }, name: "e" }))).toEqual(["a4", "a2"]);
        expect(await store.countAssistants({ graph_id: "chat" })).toBe(3);
        expect(await store.countAssistants({ graph_id: "chat", auth: { team: "x" }, limit: 1 })).toBe(2);
        expect(await store.countAssistants({ name: "nothing" })).toBe(0);
      });

      it("sorts by every field in both orders with the id tie-break, and pages", async () => {
        const all = fixture();
        for (const sortBy of ["assistant_id", "graph_id", "name", "created_at", "updated_at"] as const) {
          for (const sortOrder of ["asc", "desc"] as const) {
            const dir = sortOrder === "asc" ? 1 : -1;
            const want = [...all].sort((a, b) => {
              const x = String(a[sortBy]);
              const y = String(b[sortBy]);
              return dir * (x < y ? -1 : x > y ? 1 : a.assistant_id < b.assistant_id ? -1 : 1);
            });
            expect(aids(await store.queryAssistants({ sortBy, sortOrder })), `${sortBy} ${sortOrder}`).toEqual(aids(want));
          }
        }
        expect(aids(await store.queryAssistants({ sortBy: "graph_id", sortOrder: "asc" }))).toEqual(["a1", "a3", "a4", "a2"]);
        expect(aids(await store.queryAssistants({ sortBy: "created_at", sortOrder: "desc" }))).toEqual(["a4", "a3", "a2", "a1"]);
        expect(aids(await store.queryAssistants({ limit: 2, offset: 1 }))).toEqual(["a3", "a2"]);
        // Names compare as strings (case-sensitive): "SUPPORT (eu)" < "Support Bot" < "research".
        expect(aids(await store.queryAssistants({ graph_id: "chat", sortBy: "name", sortOrder: "asc", offset: 1 }))).toEqual(["a1", "a4"]);
      });

      it("queries versions newest first by default, filters by metadata, and pages", async () => {
        const v = (n: number) => ({ ...version("a1", n), metadata: { v: n, even: n % 2 === 0 } });
        await store.commit([3, 1, 5, 2, 4].map((n): WriteOp => ({ op: "assistant_version.put", version: v(n) })));
        await store.commit([{ op: "assistant_version.put", version: version("a2", 1) }]);
        const vs = (list: readonly AssistantVersionRecord[]) => list.map((x) => x.version);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a1" }))).toEqual([5, 4, 3, 2, 1]);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a1", sortOrder: "asc" }))).toEqual([1, 2, 3, 4, 5]);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a1", metadata: { even: true } }))).toEqual([4, 2]);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a1", limit: 2, offset: 1 }))).toEqual([4, 3]);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a1", sortOrder: "asc", metadata: { even: false }, offset: 1 }))).toEqual([3, 5]);
        expect(vs(await store.queryAssistantVersions({ assistant_id: "a2" }))).toEqual([1]);
        expect(await store.queryAssistantVersions({ assistant_id: "none" })).toEqual([]);
        expect((await store.queryAssistantVersions({ assistant_id: "a1", limit: 1 }))[0]).toEqual(v(5));
      });
    });

    describe("run queries", () => {
      const R = (i: number) => `2026-03-0${i}T00:00:00.000Z`;
      const rids = (rs: readonly RunRecord[]) => rs.map((r) => r.run_id);
      beforeEach(async () => {
        // Queue (commit) order: r3, r1, r4, r2, r5; r5 on another thread.
        await store.commit([{ op: "run.put", run: run("r3", "t1", { created_at: R(3), status: "pending" }) }]);
        await store.commit([
          { op: "run.put", run: run("r1", "t1", { created_at: R(3), status: "running" }) },
          { op: "run.put", run: run("r4", "t1", { created_at: R(1), status: "success" }) },
        ]);
        await store.commit([{ op: "run.put", run: run("r2", "t1", { created_at: R(2), status: "pending" }) }]);
        await store.commit([{ op: "run.put", run: run("r5", "t2", { created_at: R(4), status: "pending" }) }]);
      });

      it("filters by thread and status (one or several), newest first with the id tie-break", async () => {
        expect(rids(await store.queryRuns({ thread_id: "t1" }))).toEqual(["r3", "r1", "r2", "r4"]);
        expect(rids(await store.queryRuns({}))).toEqual(["r5", "r3", "r1", "r2", "r4"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortOrder: "asc" }))).toEqual(["r4", "r2", "r1", "r3"]);
        expect(rids(await store.queryRuns({ status: "pending" }))).toEqual(["r5", "r3", "r2"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", status: "pending" }))).toEqual(["r3", "r2"]);
        expect(rids(await store.queryRuns({ status: ["pending", "running"] }))).toEqual(["r5", "r3", "r1", "r2"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", status: ["success", "error"] }))).toEqual(["r4"]);
        expect(await store.queryRuns({ thread_id: "t3" })).toEqual([]);
        expect(await store.countRuns({ thread_id: "t1" })).toBe(4);
        expect(await store.countRuns({ status: ["pending", "running"], limit: 1 })).toBe(4);
        expect(await store.countRuns({ thread_id: "t2", status: "running" })).toBe(0);
      });

      it("orders by queue: the commit order of the first put, kept across updates", async () => {
        await store.commit([{ op: "run.put", run: run("r3", "t1", { created_at: R(3), status: "running" }) }]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortBy: "queue" }))).toEqual(["r3", "r1", "r4", "r2"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortBy: "queue", sortOrder: "desc" }))).toEqual(["r2", "r4", "r1", "r3"]);
        expect(rids(await store.queryRuns({ sortBy: "queue" }))).toEqual(["r3", "r1", "r4", "r2", "r5"]);
        expect(rids(await store.queryRuns({ sortBy: "queue", status: ["pending", "running"] }))).toEqual(["r3", "r1", "r2", "r5"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortBy: "queue", status: "pending", limit: 1 }))).toEqual(["r2"]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortBy: "queue", limit: 2, offset: 1 }))).toEqual(["r1", "r4"]);
        // A deleted and re-created run goes to the back of the queue.
        await store.commit([{ op: "run.delete", run_id: "r1" }]);
        await store.commit([{ op: "run.put", run: run("r1", "t1", { created_at: R(3), status: "pending" }) }]);
        expect(rids(await store.queryRuns({ thread_id: "t1", sortBy: "queue" }))).toEqual(["r3", "r4", "r2", "r1"]);
        expect(rids(await store.queryRuns({ sortBy: "queue", status: "pending" }))).toEqual(["r2", "r5", "r1"]);
      });

      it("pages newest first and keeps the status index exact as runs change", async () => {
        expect(rids(await store.queryRuns({ limit: 2 }))).toEqual(["r5", "r3"]);
        expect(rids(await store.queryRuns({ limit: 2, offset: 2 }))).toEqual(["r1", "r2"]);
        expect(rids(await store.queryRuns({ offset: 4 }))).toEqual(["r4"]);
        await store.commit([
          { op: "run.put", run: run("r3", "t1", { created_at: R(3), status: "success" }) },
          { op: "run.put", run: run("r4", "t1", { created_at: R(1), status: "pending" }) },
        ]);
        expect(rids(await store.queryRuns({ status: ["pending", "running"], sortBy: "queue" }))).toEqual(["r1", "r4", "r2", "r5"]);
        await store.commit([{ op: "thread.delete", thread_id: "t1" }]);
        expect(rids(await store.queryRuns({ status: ["pending", "running"] }))).toEqual(["r5"]);
        expect(await store.countRuns({})).toBe(1);
      });
    });

    describe("conditional commits", () => {
      const expectConflict = async (p: Promise<unknown>) => {
        const err = await rejection(p);
        expect(GraphdockError.is(err, "conflict"), `expected a conflict, got ${String(err)}`).toBe(true);
      };

      it("thread expectations: exists, status", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1", { status: "busy" }) }]);
        await store.commit([{ op: "thread.put", thread: thread("t2"), expect: { exists: false } }]);
        await expectConflict(store.commit([{ op: "thread.put", thread: thread("t2"), expect: { exists: false } }]));
        await store.commit([{ op: "thread.put", thread: thread("t1", { status: "idle" }), expect: { exists: true, status: ["busy", "error"] } }]);
        await expectConflict(store.commit([{ op: "thread.put", thread: thread("t1", { status: "busy" }), expect: { status: ["busy"] } }]));
        await expectConflict(store.commit([{ op: "thread.put", thread: thread("t9"), expect: { exists: true } }]));
        await expectConflict(store.commit([{ op: "thread.put", thread: thread("t9"), expect: { status: ["idle"] } }]));
        await expectConflict(store.commit([{ op: "thread.delete", thread_id: "t9", expect: { exists: true } }]));
        await expectConflict(store.commit([{ op: "thread.delete", thread_id: "t1", expect: { status: ["busy"] } }]));
        expect(await store.getThread("t9")).toBeUndefined();
        expect((await store.getThread("t1"))?.status).toBe("idle");
        await store.commit([{ op: "thread.delete", thread_id: "t1", expect: { exists: true, status: ["idle"] } }]);
        expect(await store.getThread("t1")).toBeUndefined();
      });

      it("judges an op's expectation against the state left by the earlier ops of its commit", async () => {
        await store.commit([
          { op: "thread.put", thread: thread("t1"), expect: { exists: false } },
          { op: "thread.put", thread: thread("t1", { status: "busy" }), expect: { exists: true, status: ["idle"] } },
          { op: "run.put", run: run("r1", "t1", { status: "pending" }), expect: { exists: false } },
          { op: "run.put", run: run("r1", "t1", { status: "running" }), expect: { status: ["pending"] } },
        ]);
        expect((await store.getThread("t1"))?.status).toBe("busy");
        expect((await store.getRun("r1"))?.status).toBe("running");
        await expectConflict(
          store.commit([
            { op: "thread.delete", thread_id: "t1" },
            { op: "thread.put", thread: thread("t1"), expect: { exists: true } },
          ]),
        );
        expect((await store.getThread("t1"))?.status).toBe("busy");
      });

      it("run expectations: exists, status", async () => {
        await store.commit([{ op: "run.put", run: run("r1", "t1", { status: "pending" }), expect: { exists: false } }]);
        await expectConflict(store.commit([{ op: "run.put", run: run("r1", "t1"), expect: { exists: false } }]));
        await store.commit([{ op: "run.put", run: run("r1", "t1", { status: "running" }), expect: { status: ["pending"] } }]);
        await expectConflict(store.commit([{ op: "run.put", run: run("r1", "t1", { status: "running" }), expect: { status: ["pending"] } }]));
        await expectConflict(store.commit([{ op: "run.put", run: run("r2", "t1"), expect: { exists: true } }]));
        await expectConflict(store.commit([{ op: "run.delete", run_id: "r2", expect: { exists: true } }]));
        await expectConflict(store.commit([{ op: "run.delete", run_id: "r1", expect: { status: ["success"] } }]));
        expect(await store.getRun("r2")).toBeUndefined();
        expect((await store.getRun("r1"))?.status).toBe("running");
        await store.commit([{ op: "run.delete", run_id: "r1", expect: { exists: true, status: ["running"] } }]);
        expect(await store.getRun("r1")).toBeUndefined();
      });

      it("lease expectations: free and held, judged at `now`", async () => {
        const lease = (owner: string, expires_at: number): Lease => ({ key: "thread:t1", owner, expires_at, data: { run_id: "r1" } });
        await store.commit([{ op: "lease.put", lease: lease("A", 1000), expect: { state: "free", now: 0 } }]);
        // Held and unexpired: nobody else takes it, the holder renews it.
        await expectConflict(store.commit([{ op: "lease.put", lease: lease("B", 2000), expect: { state: "free", now: 500 } }]));
        await expectConflict(store.commit([{ op: "lease.put", lease: lease("B", 2000), expect: { state: "held", now: 500 } }]));
        await store.commit([{ op: "lease.put", lease: lease("A", 1500), expect: { state: "held", now: 1000 } }]);
        expect(await store.getLease("thread:t1")).toEqual(lease("A", 1500));
        // Expired as of `now`: the holder can no longer renew it; anyone can take it.
        await expectConflict(store.commit([{ op: "lease.put", lease: lease("A", 3000), expect: { state: "held", now: 1501 } }]));
        await store.commit([{ op: "lease.put", lease: lease("B", 3000), expect: { state: "free", now: 1501 } }]);
        expect((await store.getLease("thread:t1"))?.owner).toBe("B");
        // Without an expectation a put always wins.
        await store.commit([{ op: "lease.put", lease: lease("C", 10) }]);
        expect((await store.getLease("thread:t1"))?.owner).toBe("C");
        // No lease at all is free, and never held.
        await expectConflict(store.commit([{ op: "lease.put", lease: { ...lease("A", 10), key: "thread:t2" }, expect: { state: "held", now: 0 } }]));
        await store.commit([{ op: "lease.put", lease: { ...lease("A", 10), key: "thread:t2" }, expect: { state: "free", now: 0 } }]);
      });

      it("a failed expectation writes nothing, not even the ops before it", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1") }, ...puts(chain("t1", 2))]);
        const before = await snapshot(store);
        await expectConflict(
          store.commit([
            { op: "assistant.put", assistant: assistant("a1") },
            { op: "assistant_version.put", version: version("a1", 1) },
            { op: "thread.put", thread: thread("t1", { status: "busy" }) },
            { op: "thread.put", thread: thread("t2") },
            ...puts(chain("t1", 2, 2)),
            { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(1), task_id: "k", writes: [["k", "x", 1]] },
            { op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(0)] },
            { op: "run.put", run: run("r1", "t1") },
            { op: "cancel.put", request: { run_id: "r1", thread_id: "t1", action: "interrupt", requested_at: T0 } },
            { op: "lease.put", lease: { key: "thread:t1", owner: "A", expires_at: 10, data: {} } },
            { op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: {} },
            { op: "notify", topic: "runs" },
            { op: "run.put", run: run("r2", "t1"), expect: { exists: true } },
          ]),
        );
        expect(await snapshot(store)).toEqual(before);
        expect(await store.getAssistant("a1")).toBeUndefined();
        expect(await store.queryAssistantVersions({ assistant_id: "a1" })).toEqual([]);
        expect(await store.getThread("t2")).toBeUndefined();
        expect(await store.getRun("r1")).toBeUndefined();
        expect(await store.getCancelRequest("r1")).toBeUndefined();
        expect(await store.getLease("thread:t1")).toBeUndefined();
        expect(await store.getDoc("datasets", "d1")).toBeUndefined();
        // The store keeps working: the same ops without the failing one go through.
        await store.commit([...puts(chain("t1", 2, 2)), { op: "run.put", run: run("r1", "t1") }]);
        for (const cp of chain("t1", 4)) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
      });

      it("a failed commit that deleted runs leaves the queue order as it was", async () => {
        await store.commit([
          { op: "run.put", run: run("r1", "t1", { status: "pending" }) },
          { op: "run.put", run: run("r2", "t1", { status: "pending" }) },
          { op: "run.put", run: run("r3", "t2", { status: "pending" }) },
          { op: "run.put", run: run("r4", "t1", { status: "running" }) },
        ]);
        const queue = async () => ({
          all: (await store.queryRuns({ sortBy: "queue" })).map((r) => r.run_id),
          t1: (await store.queryRuns({ thread_id: "t1", sortBy: "queue" })).map((r) => r.run_id),
          active: (await store.queryRuns({ status: ["pending", "running"], sortBy: "queue" })).map((r) => r.run_id),
        });
        const before = await queue();
        expect(before).toEqual({ all: ["r1", "r2", "r3", "r4"], t1: ["r1", "r2", "r4"], active: ["r1", "r2", "r3", "r4"] });
        await expectConflict(
          store.commit([
            { op: "run.delete", run_id: "r1" },
            { op: "run.put", run: run("r2", "t1", { status: "success" }) },
            { op: "thread.delete", thread_id: "t2" },
            { op: "run.put", run: run("r5", "t1"), expect: { exists: true } },
          ]),
        );
        expect(await queue()).toEqual(before);
        await store.commit([{ op: "run.put", run: run("r6", "t1", { status: "pending" }) }]);
        expect((await queue()).t1).toEqual(["r1", "r2", "r4", "r6"]);
        expect((await queue()).active).toEqual(["r1", "r2", "r3", "r4", "r6"]);
      });

      it("sameAs: a put based on a stale read conflicts, one based on a fresh read goes through", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1") }]);
        const read = (await store.getThread("t1"))!;
        // Unchanged: the read is current.
        await store.commit([{ op: "thread.put", thread: { ...read, status: "busy" }, expect: { sameAs: read } }]);
        // Changed since: stale.
        await expectConflict(store.commit([{ op: "thread.put", thread: { ...read, status: "error" }, expect: { sameAs: read } }]));
        expect((await store.getThread("t1"))?.status).toBe("busy");
        const fresh = (await store.getThread("t1"))!;
        await store.commit([{ op: "thread.put", thread: { ...fresh, status: "idle" }, expect: { sameAs: fresh } }]);
        expect((await store.getThread("t1"))?.status).toBe("idle");
        // A put of equal content still counts as a change.
        const r2 = (await store.getThread("t1"))!;
        await store.commit([{ op: "thread.put", thread: { ...r2 } }]);
        await expectConflict(store.commit([{ op: "thread.put", thread: { ...r2, status: "busy" }, expect: { sameAs: r2 } }]));
        // Reads from queries count as reads.
        const [q] = await store.queryThreads({ ids: ["t1"] });
        await store.commit([{ op: "thread.delete", thread_id: "t1", expect: { sameAs: q! } }]);
        // A deleted thread is not the same as what was read before, nor is one re-created.
        await expectConflict(store.commit([{ op: "thread.put", thread: q!, expect: { sameAs: q! } }]));
        await store.commit([{ op: "thread.put", thread: q! }]);
        await expectConflict(store.commit([{ op: "thread.put", thread: q!, expect: { sameAs: q! } }]));
        // An object the store never returned is never "the same".
        await expectConflict(store.commit([{ op: "thread.put", thread: thread("t1"), expect: { sameAs: thread("t1") } }]));
      });

      it("sameAs survives a failed commit that touched the thread", async () => {
        await store.commit([{ op: "thread.put", thread: thread("t1") }]);
        const read = (await store.getThread("t1"))!;
        await expectConflict(
          store.commit([
            { op: "thread.put", thread: { ...read, status: "busy" } },
            { op: "run.put", run: run("r1", "t1"), expect: { exists: true } },
          ]),
        );
        await store.commit([{ op: "thread.put", thread: { ...read, status: "busy" }, expect: { sameAs: read } }]);
        expect((await store.getThread("t1"))?.status).toBe("busy");
      });
    });

    describe("leases and cancel requests", () => {
      const lease = (key: string, owner: string, expires_at: number): Lease => ({ key, owner, expires_at, data: { run_id: `run-${key}` } });

      it("puts, gets, renews and deletes leases, with and without an owner", async () => {
        await store.commit([{ op: "lease.put", lease: lease("thread:t1", "A", 100) }, { op: "lease.put", lease: lease("thread:t2", "B", 100) }]);
        expect(await store.getLease("thread:t1")).toEqual(lease("thread:t1", "A", 100));
        expect(await store.getLease("thread:t9")).toBeUndefined();
        await store.commit([{ op: "lease.put", lease: { ...lease("thread:t1", "A", 200), data: { run_id: "other" } } }]);
        expect(await store.getLease("thread:t1")).toEqual({ ...lease("thread:t1", "A", 200), data: { run_id: "other" } });
        // Another owner's delete does nothing; the holder's and an unconditional one do.
        await store.commit([{ op: "lease.delete", key: "thread:t1", owner: "B" }]);
        expect(await store.getLease("thread:t1")).toBeDefined();
        await store.commit([{ op: "lease.delete", key: "thread:t1", owner: "A" }, { op: "lease.delete", key: "thread:t2" }, { op: "lease.delete", key: "none" }]);
        expect(await store.getLease("thread:t1")).toBeUndefined();
        expect(await store.getLease("thread:t2")).toBeUndefined();
      });

      it("lists the leases of a prefix that expired before `now`", async () => {
        await store.commit([
          { op: "lease.put", lease: lease("thread:a", "A", 100) },
          { op: "lease.put", lease: lease("thread:b", "A", 200) },
          { op: "lease.put", lease: lease("thread:c", "B", 300) },
          { op: "lease.put", lease: lease("cron:a", "A", 100) },
        ]);
        const keys = (ls: readonly Lease[]) => ls.map((l) => l.key).sort();
        expect(keys(await store.expiredLeases("thread:", 50))).toEqual([]);
        expect(keys(await store.expiredLeases("thread:", 100))).toEqual([]);
        expect(keys(await store.expiredLeases("thread:", 201))).toEqual(["thread:a", "thread:b"]);
        expect(keys(await store.expiredLeases("thread:", 1000))).toEqual(["thread:a", "thread:b", "thread:c"]);
        expect(keys(await store.expiredLeases("", 150))).toEqual(["cron:a", "thread:a"]);
        expect(await store.expiredLeases("thread:", 1000, 2)).toHaveLength(2);
        expect((await store.expiredLeases("thread:", 101))[0]).toEqual(lease("thread:a", "A", 100));
        await store.commit([{ op: "lease.put", lease: lease("thread:a", "C", 5000) }]);
        expect(keys(await store.expiredLeases("thread:", 1000))).toEqual(["thread:b", "thread:c"]);
      });

      it("records cancel requests, replaces them, and removes them with their run or thread", async () => {
        const req = (run_id: string, thread_id: string, action: "interrupt" | "rollback" = "interrupt") => ({ run_id, thread_id, action, requested_at: T0 });
        await store.commit([
          { op: "run.put", run: run("r1", "t1", { status: "running" }) },
          { op: "run.put", run: run("r2", "t1", { status: "pending" }) },
          { op: "run.put", run: run("r3", "t2", { status: "running" }) },
          { op: "cancel.put", request: req("r1", "t1") },
          { op: "cancel.put", request: req("r2", "t1") },
          { op: "cancel.put", request: req("r3", "t2") },
        ]);
        expect(await store.getCancelRequest("r1")).toEqual(req("r1", "t1"));
        expect(await store.getCancelRequest("none")).toBeUndefined();
        await store.commit([{ op: "cancel.put", request: req("r1", "t1", "rollback") }]);
        expect((await store.getCancelRequest("r1"))?.action).toBe("rollback");
        await store.commit([{ op: "run.delete", run_id: "r1" }]);
        expect(await store.getCancelRequest("r1")).toBeUndefined();
        expect(await store.getCancelRequest("r2")).toBeDefined();
        await store.commit([{ op: "thread.delete", thread_id: "t1" }]);
        expect(await store.getCancelRequest("r2")).toBeUndefined();
        expect(await store.getCancelRequest("r3")).toEqual(req("r3", "t2"));
      });
    });

    describe("notify", () => {
      it("delivers to the topic's listeners after a successful commit, in commit order, never for a failed one", async () => {
        const got: Array<string | undefined> = [];
        const seen: Array<Promise<ThreadRecord | undefined>> = [];
        const other: Array<string | undefined> = [];
        const off = store.subscribe("runs", (payload) => {
          got.push(payload);
          seen.push(store.getThread("t1"));
        });
        const offOther = store.subscribe("other", (payload) => other.push(payload));
        await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "notify", topic: "runs", payload: "one" }]);
        await until(() => got.length >= 1);
        // The commit's writes are visible when its notification arrives.
        expect(await seen[0]).toBeDefined();
        await rejection(
          store.commit([
            { op: "notify", topic: "runs", payload: "failed" },
            { op: "thread.put", thread: thread("t1"), expect: { exists: false } },
          ]),
        );
        await store.commit([{ op: "notify", topic: "runs" }, { op: "notify", topic: "runs", payload: "three" }]);
        await store.commit([{ op: "notify", topic: "other", payload: "x" }]);
        await until(() => got.length >= 3 && other.length >= 1);
        await sleep(30);
        expect(got).toEqual(["one", undefined, "three"]);
        expect(other).toEqual(["x"]);
        off();
        offOther();
        await store.commit([{ op: "notify", topic: "runs", payload: "after" }]);
        await sleep(30);
        expect(got).toHaveLength(3);
      });

      it("isolates a listener that throws", async () => {
        const got: string[] = [];
        const offBad = store.subscribe("t", () => {
          throw new Error("listener failure (expected in this test)");
        });
        const off = store.subscribe("t", (p) => got.push(p!));
        await store.commit([{ op: "notify", topic: "t", payload: "a" }]);
        await store.commit([{ op: "notify", topic: "t", payload: "b" }]);
        await until(() => got.length >= 2);
        expect(got).toEqual(["a", "b"]);
        offBad();
        off();
      });
    });

    describe("checkpoint namespaces", () => {
      const inNs = (cps: StoredCheckpoint[], ns: string, tag: string): StoredCheckpoint[] =>
        cps.map((c) => ({ ...c, checkpoint_ns: ns, checkpoint: { ...c.checkpoint, channel_values: { ...c.checkpoint.channel_values, tag } } }));

      it("keys checkpoints by thread, namespace and id", async () => {
        const root = chain("t1", 3);
        const sub = inNs(chain("t1", 2), "child:task-1", "sub");
        const other = inNs(chain("t1", 4), "child:task-2|inner:x", "other");
        await store.commit([...puts(root), ...puts(sub)]);
        await store.commit(puts(other));
        expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(root[2]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "" })).toEqual(root[2]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:task-1" })).toEqual(sub[1]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:task-1", checkpoint_id: cpId(0) })).toEqual(sub[0]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:task-1", checkpoint_id: cpId(2) })).toBeUndefined();
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:task-2|inner:x", checkpoint_id: cpId(3) })).toEqual(other[3]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "nope" })).toBeUndefined();
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(1), cpId(0)]);
        expect(await store.listCheckpoints("t1", { checkpoint_ns: "child:task-1" })).toEqual([...sub].reverse());
        expect(ids(await store.listCheckpoints("t1", { checkpoint_ns: "child:task-2|inner:x", limit: 2, before: cpId(3) }))).toEqual([cpId(2), cpId(1)]);
        expect(await store.listCheckpoints("t1", { checkpoint_ns: "nope" })).toEqual([]);
        const nss = await store.listCheckpointNamespaces("t1");
        expect(nss[0]).toBe("");
        expect([...nss].sort()).toEqual(["", "child:task-1", "child:task-2|inner:x"]);
        expect(await store.listCheckpointNamespaces("t9")).toEqual([]);
      });

      it("writes and deletes per namespace; thread.delete removes every namespace", async () => {
        await store.commit([...puts(chain("t1", 3)), ...puts(inNs(chain("t1", 3), "sub", "s")), ...puts(inNs(chain("t2", 1), "sub", "s"))]);
        await store.commit([
          { op: "writes.put", thread_id: "t1", checkpoint_ns: "sub", checkpoint_id: cpId(1), task_id: "k", writes: [["k", "x", "sub"]] },
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(1), task_id: "k", writes: [["k", "x", "root"]] },
        ]);
        expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "sub", checkpoint_id: cpId(1) }))?.pending_writes).toEqual([["k", "x", "sub"]]);
        expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) }))?.pending_writes).toEqual([["k", "x", "root"]]);
        await expect(store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_ns: "nope", checkpoint_id: cpId(1), task_id: "k", writes: [] }])).rejects.toThrow();
        await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ns: "sub", checkpoint_ids: [cpId(2)] }]);
        expect(ids(await store.listCheckpoints("t1", { checkpoint_ns: "sub" }))).toEqual([cpId(1), cpId(0)]);
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(1), cpId(0)]);
        await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(0), cpId(1), cpId(2)] }]);
        expect(await store.listCheckpoints("t1")).toEqual([]);
        expect(await store.getCheckpoint({ thread_id: "t1" })).toBeUndefined();
        expect(await store.listCheckpointNamespaces("t1")).toEqual(["sub"]);
        await store.commit([{ op: "thread.delete", thread_id: "t1" }]);
        expect(await store.listCheckpointNamespaces("t1")).toEqual([]);
        expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "sub" })).toBeUndefined();
        expect(await store.listCheckpoints("t1", { checkpoint_ns: "sub" })).toEqual([]);
        expect(ids(await store.listCheckpoints("t2", { checkpoint_ns: "sub" }))).toEqual([cpId(0)]);
      });

      it("stores checkpoint values as opaque JSON: growing chats, forks, engine-looking shapes", async () => {
        // A chat whose message list grows by two each turn, every checkpoint a child of the last.
        const turns: StoredCheckpoint[] = [];
        let msgs: unknown[] = [];
        for (let i = 0; i < 40; i++) {
          msgs = [...msgs, { type: "human", content: `q${i}`, id: `h${i}` }, { type: "ai", content: [{ type: "text", text: `a${i}` }], id: `a${i}` }];
          turns.push(checkpoint("t1", cpId(i), i === 0 ? null : cpId(i - 1), { messages: msgs, turn: i, log: Array.from({ length: i }, (_, k) => k) }));
        }
        for (const cp of turns) await store.commit(puts([cp]));
        expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(turns[39]);
        expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(turns[39]);
        for (const i of [0, 1, 7, 20, 38]) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(i) })).toEqual(turns[i]);
        expect(await store.listCheckpoints("t1", { limit: 5 })).toEqual(turns.slice(35).reverse());
        // Forks of an old checkpoint: shorter, diverging, and extending from there.
        const forkA = checkpoint("t1", cpId(100), cpId(10), { messages: [...(turns[10]!.checkpoint.channel_values.messages as unknown[]), { type: "ai", content: "other" }] });
        const forkB = checkpoint("t1", cpId(101), cpId(100), { messages: [...(forkA.checkpoint.channel_values.messages as unknown[]), { type: "human", content: "more" }] });
        const rewound = checkpoint("t1", cpId(102), cpId(39), { messages: msgs.slice(0, 3) });
        const regrown = checkpoint("t1", cpId(103), cpId(102), { messages: [...msgs.slice(0, 3), { changed: true }] });
        for (const cp of [forkA, forkB, rewound, regrown]) await store.commit(puts([cp]));
        for (const cp of [...turns, forkA, forkB, rewound, regrown]) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
        // Values shaped like an engine's private forms are data like any other.
        const odd = checkpoint("t1", cpId(104), cpId(103), { messages: { $chunks: [[1, 2], [3]] }, list: { $ref: 1, n: 2 }, empty: [], nested: [[[]]] });
        await store.commit(puts([odd]));
        expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(odd);
        const got = await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(39) });
        expect(Array.isArray(got!.checkpoint.channel_values.messages)).toBe(true);
        expect(JSON.parse(JSON.stringify(got))).toEqual(turns[39]);
      });
    });

    describe("run events", () => {
      it("numbers events from 0 and replays a resumable log from `after`", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: true });
        ev.publish("r1", "metadata", { run_id: "r1" });
        ev.publish("r1", "values", { messages: [{ type: "ai", content: "hi" }] });
        ev.publish("r1", "end", null);
        await ev.end("r1");
        expect(await collect(ev.read("r1", { after: -1 }))).toEqual([
          { seq: 0, event: "metadata", data: { run_id: "r1" } },
          { seq: 1, event: "values", data: { messages: [{ type: "ai", content: "hi" }] } },
          { seq: 2, event: "end", data: null },
        ]);
        expect((await collect(ev.read("r1", { after: 0 }))).map((e) => e.seq)).toEqual([1, 2]);
        expect(await collect(ev.read("r1", { after: 2 }))).toEqual([]);
        // Readable again and again.
        expect(await collect(ev.read("r1", { after: -1 }))).toHaveLength(3);
      });

      it("ifAbsent \"end\": a reader of a log that is not open ends at once; a retained log is still read", async () => {
        const ev = store.events;
        expect(await collect(ev.read("never-opened", { after: -1, ifAbsent: "end" }))).toEqual([]);
        await ev.open("kept", { resumable: true });
        ev.publish("kept", "metadata", { run_id: "kept" });
        await ev.end("kept");
        expect((await collect(ev.read("kept", { after: -1, ifAbsent: "end" }))).map((e) => e.seq)).toEqual([0]);
      });

      it("a reader attached before publishing sees every event in order, live", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: false });
        const a = collect(ev.read("r1", { after: -1 }));
        const b = collect(ev.read("r1", { after: -1 }));
        await sleep(20);
        for (let i = 0; i < 500; i++) {
          ev.publish("r1", "messages", [i]);
          if (i % 100 === 0) await sleep(1);
        }
        await ev.end("r1");
        const [ga, gb] = await Promise.all([a, b]);
        expect(ga.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i));
        expect(ga.map((e) => (e.data as number[])[0])).toEqual(Array.from({ length: 500 }, (_, i) => i));
        expect(gb).toEqual(ga);
      });

      it("a reader without `after` sees only what is published after it attached", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: true });
        ev.publish("r1", "a", 1);
        ev.publish("r1", "b", 2);
        const it = ev.read("r1")[Symbol.asyncIterator]();
        const first = it.next();
        await sleep(30);
        ev.publish("r1", "c", 3);
        ev.publish("r1", "d", 4);
        await ev.end("r1");
        expect((await first).value).toEqual({ seq: 2, event: "c", data: 3 });
        expect((await it.next()).value).toEqual({ seq: 3, event: "d", data: 4 });
        expect((await it.next()).done).toBe(true);
      });

      it("a read of a log that is not open yet waits for it", async () => {
        const ev = store.events;
        const got = collect(ev.read("r1", { after: -1 }));
        await sleep(30);
        await ev.open("r1", { resumable: false });
        ev.publish("r1", "a", 1);
        ev.publish("r1", "b", 2);
        await ev.end("r1");
        expect((await got).map((e) => e.event)).toEqual(["a", "b"]);
      });

      it("end ends readers once they drained; a non-resumable log does not replay after its end", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: false });
        const reader = ev.read("r1", { after: -1 })[Symbol.asyncIterator]();
        const first = reader.next();
        await sleep(20);
        ev.publish("r1", "a", 1);
        ev.publish("r1", "b", 2);
        await ev.end("r1");
        expect((await first).value?.event).toBe("a");
        expect((await reader.next()).value?.event).toBe("b");
        expect((await reader.next()).done).toBe(true);
        const t0 = Date.now();
        expect(await collect(ev.read("r1", { after: -1, signal: AbortSignal.timeout(3000) }))).toEqual([]);
        expect(Date.now() - t0).toBeLessThan(2000);
      });

      it("drop forgets a log", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: true });
        ev.publish("r1", "a", 1);
        await ev.end("r1");
        await ev.drop("r1");
        const controller = new AbortController();
        const got = collect(ev.read("r1", { after: -1, signal: controller.signal }));
        await sleep(30);
        controller.abort();
        expect(await got).toEqual([]);
        // The id can be opened again from scratch.
        await ev.open("r1", { resumable: true });
        ev.publish("r1", "b", 2);
        await ev.end("r1");
        expect(await collect(ev.read("r1", { after: -1 }))).toEqual([{ seq: 0, event: "b", data: 2 }]);
      });

      it("an abort ends a waiting reader without an error", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: true });
        ev.publish("r1", "a", 1);
        const controller = new AbortController();
        const got = collect(ev.read("r1", { after: -1, signal: controller.signal }));
        await sleep(30);
        controller.abort();
        expect(await got).toEqual([{ seq: 0, event: "a", data: 1 }]);
        // Already aborted: ends at once.
        expect(await collect(ev.read("r1", { after: 5, signal: AbortSignal.abort() }))).toEqual([]);
        // The log itself goes on.
        ev.publish("r1", "b", 2);
        await ev.end("r1");
        expect((await collect(ev.read("r1", { after: -1 }))).map((e) => e.seq)).toEqual([0, 1]);
      });

      it("keeps logs of different runs apart", async () => {
        const ev = store.events;
        await ev.open("r1", { resumable: true });
        await ev.open("r2", { resumable: true });
        ev.publish("r1", "a", 1);
        ev.publish("r2", "b", 2);
        ev.publish("r1", "c", 3);
        await ev.end("r1");
        await ev.end("r2");
        expect(await collect(ev.read("r1", { after: -1 }))).toEqual([{ seq: 0, event: "a", data: 1 }, { seq: 1, event: "c", data: 3 }]);
        expect(await collect(ev.read("r2", { after: -1 }))).toEqual([{ seq: 0, event: "b", data: 2 }]);
      });
    });

    describe("values that cannot be stored", () => {
      const bad = (): Array<[string, unknown]> => {
        const cycle: Record<string, unknown> = { a: 1 };
        cycle.self = { again: cycle };
        let deep: Record<string, unknown> = { leaf: true };
        for (let i = 0; i < 5000; i++) deep = { d: deep };
        return [
          ["a function", { f: () => 1 }],
          ["a cycle", cycle],
          ["a BigInt", { n: BigInt(10) }],
          ["NaN", { list: [1, Number.NaN] }],
          ["Infinity", { n: Number.POSITIVE_INFINITY }],
          ["a 5,000-level nested object", deep],
        ];
      };
      const setup = async () => {
        await store.commit([
          { op: "thread.put", thread: thread("t1", { values: { messages: messages(2) } }) },
          ...puts(chain("t1", 2)),
          { op: "run.put", run: run("r1", "t1", { status: "pending" }) },
          { op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: { n: 1 } },
        ]);
      };
      const second = (value: unknown): Array<[string, WriteOp]> => [
        ["thread.put metadata", { op: "thread.put", thread: thread("t1", { metadata: { user: "ann", bad: value }, status: "busy" }) }],
        ["thread.put values", { op: "thread.put", thread: thread("t1", { values: { messages: [...messages(2), value] } }) }],
        ["checkpoint.put values", { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(2), cpId(1), { messages: [...messages(3), value] }) }],
        ["checkpoint.put metadata", { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(2), cpId(1), { step: 2 }, { writes: { node: value } }) }],
        ["writes.put", { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(1), task_id: "k", writes: [["k", "x", value]] }],
        ["run.put kwargs", { op: "run.put", run: run("r1", "t1", { status: "running", kwargs: { input: value } }) }],
        ["doc.put", { op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: { n: 2, value } }],
        ["assistant.put config", { op: "assistant.put", assistant: assistant("a1", { config: { configurable: { value } } }) }],
      ];

      it("rejects the commit with invalid_input and leaves the store exactly as before", async () => {
        await setup();
        const before = await snapshot(store);
        for (const [what, value] of bad()) {
          for (const [where, op] of second(value)) {
            const err = await rejection(
              store.commit([
                { op: "thread.put", thread: thread("t2") },
                op,
                { op: "run.put", run: run("r9", "t1") },
              ]),
            );
            expect(GraphdockError.is(err, "invalid_input"), `${what} in ${where}: ${String(err)}`).toBe(true);
            expect(await snapshot(store), `${what} in ${where}`).toEqual(before);
            expect(await store.getThread("t2"), `${what} in ${where}`).toBeUndefined();
          }
        }
        // Still working, and the same ops with good values go through.
        await store.commit([{ op: "thread.put", thread: thread("t2") }, ...second({ ok: [1, "two", null, true, { x: 1.5 }] }).map(([, op]) => op)]);
        expect((await store.getRun("r1"))?.kwargs).toEqual({ input: { ok: [1, "two", null, true, { x: 1.5 }] } });
      });

      it("accepts deep values well within the limit", async () => {
        let deep: Record<string, unknown> = { leaf: [1, 2] };
        for (let i = 0; i < 100; i++) deep = { d: deep };
        await store.commit([{ op: "doc.put", collection: "datasets", id: "deep", parent: null, doc: deep }]);
        expect((await store.getDoc("datasets", "deep"))?.doc).toEqual(deep);
      });
    });

    itemsContract({ store: () => store, setStore: (s) => (store = s), ...(reopen ? { reopen } : {}) });

    if (reopen) {
      describe("reopen", () => {
        it("keeps everything after close and open", async () => {
          const cps = chain("t1", 12);
          const ops: WriteOp[] = [
            { op: "assistant.put", assistant: assistant("a1") },
            { op: "assistant_version.put", version: version("a1", 1) },
            { op: "assistant_version.put", version: version("a1", 2) },
            { op: "thread.put", thread: thread("t1", { values: cps[11]!.checkpoint.channel_values }) },
            { op: "thread.put", thread: thread("t2") },
            { op: "run.put", run: run("r1", "t1", { status: "pending" }) },
            { op: "doc.put", collection: "experiments", id: "x2", parent: null, doc: { n: 2 } },
            { op: "doc.put", collection: "experiments", id: "x1", parent: null, doc: { n: 1 } },
          ];
          await store.commit(ops);
          for (const cp of cps) await store.commit(puts([cp]));
          await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(11), task_id: "k", writes: [["k", "messages", "w"]] }]);
          await store.commit([{ op: "thread.delete", thread_id: "t2" }]);

          store = await reopen(store);
          expect(await store.getAssistant("a1")).toEqual(assistant("a1"));
          expect((await store.queryAssistantVersions({ assistant_id: "a1", sortOrder: "asc" })).map((v) => v.version)).toEqual([1, 2]);
          expect(await store.getThread("t1")).toEqual(thread("t1", { values: cps[11]!.checkpoint.channel_values }));
          expect(await store.getThread("t2")).toBeUndefined();
          expect((await store.getRun("r1"))?.status).toBe("pending");
          expect((await store.listDocs("experiments")).map((d) => d.id)).toEqual(["x2", "x1"]);
          const latest = await store.getCheckpoint({ thread_id: "t1" });
          expect(latest).toEqual({ ...cps[11]!, pending_writes: [["k", "messages", "w"]] });
          expect(await store.listCheckpoints("t1", { before: cpId(11) })).toEqual(cps.slice(0, 11).reverse());
          // And it keeps appending where it stopped.
          const next = chain("t1", 2, 12);
          await store.commit(puts(next));
          expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(next[1]);
          store = await reopen(store);
          expect(ids(await store.listCheckpoints("t1", { limit: 3 }))).toEqual([cpId(13), cpId(12), cpId(11)]);
          expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(13) })).toEqual(next[1]);
        });
      });
    }
  });
}
