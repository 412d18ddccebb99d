// The IndexedDB store's request savings (src/persistence/indexeddb/base.ts `rowById`,
// writes.ts `prefetch`, the run base cache) keep their answers right when another connection
// (tab) changed the database in between, and a commit puts each checkpoint row once.
import "fake-indexeddb/auto";
import { describe, expect, it } from "vitest";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import type { Store } from "../../src/persistence/types.js";
import { chain, checkpoint, cpId, messages, run, thread } from "./contract.js";

let n = 0;
async function tabs(): Promise<[Store, Store]> {
  const name = `requests-${Date.now()}-${n++}`;
  const a = indexedDbStore(name);
  const b = indexedDbStore(name);
  await a.open();
  await b.open();
  return [a, b];
}

/** Counts calls of `method` on `proto` while `fn` runs, for receivers `match` accepts. */
async function counting<P extends object>(proto: P, method: keyof P, match: (self: unknown) => boolean, fn: () => Promise<void>): Promise<number> {
  const orig = proto[method] as (...args: unknown[]) => unknown;
  let calls = 0;
  (proto as Record<keyof P, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    if (match(this)) calls++;
    return orig.apply(this, args);
  };
  try {
    await fn();
  } finally {
    (proto as Record<keyof P, unknown>)[method] = orig;
  }
  return calls;
}

describe("indexeddb: fewer requests, same answers across connections", () => {
  it("writes to a checkpoint that another connection has since extended land on that checkpoint, and a fork from it keeps its parent", async () => {
    const [a, b] = await tabs();
    await a.commit([{ op: "thread.put", thread: thread("t1") }, ...chain("t1", 2).map((c) => ({ op: "checkpoint.put" as const, checkpoint: c }))]);
    // B extends the namespace: cp1 is no longer the latest row.
    await b.commit([{ op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(2), cpId(1), { messages: messages(3), step: 2 }, { step: 2 }) }]);
    // A, which last saw cp1 as the latest, records a task's writes on cp1 and forks from it.
    const fork = checkpoint("t1", cpId(9), cpId(1), { messages: [...messages(2), { type: "ai", content: "fork", id: "f" }], step: 2 }, { step: 2 });
    await a.commit([
      { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(1), task_id: "task", writes: [["task", "messages", [{ type: "ai", content: "fork", id: "f" }]]] },
      { op: "checkpoint.put", checkpoint: fork },
      { op: "writes.put", thread_id: "t1", checkpoint_id: cpId(9), task_id: "next", writes: [["next", "step", 3]] },
    ]);
    for (const store of [a, b]) {
      const one = await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) });
      expect(one?.pending_writes).toEqual([["task", "messages", [{ type: "ai", content: "fork", id: "f" }]]]);
      const two = await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(2) });
      expect(two?.parent_checkpoint_id).toBe(cpId(1));
      expect(two?.pending_writes).toEqual([]);
      expect((two?.checkpoint.channel_values as { messages: unknown[] }).messages).toEqual(messages(3));
      const forked = await store.getCheckpoint({ thread_id: "t1" });
      expect(forked?.checkpoint.id).toBe(cpId(9));
      expect(forked?.parent_checkpoint_id).toBe(cpId(1));
      expect(forked?.pending_writes).toEqual([["next", "step", 3]]);
      expect((forked?.checkpoint.channel_values as { messages: unknown[] }).messages).toEqual(fork.checkpoint.channel_values.messages);
      expect((await store.listCheckpoints("t1")).map((c) => c.checkpoint.id)).toEqual([cpId(9), cpId(2), cpId(1), cpId(0)]);
    }
    await a.close();
    await b.close();
  });

  it("a run rewritten by another connection after its thread was deleted and created again reads as that connection wrote it", async () => {
    const [a, b] = await tabs();
    const kwargsA = { input: { messages: [{ type: "human", content: "from a" }] }, config: { tags: ["a"] } };
    await a.commit([{ op: "thread.put", thread: thread("t1") }, { op: "run.put", run: run("r1", "t1", { status: "pending", kwargs: kwargsA }) }]);
    // A's second run on the thread reads (and caches) the thread's run base.
    await a.commit([{ op: "run.put", run: run("r2", "t1", { status: "pending", kwargs: kwargsA }) }]);
    expect((await a.getRun("r2"))?.kwargs).toEqual(kwargsA);
    // B deletes the thread (its run bases go with it) and writes r1 again with other kwargs.
    const kwargsB = { input: { messages: [{ type: "human", content: "from b" }] }, config: { tags: ["b"] } };
    await b.commit([{ op: "thread.delete", thread_id: "t1" }]);
    await b.commit([{ op: "thread.put", thread: thread("t1") }, { op: "run.put", run: run("r1", "t1", { status: "pending", kwargs: kwargsB }) }]);
    expect(await a.getRun("r2")).toBeUndefined();
    expect((await a.getRun("r1"))?.kwargs).toEqual(kwargsB);
    // A updates r1 (its base is B's) and adds a run on the thread (its own hint names a base that is gone).
    await a.commit([{ op: "run.put", run: { ...(await a.getRun("r1"))!, status: "running" } }]);
    await a.commit([{ op: "run.put", run: run("r3", "t1", { status: "pending", kwargs: kwargsA }) }]);
    for (const store of [a, b]) {
      expect(await store.getRun("r1")).toMatchObject({ status: "running", kwargs: kwargsB });
      expect((await store.getRun("r3"))?.kwargs).toEqual(kwargsA);
    }
    await a.close();
    await b.close();
  });

  it("checkpoints put again in a commit with new ones are rewritten in place, whatever other threads hold between their ids", async () => {
    const [a, b] = await tabs();
    await a.commit([{ op: "thread.put", thread: thread("t1") }, ...chain("t1", 3).map((c) => ({ op: "checkpoint.put" as const, checkpoint: c }))]);
    // Another thread holds ids between them (close ids, in another namespace).
    await b.commit([{ op: "thread.put", thread: thread("t2") }, ...chain("t2", 6).map((c) => ({ op: "checkpoint.put" as const, checkpoint: c }))]);
    const again = checkpoint("t1", cpId(1), cpId(0), { messages: messages(2), step: 1 }, { step: 1, again: true });
    const next = checkpoint("t1", cpId(5), cpId(2), { messages: messages(4), step: 3 }, { step: 3 });
    const other = checkpoint("t1", cpId(4), cpId(5), { messages: messages(5), step: 4 }, { step: 4 });
    await a.commit([
      { op: "checkpoint.put", checkpoint: again },
      { op: "checkpoint.put", checkpoint: next },
      { op: "checkpoint.put", checkpoint: other },
    ]);
    for (const store of [a, b]) {
      const all = await store.listCheckpoints("t1");
      expect(all.map((c) => c.checkpoint.id)).toEqual([cpId(4), cpId(5), cpId(2), cpId(1), cpId(0)]);
      expect(all[3]!.metadata).toMatchObject({ again: true });
      expect(all[0]!.parent_checkpoint_id).toBe(cpId(5));
      expect(all[1]!.parent_checkpoint_id).toBe(cpId(2));
      expect((await store.listCheckpoints("t2")).length).toBe(6);
    }
    // New ids only, with other threads' ids between them: found absent, put once each.
    await a.commit([
      { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(7), cpId(4), { messages: messages(6), step: 5 }, { step: 5 }) },
      { op: "checkpoint.put", checkpoint: checkpoint("t1", cpId(9), cpId(7), { messages: messages(7), step: 6 }, { step: 6 }) },
    ]);
    expect((await b.listCheckpoints("t1")).map((c) => c.checkpoint.id)).toEqual([cpId(9), cpId(7), cpId(4), cpId(5), cpId(2), cpId(1), cpId(0)]);
    await a.close();
    await b.close();
  });

  it("a thread's runs of several statuses are all of those and only those, in one request when the statuses are next to each other", async () => {
    const [a, b] = await tabs();
    await a.commit([
      { op: "thread.put", thread: thread("t1") },
      { op: "thread.put", thread: thread("t2") },
      { op: "run.put", run: run("r1", "t1", { status: "running" }) },
      { op: "run.put", run: run("r2", "t1", { status: "success" }) },
      { op: "run.put", run: run("r3", "t1", { status: "pending" }) },
      { op: "run.put", run: run("r4", "t2", { status: "pending" }) },
      { op: "run.put", run: run("r5", "t1", { status: "interrupted" }) },
      { op: "run.put", run: run("r6", "t1", { status: "pending" }) },
    ]);
    let got: string[] = [];
    const requests = await counting(
      IDBIndex.prototype,
      "getAll",
      (self) => (self as IDBIndex).name === "by_thread_status",
      async () => {
        got = (await b.queryRuns({ thread_id: "t1", status: ["running", "pending"] })).map((r) => r.run_id).sort();
      },
    );
    expect(got).toEqual(["r1", "r3", "r6"]);
    expect(requests).toBe(1);
    expect((await b.queryRuns({ thread_id: "t1", status: ["pending", "success"] })).map((r) => r.run_id).sort()).toEqual(["r2", "r3", "r6"]);
    expect((await b.queryRuns({ thread_id: "t1", status: ["interrupted", "pending"] })).map((r) => r.run_id).sort()).toEqual(["r3", "r5", "r6"]);
    expect(await b.countRuns({ thread_id: "t1", status: ["pending", "running"] })).toBe(3);
    await a.close();
    await b.close();
  });

  it("a commit puts each checkpoint row once and finds the latest row without an id lookup", async () => {
    const [a, b] = await tabs();
    await a.commit([{ op: "thread.put", thread: thread("t1") }, ...chain("t1", 2).map((c) => ({ op: "checkpoint.put" as const, checkpoint: c }))]);
    const [c2, c3] = chain("t1", 2, 2);
    const ops = [
      { op: "writes.put" as const, thread_id: "t1", checkpoint_id: cpId(1), task_id: "x", writes: [["x", "messages", [messages(3)[2]]]] as Array<[string, string, unknown]> },
      { op: "checkpoint.put" as const, checkpoint: c2! },
      { op: "writes.put" as const, thread_id: "t1", checkpoint_id: cpId(2), task_id: "y", writes: [["y", "messages", [messages(4)[3]]]] as Array<[string, string, unknown]> },
      { op: "checkpoint.put" as const, checkpoint: c3! },
    ];
    let lookups = 0;
    const puts = await counting(
      IDBObjectStore.prototype,
      "put",
      (self) => (self as IDBObjectStore).name === "cps",
      async () => {
        lookups = await counting(IDBIndex.prototype, "getAllKeys", (self) => (self as IDBIndex).name === "by_id", () => b.commit(ops));
      },
    );
    // Rows cp1 (its writes), cp2 and cp3: one put each.
    expect(puts).toBe(3);
    // cp1 is the latest row (read anyway): only the two new ids are looked up, with one request
    // (their ids are close in key order).
    expect(lookups).toBe(1);
    const all = await a.listCheckpoints("t1");
    expect(all.map((c) => c.checkpoint.id)).toEqual([cpId(3), cpId(2), cpId(1), cpId(0)]);
    expect(all[2]!.pending_writes).toEqual([["x", "messages", [messages(3)[2]]]]);
    expect(all[1]!.pending_writes).toEqual([["y", "messages", [messages(4)[3]]]]);
    expect(all[1]!.parent_checkpoint_id).toBe(cpId(1));
    await a.close();
    await b.close();
  });
});
