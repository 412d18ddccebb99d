/**
 * Working through a store outage (D70-D72). A store that cannot reach its data (PostgreSQL down)
 * fails calls with `unavailable`, and logs the outage itself, once when it starts and once when
 * it ends. So the runtime's background work (sweeps, claims, cron passes) stays silent about
 * such failures and tries again at its next turn, and work already under way waits for the
 * store rather than failing: a run's commits and reads, the recording of its outcome, a call
 * waiting for a run to end. What the store refuses at a call's start fails that call
 * (`unavailable`, 503 over HTTP), so nothing is acknowledged that was not stored.
 */
import type { DiagnosticsLogger, LogFields } from "../diagnostics.js";
import { GraphdockError } from "../errors.js";

export const isUnavailable = (err: unknown): boolean => GraphdockError.is(err, "unavailable");

/** Logs a background task's failure at `error`, unless it is the store's outage (which the store logs). */
export function reportFailure(log: DiagnosticsLogger, err: unknown, fields: LogFields, message: string): void {
  if (!isUnavailable(err)) log.error({ err, ...fields }, message);
}

/** First wait before calling again while the store is unavailable; it doubles up to {@link MAX_WAIT_MS}. */
const FIRST_WAIT_MS = 100;
const MAX_WAIT_MS = 2000;

/**
 * `fn()`, called again while it fails with `unavailable` (after 0.1 s, 0.2 s, ... at most 2 s
 * apart) until it succeeds, fails otherwise, or `signal` has aborted (then the last failure is
 * thrown; an abort is seen at the end of a wait, which listens to no signal: many calls share
 * one). The waits keep the process alive: the work is under way. A call that succeeds costs one
 * promise more than `fn()` (on the hot path of every run's commits).
 */
export function untilAvailable<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  let first: Promise<T>;
  try {
    first = fn();
  } catch (err) {
    return Promise.reject(err);
  }
  return first.catch((err: unknown) => (isUnavailable(err) && !signal?.aborted ? retry(fn, signal) : Promise.reject(err)));
}

async function retry<T>(fn: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, MAX_WAIT_MS)) {
    await new Promise<void>((resolve) => setTimeout(resolve, wait));
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailable(err) || signal?.aborted) throw err;
    }
  }
}
