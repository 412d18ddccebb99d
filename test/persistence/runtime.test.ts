/**
 * The runtime's contract suite on the persistent stores, and durable runs through them (D60,
 * D64): a run a stopped process left running is resumed when a runtime opens the store again.
 */
import "fake-indexeddb/auto";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createRuntime } from "../../src/runtime/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import type { Store } from "../../src/persistence/types.js";
import { runtimeContract } from "../runtime/contract.js";
import { killable } from "../runtime/durable.js";
import { Gate, echoGraph, slowGraph } from "../runtime/graphs.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-rt-"));
afterAll(() => rm(root, { recursive: true, force: true }));
let n = 0;

const stores: Array<[string, () => Store]> = [
  ["json-file store", () => jsonFileStore(join(root, `contract-${n++}`))],
  ["indexeddb store", () => indexedDbStore(`runtime-contract-${n++}`)],
];

for (const [name, make] of stores) {
  runtimeContract(
    `in process, ${name}`,
    async ({ graphs }) => {
      const runtime = await createRuntime({ graphs, store: make() });
      return { client: runtime, close: () => runtime.close() };
    },
    { inProcess: true },
  );
}

const hi = { messages: [{ role: "user", content: "hi" }] };

describe("runtime on a persistent store", () => {
  it("keeps threads, state and runs across a clean restart (json-file)", async () => {
    const dir = join(root, `restart-${n++}`);
    let runtime = await createRuntime({ graphs: { echo: echoGraph() }, store: jsonFileStore(dir) });
    const t = await runtime.threads.create({ metadata: { who: "ann" } });
    await runtime.runs.wait(t.thread_id, "echo", { input: hi });
    await runtime.runs.wait(t.thread_id, "echo", { input: hi });
    const before = await runtime.threads.getState(t.thread_id);
    const history = await runtime.threads.getHistory(t.thread_id);
    await runtime.close();

    runtime = await createRuntime({ graphs: { echo: echoGraph() }, store: jsonFileStore(dir) });
    expect(await runtime.threads.getState(t.thread_id)).toEqual(before);
    expect(await runtime.threads.getHistory(t.thread_id)).toEqual(history);
    expect((await runtime.runs.list(t.thread_id)).map((r) => r.status)).toEqual(["success", "success"]);
    const out = await runtime.runs.wait(t.thread_id, "echo", { input: hi });
    expect((out as { messages: unknown[] }).messages).toHaveLength(6);
    await runtime.close();
  });

  it("a run in flight when the process died is resumed at once when the directory is opened again (json-file: the dead writer's lease is void)", async () => {
    const dir = join(root, `d60-${n++}`);
    const gate = new Gate();
    const runtime = await createRuntime({ graphs: { slow: slowGraph(gate) }, store: jsonFileStore(dir) });
    const t = await runtime.threads.create();
    const run = await runtime.runs.create(t.thread_id, "slow", { input: hi });
    await gate.reached();
    await vi.waitFor(async () => expect((await runtime.threads.getState(t.thread_id)).values).toMatchObject({ log: [`first:${run.run_id}`] }));
    // What is on disk now is what a killed process leaves behind.
    const crashed = join(root, `d60-copy-${n++}`);
    await cp(dir, crashed, { recursive: true });
    gate.release();
    await runtime.runs.join(t.thread_id, run.run_id);
    await runtime.close();

    // The default lease (30 s) would still hold the run: the reopened store voided it.
    const again = new Gate();
    const after = await createRuntime({ graphs: { slow: slowGraph(again) }, store: jsonFileStore(crashed) });
    await again.reached();
    expect(await after.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "running", attempt: 2 });
    again.release();
    expect(await after.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: [`first:${run.run_id}`, "wait", "last"] });
    expect((await after.threads.get(t.thread_id)).status).toBe("idle");
    await after.close();
  });

  it("on IndexedDB, a run left running by a tab that stopped is resumed by the next runtime once its lease expires (no Web Locks here)", async () => {
    const name = `d60-${n++}`;
    const gate = new Gate();
    const { store, kill } = killable(indexedDbStore(name));
    const first = await createRuntime({ graphs: { slow: slowGraph(gate) }, store, leaseMs: 300 });
    const t = await first.threads.create();
    const run = await first.runs.create(t.thread_id, "slow", { input: hi });
    await gate.reached();
    await vi.waitFor(async () => expect((await first.threads.getState(t.thread_id)).values).toMatchObject({ log: [`first:${run.run_id}`] }));
    kill();

    const again = new Gate();
    const next = await createRuntime({ graphs: { slow: slowGraph(again) }, store: indexedDbStore(name), leaseMs: 300 });
    await again.reached();
    again.release();
    expect(await next.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: [`first:${run.run_id}`, "wait", "last"] });
    expect(await next.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
    await next.close();
  });
});
