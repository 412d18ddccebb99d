// Storage format 4 of the IndexedDB store (schema 5): a checkpoint row whose parent is the row
// before it leaves the parent id out; reads, deletes and the migration from format 3 keep every
// checkpoint's parent.
import "fake-indexeddb/auto";
import { openDB } from "idb";
import { describe, expect, it } from "vitest";
import { DB_VERSION, INDEXEDDB_FORMAT } from "../../src/persistence/indexeddb/index.js";
import type { StoredCheckpoint, WriteOp } from "../../src/persistence/types.js";
import { chain, checkpoint, cpId, messages, run, thread } from "./contract.js";
import { olderDatabase, openAt, readFixture } from "./indexeddb-fixtures.js";

let n = 0;
const puts = (cps: StoredCheckpoint[]): WriteOp[] => cps.map((c) => ({ op: "checkpoint.put", checkpoint: c }));
const parents = (cps: StoredCheckpoint[]) => cps.map((c) => [c.checkpoint.id, c.parent_checkpoint_id]);

/** The stored checkpoint rows of a namespace, as JSON text. */
async function rawRows(name: string): Promise<string[]> {
  const db = await openDB(name);
  const rows = (await db.getAll("cps")).map((r) => JSON.stringify(r));
  db.close();
  return rows;
}

describe("indexedDbStore format 4", () => {
  it("leaves out a parent id that is the previous row's, and reads it back everywhere", async () => {
    const name = `f4-${n++}`;
    const store = await openAt(name);
    const cps = chain("t1", 20);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, ...puts(cps.slice(0, 10))]);
    for (const c of cps.slice(10)) await store.commit([{ op: "checkpoint.put", checkpoint: c }]);
    // A fork keeps its parent id: its parent is not the row before it.
    const fork = checkpoint("t1", cpId(100), cpId(4), { messages: messages(5) });
    await store.commit([{ op: "checkpoint.put", checkpoint: fork }]);
    const rows = await rawRows(name);
    // Only the fork's row names a checkpoint besides its own.
    const named = rows.filter((r) => (r.match(/1f000000-0000-6000-8000-/g) ?? []).length > 1);
    expect(named).toHaveLength(1);
    expect(named[0]).toContain(cpId(4));

    const expected = [fork, ...cps.slice().reverse()];
    expect(parents(await store.listCheckpoints("t1"))).toEqual(parents(expected));
    expect(parents(await store.listCheckpoints("t1", { limit: 3 }))).toEqual(parents(expected.slice(0, 3)));
    expect(parents(await store.listCheckpoints("t1", { limit: 2, before: cpId(15) }))).toEqual(parents(expected.slice(6, 8)));
    expect(parents(await store.listCheckpoints("t1", { filter: { step: 7 } }))).toEqual([[cpId(7), cpId(6)]]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(12) }))?.parent_checkpoint_id).toBe(cpId(11));
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.parent_checkpoint_id).toBe(cpId(4));
    expect(await store.listCheckpoints("t1")).toEqual(expected);
    await store.close();
  });

  it("keeps the parent ids of the checkpoints after deleted ones", async () => {
    const store = await openAt(`f4-${n++}`);
    const cps = chain("t1", 10);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, ...puts(cps)]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(3)] }]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(6), cpId(5), cpId(0)] }]);
    const left = cps.filter((c) => ![0, 3, 5, 6].includes(Number(c.checkpoint.id.slice(-2))));
    expect(parents(await store.listCheckpoints("t1"))).toEqual(parents(left.slice().reverse()));
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(7) }))?.parent_checkpoint_id).toBe(cpId(6));
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(4) }))?.parent_checkpoint_id).toBe(cpId(3));
    // A checkpoint put after the deletes has the latest one as its parent (the row before it).
    const next = chain("t1", 1, 10)[0]!;
    await store.commit([{ op: "checkpoint.put", checkpoint: next }]);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.parent_checkpoint_id).toBe(cpId(9));
    // Deleting the newest ones (a rollback) leaves the rest as they were.
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cpId(10), cpId(9)] }]);
    expect(parents(await store.listCheckpoints("t1"))).toEqual(parents(left.slice(0, -1).reverse()));
    await store.close();
  });

  it("keeps a rewritten checkpoint's parent and the next one's", async () => {
    const store = await openAt(`f4-${n++}`);
    const cps = chain("t1", 5);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, ...puts(cps)]);
    await store.commit([{ op: "checkpoint.put", checkpoint: { ...cps[2]!, metadata: { ...cps[2]!.metadata, again: true } } }]);
    expect(parents(await store.listCheckpoints("t1"))).toEqual(parents(cps.slice().reverse()));
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(2) }))?.metadata).toMatchObject({ again: true });
    await store.close();
  });
});

describe("indexedDbStore format 4 pending writes", () => {
  it("keeps a task's id once for its writes, and every write in order", async () => {
    const name = `f4-${n++}`;
    const store = await openAt(name);
    const [cp] = chain("t1", 1);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "checkpoint.put", checkpoint: cp! }]);
    const at = { thread_id: "t1", checkpoint_id: cp!.checkpoint.id };
    await store.commit([
      { op: "writes.put", ...at, task_id: "task-a", writes: [["task-a", "x", 1], ["task-a", "y", { k: [1] }], ["task-a", "z", null]] },
      { op: "writes.put", ...at, task_id: "task-b", writes: [["task-b", "x", 2]] },
    ]);
    await store.commit([{ op: "writes.put", ...at, task_id: "task-c", writes: [["task-c", "x", 3], ["task-c", "y", 4]] }]);
    const expected = [
      ["task-a", "x", 1],
      ["task-a", "y", { k: [1] }],
      ["task-a", "z", null],
      ["task-b", "x", 2],
      ["task-c", "x", 3],
      ["task-c", "y", 4],
    ];
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.pending_writes).toEqual(expected);
    const [row] = await rawRows(name);
    expect(row!.match(/task-a/g)).toHaveLength(1);
    expect(row!.match(/task-c/g)).toHaveLength(1);
    await store.close();
    const again = await openAt(name);
    expect((await again.listCheckpoints("t1"))[0]!.pending_writes).toEqual(expected);
    await again.close();
  });
});

describe("indexedDbStore migration from schema 4 (format 3)", () => {
  const fixture = readFixture("indexeddb-format-3.json");


  it("reads back everything a format-3 database held, marks it format 4, and keeps writing to it", async () => {
    const name = `migrate4-${n++}`;
    await olderDatabase(name, 4, fixture);
    const store = await openAt(name);
    const { expected } = fixture;
    expect(await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc" })).toEqual(expected.threads);
    expect(await store.listCheckpoints("t-a")).toEqual(expected.checkpoints["t-a"]);
    expect(await store.listCheckpoints("t-a", { checkpoint_ns: "node:task" })).toEqual(expected.checkpoints["t-a/node:task"]);
    expect(await store.listCheckpoints("t-b")).toEqual(expected.checkpoints["t-b"]);
    expect(await store.queryRuns({ sortBy: "queue" })).toEqual(expected.runs);
    const db = await openDB(name);
    expect(db.version).toBe(DB_VERSION);
    expect((await db.get("meta", "format"))?.value).toBe(INDEXEDDB_FORMAT);
    db.close();

    // New checkpoints extend a format-3 chain, and deleting a format-3 row keeps the next one's parent.
    const latest = (await store.getCheckpoint({ thread_id: "t-b" }))!;
    const next = chain("t-b", 1, 3)[0]!;
    await store.commit([{ op: "checkpoint.put", checkpoint: next }, { op: "run.put", run: run("r4", "t-b") }]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t-b", checkpoint_ids: [latest.checkpoint.id] }]);
    expect(parents(await store.listCheckpoints("t-b"))).toEqual(parents([next, ...expected.checkpoints["t-b"]!.slice(1)]));
    expect((await store.getCheckpoint({ thread_id: "t-b" }))?.checkpoint.channel_values).toEqual(next.checkpoint.channel_values);
    await store.close();

    // A release that only knows format 3 refuses it now (as it refuses any newer format).
    expect(INDEXEDDB_FORMAT).toBeGreaterThan(3);
  });
});
