/**
 * Cancelling runs and reading their events, from any runtime on the store (D20, D26): a pending
 * run is ended in one conditional commit; a running one gets a persisted cancel request that
 * the runtime executing it observes (at once when that is this runtime).
 */
import type { RunEventRecord, WriteOp } from "../persistence/types.js";
import type { RunRecord } from "../types.js";
import { endEmptyLog } from "./admission.js";
import type { Core } from "./core.js";
import type { Executor } from "./execution.js";
import { untilAvailable } from "./outage.js";
import { LostRace, commitIf } from "./races.js";
import { threadGraphConfig } from "./graph-source.js";
import { IN_FLIGHT, graphIdOf, isFinal, projectThread, runEnded, withoutExecution } from "./outcome.js";
import type { CancelAction, RunEvent } from "./types.js";

/** The abort reason of a reader that is done: a constant, so detaching builds no exception. */
const DETACHED = Object.freeze({ reason: "detached" });

export class RunControl {
  constructor(
    private readonly core: Core,
    readonly executor: Executor,
  ) {}

  /** Pending or running runs of the thread. */
  inFlight(threadId: string): Promise<number> {
    return this.core.store.countRuns({ thread_id: threadId, status: IN_FLIGHT });
  }

  /**
   * Cancels a run. A run that already ended is left as it is (D26). A pending run
   * ends before this resolves; a running one ends when its runtime observes the request (with
   * `wait`, this resolves after that).
   */
  async cancel(run: RunRecord, action: CancelAction, wait: boolean): Promise<void> {
    const { core } = this;
    const { store } = core;
    for (;;) {
      const current = await store.getRun(run.run_id);
      if (!current || isFinal(current.status)) return;
      if (current.status === "pending") {
        try {
          await commitIf(store, await this.endPendingOps(current, action));
        } catch (err) {
          if (err instanceof LostRace) continue; // claimed (or ended) meanwhile: look again
          throw err;
        }
        await endEmptyLog(core, current.run_id);
        if (action === "rollback") await store.events.drop(current.run_id);
        this.executor.poke(current.thread_id);
        return;
      }
      await store.commit([
        { op: "cancel.put", request: { run_id: current.run_id, thread_id: current.thread_id, action, requested_at: core.now() } },
        { op: "notify", topic: `cancel:${current.run_id}`, payload: action },
      ]);
      const local = this.executor.getLocal(current.run_id);
      if (local) this.executor.cancelLocal(local, action);
      if (wait) await runEnded(core, current.run_id);
      return;
    }
  }

  /** Ends a pending run in one commit: it is `interrupted` (or removed, for a rollback), the thread recomputed. */
  private async endPendingOps(run: RunRecord, action: CancelAction): Promise<WriteOp[]> {
    const { core } = this;
    const { store } = core;
    const now = core.now();
    const ops: WriteOp[] =
      action === "rollback"
        ? [{ op: "run.delete", run_id: run.run_id, expect: { status: ["pending"] } }]
        : [{ op: "run.put", run: { ...withoutExecution(run), status: "interrupted", updated_at: now }, expect: { status: ["pending"] } }];
    const thread = await store.getThread(run.thread_id);
    if (thread) {
      const graphId = graphIdOf(thread);
      const state = graphId !== undefined && core.graphs.has(graphId) ? await (await core.graph(graphId, threadGraphConfig(thread, graphId))).getState(store, run.thread_id) : { values: thread.values, next: [], tasks: [] };
      const queued = (await store.countRuns({ thread_id: run.thread_id, status: IN_FLIGHT })) > 1;
      const next = projectThread(thread, state, { cancelled: true, queued, wroteState: false, now });
      ops.push({ op: "thread.put", thread: next, expect: { sameAs: thread } });
    }
    ops.push({ op: "notify", topic: `run:${run.run_id}`, payload: action === "rollback" ? "deleted" : "interrupted" });
    return ops;
  }

  /** Cancels (rolls back) every in-flight run of the thread and waits for them to end. */
  async cancelAll(threadId: string): Promise<void> {
    const runs = await this.core.store.queryRuns({ thread_id: threadId, status: IN_FLIGHT, sortBy: "queue" });
    await Promise.all(runs.map((run) => this.cancel(run, "rollback", true)));
  }

  /** Drops the event logs of a thread's runs (before the thread is deleted). */
  async forget(threadId: string): Promise<void> {
    const { store } = this.core;
    for (const run of await store.queryRuns({ thread_id: threadId })) await store.events.drop(run.run_id);
  }
}

/**
 * The `error` event a stream of a run that failed lacks, or undefined: on a store shared with
 * other processes (D73), a run may have ended `error` without its log showing it (its process
 * died, and another ended it), and a stream must not end as if the run had succeeded. Read from
 * the run (and its thread's error), through an outage.
 */
async function unreportedFailure(core: Core, runId: string, id: number, signal: AbortSignal): Promise<RunEvent | undefined> {
  const { store } = core;
  const run = await untilAvailable(() => store.getRun(runId), signal);
  if (!run || (run.status !== "error" && run.status !== "timeout")) return undefined;
  const thread = await untilAvailable(() => store.getThread(run.thread_id), signal);
  const data = thread?.error ?? { error: "RunError", message: `graphdock: run ${runId} ended with status ${run.status}.` };
  return { id: String(id), event: "error", data };
}

/**
 * A run's events as legacy stream events (`id` = sequence number), attached at once: events
 * published after this call are never missed. `onStop(finished)` runs when the reader ends,
 * `finished` false when the consumer left early. A run that did not succeed ends its stream with
 * an `error` event, also when another process executed it (D73; not a `probe`, which only tells
 * whether the log is there). `fromStart`: the reader is made before its run is created.
 */
export function readRunEvents(
  core: Core,
  runId: string,
  options: { after?: number; ifAbsent?: "wait" | "end"; fromStart?: boolean; probe?: boolean; onStop?: (finished: boolean) => void },
): AsyncGenerator<RunEvent> & { detach(): Promise<void> } {
  const controller = new AbortController();
  const source = core.store.events.read(runId, {
    ...(options.after !== undefined ? { after: options.after } : {}),
    ...(options.ifAbsent !== undefined ? { ifAbsent: options.ifAbsent } : {}),
    ...(options.fromStart ? { fromStart: true } : {}),
    signal: controller.signal,
  })[Symbol.asyncIterator]();
  // Priming the port's iterator attaches the reader now, not at the consumer's first `next()`.
  let first: Promise<IteratorResult<RunEventRecord>> | undefined = source.next();
  first.catch(() => undefined);
  async function* events(): AsyncGenerator<RunEvent> {
    let finished = false;
    let failed = false;
    let last = options.after ?? -1;
    // A reader waits on the store's event port, which keeps nothing alive in Node (D63).
    const release = core.hold();
    try {
      for (;;) {
        const step = first ? await first : await source.next();
        first = undefined;
        if (step.done) break;
        const { seq, event, data } = step.value;
        if (event === "error") failed = true;
        last = seq;
        yield { id: String(seq), event, data } as RunEvent;
      }
      // Only a shared store's log can lack the failure: in one process, the runtime that ends a
      // run publishes its error before the log ends.
      if (!failed && !options.probe && core.store.capabilities.shared) {
        const missing = await unreportedFailure(core, runId, last + 1, controller.signal);
        if (missing) yield missing;
      }
      finished = true;
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    } finally {
      release();
      controller.abort(DETACHED);
      await source.return?.(undefined);
      options.onStop?.(finished);
    }
  }
  const out = events() as AsyncGenerator<RunEvent> & { detach(): Promise<void> };
  // A generator returned before its first next() never runs its finally block: detach here too.
  const finish = out.return.bind(out);
  out.return = (value) => {
    controller.abort(DETACHED);
    void source.return?.(undefined);
    return finish(value);
  };
  out.detach = async () => void (await out.return(undefined));
  return out;
}

