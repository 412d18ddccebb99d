// A run's `durability` (src/runtime/durability.ts): `sync` awaits each checkpoint commit before
// the next step; `async` (the default) and `exit` queue them and send what queued up as one
// commit; the run's outcome waits for all of them, and a failed one fails the run.
import { describe, expect, it } from "vitest";
import { createRuntime, memoryStore } from "../../src/index.js";
import type { Store, WriteOp } from "../../src/persistence/types.js";
import { chainGraph } from "./graphs.js";

/**
 * A memory store whose commits with checkpoints take a macrotask, logging when each starts
 * (with its checkpoint count) and ends; `failAt` makes the n-th such commit fail.
 */
function slowStore(failAt?: number) {
  const inner = memoryStore();
  const log: string[] = [];
  let n = 0;
  const commit = async (ops: readonly WriteOp[]) => {
    const cps = ops.filter((op) => op.op === "checkpoint.put").length;
    if (cps === 0) return inner.commit(ops);
    const k = ++n;
    log.push(`start ${cps}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (k === failAt) {
      log.push("fail");
      throw new Error("disk full");
    }
    await inner.commit(ops);
    log.push("end");
  };
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === "commit") return commit;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) satisfies Store;
  return { store, log };
}

async function runChain(durability: "sync" | "async" | "exit" | undefined, failAt?: number) {
  const { store, log } = slowStore(failAt);
  const runtime = await createRuntime({ graphs: { chain: chainGraph() }, store });
  const thread = await runtime.threads.create();
  const result = await runtime.runs.wait(thread.thread_id, "chain", { input: {}, raiseError: false, ...(durability ? { durability } : {}) });
  const state = await runtime.threads.getState(thread.thread_id);
  const history = await runtime.threads.getHistory(thread.thread_id);
  const runs = await runtime.runs.list(thread.thread_id);
  await runtime.close();
  return { log, result, state, history, run: runs[0]! };
}

describe("run durability", () => {
  it("sync: each checkpoint is committed before the next step starts", async () => {
    const { log, state, history, run } = await runChain("sync");
    // Five checkpoints (input, then steps 0-3), five commits, never two at once.
    expect(log).toEqual(["start 1", "end", "start 1", "end", "start 1", "end", "start 1", "end", "start 1", "end"]);
    expect(state.values).toEqual({ log: ["a", "b", "c"] });
    expect(history.map((h) => h.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
    expect(run.status).toBe("success");
  });

  for (const durability of ["async", "exit", undefined] as const) {
    it(`${durability ?? "default (async)"}: the engine goes on while a commit is in flight; what queued up goes as one commit, all stored before the run ends`, async () => {
      const { log, result, state, history, run } = await runChain(durability);
      // The first commit alone; the steps run meanwhile and their checkpoints go in the next one.
      expect(log).toEqual(["start 1", "end", "start 4", "end"]);
      expect(result).toEqual({ log: ["a", "b", "c"] });
      expect(state.values).toEqual({ log: ["a", "b", "c"] });
      expect(history.map((h) => h.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
      expect(run.status).toBe("success");
    });
  }

  it("async: a commit that fails fails the run with the store's error, and nothing after it is written", async () => {
    const { log, result, history, run, state } = await runChain("async", 2);
    expect(log).toEqual(["start 1", "end", "start 4", "fail"]);
    expect(run.status).toBe("error");
    expect(result).toEqual({ __error__: { error: "Error", message: "disk full" } });
    expect(history.map((h) => h.metadata?.step)).toEqual([-1]);
    expect(state.values).toEqual({ log: [] });
  });

  it("sync: a commit that fails fails the run the same way", async () => {
    const { log, result, run } = await runChain("sync", 2);
    expect(log).toEqual(["start 1", "end", "start 1", "fail"]);
    expect(run.status).toBe("error");
    expect(result).toEqual({ __error__: { error: "Error", message: "disk full" } });
  });
});
