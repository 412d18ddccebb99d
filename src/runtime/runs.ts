/**
 * `runtime.runs`: thin methods over admission (./admission.ts),
 * execution (./execution.ts) and control (./control.ts). Every method works from any runtime on
 * the store: the run, its events and its cancel requests live there (D20).
 */
import { conflict, invalidInput, notFound } from "../errors.js";
import type { AuthFilter } from "../auth/types.js";
import type { WriteOp } from "../persistence/types.js";
import type { RunRecord, ThreadRecord } from "../types.js";
import { type RunOptions, admitRun, asModes, checkRun } from "./admission.js";
import { type RunControl, readRunEvents } from "./control.js";
import type { Caller, Core } from "./core.js";
import { selectFields } from "./select.js";
import { isFinal, publicRun, runEnded, storedOutcome } from "./outcome.js";
import { parse, schemas } from "./schemas.js";
import type { Run, RunEvent, RunListQuery, RunResult, RunSelectField, RunsApi, Selection } from "./types.js";

/** Rejects when `signal` aborts (the call stops waiting; the run is unaffected). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const notifyCreated = (p: RunOptions, run: RunRecord) => {
  try {
    p.onRunCreated?.({ run_id: run.run_id, thread_id: run.thread_id });
  } catch {
    // A throwing callback must not break the run.
  }
};

/**
 * Admits a run, reports it, and claims it when it can start here now. `withOps` joins more ops
 * to the admitting commit (a cron tick's claim; see `admitRun`).
 */
export async function startRun(
  core: Core,
  caller: Caller,
  control: RunControl,
  t: string | null,
  a: string,
  p: RunOptions,
  what: string,
  runId?: string,
  withOps?: () => Promise<readonly WriteOp[]>,
): Promise<RunRecord> {
  const { executor } = control;
  const { run, claimed, previousStatus } = await admitRun(core, caller, t, a, p, what, runId, withOps);
  if (core.listening) {
    core.emit({ type: "run.created", run: publicRun(run) });
    if (previousStatus !== "busy") core.emit({ type: "thread.status", thread_id: run.thread_id, status: "busy", previous: previousStatus ?? "idle" });
  }
  notifyCreated(p, run);
  // A run claimed by its admission starts here; `startClaimed` registers it as executing here
  // before its first await, so the caller may stream or wait on it at once.
  if (claimed) void executor.startClaimed(claimed);
  else await executor.claim(run.thread_id);
  return run;
}

export function runsApi(core: Core, caller: Caller, control: RunControl): RunsApi {
  const { store } = core;
  const { executor } = control;

  async function runOf(threadId: string, runId: string, filter: AuthFilter | undefined): Promise<{ thread: ThreadRecord; run: RunRecord }> {
    const thread = await core.visibleThread(threadId, filter);
    const run = await store.getRun(runId);
    if (!run || run.thread_id !== threadId) throw notFound(`graphdock: run ${runId} not found on thread ${threadId}.`);
    return { thread, run };
  }

  function parseRun(threadId: unknown, assistantId: unknown, payload: unknown, what: string) {
    const t = threadId === null || threadId === undefined ? null : parse(schemas.id, threadId, what);
    const a = parse(schemas.id, assistantId, what);
    const p = parse(schemas.run, payload ?? {}, `${what}(${t ?? "stateless"}, ${a})`);
    return { t, a, p };
  }

  const start = (t: string | null, a: string, p: RunOptions, what: string, runId?: string) => startRun(core, caller, control, t, a, p, what, runId);

  /** The run's result once it has ended: from this runtime when it executes it, else from the store. */
  function outcome(run: RunRecord, signal: AbortSignal | undefined): Promise<RunResult> {
    const local = executor.getLocal(run.run_id);
    // The run's own result promise when no signal is given (no wrapper, no extra turn).
    if (local) return abortable(local.result, signal);
    return storedOutcomeOf(run, signal);
  }

  async function storedOutcomeOf(run: RunRecord, signal: AbortSignal | undefined): Promise<RunResult> {
    const ended = await runEnded(core, run.run_id, signal);
    return ended ? storedOutcome(core, ended) : {};
  }

  /**
   * While the run is in flight, an abort of the caller's `signal` (a disconnect) cancels it. The
   * listener goes once the run has ended, so a signal reused across calls collects none.
   */
  function cancelOnAbort(run: RunRecord, signal: AbortSignal | undefined, done: Promise<unknown>): void {
    if (!signal) return;
    const onAbort = () => void control.cancel(run, "interrupt", false).catch(() => undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    void done.finally(() => signal.removeEventListener("abort", onAbort));
  }

  async function* stream(threadId: unknown, assistantId: unknown, payload?: unknown): AsyncGenerator<RunEvent> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.stream");
    const runId = core.ids.uuid();
    let run: RunRecord | undefined;
    // Attached before the run exists, so the stream has every event from the first.
    const events = readRunEvents(core, runId, {
      after: -1,
      fromStart: true,
      onStop: (finished) => {
        if (!finished && p.onDisconnect === "cancel" && run) void control.cancel(run, "interrupt", false).catch(() => undefined);
      },
    });
    try {
      run = await start(t, a, p, "runs.stream", runId);
    } catch (err) {
      await events.detach();
      throw err;
    }
    yield* events;
  }

  async function create(threadId: unknown, assistantId: unknown, payload?: unknown): Promise<Run> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.create");
    return publicRun(await start(t, a, p, "runs.create"));
  }

  async function createBatch(payloads: unknown, options?: unknown): Promise<Run[]> {
    parse(schemas.callOptions, options ?? {}, "runs.createBatch");
    if (!Array.isArray(payloads) || payloads.length === 0) {
      throw invalidInput("graphdock: runs.createBatch takes a non-empty array of run payloads, each with an assistantId.");
    }
    const parsed = payloads.map((payload, i) => {
      const { assistantId, ...rest } = (payload ?? {}) as { assistantId?: unknown };
      return parseRun(null, assistantId, rest, `runs.createBatch[${i}]`);
    });
    // Every payload is checked before the first run is created, so a bad one creates nothing.
    for (const [i, { a, p }] of parsed.entries()) await checkRun(core, caller, null, a, p, `runs.createBatch[${i}]`);
    const runs: Run[] = [];
    for (const { a, p } of parsed) runs.push(publicRun(await start(null, a, p, "runs.createBatch")));
    return runs;
  }

  async function wait(threadId: unknown, assistantId: unknown, payload?: unknown): Promise<RunResult> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.wait");
    const run = await start(t, a, p, "runs.wait");
    const result = outcome(run, p.signal);
    // An aborted call is a disconnect: with onDisconnect "cancel" the run is cancelled too.
    if (p.onDisconnect === "cancel") cancelOnAbort(run, p.signal, result.catch(() => undefined));
    const values = await result;
    if ((p.raiseError ?? true) && values.__error__) throw new Error(`${values.__error__.error}: ${values.__error__.message}`);
    return values;
  }

  function list(threadId: string, options?: RunListQuery & { select?: undefined }): Promise<Run[]>;
  function list<const S extends readonly RunSelectField[]>(threadId: string, options?: Omit<RunListQuery, "select"> & { select?: S }): Promise<Selection<Run, S>[]>;
  async function list(threadId: unknown, options?: unknown): Promise<Array<Run | Partial<Run>>> {
    const id = parse(schemas.id, threadId, "runs.list");
    const o = parse(schemas.runList, options ?? {}, `runs.list(${id})`);
    const searchFilter = await core.authorize(caller, "threads", "search", { thread_id: id, metadata: {}, status: o.status });
    const readFilter = await core.authorize(caller, "threads", "read", { thread_id: id });
    const thread = await core.visibleThread(id, readFilter);
    const visible = await store.countThreads({ ids: [thread.thread_id], ...(searchFilter ? { auth: searchFilter } : {}) });
    if (!visible) throw notFound(`graphdock: thread ${id} not found.`);
    const runs = await store.queryRuns({
      thread_id: id,
      ...(o.status !== undefined ? { status: o.status } : {}),
      sortBy: "created_at",
      sortOrder: "desc",
      offset: o.offset ?? 0,
      limit: o.limit ?? 10,
    });
    return runs.map((r) => (o.select?.length ? selectFields(publicRun(r), o.select) : publicRun(r)));
  }

  async function get(threadId: unknown, runId: unknown, options?: unknown): Promise<Run> {
    const t = parse(schemas.id, threadId, "runs.get");
    const r = parse(schemas.id, runId, `runs.get(${t})`);
    parse(schemas.callOptions, options ?? {}, `runs.get(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "read", { thread_id: t });
    return publicRun((await runOf(t, r, filter)).run);
  }

  async function cancel(threadId: unknown, runId: unknown, waitArg?: unknown, action?: unknown, options?: unknown): Promise<void> {
    const t = parse(schemas.id, threadId, "runs.cancel");
    const r = parse(schemas.id, runId, `runs.cancel(${t})`);
    const o = parse(schemas.cancel, { wait: waitArg ?? undefined, action: action ?? undefined }, `runs.cancel(${t}, ${r})`);
    parse(schemas.callOptions, options ?? {}, `runs.cancel(${t}, ${r})`);
    const act = o.action ?? "interrupt";
    const filter = await core.authorize(caller, "threads", "update", {
      thread_id: t,
      action: act,
      metadata: { run_ids: [r], status: "pending" },
    });
    const { run } = await runOf(t, r, filter);
    // D26: cancelling a run that already ended succeeds and changes nothing.
    await control.cancel(run, act, o.wait ?? false);
  }

  async function join(threadId: unknown, runId: unknown, options?: unknown): Promise<RunResult> {
    const t = parse(schemas.id, threadId, "runs.join");
    const r = parse(schemas.id, runId, `runs.join(${t})`);
    const o = parse(schemas.join, options ?? {}, `runs.join(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "read", { thread_id: t });
    const { run } = await runOf(t, r, filter);
    if (isFinal(run.status)) return abortable(storedOutcome(core, run), o.signal);
    const result = outcome(run, o.signal);
    if (o.cancelOnDisconnect) cancelOnAbort(run, o.signal, result.catch(() => undefined));
    return result;
  }

  async function* joinStream(threadId: unknown, runId: unknown, options?: unknown): AsyncGenerator<RunEvent> {
    const r = parse(schemas.id, runId, "runs.joinStream");
    const o = parse(schemas.joinStream, options instanceof AbortSignal ? { signal: options } : (options ?? {}), `runs.joinStream(${r})`);
    const after = o.lastEventId === undefined ? undefined : Number.isFinite(Number(o.lastEventId)) ? Number(o.lastEventId) : -1;
    let run: RunRecord | undefined;
    // Attach before the first await: a join without lastEventId sees every event from the moment
    // it was made, not from after the checks below. A failed check detaches again.
    const events = readRunEvents(core, r, {
      ...(after !== undefined ? { after } : {}),
      onStop: (finished) => {
        if (!finished && o.cancelOnDisconnect && run && !isFinal(run.status)) void control.cancel(run, "interrupt", false).catch(() => undefined);
      },
    });
    try {
      const known = threadId === null || threadId === undefined ? (await store.getRun(r))?.thread_id : parse(schemas.id, threadId, "runs.joinStream");
      if (known === undefined) throw notFound(`graphdock: run ${r} not found.`);
      const filter = await core.authorize(caller, "threads", "read", { thread_id: known });
      run = (await runOf(known, r, filter)).run;
    } catch (err) {
      await events.detach();
      throw err;
    }
    const modes = o.streamMode === undefined ? undefined : new Set<string>(asModes(o.streamMode));
    // Subgraph events (`values|ns`) count as their mode; `messages` events are the tuple mode's,
    // `messages/*` the legacy mode's (a join asking for either gets the tuple events, as before).
    const wanted = (ev: RunEvent) => {
      if (!modes || ev.event === "metadata" || ev.event === "error") return true;
      const mode = ev.event.split("|")[0]!;
      if (mode === "messages") return modes.has("messages-tuple") || modes.has("messages");
      return mode.startsWith("messages/") ? modes.has("messages") : modes.has(mode);
    };
    if (isFinal(run.status)) {
      // The run has ended, so has its log. The reader attached above drains what it caught (or
      // what a resumable log retained) unless the store no longer has the log at all (a finished
      // run not kept for replay): then it would wait for an open that never comes. A probe that
      // ends at once on an absent log tells the two apart.
      const probe = readRunEvents(core, r, { after: -1, ifAbsent: "end", probe: true });
      const kept = await probe.next();
      await probe.detach();
      if (kept.done) {
        await events.detach();
        return;
      }
    }
    for await (const ev of events) if (wanted(ev)) yield ev;
  }

  async function remove(threadId: unknown, runId: unknown, options?: unknown): Promise<void> {
    const t = parse(schemas.id, threadId, "runs.delete");
    const r = parse(schemas.id, runId, `runs.delete(${t})`);
    parse(schemas.callOptions, options ?? {}, `runs.delete(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "delete", { thread_id: t, run_id: r });
    const { run } = await runOf(t, r, filter);
    if (!isFinal(run.status)) throw conflict(`graphdock: run ${r} of thread ${t} is still in flight; cancel it before deleting it.`);
    try {
      await store.commit([{ op: "run.delete", run_id: r, expect: { status: ["success", "error", "timeout", "interrupted"] } }]);
    } catch (err) {
      if ((err as { code?: string }).code === "conflict") throw conflict(`graphdock: run ${r} of thread ${t} is still in flight; cancel it before deleting it.`);
      throw err;
    }
    await store.events.drop(r);
  }

  return {
    stream,
    create,
    createBatch,
    wait,
    list,
    get,
    cancel,
    join,
    joinStream,
    delete: remove,
  } satisfies RunsApi;
}
