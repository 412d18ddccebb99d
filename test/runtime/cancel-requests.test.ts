/**
 * A cancel request lives while its run is in flight: once the run has ended, the memory store
 * (and the JSON-file store built on it) no longer holds it, so cancelled runs leave nothing
 * behind (it was kept until the run or its thread was deleted).
 */
import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/persistence/memory.js";
import { createRuntime } from "../../src/runtime/index.js";
import { Gate, slowGraph } from "./graphs.js";

describe("cancel requests on the memory store", () => {
  it("go with the end of their run, cancelled from another runtime on the store", async () => {
    const gate = new Gate();
    const store = memoryStore();
    const a = await createRuntime({ graphs: { slow: slowGraph(gate) }, store });
    const b = await createRuntime({ graphs: { slow: slowGraph(gate) }, store });
    try {
      const thread = await a.threads.create();
      const run = await a.runs.create(thread.thread_id, "slow", { input: {} });
      await gate.reached(1);
      await b.runs.cancel(thread.thread_id, run.run_id, true);
      expect((await b.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
      expect(await store.getCancelRequest(run.run_id)).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
