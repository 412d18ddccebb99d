/**
 * Crons in process: the contract on the memory store, a schedule that survives a
 * restart of a JSON-file store, and two runtimes over one store firing each tick exactly once.
 */
import "fake-indexeddb/auto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime, memoryStore } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { schedulerOf } from "../../src/runtime/scheduler.js";
import { cronsContract, cronsExactlyOnce, RecordingLogger, T0, TestClock } from "./crons.js";
import { Gate, echoGraph, testGraphs } from "./graphs.js";

cronsContract("in process, memory store", async (clock, diagnostics) => {
  const gate = new Gate();
  const runtime = await createRuntime({ graphs: testGraphs(gate), clock: clock.now, diagnostics });
  return {
    client: runtime,
    runtime,
    gate,
    close: async () => {
      gate.release();
      await runtime.close();
    },
  };
});

const root = await mkdtemp(join(tmpdir(), "graphdock-crons-"));
afterAll(() => rm(root, { recursive: true, force: true }));
const hi = { messages: [{ role: "user", content: "tick" }] };

describe("crons: durability and exactly-once", () => {
  it("a schedule survives a restart of a JSON-file store and goes on firing", async () => {
    const dir = join(root, "restart");
    const clock = new TestClock(T0 + 250);
    let runtime = await createRuntime({ graphs: { agent: echoGraph() }, store: jsonFileStore(dir), clock: clock.now });
    const thread = await runtime.threads.create();
    const cron = await runtime.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
    clock.advance(1000);
    await schedulerOf(runtime)!.pass();
    await runtime.runs.join(thread.thread_id, (await runtime.runs.list(thread.thread_id))[0]!.run_id);
    await runtime.close();

    runtime = await createRuntime({ graphs: { agent: echoGraph() }, store: jsonFileStore(dir), clock: clock.now });
    const [kept] = await runtime.crons.search();
    expect(kept).toEqual({ ...cron, next_run_date: new Date(T0 + 2000).toISOString() });
    clock.advance(1000);
    await schedulerOf(runtime)!.pass();
    expect(await runtime.runs.list(thread.thread_id)).toHaveLength(2);
    await runtime.crons.delete(cron.cron_id);
    await runtime.close();

    runtime = await createRuntime({ graphs: { agent: echoGraph() }, store: jsonFileStore(dir), clock: clock.now });
    expect(await runtime.crons.count()).toBe(0);
    await runtime.close();
  });
});

describe("crons: ticks that cannot run", () => {
  it("a cron whose thread vanished from the store (not through threads.delete) is deleted at its next tick", async () => {
    const clock = new TestClock(T0 + 250);
    const store = memoryStore();
    const log = new RecordingLogger();
    const runtime = await createRuntime({ graphs: { agent: echoGraph() }, store, clock: clock.now, diagnostics: log });
    const thread = await runtime.threads.create();
    const cron = await runtime.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi });
    await store.commit([{ op: "thread.delete", thread_id: thread.thread_id }]);
    clock.advance(1000);
    await schedulerOf(runtime)!.pass();
    expect(log.lines).toContainEqual(expect.objectContaining({ level: "warn", fields: expect.objectContaining({ cron_id: cron.cron_id, deleted: true }) }));
    expect(await runtime.crons.count()).toBe(0);
    expect(await store.getCron(cron.cron_id)).toBeUndefined();
    await runtime.close();
  });
});

cronsExactlyOnce("two runtimes over one memoryStore()", async () => {
  const store = memoryStore();
  return [store, store];
});

cronsExactlyOnce("two IndexedDB store instances on one database (two tabs)", async () => {
  const name = `crons-tabs-${Date.now()}`;
  return [indexedDbStore(name), indexedDbStore(name)];
});

cronsContract("in process, JSON-file store", async (clock, diagnostics) => {
  const gate = new Gate();
  const runtime = await createRuntime({ graphs: testGraphs(gate), store: jsonFileStore(join(root, `contract-${Math.random().toString(36).slice(2)}`)), clock: clock.now, diagnostics });
  return {
    client: runtime,
    runtime,
    gate,
    close: async () => {
      gate.release();
      await runtime.close();
    },
  };
});
