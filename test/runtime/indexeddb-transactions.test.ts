// What a run costs in IndexedDB transactions through the runtime (fake-indexeddb): admission's
// reads of the assistant and the thread share one transaction (read batching), the outcome's
// reads of the thread and its queue share one, and the checkpoints still queued when the engine
// finishes go in the outcome's commit (src/runtime/durability.ts).
import "fake-indexeddb/auto";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import type { Runtime } from "../../src/runtime/types.js";
import { chainGraph } from "./graphs.js";
import { openedTransactions, type OpenedTransaction } from "../persistence/idb-transactions.js";

/** The transactions opened while `fn` runs: mode and object stores. */
const transactions = async (fn: () => Promise<unknown>): Promise<OpenedTransaction[]> => (await openedTransactions(fn))[0];

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

/** A thread's second run on a new IndexedDB runtime, with the transactions it opened. */
async function secondRun() {
  const runtime = await createRuntime({ graphs: { chain: chainGraph() }, store: indexedDbStore(`tx-${Math.random()}`) });
  runtimes.push(runtime);
  const thread = await runtime.threads.create();
  await runtime.runs.wait(thread.thread_id, "chain", { input: {} });
  const opened = await transactions(() => runtime.runs.wait(thread.thread_id, "chain", { input: {} }));
  return { runtime, thread, opened };
}

describe("a run on IndexedDB through the runtime", () => {
  it("reads the assistant and the thread in one transaction, and the outcome's reads in one", async () => {
    const { runtime, thread, opened } = await secondRun();
    const reads = opened.filter((t) => t.mode === "readonly");
    // Admission: the assistant with the thread, never the assistant alone.
    expect(reads.some((t) => t.names.includes("assistants") && t.names.includes("threads"))).toBe(true);
    expect(reads.some((t) => t.names.length === 1 && t.names[0] === "assistants")).toBe(false);
    // Outcome: the thread with its queue (runs).
    expect(reads.some((t) => t.names.includes("threads") && t.names.includes("runs"))).toBe(true);
    expect(await runtime.threads.getState(thread.thread_id)).toMatchObject({ values: { log: ["a", "b", "c", "a", "b", "c"] } });
  });

  it("writes a run in at most three commits: admission with claim, the first checkpoint, the rest with the outcome", async () => {
    const { runtime, thread, opened } = await secondRun();
    expect(opened.filter((t) => t.mode === "readwrite").length).toBeLessThanOrEqual(3);
    const history = await runtime.threads.getHistory(thread.thread_id);
    // Both runs' checkpoints (input, then steps a, b, c, end: five each) are all stored.
    expect(history.map((h) => h.metadata?.step)).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0, -1]);
    expect((await runtime.threads.getState(thread.thread_id)).values).toEqual({ log: ["a", "b", "c", "a", "b", "c"] });
  });
});
