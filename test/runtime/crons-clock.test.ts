/**
 * Crons on the real clock (D65): a per-second cron fires once per tick for 10 s of real time,
 * and nothing after it is deleted. The contract suites move an injected clock and run scheduler
 * passes by hand; these tests use neither, so they see what a user's process sees: the
 * scheduler's own timers. On two runtimes over one memory store, two IndexedDB connections, and
 * a JSON-file store whose process is SIGKILLed and replaced in the middle.
 * (PostgreSQL, two processes: test/postgres/crons-clock.test.ts.)
 */
import "fake-indexeddb/auto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { createRuntime, memoryStore } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import type { Store } from "../../src/persistence/types.js";
import { lineChild } from "../faults/child.js";
import { AFTER_MS, checkTicks, WINDOW_MS } from "./crons.js";
import { echoGraph } from "./graphs.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-crons-clock-"));
afterAll(() => rm(root, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const hi = { messages: [{ role: "user", content: "tick" }] };

/** Two runtimes over `stores` (one store, or two connections to one), a cron for the window, deleted from the other. */
async function twoRuntimes(what: string, stores: [Store, Store]): Promise<void> {
  const a = await createRuntime({ graphs: { echo: echoGraph() }, store: stores[0] });
  const b = await createRuntime({ graphs: { echo: echoGraph() }, store: stores[1] });
  try {
    const thread = await a.threads.create();
    const cron = await a.crons.createForThread(thread.thread_id, "echo", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
    await sleep(WINDOW_MS);
    await b.crons.delete(cron.cron_id);
    const deletedAt = Date.now();
    await sleep(AFTER_MS);
    checkTicks(what, await b.runs.list(thread.thread_id, { limit: 100 }), deletedAt);
  } finally {
    await a.close();
    await b.close();
  }
}

it("a per-second cron fires 9-11 times in 10 s of real time, once per tick, across two runtimes (memory store; IndexedDB connections)", async () => {
  const store = memoryStore();
  const name = `crons-clock-${Date.now()}`;
  await Promise.all([twoRuntimes("memory store, two runtimes", [store, store]), twoRuntimes("IndexedDB, two connections", [indexedDbStore(name), indexedDbStore(name)])]);
}, 30_000);

/** A child of test/runtime/fixtures/cron-child.ts on `dir`. */
const child = (dir: string) => lineChild(fileURLToPath(new URL("./fixtures/cron-child.ts", import.meta.url)), [dir]);

it("a per-second cron on a JSON-file store fires 9-11 times in 10 s of real time although its process is SIGKILLed in the middle and replaced 1.5 s later", async () => {
  const dir = join(root, "json");
  const first = child(dir);
  const second = child(dir); // loads while the first runs; opens the store once the first is killed
  await first.line("loaded");
  first.send("go");
  await first.line("ready");
  first.send("cron");
  const [, cronId, threadId] = (await first.line("cron ")).split(" ");
  await second.line("loaded");
  await sleep(WINDOW_MS / 2);
  const killedAt = Date.now();
  await first.kill();
  // Down across a tick: the tick missed while no process ran fires once when the next one starts.
  await sleep(1_500);
  second.send("go");
  await second.line("ready");
  const down = Date.now() - killedAt;
  await sleep(Math.max(0, WINDOW_MS / 2 - down));
  second.send(`delete ${cronId}`);
  await second.line("deleted");
  const deletedAt = Date.now();
  await sleep(AFTER_MS);
  second.send("close");
  await second.exited;

  const store = jsonFileStore(dir);
  await store.open();
  try {
    const runs = await store.queryRuns({ thread_id: threadId!, sortBy: "queue" });
    checkTicks(`JSON-file store, process replaced after ${WINDOW_MS / 2000} s (down ${down} ms)`, runs, deletedAt);
  } finally {
    await store.close();
  }
}, 60_000);
