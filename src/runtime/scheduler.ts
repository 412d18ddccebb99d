/**
 * The cron scheduler of one runtime. It sleeps until the earliest tick of the store's
 * crons (read from the store's due index, never a scan), and is woken early by `notify`
 * "crons" whenever a cron changes on any runtime of the store. Time is the runtime's clock (D19).
 *
 * Exactly once: a tick is claimed by moving the cron's `next_run_date` on with a compare-and-set
 * on its revision, in the same commit that admits the tick's run (`admitRun`'s `withOps`). Of
 * several runtimes racing for one tick, one commit wins; the others see the cron moved on and
 * do nothing. A crash before the commit leaves the tick due (another runtime or the restart
 * fires it); after it, the run is in the store's queue and the executor runs it. A tick is never
 * both lost and fired twice.
 *
 * Missed ticks: a tick found due more than `LATE_TICK_GRACE_MS` late (no runtime ran at its
 * time) is skipped, not replayed: the cron moves on to its next future tick. A tick found late by less (a busy process, a restart within the
 * minute) still fires once. Either way the next tick is computed from now, so a long outage
 * never produces a burst.
 *
 * After firing, the due index is read again to arm the timer (D65): the crons just fired moved on
 * to their next ticks, the earliest of which (a per-second cron's, always) must wake it.
 */
import { OWNER_USER } from "../auth/types.js";
import { GraphdockError } from "../errors.js";
import type { CronRecord } from "../persistence/crons.js";
import type { WriteOp } from "../persistence/types.js";
import { loadCroner, parseSchedule } from "./cron-schedule.js";
import { CRONS_TOPIC, tickCaller, tickOptions } from "./crons.js";
import type { RunControl } from "./control.js";
import type { Caller, Core } from "./core.js";
import { errorInfo } from "./outcome.js";
import { reportFailure } from "./outage.js";
import { commitIf, LostRace } from "./races.js";
import { startRun } from "./runs.js";

/** A tick found due later than this (ms) was missed while no runtime ran: it is skipped. */
export const LATE_TICK_GRACE_MS = 60_000;
/** Due crons read per query. */
const BATCH = 32;
/** Longest sleep (ms): the timer is re-armed at least this often (a changed clock, timer limits). */
const MAX_SLEEP_MS = 60_000;
/** Retry delay (ms) after a pass failed (the store was unreachable). */
const RETRY_MS = 1_000;

/** Another runtime claimed the tick first. */
class TickTaken extends Error {}

const schedulers = new WeakMap<object, CronScheduler>();

/** The scheduler of a runtime (internal; tests drive passes with it under an injected clock). */
export function schedulerOf(runtime: object): CronScheduler | undefined {
  return schedulers.get(runtime);
}

export class CronScheduler {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** The pass in progress (or last), and the one queued after it. */
  private current: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    private readonly core: Core,
    private readonly control: RunControl,
  ) {}

  /** Starts scheduling: a first pass now, then on its timer and on every "crons" notification. */
  start(runtime: object): void {
    schedulers.set(runtime, this);
    this.unsubscribe = this.core.store.subscribe(CRONS_TOPIC, () => void this.pass());
    void this.pass();
  }

  /**
   * Fires every tick due as of the clock's now and re-arms the timer. Passes run one at a time;
   * calls while one runs share the next. Resolves when that pass has ended; never rejects.
   */
  pass(): Promise<void> {
    if (this.closed) return this.current;
    if (this.queued) return this.queued;
    const next = this.current.then(async () => {
      this.queued = undefined;
      if (this.closed) return;
      try {
        await this.fireDue();
      } catch (err) {
        if (this.closed) return;
        reportFailure(this.core.log, err, {}, "graphdock: the cron scheduler could not read or fire due crons; retrying");
        this.arm(this.core.clock() + RETRY_MS);
      }
    });
    this.queued = next;
    this.current = next;
    return next;
  }

  /** Stops the timer and the subscription; waits for a pass in progress. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    await this.current;
  }

  private arm(atMs: number | undefined): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed || atMs === undefined) return;
    const delay = Math.min(Math.max(0, atMs - this.core.clock()), MAX_SLEEP_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, delay);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /**
   * Fires every tick due as of now, then arms the timer for the earliest tick left. The crons
   * just fired are read again for that: each moved on to its next tick, which may well be the
   * earliest (a seconds-level schedule's always is).
   */
  private async fireDue(): Promise<void> {
    const { store } = this.core;
    const now = this.core.clock();
    const tried = new Set<string>();
    for (;;) {
      const batch = await store.dueCrons(undefined, BATCH);
      let fired = false;
      let stuck = false;
      for (const cron of batch) {
        const at = Date.parse(cron.next_run_date!);
        if (at > now) return this.arm(at);
        // A cron whose tick could not be moved on (a failing store) is tried once per pass.
        const key = `${cron.cron_id}@${cron.revision}`;
        if (tried.has(key)) {
          stuck = true;
          continue;
        }
        tried.add(key);
        fired = true;
        if (this.closed) return;
        await this.fire(cron, now);
      }
      // Nothing scheduled at all; or only crons that did not move on: try again shortly.
      if (!fired) return this.arm(stuck ? now + RETRY_MS : undefined);
    }
  }

  /** Fires (or skips) the cron's due tick and moves it on to its next tick after `now`. */
  private async fire(cron: CronRecord, now: number): Promise<void> {
    const { core } = this;
    const scheduledFor = cron.next_run_date!;
    // croner loads first: a failed load fails the pass, which retries; it does not end the cron.
    await loadCroner();
    let nextRun: string | null;
    try {
      nextRun = (await parseSchedule(cron.schedule, cron.timezone, cron.end_time, `cron ${cron.cron_id}`)).nextAfter(now)?.toISOString() ?? null;
    } catch {
      nextRun = null; // stored by an older version with a schedule this one refuses: it ends
    }
    const moved = (c: CronRecord): WriteOp => ({
      op: "cron.put",
      cron: { ...c, next_run_date: nextRun, revision: c.revision + 1 },
      expect: { revision: c.revision },
    });
    if (now - Date.parse(scheduledFor) > LATE_TICK_GRACE_MS) {
      await this.moveOn([moved(cron)]);
      return;
    }
    const fallback: Caller = { user: async () => OWNER_USER };
    try {
      const options = tickOptions(cron);
      await startRun(core, tickCaller(cron, fallback), this.control, cron.thread_id, cron.assistant_id, options, `cron ${cron.cron_id}`, undefined, async () => {
        // Read again on every attempt: if the cron moved on, another runtime has this tick.
        const current = await core.store.getCron(cron.cron_id);
        if (!current || current.revision !== cron.revision) throw new TickTaken();
        return [moved(current)];
      });
    } catch (err) {
      if (err instanceof TickTaken) return;
      // The tick's run could not be admitted: the tick is spent all the same (once).
      // A cron whose thread or assistant no longer exists has nothing left to run: it goes.
      const gone =
        GraphdockError.is(err, "not_found") &&
        ((cron.thread_id !== null && !(await core.store.getThread(cron.thread_id))) || !(await core.store.getAssistant(cron.assistant_id)));
      const ops: WriteOp[] = gone ? [{ op: "cron.delete", cron_id: cron.cron_id, expect: { revision: cron.revision } }] : [moved(cron)];
      if ((await this.moveOn(ops)) && !core.closed) {
        const { error, message } = errorInfo(err);
        const fields = { cron_id: cron.cron_id, scheduled_for: scheduledFor, error, message, deleted: gone };
        core.log.warn(fields, `graphdock: a cron's tick started no run${gone ? "; its thread or assistant is gone, so the cron was deleted" : ""}`);
      }
    }
  }

  /** Commits the ops unless another runtime moved the cron first; true when they were committed. */
  private async moveOn(ops: WriteOp[]): Promise<boolean> {
    try {
      await commitIf(this.core.store, ops);
      return true;
    } catch (err) {
      if (err instanceof LostRace) return false;
      throw err;
    }
  }
}
