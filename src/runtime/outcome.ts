/**
 * Run outcomes (D9, D10): the thread projection a finished run leaves (status, values,
 * interrupts, error), what `wait`/`join` resolve, waiting for a run that another runtime may be
 * executing, and webhooks.
 */
import type { StateSnapshot } from "../graph/types.js";
import type { Interrupt, RunRecord, RunStatus, ThreadRecord, ThreadStatus } from "../types.js";
import { threadGraphConfig } from "./graph-source.js";
import type { Core } from "./core.js";
import { isUnavailable } from "./outage.js";
import type { Run, RunResult } from "./types.js";

/** Statuses of a run that has not ended. */
export const IN_FLIGHT: readonly RunStatus[] = ["pending", "running"];

/** The lease (and in-process mutex) key of a thread: held while one of its runs executes. */
export const threadKey = (threadId: string) => `thread:${threadId}`;

/**
 * The `runs` notification: a thread may have a run to claim. It names the runtime that sent it,
 * which has already tried itself, so only the others react.
 */
export const runsReady = (core: Core, threadId: string) => ({ op: "notify" as const, topic: "runs", payload: `${threadId} ${core.owner}` });

/** The thread a `runs` notification names, unless this runtime sent it. */
export function readyThread(core: Core, payload: string | undefined): string | undefined {
  if (!payload) return undefined;
  const [threadId, from] = payload.split(" ");
  return from === core.owner ? undefined : threadId;
}

export const isFinal = (status: RunStatus) => !IN_FLIGHT.includes(status);

/** A run without its internal execution part: as callers see it, and as an ended run is kept. */
export function withoutExecution(run: RunRecord): Run {
  // A run stored before attempts were counted was on its first (D60).
  const { execution: _execution, attempt = 1, ...rest } = run;
  return Object.assign(rest, { attempt });
}

export const publicRun = withoutExecution;

export const errorInfo = (err: unknown) => ({
  error: err instanceof Error ? err.name || "Error" : "Error",
  message: err instanceof Error ? err.message : String(err),
});

/**
 * The error of a run that cannot be resumed: queued by a version that kept the queue in memory
 * (no execution part in the store), so nothing here knows how to run it.
 */
export const PROCESS_STOPPED = Object.freeze({
  error: "ProcessStopped",
  message: "The runtime executing this run stopped while it was in flight, and the run cannot be resumed from the store; run it again.",
});

/** The error of a run cut off in each of the attempts it may make (D61). */
export function attemptsExhausted(runId: string, attempts: number, drains: number): { error: string; message: string } {
  const drained = drains ? ` (not counting ${drains} ended by a runtime closing)` : "";
  return {
    error: "ProcessStopped",
    message:
      `Run ${runId} was cut off in each of its ${attempts} attempts${drained}: the runtime executing it stopped or lost its lease ` +
      `before it ended. It is not tried again (maxAttempts ${attempts}); a run that crashes its process ends here rather than in every process in turn.`,
  };
}

/**
 * The sequence number a resumed attempt's events start from when the run's event log did not
 * survive (D62): above any id an earlier attempt can have given out, so ids keep increasing
 * across attempts for a client that reconnects with one.
 */
export const attemptFirstSeq = (attempt: number) => (attempt - 1) * 1_000_000_000;

/** Task id -> interrupts of a snapshot. */
export function interruptsOf(state: Pick<StateSnapshot, "tasks">): Record<string, Interrupt[]> {
  const out: Record<string, Interrupt[]> = {};
  // Every pending task, as the agent server keeps it: a static breakpoint shows as `{<task id>: []}`.
  for (const task of state.tasks) out[task.id] = task.interrupts;
  return out;
}

/** What `wait`/`join` resolve for a run that ended: its final values, plus pending interrupts. */
export const finalValues = (values: Record<string, unknown>, interrupts: readonly unknown[]): RunResult =>
  ({ ...values, ...(interrupts.length ? { __interrupt__: interrupts } : {}) }) as RunResult;

/**
 * The thread after one of its runs ended, in the same commit as the run's outcome:
 * `error` when the run failed, `interrupted` when it paused (not when cancelled), `busy` while
 * other runs of the thread are still queued, else `idle`.
 */
export function projectThread(
  thread: ThreadRecord,
  state: Pick<StateSnapshot, "values" | "next" | "tasks">,
  o: { error?: { error: string; message: string }; cancelled: boolean; queued: boolean; wroteState: boolean; now: string },
): ThreadRecord {
  const status: ThreadStatus = o.error ? "error" : !o.cancelled && state.next.length ? "interrupted" : o.queued ? "busy" : "idle";
  return {
    ...thread,
    status,
    values: state.values,
    interrupts: interruptsOf(state),
    error: o.error ?? null,
    updated_at: o.now,
    state_updated_at: o.wroteState ? o.now : thread.state_updated_at,
  };
}

/** The graph a thread runs, from `metadata.graph_id`; undefined for a thread never run. */
export function graphIdOf(thread: ThreadRecord): string | undefined {
  const graphId = thread.metadata.graph_id;
  return typeof graphId === "string" ? graphId : undefined;
}

/** What `wait`/`join` resolve for a run that has ended, read from the store. */
export async function storedOutcome(core: Core, run: RunRecord): Promise<RunResult> {
  const thread = await core.store.getThread(run.thread_id);
  if (!thread) return {};
  if (run.status === "error" && thread.error) return { __error__: thread.error };
  const graphId = graphIdOf(thread);
  if (graphId === undefined || !core.graphs.has(graphId)) return {};
  const state = await (await core.graph(graphId, threadGraphConfig(thread, graphId))).getState(core.store, thread.thread_id);
  return finalValues(state.values, state.interrupts ?? []);
}

/** How soon a wait reads the store again after finding it unavailable (D72). */
const OUTAGE_RETRY_MS = 1000;

/**
 * Resolves once the run has ended (or is gone), whichever runtime executes it and however many
 * attempts it takes: listens to the run's `run:<id>` notification, then reads its status, so an
 * end between the two is not missed. Holds the process open meanwhile (D63). Rejects when
 * `signal` aborts, with `conflict` when the runtime closes, and when the store is unavailable at
 * the first read; once waiting, it waits through an outage (D72: reading again at the next
 * wake-up).
 */
export async function runEnded(core: Core, runId: string, signal?: AbortSignal): Promise<RunRecord | undefined> {
  const closing = core.closeSignal;
  if (signal?.aborted) throw signal.reason;
  if (closing.aborted) throw closing.reason;
  let wake!: () => void;
  let woken = new Promise<void>((r) => (wake = r));
  const unsubscribe = core.store.subscribe(`run:${runId}`, () => wake());
  const onAbort = () => wake();
  signal?.addEventListener("abort", onAbort, { once: true });
  closing.addEventListener("abort", onAbort, { once: true });
  const release = core.hold();
  try {
    for (let first = true; ; first = false) {
      const read = await core.store.getRun(runId).then(
        (run) => ({ run }),
        (err: unknown) => {
          if (first || !isUnavailable(err)) throw err;
          return undefined;
        },
      );
      if (read && (!read.run || isFinal(read.run.status))) return read.run;
      // Unreadable now: read again at the next wake-up, or in a second at the latest.
      if (!read) setTimeout(wake, OUTAGE_RETRY_MS);
      await woken;
      if (signal?.aborted) throw signal.reason;
      if (closing.aborted) throw closing.reason;
      woken = new Promise<void>((r) => (wake = r));
    }
  } finally {
    release();
    unsubscribe();
    signal?.removeEventListener("abort", onAbort);
    closing.removeEventListener("abort", onAbort);
  }
}

/** Posts a finished run to its webhook; a failure is reported as a lifecycle event, never thrown. */
export function sendWebhook(core: Core, run: RunRecord, result: RunResult, error?: { error: string; message: string }): void {
  const url = run.kwargs.webhook;
  if (typeof url !== "string" || !core.webhooks) return;
  const body = {
    ...publicRun(run),
    webhook_sent_at: core.now(),
    ...(error ? { error: error.message } : { values: result }),
  };
  const failed = (error: { error: string; message: string }) => core.emit({ type: "webhook.failed", run: publicRun(run), url, error });
  // Not retried.
  const fetchFn = core.webhooks.fetch ?? globalThis.fetch;
  void (async () => {
    try {
      const res = await fetchFn(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      if (!res.ok) failed({ error: "WebhookError", message: `graphdock: webhook ${url} answered HTTP ${res.status} for run ${run.run_id}.` });
    } catch (err) {
      failed(errorInfo(err));
    }
  })();
}
