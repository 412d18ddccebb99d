/**
 * Durable runs across runtimes on one store (D60-D62): a runtime that stops mid-run (here its
 * store is "killed": every call it makes from then on never returns, as in a frozen or dead
 * process) loses its lease, and another runtime resumes the run from its last checkpoint as the
 * next attempt. Written against the runtime's public API; run on every store pair that
 * `sharedStoreContract` uses (test/runtime/shared.test.ts, test/postgres/runtime.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { unavailable } from "../../src/errors.js";
import { createRuntime } from "../../src/index.js";
import type { Runtime, RunEvent } from "../../src/index.js";
import { END, START, StateGraph } from "../../src/graph/index.js";
import type { CompiledGraph } from "../../src/graph/types.js";
import type { RunEventPort, Store, WriteOp } from "../../src/persistence/types.js";
import type { StorePair } from "./shared.js";

/** Leases short enough for a takeover to come quickly. */
const LEASE_MS = 400;

/** A promise that never settles: what a call made by a dead process gets. */
const never = () => new Promise<never>(() => undefined);

/**
 * The store as a runtime sees it, until `kill()`: afterwards every call it makes never settles,
 * nothing it publishes arrives and no notification reaches it, as for a process that died.
 * `cutRenewals()` keeps the runtime working but holds back its lease renewals until the function
 * it returns is called (a runtime stalled, or cut off from the store, long enough to lose its
 * lease); a killed runtime's never arrive. `outage()` cuts the runtime off from the store's data
 * until the function it returns is called: its reads and commits fail with `unavailable`, as
 * the PostgreSQL store's do while the database cannot be reached (D70). `stallCommits()` holds
 * back every commit it sends from then on, its run's writes too, until the function it returns
 * is called (its connection to the store stalled with commits in flight: they arrive late, after
 * checks the runtime made before sending them).
 */
export function killable(store: Store): { store: Store; kill(): void; cutRenewals(): () => void; outage(): () => void; stallCommits(): () => void } {
  let dead = false;
  let down = false;
  /** From `cutRenewals()`: commits holding only lease ops never settle (renewals cannot reach the store). */
  let renewalsCut = false;
  /** From `stallCommits()`: every commit is held back. */
  let commitsStalled = false;
  const events = new Proxy(store.events, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (!dead) return (value as (...a: unknown[]) => unknown).apply(target, args);
        if (key === "publish") return undefined;
        if (key === "listening") return false;
        if (key === "read") return { [Symbol.asyncIterator]: () => ({ next: never }) };
        return never();
      };
    },
  }) as RunEventPort;
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === "events") return events;
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      if (key === "subscribe") {
        return (topic: string, listener: (payload: string | undefined) => void) =>
          dead ? () => undefined : target.subscribe(topic, (payload) => void (dead || listener(payload)));
      }
      if (key === "commit") {
        return (ops: WriteOp[]) => {
          if (dead) return never();
          if (down) return unreachable();
          if (commitsStalled || (renewalsCut && ops.every((op) => op.op === "lease.put"))) return stalled().then(() => target.commit(ops));
          return target.commit(ops);
        };
      }
      return (...args: unknown[]) => (dead ? never() : down && key !== "close" ? unreachable() : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
  const unreachable = () => Promise.reject(unavailable("graphdock: the store is unavailable: its database cannot be reached."));
  const waiting: Array<() => void> = [];
  const stalled = () => new Promise<void>((resolve) => waiting.push(resolve));
  return {
    store: proxy,
    kill: () => void (dead = true),
    outage: () => {
      down = true;
      return () => void (down = false);
    },
    // Held until restored, then sent: a stalled runtime's renewals arrive late.
    cutRenewals: () => {
      renewalsCut = true;
      return () => {
        renewalsCut = false;
        waiting.splice(0).forEach((w) => w());
      };
    },
    stallCommits: () => {
      commitsStalled = true;
      return () => {
        commitsStalled = false;
        waiting.splice(0).forEach((w) => w());
      };
    },
  };
}

/** Executions of each step, and the attempts each step saw (`config.metadata.run_attempt`). */
interface Probe {
  runs: Record<string, number>;
  attempts: Record<string, number[]>;
  /** Resolves when step `two` has started `n` times in all. */
  reachedTwo(n: number): Promise<void>;
}

function newProbe(): Probe {
  const waiters: Array<() => void> = [];
  const probe: Probe = {
    runs: {},
    attempts: {},
    async reachedTwo(n) {
      while ((probe.runs.two ?? 0) < n) await new Promise<void>((r) => waiters.push(r));
    },
  };
  (probe as Probe & { wake(): void }).wake = () => waiters.splice(0).forEach((w) => w());
  return probe;
}

/**
 * `steps`: one -> two -> three, each appending its name to `log` and counting its executions.
 * `two` blocks until its run is aborted when `blockAttempts` includes the attempt it runs in
 * (default: the first only), after emitting a custom `{ waiting: attempt }` event; with `slow`,
 * it first waits for the promise `slow(attempt)` returns, abort or not.
 */
function stepsGraph(probe: Probe, blockAttempts: (attempt: number) => boolean, slow?: (attempt: number) => Promise<void> | undefined): CompiledGraph {
  const step = (name: string) => async (_state: unknown, ctx: { config: { metadata?: Record<string, unknown> }; signal: AbortSignal; writer(c: unknown): void }) => {
    const attempt = Number(ctx.config.metadata?.run_attempt);
    probe.runs[name] = (probe.runs[name] ?? 0) + 1;
    (probe.attempts[name] ??= []).push(attempt);
    (probe as Probe & { wake(): void }).wake();
    const wait = name === "two" ? slow?.(attempt) : undefined;
    if (wait) await wait;
    if (name === "two" && blockAttempts(attempt)) {
      ctx.writer({ waiting: attempt });
      await new Promise<never>((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
    }
    return { log: [name] };
  };
  return new StateGraph({ log: { reducer: (a: string[], b: string[]) => [...a, ...b], default: (): string[] => [] } })
    .addNode("one", step("one"))
    .addNode("two", step("two"))
    .addNode("three", step("three"))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "three")
    .addEdge("three", END)
    .compile();
}

/**
 * Waits until the thread's state holds `log`: a step is complete once its checkpoint is stored
 * (with the default durability the engine goes on while it is written), and only then is it
 * never run again.
 */
async function checkpointed(runtime: Runtime, threadId: string, log: string[]): Promise<void> {
  await vi.waitFor(async () => expect((await runtime.threads.getState(threadId)).values).toMatchObject({ log }), { timeout: 5_000, interval: 10 });
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** The stream contract across attempts (docs/durable.md): what a reader that stayed attached saw. */
function expectAcrossAttempts(events: RunEvent[], runId: string, attempts: number[]): void {
  const ids = events.map((e) => Number(e.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i], `event ids keep increasing (${ids.join(", ")})`).toBeGreaterThan(ids[i - 1]!);
  const markers = events.filter((e) => e.event === "metadata");
  expect(markers.map((e) => (e.data as { attempt: number }).attempt)).toEqual(attempts);
  for (const m of markers) expect(m.data).toMatchObject({ run_id: runId });
  expect(events[0]!.event).toBe("metadata");
}

export function durableRunsContract(name: string, pair: StorePair): void {
  describe(`durable runs across runtimes: ${name}`, () => {
    let stores: [Store, Store];
    const open: Runtime[] = [];
    const start = async (store: Store, probe: Probe, options: { maxAttempts?: number; block?: (attempt: number) => boolean; leaseMs?: number } = {}) => {
      const runtime = await createRuntime({
        graphs: { steps: stepsGraph(probe, options.block ?? ((a) => a === 1)) },
        store,
        leaseMs: options.leaseMs ?? LEASE_MS,
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      });
      open.push(runtime);
      return runtime;
    };
    /** A runtime on a store it can be killed from (never closed: a dead process closes nothing). */
    const startKillable = async (
      store: Store,
      probe: Probe,
      options: { maxAttempts?: number; block?: (attempt: number) => boolean; slow?: (attempt: number) => Promise<void> | undefined } = {},
    ) => {
      const k = killable(store);
      const runtime = await createRuntime({
        graphs: { steps: stepsGraph(probe, options.block ?? ((a) => a === 1), options.slow) },
        store: k.store,
        leaseMs: LEASE_MS,
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      });
      return { runtime, kill: k.kill, cutRenewals: k.cutRenewals, outage: k.outage, stallCommits: k.stallCommits };
    };
    /**
     * A `steps` run on a killable runtime A whose attempt 1 of `two` ends only at `release()`
     * (the takeover does not abort it: its runtime cannot tell yet), started once `two` began.
     * `durability: "sync"` makes a step start only once the step before it is stored (with async
     * the engine goes on while a commit is in flight, so the step after a refused commit may have begun).
     */
    const lateTwo = async (probe: Probe, durability?: "sync") => {
      let release!: () => void;
      const late = new Promise<void>((r) => (release = r));
      const a = await startKillable(stores[0], probe, { block: () => false, slow: (attempt) => (attempt === 1 ? late : undefined) });
      const t = await a.runtime.threads.create();
      const run = await a.runtime.runs.create(t.thread_id, "steps", { input: {}, ...(durability ? { durability } : {}) });
      await probe.reachedTwo(1);
      return { a, t, run, release };
    };
    /** {@link lateTwo} with a runtime B on the other store, which has read `one`'s checkpoint. */
    const lateTwoBeside = async (probe: Probe) => {
      const b = await start(stores[1], probe);
      const late = await lateTwo(probe, "sync");
      await checkpointed(b, late.t.thread_id, ["one"]);
      return { ...late, b };
    };

    beforeEach(async () => {
      stores = await pair();
    });
    afterEach(async () => {
      for (const r of open.splice(0).reverse()) await r.close();
    });

    it("a run cut off mid-step is resumed by another runtime as attempt 2 from its last checkpoint; a join and a replay stay open across attempts", async () => {
      const probe = newProbe();
      const a = await startKillable(stores[0], probe);
      const b = await start(stores[1], probe);
      const t = await b.threads.create();
      const run = await a.runtime.runs.create(t.thread_id, "steps", { input: {}, streamMode: ["values", "custom"], streamResumable: true });
      await probe.reachedTwo(1);
      await checkpointed(b, t.thread_id, ["one"]);
      // A join attached now (from the next event) and a replay from the start, both from B.
      const joined = collect(b.runs.joinStream(t.thread_id, run.run_id));
      const replayed = collect(b.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
      const result = b.runs.join(t.thread_id, run.run_id);
      await vi.waitFor(async () => expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "running", attempt: 1 }));
      const killedAt = Date.now();
      a.kill();

      expect(await result).toMatchObject({ log: ["one", "two", "three"] });
      const took = Date.now() - killedAt;
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
      expect((await b.threads.get(t.thread_id)).status).toBe("idle");
      // Completed steps ran once; the step cut off ran again, in attempt 2, which nodes can read.
      expect(probe.runs).toEqual({ one: 1, two: 2, three: 1 });
      expect(probe.attempts).toEqual({ one: [1], two: [1, 2], three: [2] });
      // Its lease had to expire first (no store here can tell that a runtime died in process).
      expect(took).toBeGreaterThanOrEqual(LEASE_MS / 2);

      const replay = await replayed;
      expectAcrossAttempts(replay, run.run_id, [1, 2]);
      // The cut-off step's event before the restart marker, and again after it; no error event.
      expect(replay.filter((e) => e.event === "custom").map((e) => e.data)).toEqual([{ waiting: 1 }]);
      const second = replay.findIndex((e) => e.event === "metadata" && (e.data as { attempt: number }).attempt === 2);
      expect(replay.slice(0, second).some((e) => e.event === "custom")).toBe(true);
      expect(replay.some((e) => e.event === "error")).toBe(false);
      expect(replay.at(-1)).toMatchObject({ event: "values", data: { log: ["one", "two", "three"] } });

      const join = await joined;
      expectAcrossAttempts(join, run.run_id, [2]);
      expect(join.at(-1)).toMatchObject({ event: "values", data: { log: ["one", "two", "three"] } });
      expect(Number(join[0]!.id)).toBeGreaterThan(Number(replay[second - 1]!.id));
    });

    it("a run cut off in each of its maxAttempts attempts ends error saying so, and only then do its streams get an error event", async () => {
      const probe = newProbe();
      const always = () => true;
      const a = await startKillable(stores[0], probe, { maxAttempts: 2, block: always });
      const t = await a.runtime.threads.create();
      const run = await a.runtime.runs.create(t.thread_id, "steps", { input: {}, streamResumable: true });
      await probe.reachedTwo(1);
      const b = await startKillable(stores[1], probe, { maxAttempts: 2, block: always });
      await checkpointed(b.runtime, t.thread_id, ["one"]);
      a.kill();
      await probe.reachedTwo(2); // resumed by B as attempt 2
      const c = await start(stores[0], probe, { maxAttempts: 2, block: always });
      const stream = collect(c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
      b.kill();

      const events = await stream;
      expectAcrossAttempts(events, run.run_id, [1, 2]);
      const error = events.at(-1)!;
      expect(error.event).toBe("error");
      expect(events.filter((e) => e.event === "error")).toHaveLength(1);
      expect(error.data).toMatchObject({ error: "ProcessStopped", message: expect.stringContaining("each of its 2 attempts") });
      expect(await c.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "error", attempt: 2 });
      const failed = await c.threads.get(t.thread_id);
      expect(failed).toMatchObject({ status: "error", error: { error: "ProcessStopped" } });
      // The error is on the task that was cut off (its message, as the agent server reports it),
      // so clients reading task errors show an error, not a breakpoint.
      const state = await c.threads.getState(t.thread_id);
      expect(state.tasks).toMatchObject([{ name: "two", error: (failed.error as { message: string }).message }]);
      expect(await c.runs.join(t.thread_id, run.run_id)).toMatchObject({ __error__: { message: expect.stringContaining("2 attempts") } });
      expect(probe.runs).toEqual({ one: 1, two: 2 });
      // The thread takes new runs.
      probe.runs = {};
      const next = await start(stores[1], probe, { block: () => false });
      expect(await next.runs.wait(t.thread_id, "steps", { input: {} })).toMatchObject({ log: ["one", "one", "two", "three"] });
    });

    it("a run cancelled while cut off ends interrupted when it is taken over, without running again, and its stream ends without an error", async () => {
      const probe = newProbe();
      const a = await startKillable(stores[0], probe);
      const b = await start(stores[1], probe);
      const t = await b.threads.create();
      const run = await a.runtime.runs.create(t.thread_id, "steps", { input: {}, streamResumable: true });
      await probe.reachedTwo(1);
      await checkpointed(b, t.thread_id, ["one"]);
      const stream = collect(b.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
      a.kill();
      await b.runs.cancel(t.thread_id, run.run_id, true);
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "interrupted" });
      const events = await stream;
      expect(events.some((e) => e.event === "error")).toBe(false);
      expect(probe.runs).toEqual({ one: 1, two: 1 });
      expect((await b.threads.get(t.thread_id)).status).toBe("idle");
    });

    it("a runtime that lost its lease while alive writes nothing more once another resumed the run: its late commit is fenced", async () => {
      const probe = newProbe();
      const { a, b, t, run, release } = await lateTwoBeside(probe);
      a.cutRenewals();
      // B resumes it once A's lease expired, and finishes it.
      expect(await b.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
      const after = await b.threads.getHistory(t.thread_id, { limit: 20 });
      release(); // A's `two` ends now: its checkpoint must not land, nor `three` run there
      await new Promise((r) => setTimeout(r, LEASE_MS));
      expect(await b.threads.getHistory(t.thread_id, { limit: 20 })).toEqual(after);
      expect(probe.attempts).toEqual({ one: [1], two: [1, 2], three: [2] });
    });

    it("a runtime cut off from the store past its lease: another resumes the run, and the commit it sends again once the store is back is fenced (D72)", async () => {
      const probe = newProbe();
      const { a, b, t, run, release } = await lateTwoBeside(probe);
      const restore = a.outage();
      release(); // A's `two` ends in the outage: its checkpoint's commit is refused, and sent again until the store is back
      expect(await b.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
      const after = await b.threads.getHistory(t.thread_id, { limit: 20 });
      restore();
      // Longer than the longest wait between two tries (2 s): A has sent its commit again by now.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(await b.threads.getHistory(t.thread_id, { limit: 20 })).toEqual(after);
      expect(probe.attempts).toEqual({ one: [1], two: [1, 2], three: [2] });
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
    });

    it("a runtime cut off from the store past its lease, with nobody taking over, sends its commit again once the store is back and goes on in the same attempt (D72)", async () => {
      const probe = newProbe();
      const { a, t, run, release } = await lateTwo(probe, "sync");
      const restore = a.outage();
      release();
      await new Promise((r) => setTimeout(r, LEASE_MS * 2)); // the lease expires meanwhile
      restore();
      expect(await a.runtime.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
      expect(await a.runtime.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 1 });
      expect(probe.attempts).toEqual({ one: [1], two: [1], three: [1] });
      open.push(a.runtime);
    });

    it("a commit sent while the lease was fresh but delivered after another runtime resumed the run is refused (D67)", async () => {
      const probe = newProbe();
      const { a, b, t, run, release } = await lateTwoBeside(probe);
      // A's connection stalls; `two` ends at once, so its commit leaves A with the lease renewed
      // less than half a lease ago (renewals go every third), and stays in flight.
      const restore = a.stallCommits();
      release();
      // B resumes the run once A's lease expired, and finishes it.
      expect(await b.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
      const after = await b.threads.getHistory(t.thread_id, { limit: 20 });
      restore(); // A's commit of `two` (attempt 1) reaches the store now: it must write nothing
      await new Promise((r) => setTimeout(r, LEASE_MS));
      expect(await b.threads.getHistory(t.thread_id, { limit: 20 })).toEqual(after);
      expect((await b.threads.getState(t.thread_id)).values).toEqual({ log: ["one", "two", "three"] });
      expect(probe.attempts).toEqual({ one: [1], two: [1, 2], three: [2] });
    });

    it("a runtime whose lease expired while it was stalled, with nobody taking over, takes it again and goes on in the same attempt", async () => {
      const probe = newProbe();
      const { a, t, run, release } = await lateTwo(probe);
      const restore = a.cutRenewals();
      await new Promise((r) => setTimeout(r, LEASE_MS * 2)); // the lease expires; A's own sweeper leaves its run alone
      restore();
      release();
      expect(await a.runtime.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
      expect(await a.runtime.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 1 });
      expect(probe.attempts).toEqual({ one: [1], two: [1], three: [1] });
      open.push(a.runtime);
    });

    it("a runtime that closes hands its runs to another at once (a drain, not counted as an attempt)", async () => {
      const probe = newProbe();
      // Leases of a minute: a takeover after a lease expiry would time the test out.
      const a = await start(stores[0], probe, { leaseMs: 60_000 });
      const b = await start(stores[1], probe, { maxAttempts: 1, leaseMs: 60_000 });
      const t = await a.threads.create();
      const run = await a.runs.create(t.thread_id, "steps", { input: {} });
      await probe.reachedTwo(1);
      await checkpointed(b, t.thread_id, ["one"]);
      const joined = b.runs.join(t.thread_id, run.run_id);
      await a.close();
      expect(await joined).toMatchObject({ log: ["one", "two", "three"] });
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
      expect(probe.runs).toEqual({ one: 1, two: 2, three: 1 });
    });
  });
}
