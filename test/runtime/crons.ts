/**
 * The crons contract, written against the official SDK's `client.crons` methods so it
 * runs in process (`runtime.crons`) and over HTTP (the SDK client on the fetch handler). Time is
 * the runtime's injected clock: each test moves it on and runs a scheduler pass
 * (`schedulerOf(runtime).pass()`), so ticks are exact and nothing waits on real seconds.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRuntime, type DiagnosticsLogger, type LogFields, type Runtime } from "../../src/index.js";
import type { Run } from "../../src/runtime/types.js";
import type { Store } from "../../src/persistence/types.js";
import { echoGraph, type Gate } from "./graphs.js";
import { schedulerOf } from "../../src/runtime/scheduler.js";
import { expectCode, type ContractClient } from "./contract.js";

// Records come back as the SDK types them; tests read values loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export interface CronsClient {
  crons: Loose;
  assistants: ContractClient["assistants"];
  threads: ContractClient["threads"];
  runs: ContractClient["runs"];
}

/** A diagnostics logger that keeps what it is given (graphdock logs nothing without one). */
export class RecordingLogger implements DiagnosticsLogger {
  readonly lines: Array<{ level: string; fields: LogFields; message: string }> = [];
  error = (fields: LogFields, message: string) => void this.lines.push({ level: "error", fields, message });
  warn = (fields: LogFields, message: string) => void this.lines.push({ level: "warn", fields, message });
  info = (fields: LogFields, message: string) => void this.lines.push({ level: "info", fields, message });
  debug = (fields: LogFields, message: string) => void this.lines.push({ level: "debug", fields, message });
}

export interface CronsHarness {
  client: CronsClient;
  runtime: Runtime;
  /** The gate of the `slow` graph. */
  gate: Gate;
  close(): Promise<void>;
}

/** A clock tests move by hand. */
export class TestClock {
  constructor(public ms: number) {}
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Midnight UTC, 2026-01-01 (a Thursday). */
export const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const hi = { messages: [{ role: "user", content: "tick" }] };

/** `create` makes a runtime on `clock` writing its diagnostics to `diagnostics`. */
export function cronsContract(name: string, create: (clock: TestClock, diagnostics: DiagnosticsLogger) => Promise<CronsHarness>): void {
  describe(`crons contract: ${name}`, () => {
    let h: CronsHarness;
    let c: CronsClient;
    let clock: TestClock;
    let log: RecordingLogger;
    /** Moves the clock on and runs one scheduler pass. */
    const tick = async (ms = 1000) => {
      clock.advance(ms);
      await schedulerOf(h.runtime)!.pass();
    };
    const runsOn = async (threadId: string) => (await c.runs.list(threadId, { limit: 100 })).length;

    beforeEach(async () => {
      clock = new TestClock(T0 + 250);
      log = new RecordingLogger();
      h = await create(clock, log);
      c = h.client;
    });
    afterEach(() => h.close());

    it("a per-second cron on a thread fires a run each tick and stops when deleted", async () => {
      const thread = await c.threads.create();
      const cron = await c.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
      expect(cron).toMatchObject({
        thread_id: thread.thread_id,
        schedule: "* * * * * *",
        timezone: null,
        end_time: null,
        enabled: true,
        next_run_date: iso(T0 + 1000),
        payload: { input: hi, multitask_strategy: "enqueue" },
      });
      expect(cron.cron_id).toMatch(/^[0-9a-f-]{36}$/);
      await schedulerOf(h.runtime)!.pass();
      expect(await runsOn(thread.thread_id)).toBe(0);
      for (let i = 1; i <= 3; i++) {
        await tick();
        expect(await runsOn(thread.thread_id)).toBe(i);
      }
      const runs = await c.runs.list(thread.thread_id);
      expect(runs[0].metadata).toMatchObject({ cron_id: cron.cron_id });
      expect(runs[0].assistant_id).toBe(cron.assistant_id);
      const [listed] = await c.crons.search({ threadId: thread.thread_id });
      expect(listed.next_run_date).toBe(iso(T0 + 4000));
      await c.crons.delete(cron.cron_id);
      await tick();
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(3);
      expect(await c.crons.count({ threadId: thread.thread_id })).toBe(0);
      await expectCode(c.crons.delete(cron.cron_id), "not_found");
    });

    it("end_time stops the schedule: no tick after it, and the cron shows no next run", async () => {
      const thread = await c.threads.create();
      const cron = await c.crons.createForThread(thread.thread_id, "agent", {
        schedule: "* * * * * *",
        input: hi,
        multitaskStrategy: "enqueue",
        endTime: iso(T0 + 2500),
      });
      expect(cron.end_time).toBe(iso(T0 + 2500));
      await tick();
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(2);
      const [ended] = await c.crons.search({ threadId: thread.thread_id });
      expect(ended.next_run_date).toBeNull();
      await tick();
      await tick(60_000);
      expect(await runsOn(thread.thread_id)).toBe(2);
    });

    it("ticks missed while nothing ran are not replayed: the next future tick fires, once", async () => {
      const thread = await c.threads.create();
      const cron = await c.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
      await tick(10 * 60_000);
      expect(await runsOn(thread.thread_id)).toBe(0);
      const [moved] = await c.crons.search({ threadId: thread.thread_id });
      expect(moved.next_run_date).toBe(iso(T0 + 10 * 60_000 + 1000));
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(1);
      // A tick found only a little late (a busy process) still fires once; the schedule goes on from now.
      await tick(5_500);
      expect(await runsOn(thread.thread_id)).toBe(2);
      const [after] = await c.crons.search({ threadId: thread.thread_id });
      expect(Date.parse(after.next_run_date)).toBeGreaterThan(clock.ms);
      expect(cron.cron_id).toBe(after.cron_id);
    });

    it("a tick while the thread's run is in flight under reject starts nothing; the schedule goes on", async () => {
      const thread = await c.threads.create();
      const cron = await c.crons.createForThread(thread.thread_id, "slow", { schedule: "* * * * * *", input: {} });
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(1);
      await h.gate.reached(1);
      await tick();
      expect(log.lines).toContainEqual(expect.objectContaining({ level: "warn", fields: expect.objectContaining({ cron_id: cron.cron_id, deleted: false }) }));
      expect(await runsOn(thread.thread_id)).toBe(1);
      const [moved] = await c.crons.search({ threadId: thread.thread_id });
      expect(moved.next_run_date).toBe(iso(T0 + 3000));
      h.gate.release();
      const [first] = await c.runs.list(thread.thread_id);
      await c.runs.join(thread.thread_id, first.run_id);
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(2);
    });

    it("deleting a thread deletes its crons; deleting an assistant deletes the crons that run it", async () => {
      const thread = await c.threads.create();
      const other = await c.threads.create();
      await c.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi });
      await c.crons.createForThread(other.thread_id, "agent", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
      await c.threads.delete(thread.thread_id);
      expect(await c.crons.count({ threadId: thread.thread_id })).toBe(0);
      expect(await c.crons.count({ threadId: other.thread_id })).toBe(1);
      await tick();
      expect(await runsOn(other.thread_id)).toBe(1);

      const assistant = await c.assistants.create({ graphId: "agent" });
      await c.crons.create(assistant.assistant_id, { schedule: "0 * * * *", input: hi });
      await c.crons.createForThread(other.thread_id, assistant.assistant_id, { schedule: "0 * * * *", input: hi });
      expect(await c.crons.count({ assistantId: assistant.assistant_id })).toBe(2);
      await c.assistants.delete(assistant.assistant_id);
      expect(await c.crons.count({ assistantId: assistant.assistant_id })).toBe(0);
      expect(await c.crons.count()).toBe(1);
    });

    it("a cron without a thread runs each tick on a new thread: deleted after the run by default, kept with onRunCompleted keep", async () => {
      const temporary = await c.crons.create("agent", { schedule: "* * * * * *", input: hi, metadata: { job: "temp" } });
      expect(temporary).toMatchObject({ thread_id: null, on_run_completed: "delete", metadata: { job: "temp" } });
      const kept = await c.crons.create("agent", { schedule: "*/2 * * * * *", input: hi, onRunCompleted: "keep", metadata: { job: "keep" } });
      expect(kept.on_run_completed).toBe("keep");
      await tick(); // T0+1.25s: the per-second cron
      await tick(); // T0+2.25s: both
      const keptThreads = await c.threads.search({ metadata: { cron_id: kept.cron_id } });
      expect(keptThreads).toHaveLength(1);
      const [keptRun] = await c.runs.list(keptThreads[0].thread_id);
      expect(keptRun.metadata).toMatchObject({ cron_id: kept.cron_id, job: "keep" });
      await c.runs.join(keptThreads[0].thread_id, keptRun.run_id);
      expect((await c.threads.get(keptThreads[0].thread_id)).status).toBe("idle");
      // The temporary cron's two threads go once their runs have ended.
      await vi.waitFor(async () => expect(await c.threads.count({ metadata: { cron_id: temporary.cron_id } })).toBe(0), { timeout: 5000 });
    });

    it("schedules read 5 fields (minutes) or 6 (seconds) in an IANA time zone", async () => {
      const daily = await c.crons.create("agent", { schedule: "0 9 * * *", timezone: "America/New_York", input: hi });
      expect(daily.timezone).toBe("America/New_York");
      expect(daily.next_run_date).toBe("2026-01-01T14:00:00.000Z");
      const paris = await c.crons.create("agent", { schedule: "30 8 * * MON", timezone: "Europe/Paris", input: hi });
      expect(paris.next_run_date).toBe("2026-01-05T07:30:00.000Z");
      const seconds = await c.crons.create("agent", { schedule: "15 * * * * *", input: hi });
      expect(seconds.next_run_date).toBe("2026-01-01T00:00:15.000Z");
    });

    it("search and count filter by assistant, thread, metadata and enabled, with sort, paging and select", async () => {
      const t1 = await c.threads.create();
      const t2 = await c.threads.create();
      const a = await c.crons.createForThread(t1.thread_id, "agent", { schedule: "0 * * * *", metadata: { team: "x" } });
      clock.advance(1);
      const b = await c.crons.createForThread(t2.thread_id, "echo", { schedule: "30 * * * *", metadata: { team: "y" } });
      clock.advance(1);
      const d = await c.crons.create("agent", { schedule: "15 * * * *", metadata: { team: "x" }, enabled: false });
      expect(d.enabled).toBe(false);
      const ids = (list: Loose[]) => list.map((x) => x.cron_id);
      expect(ids(await c.crons.search())).toEqual([d.cron_id, b.cron_id, a.cron_id]);
      expect(ids(await c.crons.search({ sortOrder: "asc" }))).toEqual([a.cron_id, b.cron_id, d.cron_id]);
      expect(ids(await c.crons.search({ sortBy: "next_run_date", sortOrder: "asc" }))).toEqual([d.cron_id, b.cron_id, a.cron_id]);
      expect(ids(await c.crons.search({ limit: 1, offset: 1 }))).toEqual([b.cron_id]);
      expect(ids(await c.crons.search({ assistantId: "agent" }))).toEqual([d.cron_id, a.cron_id]);
      expect(ids(await c.crons.search({ assistantId: b.assistant_id }))).toEqual([b.cron_id]);
      expect(ids(await c.crons.search({ threadId: t2.thread_id }))).toEqual([b.cron_id]);
      expect(ids(await c.crons.search({ metadata: { team: "x" } }))).toEqual([d.cron_id, a.cron_id]);
      expect(ids(await c.crons.search({ enabled: false }))).toEqual([d.cron_id]);
      expect(await c.crons.search({ select: ["cron_id", "schedule"], threadId: t1.thread_id })).toEqual([{ cron_id: a.cron_id, schedule: "0 * * * *" }]);
      expect(await c.crons.count()).toBe(3);
      expect(await c.crons.count({ assistantId: "agent" })).toBe(2);
      expect(await c.crons.count({ threadId: t1.thread_id })).toBe(1);
      expect(await c.crons.count({ metadata: { team: "y" } })).toBe(1);
      // The stored record keeps nothing internal in sight.
      const [full] = await c.crons.search({ threadId: t1.thread_id });
      expect(Object.keys(full).sort()).toEqual(
        ["assistant_id", "created_at", "cron_id", "enabled", "end_time", "metadata", "next_run_date", "payload", "schedule", "thread_id", "timezone", "updated_at", "user_id"].sort(),
      );
    });

    it("update changes the schedule, payload, metadata and enabled flag; a disabled cron fires nothing", async () => {
      const thread = await c.threads.create();
      const cron = await c.crons.createForThread(thread.thread_id, "agent", { schedule: "0 * * * *", input: hi, metadata: { v: 1 }, multitaskStrategy: "enqueue" });
      expect(cron.next_run_date).toBe(iso(T0 + 3_600_000));
      clock.advance(10);
      const updated = await c.crons.update(cron.cron_id, {
        schedule: "* * * * * *",
        context: { mood: "calm" },
        metadata: { w: 2 },
        endTime: iso(T0 + 3_000),
      });
      expect(updated).toMatchObject({
        cron_id: cron.cron_id,
        schedule: "* * * * * *",
        next_run_date: iso(T0 + 1000),
        end_time: iso(T0 + 3_000),
        metadata: { v: 1, w: 2 },
        payload: { input: hi, multitask_strategy: "enqueue", context: { mood: "calm" } },
        created_at: cron.created_at,
      });
      expect(updated.updated_at > cron.updated_at).toBe(true);
      const cleared = await c.crons.update(cron.cron_id, { endTime: null });
      expect(cleared.end_time).toBeNull();
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(1);
      const disabled = await c.crons.update(cron.cron_id, { enabled: false });
      expect(disabled.enabled).toBe(false);
      await tick();
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(1);
      await c.crons.update(cron.cron_id, { enabled: true });
      await tick();
      expect(await runsOn(thread.thread_id)).toBe(2);
      await expectCode(c.crons.update("00000000-0000-4000-8000-0000000000ff", { enabled: false }), "not_found");
    });

    it("bad input is refused with invalid_input (or not_found) and creates or changes nothing", async () => {
      const thread = await c.threads.create();
      const bad: Array<[Loose, "invalid_input" | "not_found"]> = [
        [{ schedule: "every minute" }, "invalid_input"],
        [{ schedule: "61 * * * *" }, "invalid_input"],
        [{ schedule: "* * * * * * *" }, "invalid_input"],
        [{ schedule: "* * * * *", timezone: "Mars/Olympus_Mons" }, "invalid_input"],
        [{ schedule: "* * * * *", endTime: "soon" }, "invalid_input"],
        [{ schedule: "* * * * *", multitaskStrategy: "sometimes" }, "invalid_input"],
        [{ schedule: "* * * * *", onRunCompleted: "archive" }, "invalid_input"],
        [{ schedule: "* * * * *", webhook: "http://example.com/hook" }, "invalid_input"],
        [{}, "invalid_input"],
      ];
      for (const [payload, code] of bad) {
        await expectCode(c.crons.createForThread(thread.thread_id, "agent", payload), code);
        await expectCode(c.crons.create("agent", payload), code);
      }
      await expectCode(c.crons.create("no-such-graph", { schedule: "* * * * *" }), "not_found");
      await expectCode(c.crons.createForThread("00000000-0000-4000-8000-0000000000ff", "agent", { schedule: "* * * * *" }), "not_found");
      expect(await c.crons.count()).toBe(0);
      const cron = await c.crons.createForThread(thread.thread_id, "agent", { schedule: "0 * * * *" });
      await expectCode(c.crons.update(cron.cron_id, { schedule: "nope" }), "invalid_input");
      await expectCode(c.crons.update(cron.cron_id, { timezone: "Nowhere/Never" }), "invalid_input");
      await expectCode(c.crons.search({ limit: -1 }), "invalid_input");
      const [same] = await c.crons.search();
      expect(same).toEqual(cron);
    });
  });
}

/**
 * Two runtimes over one store's data (`pair`: one store object twice, or two instances on the
 * same data) race for every tick of a per-second cron on a thread and of a new-thread cron: over
 * 20 ticks each fires exactly once.
 */
export function cronsExactlyOnce(name: string, pair: () => Promise<[Store, Store]>): void {
  describe(`crons exactly once: ${name}`, () => {
    it("two runtimes fire each of 20 ticks exactly once", async () => {
      const clock = new TestClock(T0 + 250);
      const [storeA, storeB] = await pair();
      const graphs = { agent: echoGraph() };
      const a: Runtime = await createRuntime({ graphs, store: storeA, clock: clock.now });
      const b: Runtime = await createRuntime({ graphs, store: storeB, clock: clock.now });
      try {
        const thread = await a.threads.create();
        const onThread = await a.crons.createForThread(thread.thread_id, "agent", { schedule: "* * * * * *", input: hi, multitaskStrategy: "enqueue" });
        const stateless = await b.crons.create("agent", { schedule: "* * * * * *", input: hi, onRunCompleted: "keep" });
        for (let i = 1; i <= 20; i++) {
          clock.advance(1000);
          // Both schedulers race for the same due ticks, twice each.
          await Promise.all([schedulerOf(a)!.pass(), schedulerOf(b)!.pass(), schedulerOf(a)!.pass(), schedulerOf(b)!.pass()]);
          expect(await a.runs.list(thread.thread_id, { limit: 100 })).toHaveLength(i);
          expect(await b.threads.count({ metadata: { cron_id: stateless.cron_id } })).toBe(i);
        }
        const runs = await a.runs.list(thread.thread_id, { limit: 100 });
        expect(new Set(runs.map((r) => r.run_id)).size).toBe(20);
        expect(runs.every((r) => r.metadata.cron_id === onThread.cron_id)).toBe(true);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}

/** Real-clock cron tests (D65): how long a per-second cron lives, and how long the test watches after deleting it. */
export const WINDOW_MS = 10_000;
export const AFTER_MS = 2_000;

/** What a per-second cron's runs over the window must show (printed as the test's figures). */
export function checkTicks(what: string, runs: Pick<Run, "created_at" | "status">[], deletedAt: number): void {
  const seconds = runs.map((r) => Math.floor(Date.parse(r.created_at) / 1000));
  const late = runs.filter((r) => Date.parse(r.created_at) > deletedAt);
  console.log(`${what}: ${runs.length} runs in ${WINDOW_MS / 1000} s, ${new Set(seconds).size} distinct ticks, ${late.length} after the delete`);
  expect(runs.length).toBeGreaterThanOrEqual(9);
  expect(runs.length).toBeLessThanOrEqual(11);
  // One run per tick: each run is created within its tick's second, or, for a tick that fell
  // due while no process ran (a restart), late in a later second. So a second holds two runs
  // only when a second before it holds none: the run of a tick fired late shares a second with
  // the run of its own tick, and its own second is left empty.
  const perSecond = new Map<number, number>();
  for (const s of seconds) perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  const first = Math.min(...seconds);
  let owed = 0;
  for (let s = first; s <= Math.max(...seconds); s++) {
    const n = perSecond.get(s) ?? 0;
    if (n === 0) owed++;
    expect(n - 1, `second ${s - first}: ${n} runs, ${owed} ticks skipped before it`).toBeLessThanOrEqual(Math.max(0, owed));
    if (n > 1) owed -= n - 1;
  }
  expect(late).toEqual([]);
  for (const r of runs) expect(r.status).toBe("success");
}

