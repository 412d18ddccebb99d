/**
 * The Store contract: every store (memory, JSON file, IndexedDB in Node and in Chromium) passes
 * this suite. Imports only `vitest` and core-safe src modules, so the browser harness can bundle it.
 *
 * `create` returns a fresh, opened, empty store; `reopen` closes a store and opens it again on
 * the same data (persistent stores only). The suite closes the stores it gets.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store, StoredCheckpoint, WriteOp } from "../../src/persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../../src/types.js";

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
        const all = await store.listAssistants();
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
        const vs = await store.listAssistantVersions("a1");
        expect(vs.map((v) => [v.version, v.name])).toEqual([[1, "v1"], [2, "again"]]);
        await store.commit([{ op: "assistant.delete", assistant_id: "a1" }]);
        expect(await store.getAssistant("a1")).toBeUndefined();
        expect(await store.listAssistantVersions("a1")).toEqual([]);
        expect(await store.listAssistantVersions("a2")).toHaveLength(1);
      });
    });

    describe("threads and runs", () => {
      it("puts, gets and lists threads with their values", async () => {
        const values = { messages: messages(12), summary: "s", flags: [1, 2] };
        await store.commit([{ op: "thread.put", thread: thread("t1", { values }) }, { op: "thread.put", thread: thread("t2") }]);
        expect(await store.getThread("t1")).toEqual(thread("t1", { values }));
        expect(await store.getThread("nope")).toBeUndefined();
        expect((await store.listThreads()).map((t) => t.thread_id).sort()).toEqual(["t1", "t2"]);
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
        expect((await store.getCheckpoint("t1"))?.checkpoint.channel_values).toEqual(next.checkpoint.channel_values);
      });

      it("puts, updates, lists by thread and deletes runs", async () => {
        await store.commit([
          { op: "run.put", run: run("r1", "t1", { status: "pending" }) },
          { op: "run.put", run: run("r2", "t1") },
          { op: "run.put", run: run("r3", "t2") },
        ]);
        await store.commit([{ op: "run.put", run: run("r1", "t1", { status: "running" }) }]);
        expect((await store.getRun("r1"))?.status).toBe("running");
        expect((await store.listRuns("t1")).map((r) => r.run_id).sort()).toEqual(["r1", "r2"]);
        expect((await store.listRuns()).map((r) => r.run_id).sort()).toEqual(["r1", "r2", "r3"]);
        expect(await store.listRuns("none")).toEqual([]);
        await store.commit([{ op: "run.delete", run_id: "r1" }, { op: "run.delete", run_id: "missing" }]);
        expect(await store.getRun("r1")).toBeUndefined();
        expect((await store.listRuns("t1")).map((r) => r.run_id)).toEqual(["r2"]);
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
        expect(await store.getCheckpoint("t1")).toBeUndefined();
        expect(await store.getCheckpoint("t1", cpId(2))).toBeUndefined();
        expect(await store.listCheckpoints("t1")).toEqual([]);
        expect(await store.getRun("r1")).toBeUndefined();
        expect(await store.listRuns("t1")).toEqual([]);
        expect(await store.getThread("t2")).toBeDefined();
        expect(ids(await store.listCheckpoints("t2"))).toEqual(ids(chain("t2", 5)).reverse());
        expect((await store.getCheckpoint("t2"))?.checkpoint.channel_values).toEqual(chain("t2", 5)[4]!.checkpoint.channel_values);
        expect(await store.getRun("r2")).toBeDefined();
        // The id can be used again from scratch.
        await store.commit(puts(chain("t1", 2)));
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(1), cpId(0)]);
        expect((await store.getCheckpoint("t1"))?.checkpoint.channel_values).toEqual({ messages: messages(2), step: 1 });
      });
    });

    describe("checkpoints", () => {
      it("returns the last put as latest, any by id, and undefined for unknown ones", async () => {
        const cps = chain("t1", 4);
        await store.commit(puts(cps.slice(0, 2)));
        await store.commit(puts(cps.slice(2)));
        expect(await store.getCheckpoint("t1")).toEqual(cps[3]);
        expect(await store.getCheckpoint("t1", cpId(1))).toEqual(cps[1]);
        expect(await store.getCheckpoint("t1", "unknown")).toBeUndefined();
        expect(await store.getCheckpoint("t9")).toBeUndefined();
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
        expect((await store.getCheckpoint("t1"))?.checkpoint.id).toBe("a-first-id");
        expect(ids(await store.listCheckpoints("t1"))).toEqual(["a-first-id", "b-second-id"]);
      });

      it("replaces a checkpoint with the same id in place", async () => {
        const cps = chain("t1", 3);
        await store.commit(puts(cps));
        const replaced = { ...cps[1]!, metadata: { ...cps[1]!.metadata, replaced: true } };
        await store.commit(puts([replaced]));
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(1), cpId(0)]);
        expect((await store.getCheckpoint("t1", cpId(1)))?.metadata.replaced).toBe(true);
        expect((await store.getCheckpoint("t1"))?.checkpoint.id).toBe(cpId(2));
      });

      it("deletes checkpoints by id", async () => {
        await store.commit(puts(chain("t1", 4)));
        await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(3), cpId(1), "unknown"] }]);
        expect(ids(await store.listCheckpoints("t1"))).toEqual([cpId(2), cpId(0)]);
        expect((await store.getCheckpoint("t1"))?.checkpoint.channel_values).toEqual(chain("t1", 4)[2]!.checkpoint.channel_values);
        await store.commit([{ op: "checkpoint.delete", thread_id: "none", checkpoint_ids: [cpId(0)] }]);
      });

      it("records pending writes in order and replaces a task's writes", async () => {
        await store.commit(puts(chain("t1", 2)));
        await store.commit([
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "a", writes: [["a", "x", 1], ["a", "y", { deep: [1] }]] },
          { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "b", writes: [["b", "__error__", { message: "boom" }]] },
        ]);
        await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "a", writes: [["a", "x", 2]] }]);
        expect((await store.getCheckpoint("t1", cpId(0)))?.pending_writes).toEqual([
          ["b", "__error__", { message: "boom" }],
          ["a", "x", 2],
        ]);
        expect((await store.getCheckpoint("t1"))?.pending_writes).toEqual([]);
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
        for (const cp of all) expect(await store.getCheckpoint("t1", cp.checkpoint.id)).toEqual(cp);
        expect(await store.listCheckpoints("t1")).toEqual([...all].reverse());
        // A child put in the same commit as its parent.
        const pair = chain("t2", 6);
        await store.commit(puts(pair));
        for (const cp of pair) expect(await store.getCheckpoint("t2", cp.checkpoint.id)).toEqual(cp);
      });

      it("returns values that survive a JSON round trip unchanged", async () => {
        const cps = chain("t1", 5);
        await store.commit(puts(cps));
        const got = await store.getCheckpoint("t1");
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
        for (const cp of chain("t1", 8)) expect(await store.getCheckpoint("t1", cp.checkpoint.id)).toEqual(cp);
      });

      it("lands every commit issued concurrently", async () => {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.commit([{ op: "thread.put", thread: thread(`t${i}`) }, { op: "run.put", run: run(`r${i}`, `t${i}`) }]),
          ),
        );
        expect(await store.listThreads()).toHaveLength(20);
        expect(await store.listRuns()).toHaveLength(20);
      });
    });

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
          expect((await store.listAssistantVersions("a1")).map((v) => v.version)).toEqual([1, 2]);
          expect(await store.getThread("t1")).toEqual(thread("t1", { values: cps[11]!.checkpoint.channel_values }));
          expect(await store.getThread("t2")).toBeUndefined();
          expect((await store.getRun("r1"))?.status).toBe("pending");
          expect((await store.listDocs("experiments")).map((d) => d.id)).toEqual(["x2", "x1"]);
          const latest = await store.getCheckpoint("t1");
          expect(latest).toEqual({ ...cps[11]!, pending_writes: [["k", "messages", "w"]] });
          expect(await store.listCheckpoints("t1", { before: cpId(11) })).toEqual(cps.slice(0, 11).reverse());
          // And it keeps appending where it stopped.
          const next = chain("t1", 2, 12);
          await store.commit(puts(next));
          expect(await store.getCheckpoint("t1")).toEqual(next[1]);
          store = await reopen(store);
          expect(ids(await store.listCheckpoints("t1", { limit: 3 }))).toEqual([cpId(13), cpId(12), cpId(11)]);
          expect(await store.getCheckpoint("t1", cpId(13))).toEqual(next[1]);
        });
      });
    }
  });
}
