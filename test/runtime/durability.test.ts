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
function slowStore(failAt?: number, whileFirst?: (inner: Store) => Promise<void>) {
  const inner = memoryStore();
  const log: string[] = [];
  const commits: Array<readonly WriteOp[]> = [];
  let n = 0;
  const commit = async (ops: readonly WriteOp[]) => {
    commits.push(ops);
    const cps = ops.filter((op) => op.op === "checkpoint.put").length;
    if (cps === 0) return inner.commit(ops);
    const k = ++n;
    log.push(`start ${cps}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (k === 1) await whileFirst?.(inner);
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
  return { store, log, commits };
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

  it("async: what is still queued when the engine finishes goes in the commit that records the outcome", async () => {
    const { store, commits } = slowStore();
    const runtime = await createRuntime({ graphs: { chain: chainGraph() }, store });
    const thread = await runtime.threads.create();
    await runtime.runs.wait(thread.thread_id, "chain", { input: {} });
    const history = await runtime.threads.getHistory(thread.thread_id);
    await runtime.close();
    const withCheckpoints = commits.filter((ops) => ops.some((op) => op.op === "checkpoint.put"));
    expect(withCheckpoints).toHaveLength(2);
    // The last: steps 0-3, then the run's outcome (success), the thread, the lease released.
    const last = withCheckpoints[1]!;
    expect(last.filter((op) => op.op === "checkpoint.put")).toHaveLength(4);
    expect(last.findIndex((op) => op.op === "run.put")).toBeGreaterThan(last.findLastIndex((op) => op.op === "checkpoint.put"));
    expect(last.find((op) => op.op === "run.put")).toMatchObject({ run: { status: "success" } });
    expect(last.some((op) => op.op === "lease.delete")).toBe(true);
    expect(history.map((h) => h.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
  });

  it("async: when the outcome's expectation fails (the run was ended by someone else), none of the queued checkpoints is written", async () => {
    // While the first checkpoint commit is in flight, another runtime ends the run (as after
    // taking over its expired lease).
    const { store } = slowStore(undefined, async (inner) => {
      const [running] = await inner.queryRuns({ status: "running" });
      await inner.commit([{ op: "run.put", run: { ...running!, status: "error" }, expect: { status: ["running"] } }]);
    });
    const runtime = await createRuntime({ graphs: { chain: chainGraph() }, store });
    const thread = await runtime.threads.create();
    await runtime.runs.wait(thread.thread_id, "chain", { input: {}, raiseError: false });
    const history = await runtime.threads.getHistory(thread.thread_id);
    const [run] = await runtime.runs.list(thread.thread_id);
    await runtime.close();
    // Only the input checkpoint (written before); steps 0-3 went with the outcome, which lost.
    expect(history.map((h) => h.metadata?.step)).toEqual([-1]);
    expect(run!.status).toBe("error");
  });
});
