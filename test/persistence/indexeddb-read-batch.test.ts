// Read batching of the IndexedDB store (src/persistence/indexeddb/read-batch.ts): reads issued in
// one microtask turn share one readonly transaction, and each gets its own result or error.
import "fake-indexeddb/auto";
import { afterEach, describe, expect, it } from "vitest";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { ReadBatch } from "../../src/persistence/indexeddb/read-batch.js";
import type { Store } from "../../src/persistence/types.js";
import { thread } from "./contract.js";
import { openedTransactions } from "./idb-transactions.js";

let n = 0;
const stores: Store[] = [];
const open = async () => {
  const store = indexedDbStore(`read-batch-${n++}`);
  await store.open();
  stores.push(store);
  return store;
};
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** Counts readonly transactions opened on any IndexedDB database while `fn` runs. */
async function countReads<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const [opened, out] = await openedTransactions(fn);
  return [opened.filter((t) => t.mode === "readonly").length, out];
}

describe("indexedDbStore read batching", () => {
  it("serves reads issued together from one transaction, each with its own result", async () => {
    const store = await open();
    await store.commit([
      { op: "thread.put", thread: thread("t1", { metadata: { n: 1 } }) },
      { op: "thread.put", thread: thread("t2", { metadata: { n: 2 }, status: "busy" }) },
    ]);
    const [reads, [a, b, missing, busy, assistant]] = await countReads(() =>
      Promise.all([store.getThread("t1"), store.getThread("t2"), store.getThread("nope"), store.countThreads({ status: "busy" }), store.getAssistant("nope")]),
    );
    expect(reads).toBe(1);
    expect(a?.metadata).toEqual({ n: 1 });
    expect(b?.metadata).toEqual({ n: 2 });
    expect(missing).toBeUndefined();
    expect(busy).toBe(1);
    expect(assistant).toBeUndefined();
  });

  it("reads issued in turns after each other use a transaction each", async () => {
    const store = await open();
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    const [reads] = await countReads(async () => {
      await store.getThread("t1");
      await store.getThread("t1");
    });
    expect(reads).toBe(2);
  });

  it("a read that fails rejects with its own error; the reads sharing its transaction still get their results", async () => {
    const store = await open();
    await store.commit([{ op: "thread.put", thread: thread("t1", { metadata: { n: 1 } }) }]);
    // A key IndexedDB refuses (an object is not a valid key): that read fails.
    const [bad, good, other] = await Promise.allSettled([store.getThread({} as unknown as string), store.getThread("t1"), store.countThreads({})]);
    expect(bad).toMatchObject({ status: "rejected", reason: { name: "DataError" } });
    expect(good).toMatchObject({ status: "fulfilled", value: { metadata: { n: 1 } } });
    expect(other).toEqual({ status: "fulfilled", value: 1 });
  });
});

describe("ReadBatch", () => {
  /** A fake transaction: records which reads ran in it. */
  const batcher = () => {
    const opened: string[][] = [];
    const batch = new ReadBatch<{ id: number; names: string[] }, string>(async (names) => {
      opened.push(names);
      return { id: opened.length, names };
    });
    return { opened, batch };
  };

  it("opens one transaction over the union of the reads' object stores", async () => {
    const { opened, batch } = batcher();
    const results = await Promise.all([
      batch.submit(["a"], async (tx) => `one in ${tx.id}`),
      batch.submit(["b", "a"], async (tx) => `two in ${tx.id}`),
    ]);
    expect(results).toEqual(["one in 1", "two in 1"]);
    expect(opened).toEqual([["a", "b"]]);
  });

  it("tries a read that failed in a shared transaction again alone, and rejects with the error it has alone", async () => {
    const { opened, batch } = batcher();
    let tries = 0;
    const failing = batch.submit(["a"], async (tx) => {
      tries++;
      throw new Error(`failed in ${tx.id}`);
    });
    const ok = batch.submit(["b"], async (tx) => `ok in ${tx.id}`);
    await expect(failing).rejects.toThrow("failed in 2");
    expect(await ok).toBe("ok in 1");
    expect(tries).toBe(2);
    expect(opened).toEqual([["a", "b"], ["a"]]);
  });

  it("a read that fails in a shared transaction only because another's aborted it gets its result alone", async () => {
    const { batch } = batcher();
    // Reads of the first transaction fail (as when a request of another aborts it); alone they pass.
    const read = (v: string) => batch.submit(["a"], async (tx) => {
      if (tx.id === 1) throw new Error("AbortError");
      return v;
    });
    expect(await Promise.all([read("x"), read("y")])).toEqual(["x", "y"]);
  });
});
