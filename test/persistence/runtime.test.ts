/**
 * The runtime's contract suite on the persistent stores, and D10 through them: runs a stopped
 * process left pending or running come back as errors when a runtime opens the store again.
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

  it("D10: a run in flight when the process died is an error once its lease expires after reopening (json-file)", async () => {
    const dir = join(root, `d10-${n++}`);
    const gate = new Gate();
    const runtime = await createRuntime({ graphs: { slow: slowGraph(gate) }, store: jsonFileStore(dir), leaseMs: 300 });
    const t = await runtime.threads.create();
    const run = await runtime.runs.create(t.thread_id, "slow", { input: hi });
    await gate.reached();
    // What is on disk now is what a killed process leaves behind.
    const crashed = join(root, `d10-copy-${n++}`);
    await cp(dir, crashed, { recursive: true });
    gate.release();
    await runtime.runs.join(t.thread_id, run.run_id);
    await runtime.close();

    const after = await createRuntime({ graphs: { slow: slowGraph(new Gate()) }, store: jsonFileStore(crashed), leaseMs: 300 });
    await vi.waitFor(async () => expect((await after.runs.get(t.thread_id, run.run_id)).status).toBe("error"), { timeout: 5_000, interval: 50 });
    expect((await after.threads.get(t.thread_id)).status).toBe("error");
    await after.close();
  });

  it("D10 on IndexedDB: a run left running by a tab that was killed is an error for the next runtime", async () => {
    const name = `d10-${n++}`;
    const first = await createRuntime({ graphs: { echo: echoGraph() }, store: indexedDbStore(name) });
    const t = await first.threads.create();
    const done = await first.runs.create(t.thread_id, "echo", { input: hi });
    await first.runs.join(t.thread_id, done.run_id);
    await first.close();
    // What a tab closed mid-run leaves: the run marked running, the thread busy.
    const raw = indexedDbStore(name);
    await raw.open();
    const run = (await raw.getRun(done.run_id))!;
    const thread = (await raw.getThread(t.thread_id))!;
    await raw.commit([
      { op: "run.put", run: { ...run, run_id: "00000000-0000-4000-8000-00000000dead", status: "running" } },
      { op: "thread.put", thread: { ...thread, status: "busy" } },
    ]);
    await raw.close();

    const next = await createRuntime({ graphs: { echo: echoGraph() }, store: indexedDbStore(name) });
    // No lease holds it: the runtime finds it when it starts and ends it.
    await vi.waitFor(async () => expect((await next.runs.get(t.thread_id, "00000000-0000-4000-8000-00000000dead")).status).toBe("error"), { timeout: 5_000, interval: 50 });
    expect((await next.runs.get(t.thread_id, done.run_id)).status).toBe("success");
    expect((await next.threads.get(t.thread_id)).status).toBe("error");
    await next.close();
  });
});
