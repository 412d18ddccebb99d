// Group commit of the IndexedDB store (src/persistence/indexeddb/group-commit.ts): commits made
// while a transaction is in flight share the next one, and each keeps its own outcome.
import "fake-indexeddb/auto";
import { afterEach, describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { GroupCommit } from "../../src/persistence/indexeddb/group-commit.js";
import type { Store, WriteOp } from "../../src/persistence/types.js";
import { chain, thread } from "./contract.js";
import { openedTransactions } from "./idb-transactions.js";

let n = 0;
const open = async () => {
  const store = indexedDbStore(`group-${n++}`);
  await store.open();
  return store;
};

/** Counts readwrite transactions opened on any IndexedDB database while `fn` runs. */
const countWrites = async (fn: () => Promise<unknown>): Promise<number> =>
  (await openedTransactions(fn))[0].filter((t) => t.mode === "readwrite").length;

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

describe("indexedDbStore group commit", () => {
  it("writes commits made while a transaction is in flight in one transaction, all of them", async () => {
    const store = await open();
    stores.push(store);
    const writes = await countWrites(() => Promise.all(Array.from({ length: 10 }, (_, i) => store.commit([{ op: "thread.put", thread: thread(`t${i}`) }]))));
    // The first goes alone; the nine made while it was in flight share the next transaction.
    expect(writes).toBe(2);
    expect(await store.countThreads({})).toBe(10);
  });

  it("applies a batch's commits in order, each seeing the ones before it", async () => {
    const store = await open();
    stores.push(store);
    const [first, ...cps] = chain("t1", 4);
    const commits: WriteOp[][] = [
      [{ op: "thread.put", thread: thread("t0") }],
      [{ op: "thread.put", thread: thread("t1"), expect: { exists: false } }, { op: "checkpoint.put", checkpoint: first! }],
      [{ op: "thread.put", thread: thread("t1", { status: "busy" }), expect: { exists: true, status: ["idle"] } }],
      ...cps.map((c): WriteOp[] => [{ op: "checkpoint.put", checkpoint: c }]),
      [{ op: "thread.put", thread: thread("t1", { status: "idle" }), expect: { status: ["busy"] } }],
    ];
    const writes = await countWrites(() => Promise.all(commits.map((ops) => store.commit(ops))));
    expect(writes).toBe(2);
    expect((await store.getThread("t1"))?.status).toBe("idle");
    expect((await store.listCheckpoints("t1")).map((c) => c.checkpoint.id)).toEqual([...cps].reverse().map((c) => c.checkpoint.id).concat(first!.checkpoint.id));
  });

  it("fails only the commit whose expectation fails; the others of its batch are written", async () => {
    const store = await open();
    stores.push(store);
    await store.commit([{ op: "thread.put", thread: thread("taken") }]);
    const outcomes = await Promise.allSettled([
      store.commit([{ op: "thread.put", thread: thread("a") }]),
      store.commit([{ op: "thread.put", thread: thread("b") }]),
      // Fails: the thread exists. Its first op would have written "c".
      store.commit([
        { op: "thread.put", thread: thread("c") },
        { op: "thread.put", thread: thread("taken", { status: "busy" }), expect: { exists: false } },
      ]),
      store.commit([{ op: "thread.put", thread: thread("d") }]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(GraphdockError.is((outcomes[2] as PromiseRejectedResult).reason, "conflict")).toBe(true);
    expect((await store.queryThreads({})).map((t) => t.thread_id).sort()).toEqual(["a", "b", "d", "taken"]);
    expect((await store.getThread("taken"))?.status).toBe("idle");
  });

  it("fails only the commit whose op throws halfway; the others of its batch are written", async () => {
    const store = await open();
    stores.push(store);
    const [cp] = chain("t1", 1);
    const outcomes = await Promise.allSettled([
      store.commit([{ op: "thread.put", thread: thread("t1") }]),
      store.commit([{ op: "checkpoint.put", checkpoint: cp! }]),
      // Its checkpoint.put is applied, then writes.put throws (no such checkpoint).
      store.commit([
        { op: "checkpoint.put", checkpoint: { ...cp!, checkpoint: { ...cp!.checkpoint, id: "other" }, parent_checkpoint_id: cp!.checkpoint.id } },
        { op: "writes.put", thread_id: "t1", checkpoint_id: "missing", task_id: "task", writes: [] },
      ]),
      store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cp!.checkpoint.id, task_id: "task", writes: [["task", "k", 1]] }]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(GraphdockError.is((outcomes[2] as PromiseRejectedResult).reason, "not_found")).toBe(true);
    const stored = await store.listCheckpoints("t1");
    expect(stored.map((c) => c.checkpoint.id)).toEqual([cp!.checkpoint.id]);
    expect(stored[0]!.pending_writes).toEqual([["task", "k", 1]]);
  });

  it("announces each commit of a batch only once its transaction completed", async () => {
    const store = await open();
    stores.push(store);
    const seen: Array<[string, string | undefined, boolean]> = [];
    const checks: Array<Promise<void>> = [];
    store.subscribe("topic", (payload) => {
      const id = payload!;
      checks.push(store.getThread(id).then((t) => void seen.push([id, payload, t !== undefined])));
    });
    await Promise.all(
      ["x", "y", "z"].map((id) =>
        store.commit([
          { op: "thread.put", thread: thread(id) },
          { op: "notify", topic: "topic", payload: id },
        ]),
      ),
    );
    await Promise.all(checks);
    expect(seen.map(([id, , found]) => [id, found])).toEqual([
      ["x", true],
      ["y", true],
      ["z", true],
    ]);
  });
});

describe("indexedDbStore durability hint", () => {
  /** The options of the readwrite transactions opened while `fn` runs. */
  const writeOptions = async (fn: () => Promise<unknown>): Promise<unknown[]> =>
    (await openedTransactions(fn))[0].filter((t) => t.mode === "readwrite").map((t) => t.options);

  it("opens commit transactions with the browser's default unless told otherwise", async () => {
    const plain = indexedDbStore(`durability-${n++}`);
    const strict = indexedDbStore(`durability-${n++}`, { durability: "strict" });
    stores.push(plain, strict);
    await plain.open();
    await strict.open();
    expect(await writeOptions(() => plain.commit([{ op: "thread.put", thread: thread("t1") }]))).toEqual([undefined]);
    expect(await writeOptions(() => strict.commit([{ op: "thread.put", thread: thread("t1") }]))).toEqual([{ durability: "strict" }]);
    expect(await strict.getThread("t1")).toBeDefined();
  });
});

describe("GroupCommit", () => {
  it("retries a failed batch one by one: only the failing item fails, in order, with its own error", async () => {
    const calls: string[][] = [];
    const written: string[] = [];
    const group = new GroupCommit<string>(async (items) => {
      calls.push([...items]);
      await Promise.resolve();
      if (items.includes("bad")) throw new Error(`bad in ${items.join(",")}`);
      written.push(...items);
    });
    const out = await Promise.allSettled(["a", "b", "bad", "c"].map((x) => group.submit(x)));
    expect(calls).toEqual([["a"], ["b", "bad", "c"], ["b"], ["bad"], ["c"]]);
    expect(written).toEqual(["a", "b", "c"]);
    expect(out.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(((out[2] as PromiseRejectedResult).reason as Error).message).toBe("bad in bad");
  });
});

describe("indexedDbStore close", () => {
  it("writes the commits made before it closes, batched ones included", async () => {
    const name = `close-${n++}`;
    const store = indexedDbStore(name);
    await store.open();
    const commits = Array.from({ length: 5 }, (_, i) => store.commit([{ op: "thread.put", thread: thread(`t${i}`) }]));
    await store.close();
    await Promise.all(commits);
    const again = indexedDbStore(name);
    await again.open();
    expect(await again.countThreads({})).toBe(5);
    await again.close();
  });
});
