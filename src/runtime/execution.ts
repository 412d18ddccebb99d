/**
 * Run execution (D20): a runtime claims the next runnable run of a thread from the store with a
 * lease (`thread:<id>`, who and until when), renews the lease while the engine runs, publishes
 * the run's events to the store's event port, observes persisted cancel requests, and records
 * the outcome (run status, thread projection, lease release) in one conditional commit. Any
 * runtime on the store may execute any run whose graph it has; at most one run executes per
 * thread because only one runtime can hold the thread's lease.
 *
 * Durable runs (D60, D61): a run whose execution was cut off (its runtime stopped and its lease
 * expired, or the lease was voided by a store that knows its holder is gone) is taken over by
 * whichever runtime claims its thread next and resumed from its last checkpoint as the next
 * attempt, up to `maxAttempts`; a runtime that closes hands its runs back to the queue (a drain,
 * not counted). A sweeper (every half lease) picks up expired leases and queued runs nobody is
 * executing. Nothing scans the whole store.
 */
import { GraphdockError } from "../errors.js";
import { threadGraphConfig } from "./graph-source.js";
import type { ExecuteResult } from "../graph/types.js";
import { claimRun } from "../persistence/claim.js";
import type { CancelRequest, CheckpointStore, LeaseExpectation, PendingWrite, WriteOp } from "../persistence/types.js";
import type { RunExecution, RunRecord, RunStatus, ThreadStatus } from "../types.js";
import { asModes, breakpointsOf, toEngineInput } from "./admission.js";
import { streamShaper } from "./stream-shaper.js";
import type { Core } from "./core.js";
import { LostRace, commitIf, retryLostRaces } from "./races.js";
import {
  IN_FLIGHT,
  PROCESS_STOPPED,
  attemptFirstSeq,
  attemptsExhausted,
  errorInfo,
  finalValues,
  graphIdOf,
  interruptsOf,
  projectThread,
  publicRun,
  readyThread,
  runEnded,
  runsReady,
  sendWebhook,
  storedOutcome,
  threadKey,
  withoutExecution,
} from "./outcome.js";
import type { CancelAction, RunResult } from "./types.js";
import { Pipeline, pipelined } from "./durability.js";
import type { RunTrace } from "../otel/run-trace.js";
import { storedTraceId } from "../otel/w3c.js";
import { isUnavailable, reportFailure, untilAvailable } from "./outage.js";

type ErrorInfo = { error: string; message: string };
type WritesPutOp = Extract<WriteOp, { op: "writes.put" }>;

/** A task's writes on a checkpoint, as `LocalRun.replacedWrites` keys them. */
const writesKey = (op: WritesPutOp) => `${op.checkpoint_ns ?? ""}\u0000${op.checkpoint_id}\u0000${op.task_id}`;

/** The longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Microtask turns a run yields before its engine starts: what a stream's reader needs to take the
 * metadata event published at start (port, event reader and generator hops) on a synchronous port.
 */
const READER_TURNS = 5;

/** A run this runtime is executing. */
export interface LocalRun {
  run: RunRecord;
  controller: AbortController;
  cancel?: CancelAction;
  /** The lease was lost (expired and taken over): stop writing, record nothing. */
  lost: boolean;
  /** The runtime is closing: the run goes back to the queue for another runtime to resume (D61). */
  drain?: boolean;
  result: Promise<RunResult>;
  resolve(result: RunResult | Promise<RunResult>): void;
  /** Checkpoints the run wrote, and the original writes of tasks it recorded on older ones (rollback). */
  written: Set<string>;
  /** The same checkpoints by namespace (a subgraph's live in its own; rollback removes them all). */
  writtenByNs: Map<string, string[]>;
  replacedWrites: Map<string, { checkpointNs: string; checkpointId: string; taskId: string; writes: PendingWrite[] }>;
  /** Commits of the run still in flight: the outcome (a rollback above all) waits for them. */
  commits: Set<Promise<void>>;
  /** Durability `async` / `exit` (./durability.ts): the run's commits not yet handed to the store, and how that goes. */
  pipeline?: Pipeline;
  /** The run's span, when it is traced (src/otel). */
  trace?: RunTrace;
  /** What the run's graph threw, when it failed (its span and the lifecycle event report it). */
  thrown?: unknown;
  /**
   * The outcome is being recorded. A graph may still write after its `execute` ended on an abort
   * (a LangGraph.js loop finishes its step in the background); for a rollback those writes are
   * dropped, since the run and all it wrote are being removed.
   */
  ended?: boolean;
}

export class Executor {
  private readonly local = new Map<string, LocalRun>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly unsubscribe: Array<() => void> = [];
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** One timer renews the leases of every run executing here (none per run). */
  private renewer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** Aborted at shutdown: outcomes waiting for an unavailable store give up (their leases lapse). */
  private readonly closing = new AbortController();
  /** Outcomes being recorded (close waits for them). */
  private readonly finishing = new Set<Promise<void>>();
  /** Ends this runtime's liveness on a store that can tell (`Store.watchOwners`): after its drain. */
  private alive: (() => void) | undefined;

  constructor(private readonly core: Core) {}

  /** Starts listening for queued runs and sweeping expired leases. */
  listen(): void {
    const { store } = this.core;
    const ready = (payload: string | undefined) => {
      // No payload: notifications may have been missed (D72); look for runnable runs.
      if (payload === undefined) return void this.sweep();
      const threadId = readyThread(this.core, payload);
      if (threadId) this.poke(threadId);
    };
    this.unsubscribe.push(store.subscribe("runs", ready));
    this.alive = store.watchOwners?.(this.core.owner, (owner) => void this.ownerGone(owner));
    this.sweeper = setInterval(() => void this.sweep(), Math.max(10, this.core.leaseMs / 2));
    (this.sweeper as { unref?: () => void }).unref?.();
    void this.sweep();
  }

  /** The run if this runtime executes it. */
  getLocal(runId: string): LocalRun | undefined {
    return this.local.get(runId);
  }

  /** Tries to claim and start the next run of a thread (in the background). */
  poke(threadId: string): void {
    void this.claim(threadId);
  }

  /**
   * Claims and starts the thread's next run if it is runnable here and now; resolves once that
   * run has started (or nothing was claimable). Never rejects.
   */
  claim(threadId: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.core.mutex.run(`claim:${threadId}`, () => this.claimNext(threadId)).catch((err) => {
      if (!this.closed) reportFailure(this.core.log, err, { thread_id: threadId }, "graphdock: claiming the next run of a thread failed");
    });
  }

  /**
   * Claims the thread's oldest queued run when no run of it executes: the lease taken (only if
   * free) and the run marked `running` (only if still pending), atomically, by `claimRun` (the
   * store's own claim where it has one: PostgreSQL locks with `FOR UPDATE SKIP LOCKED`).
   */
  private async claimNext(threadId: string): Promise<void> {
    const { core } = this;
    const { store } = core;
    for (;;) {
      if (this.closed) return;
      const nowMs = core.clock();
      const claimed = await claimRun(store, {
        thread_id: threadId,
        key: threadKey(threadId),
        owner: core.owner,
        now: nowMs,
        expires_at: nowMs + core.leaseMs,
        updated_at: core.now(),
        graph_ids: [...core.graphs.keys()],
      });
      switch (claimed.outcome) {
        case "none":
          return; // a run of the thread executes somewhere, nothing is queued, or another runtime claims it
        case "stopped":
          // Marked running with no live lease: its runtime stopped (D60). Or queued by a version
          // that kept the queue in memory (no execution part): it cannot be run from the store.
          // One executing here lost its lease to a stall: its renewal takes it again (`retake`).
          if (this.local.has(claimed.run.run_id)) return;
          switch (await this.takeOver(claimed.run, nowMs)) {
            case "started":
            case "skip":
              return;
            default:
              continue; // ended, or another runtime took it over: look again
          }
        case "later":
          this.later(claimed.not_before - nowMs, () => this.poke(threadId));
          return;
        case "claimed":
          await this.execute(claimed.run, true);
          return;
      }
    }
  }

  /**
   * Takes over a run whose execution was cut off (D60, D61): resumes it here as its next attempt
   * (the lease taken only if still free, so of several runtimes one resumes it), or ends it
   * `error` when it has used its attempts or cannot be run from the store. `skip`: its graph is
   * not registered here; a runtime that has it resumes it.
   */
  private async takeOver(run: RunRecord, nowMs: number): Promise<"started" | "ended" | "lost" | "skip"> {
    const { core } = this;
    const exec = run.execution;
    if (!exec) {
      await this.endStopped(run, PROCESS_STOPPED);
      return "ended";
    }
    if (!core.graphs.has(exec.graph_id)) return "skip";
    const attempt = (run.attempt ?? 1) + 1;
    const drains = exec.drains ?? 0;
    if (attempt - drains > core.maxAttempts) {
      await this.endStopped(run, attemptsExhausted(run.run_id, attempt - 1 - drains, drains));
      return "ended";
    }
    const resumed: RunRecord = { ...run, attempt, updated_at: core.now() };
    try {
      await commitIf(core.store, [
        {
          op: "lease.put",
          lease: { key: threadKey(run.thread_id), owner: core.owner, expires_at: nowMs + core.leaseMs, data: { run_id: run.run_id } },
          expect: { state: "free", now: nowMs },
        },
        { op: "run.put", run: resumed, expect: { status: ["running"] } },
      ]);
    } catch (err) {
      if (err instanceof LostRace) return "lost"; // another runtime took it over (or it ended): look again
      throw err;
    }
    await this.execute(resumed, true);
    return "started";
  }

  /** Starts a run its admission claimed for this runtime (no cancel can be waiting for it yet). */
  async startClaimed(run: RunRecord): Promise<void> {
    // (Closing meanwhile: `execute` hands it straight back to the queue.)
    await this.execute(run, false).catch((err) => reportFailure(this.core.log, err, { run_id: run.run_id, thread_id: run.thread_id }, "graphdock: starting a run failed"));
  }

  private later(ms: number, fn: () => void): void {
    // Timers take at most 2^31-1 ms (about 24.8 days); a longer delay would fire at once (and a
    // run due far ahead, or a clock far behind, would be polled every millisecond). `fn` checks
    // again when it fires, so waking early is harmless.
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, Math.min(Math.max(ms, 0), MAX_TIMER_MS));
    (timer as { unref?: () => void }).unref?.();
    this.timers.add(timer);
  }

  /** Starts a claimed run; resolves once it is running (not when it ends). */
  private async execute(run: RunRecord, mayHaveCancel: boolean): Promise<void> {
    const { core } = this;
    const { store } = core;
    let resolve!: (r: RunResult | Promise<RunResult>) => void;
    const result = new Promise<RunResult>((r) => (resolve = r));
    // A run handed on follows its end in the store, which rejects when this runtime closes: only
    // callers waiting on it see that.
    result.catch(() => undefined);
    const local: LocalRun = {
      run,
      controller: new AbortController(),
      lost: false,
      result,
      resolve,
      written: new Set(),
      writtenByNs: new Map(),
      replacedWrites: new Map(),
      commits: new Set(),
    };
    if (pipelined(run)) local.pipeline = new Pipeline((ops) => this.trackedCommit(local, ops), () => local.controller.abort());
    this.local.set(run.run_id, local);
    // Claimed while this runtime closes: straight back to the queue.
    if (this.closed) this.drainLocal(local);
    const attempt = run.attempt ?? 1;
    // A resumed attempt publishes into the same log after what the earlier ones published (D62).
    // A store whose port opens synchronously (memory) publishes the first event before this
    // yields, so a stream's reader has it at once.
    const resumable = run.kwargs.resumable === true;
    const open = () => store.events.open(run.run_id, attempt > 1 ? { resumable, from: attemptFirstSeq(attempt) } : { resumable });
    const opening = open();
    if (opening) {
      try {
        await opening.catch((err) => (isUnavailable(err) ? untilAvailable(async () => open(), local.controller.signal) : Promise.reject(err)));
      } catch (err) {
        // Not started: its lease lapses and a runtime on the store resumes it (D60); this
        // runtime's callers wait for its end in the store.
        this.local.delete(run.run_id);
        local.resolve(this.outcomeFromStore(run.run_id));
        throw err;
      }
    }
    // `{run_id, attempt}`, exactly as the agent server sends it; each attempt sends it again,
    // marking the restart.
    store.events.publish(run.run_id, "metadata", { run_id: run.run_id, attempt });
    // A notice read while the store is unavailable is read again at the next one (polled meanwhile, D72).
    const offCancel = store.subscribe(`cancel:${run.run_id}`, () => void this.readCancel(local).catch(() => undefined));
    this.startRenewer();
    // (Awaited only the first time a run is traced: the tracer loads then.)
    const pending = core.tracing?.tracer();
    const tracing = pending instanceof Promise ? await pending : pending;
    local.trace = tracing?.start(run, run.execution!.graph_id);
    if (core.listening) core.emit({ type: "run.started", run: publicRun(run), ...this.traceIdOf(local) });
    // A cancel requested before the lease was taken is already in the store.
    if (mayHaveCancel) await untilAvailable(() => this.readCancel(local), local.controller.signal);
    void this.run(local).finally(offCancel);
  }

  /** The trace id a lifecycle event carries: the run span's, else the stored parent's. */
  private traceIdOf(local: LocalRun): { trace_id?: string } {
    const id = local.trace?.traceId ?? storedTraceId(local.run.execution?.trace);
    return id ? { trace_id: id } : {};
  }

  private async readCancel(local: LocalRun): Promise<void> {
    const request = await this.core.store.getCancelRequest(local.run.run_id);
    if (request) this.cancelLocal(local, request.action);
  }

  /** Cancels a run executing here (a cancel request, interrupt/rollback, a disconnect). A cancel wins over a drain. */
  cancelLocal(local: LocalRun, action: CancelRequest["action"]): void {
    if (local.cancel) return;
    local.cancel = action;
    local.controller.abort();
  }

  /** Stops a run executing here because the runtime closes: it goes back to the queue (D61). */
  private drainLocal(local: LocalRun): void {
    if (local.cancel || local.drain) return;
    local.drain = true;
    local.controller.abort();
  }

  /**
   * Starts the one renewal timer (every third of the lease) on the first run executed here: it
   * renews the lease of each run executing here until its outcome is recorded.
   */
  private startRenewer(): void {
    if (this.renewer || this.closed) return;
    this.renewer = setInterval(() => {
      for (const local of this.local.values()) void this.renew(local);
    }, Math.max(5, this.core.leaseMs / 3));
    (this.renewer as { unref?: () => void }).unref?.();
  }

  /** Renews the lease; losing it (it expired and another runtime took over) stops the run. */
  private async renew(local: LocalRun): Promise<void> {
    const { core } = this;
    const nowMs = core.clock();
    try {
      await commitIf(core.store, [this.fence(local, nowMs)]);
    } catch (err) {
      if (!(err instanceof LostRace)) return; // a store hiccup: the next renewal tries again
      let retaken: boolean;
      try {
        retaken = await this.retake(local);
      } catch {
        return; // the store cannot be reached now (D72): the next renewal tries again
      }
      if (retaken) return;
      local.lost = true;
      local.controller.abort();
    }
  }

  /**
   * Takes the run's lease again when it expired while still this runtime's (the runtime was
   * stalled, and nobody took it over meanwhile), so a stall alone does not cost the run an
   * attempt. False when another runtime holds or voided it, or resumed the run meanwhile: the run
   * is lost here. Rejects with `unavailable` when the store cannot tell now (D72).
   */
  private async retake(local: LocalRun): Promise<boolean> {
    const { core } = this;
    const key = threadKey(local.run.thread_id);
    /** Ours and live (another renewal of this runtime took it again meanwhile): nothing to do. */
    const ours = async () => {
      const lease = await core.store.getLease(key);
      return lease?.owner !== core.owner ? false : lease.expires_at >= core.clock() ? true : undefined;
    };
    try {
      for (let tries = 0; tries < 3; tries++) {
        const state = await ours();
        if (state !== undefined) return state;
        const nowMs = core.clock();
        try {
          await commitIf(core.store, [this.fence(local, nowMs, "free")]);
        } catch (err) {
          if (!(err instanceof LostRace)) throw err;
          continue;
        }
        // Free may also mean that another runtime resumed the run and ended it (or handed it
        // back) since `ours()` read the lease: then the run is not this attempt's any more.
        const stored = await core.store.getRun(local.run.run_id);
        if (stored?.status === "running" && (stored.attempt ?? 1) === (local.run.attempt ?? 1)) return true;
        await core.store.commit([{ op: "lease.delete", key, owner: core.owner }, runsReady(core, local.run.thread_id)]);
        return false;
      }
      return false;
    } catch (err) {
      // Whether it is still ours cannot be told while the store is unavailable: asked again later.
      if (isUnavailable(err)) throw err;
      return false;
    }
  }

  /**
   * The op renewing the run's lease that a commit carries to hold only while this runtime holds
   * it (D60); `free` takes it again when it expired unclaimed.
   */
  private fence(local: LocalRun, nowMs: number, state: LeaseExpectation["state"] = "held"): WriteOp {
    const { core } = this;
    return {
      op: "lease.put",
      lease: { key: threadKey(local.run.thread_id), owner: core.owner, expires_at: nowMs + core.leaseMs, data: { run_id: local.run.run_id } },
      expect: { state, now: nowMs },
    };
  }

  private async run(local: LocalRun): Promise<void> {
    const { core } = this;
    const { run } = local;
    const exec = run.execution!;
    const threadId = run.thread_id;
    let error: ErrorInfo | undefined;
    let done: ExecuteResult | undefined;
    // The engine's first step runs synchronously for a while: let readers attached before the run
    // (a stream's own reader) take its metadata event first, so a stream opens without waiting for it.
    for (let turn = 0; turn < READER_TURNS; turn++) await undefined;
    try {
      // The span is named after the assistant, read only for a run that is traced.
      if (local.trace) local.trace.describe((await core.store.getAssistant(run.assistant_id).catch(() => undefined)) ?? {});
      const { config, input, checkpointId } = await this.attemptStart(run, local.controller.signal);
      // A graph factory is called with the run's merged config (graph-source.ts); its failure is the run's.
      const graph = await core.graph(exec.graph_id, config);
      if (!local.cancel && !local.drain) {
        const requested = asModes(run.kwargs.stream_mode as Parameters<typeof asModes>[0]);
        // The legacy `messages` mode derives its events from the data of others: it always needs it.
        const events = core.store.events;
        const listening = events.listening && !requested.includes("messages") ? () => events.listening!(run.run_id) : undefined;
        const shaper = streamShaper(
          requested,
          run.kwargs.subgraphs === true,
          (event, data) => core.store.events.publish(run.run_id, event, data),
        );
        done = await graph.execute({
          store: this.runStore(local),
          threadId,
          input,
          ...(checkpointId !== undefined ? { checkpointId } : {}),
          config,
          context: exec.context,
          ...breakpointsOf(run.kwargs),
          signal: local.controller.signal,
          ids: core.ids,
          clock: core.clock,
          streamModes: shaper.modes,
          emit: shaper.emit,
          ...(listening ? { listening } : {}),
          ...(core.itemStore ? { itemStore: core.itemStore } : {}),
          ...(local.trace ? { trace: local.trace.scope } : {}),
          streamSubgraphs: run.kwargs.subgraphs === true,
        });
      }
    } catch (err) {
      // A pipelined commit that failed aborted the engine: the run fails with the store's error.
      if (!local.cancel && !local.lost && !local.drain) {
        local.thrown = local.pipeline?.failed ?? err;
        error = errorInfo(local.thrown);
      }
    }
    // Durability async/exit: the run ends once all it wrote is in the store (or failed to be).
    // When the engine finished (no pause, no cancel) what is still queued goes in the outcome's
    // own commit (./durability.ts): one commit less, and all or nothing with the outcome. Its
    // state then comes from the engine's result, not from the store (which lacks those commits).
    let folded: WriteOp[] | undefined;
    // (Not for a temporary thread: its outcome deletes it, and its checkpoints go first, on their own.)
    const fold = done?.status === "done" && !error && !local.cancel && !local.lost && !run.execution?.temporary;
    if (local.pipeline && fold) folded = await local.pipeline.takeQueued();
    else if (local.pipeline?.busy) await local.pipeline.settled();
    if (!error && local.pipeline?.failed && !local.cancel && !local.lost && !local.drain) error = errorInfo(local.pipeline.failed);
    if (error) core.store.events.publish(run.run_id, "error", error);
    const finishing = this.finish(local, error, done, folded);
    this.finishing.add(finishing);
    await finishing;
    this.finishing.delete(finishing);
  }

  /**
   * What an attempt runs with. The first runs the run's input (from its checkpoint, for a fork).
   * A later one resumes (D60): once the run has written a checkpoint, from the thread's latest
   * (its own) with no input, so completed steps are not run again and the step that was cut off
   * is; before that, from the input again. Nodes read the attempt at `config.metadata.run_attempt`.
   */
  private async attemptStart(run: RunRecord, signal: AbortSignal): Promise<{ config: RunExecution["config"]; input: unknown; checkpointId: string | undefined }> {
    const exec = run.execution!;
    const attempt = run.attempt ?? 1;
    let input = toEngineInput(run.kwargs as Parameters<typeof toEngineInput>[0]);
    let checkpointId = typeof run.kwargs.checkpoint_id === "string" ? run.kwargs.checkpoint_id : undefined;
    if (attempt === 1) return { config: exec.config, input, checkpointId };
    const head = await untilAvailable(() => this.core.store.getCheckpoint({ thread_id: run.thread_id }), signal);
    if (head?.metadata.run_id === run.run_id) {
      input = null;
      checkpointId = undefined;
    }
    return { config: { ...exec.config, metadata: { ...exec.config.metadata, run_attempt: attempt } }, input, checkpointId };
  }

  /** The store the engine writes through: records what the run wrote, for rollback (D9). */
  private runStore(local: LocalRun): CheckpointStore {
    const { store } = this.core;
    // With a pipeline, the engine reads what it wrote: its reads wait for its queued commits.
    const after = <T>(read: () => Promise<T>): Promise<T> => (local.pipeline?.busy ? local.pipeline.settled().then(read) : read());
    // Reads wait through a store outage (D72), as commits do (commitFor).
    const { signal } = local.controller;
    return {
      getCheckpoint: (key) => after(() => untilAvailable(() => store.getCheckpoint(key), signal)),
      listCheckpoints: (threadId, options) => after(() => untilAvailable(() => store.listCheckpoints(threadId, options), signal)),
      listCheckpointNamespaces: (threadId) => after(() => untilAvailable(() => store.listCheckpointNamespaces(threadId), signal)),
      commit: (ops) => (local.pipeline ? local.pipeline.push(ops) : this.trackedCommit(local, ops)),
    };
  }

  /** A commit of the run's, tracked until it settles (the outcome waits for it). */
  private trackedCommit(local: LocalRun, ops: readonly WriteOp[]): Promise<void> {
    const pending = this.commitFor(local, ops);
    local.commits.add(pending);
    const settled = () => void local.commits.delete(pending);
    void pending.then(settled, settled);
    return pending;
  }

  /**
   * One commit of the run's, recording what it wrote for a rollback (D9). Only the original
   * writes of a task on a checkpoint the run did not write need a read first (they are kept to be
   * put back); a commit without such writes goes to the store at once.
   */
  private commitFor(local: LocalRun, ops: readonly WriteOp[]): Promise<void> {
    if (local.lost) return Promise.reject(new Error(`graphdock: run ${local.run.run_id} lost its lease; its writes are refused.`));
    if (local.ended && local.cancel === "rollback") return Promise.resolve();
    let replacing: WritesPutOp[] | undefined;
    for (const op of ops) {
      if (op.op === "checkpoint.put") {
        local.written.add(op.checkpoint.checkpoint.id);
        const ns = op.checkpoint.checkpoint_ns;
        const ids = local.writtenByNs.get(ns);
        if (ids) ids.push(op.checkpoint.checkpoint.id);
        else local.writtenByNs.set(ns, [op.checkpoint.checkpoint.id]);
      } else if (op.op === "writes.put" && !local.written.has(op.checkpoint_id) && !local.replacedWrites.has(writesKey(op))) {
        (replacing ??= []).push(op);
      }
    }
    // A commit the store could not take for an outage is sent again once it is back (D72), each
    // time through `send`, with the lease's fence (D67); a repeated put writes the same records.
    const commit = () => untilAvailable(() => this.send(local, ops), local.controller.signal);
    if (replacing) return this.keepReplacedWrites(local, replacing).then(commit);
    return commit();
  }

  /**
   * Sends a commit of the run's with the renewal of its lease, so the store writes it only while
   * this runtime holds the lease (D60, D67). That is judged when the store applies the commit: a
   * check made here before sending could not fence it, since a commit may reach the store long
   * after it was sent (this runtime stalled, or waited for a connection), when another runtime
   * may have resumed the run. A lease that expired with nobody taking it over is taken again and
   * the commit sent once more; one taken over loses the run here.
   */
  private async send(local: LocalRun, ops: readonly WriteOp[]): Promise<void> {
    const { core } = this;
    for (let retaken = false; ; retaken = true) {
      try {
        return await core.store.commit([this.fence(local, core.clock()), ...ops]);
      } catch (err) {
        if (!GraphdockError.is(err, "conflict")) throw err;
        if (!retaken && (await this.retake(local))) continue;
        local.lost = true;
        local.controller.abort();
        throw err;
      }
    }
  }

  /** Reads and keeps the original writes that `writes.put` ops of the run replace (for a rollback). */
  private async keepReplacedWrites(local: LocalRun, ops: readonly WritesPutOp[]): Promise<void> {
    for (const op of ops) {
      const key = writesKey(op);
      if (local.replacedWrites.has(key)) continue;
      const ns = op.checkpoint_ns ?? "";
      const at = { thread_id: op.thread_id, checkpoint_ns: ns, checkpoint_id: op.checkpoint_id };
      const cp = await untilAvailable(() => this.core.store.getCheckpoint(at), local.controller.signal);
      const writes = (cp?.pending_writes ?? []).filter((w) => w[0] === op.task_id);
      local.replacedWrites.set(key, { checkpointNs: ns, checkpointId: op.checkpoint_id, taskId: op.task_id, writes });
    }
  }

  /**
   * Records the outcome in one conditional commit: the run's status (or its removal for a
   * rollback), the thread projection, the lease released; then ends the run's event log and
   * claims the thread's next run. A run drained by a closing runtime goes back to the queue
   * instead (`handBack`). The commit holds only while this runtime still holds the thread's lease
   * (D60): a runtime that lost it (another resumed the run) records nothing.
   */
  private async finish(local: LocalRun, error: ErrorInfo | undefined, done: ExecuteResult | undefined, folded?: WriteOp[]): Promise<void> {
    const { core } = this;
    const { store } = core;
    const { run } = local;
    const threadId = run.thread_id;
    const runId = run.run_id;
    let status: RunStatus = local.cancel ? "interrupted" : error ? "error" : "success";
    let result: RunResult = {};
    let final: RunRecord = { ...run, status };
    let statusChange: { status: ThreadStatus; previous: ThreadStatus } | undefined;
    let queued = true;
    // A task's commit may still be in flight when an abort ends the run: let it land first, so a
    // rollback sees (and removes) everything the run wrote; later ones are dropped (commitFor).
    local.ended = true;
    if (local.commits.size) await Promise.allSettled([...local.commits]);
    // The run's queued commits that go in the outcome's commit (durability async/exit), when any.
    // A rollback requested since the engine finished removes all the run wrote: these are dropped.
    let fold = folded?.length && local.cancel !== "rollback" ? folded : undefined;
    /** Cut off by the drain before the engine finished: the run goes back to the queue. */
    const drained = local.drain && !local.cancel && !done && !error;
    /** The outcome could not be recorded: the run stays in flight for another attempt (D60). */
    let unrecorded = false;
    try {
      for (let recorded = false; !recorded && !local.lost; ) {
        let tries = 0;
        let lease: LeaseExpectation["state"] = "held";
        try {
          // Through a store outage it tries again until the store is back (D72), or the runtime
          // closes (the lease then lapses and another runtime resumes the run).
          await untilAvailable(() => retryLostRaces(async () => {
            // First try with the run as this runtime holds it (the commit's expectations check it);
            // after a lost race, read it: it may have been ended by someone else, or taken over.
            const stored = tries++ === 0 ? run : await store.getRun(runId);
            if (!stored || stored.status !== "running") return; // ended by someone else (thread deleted)
            if (tries > 1) {
              const holder = await store.getLease(threadKey(threadId));
              if ((stored.attempt ?? 1) !== (run.attempt ?? 1) || (holder && holder.owner !== core.owner && holder.expires_at >= core.clock())) {
                local.lost = true; // another runtime resumed it: its attempt records the outcome
                return;
              }
              // Still ours, though expired (nobody took it over): taken again in the same commit.
              lease = holder && holder.owner === core.owner && holder.expires_at >= core.clock() ? "held" : "free";
            }
            const fence = this.fence(local, core.clock(), lease);
            if (drained) {
              await commitIf(store, this.handBackOps(stored, fence));
              return;
            }
            // Both reads at once (a store that batches reads, IndexedDB, serves them in one transaction).
            const [thread, inFlight] = await Promise.all([store.getThread(threadId), store.countRuns({ thread_id: threadId, status: IN_FLIGHT })]);
            const now = core.now();
            // The run's last checkpoints first: the outcome's expectations hold for all or nothing.
            const ops: WriteOp[] = fold ? [fence, ...fold] : [fence];
            if (local.cancel === "rollback") {
              // D9: the run and everything it wrote are removed.
              ops.push({ op: "run.delete", run_id: runId, expect: { status: ["running"] } });
              for (const [ns, ids] of local.writtenByNs) {
                ops.push({ op: "checkpoint.delete", thread_id: threadId, ...(ns ? { checkpoint_ns: ns } : {}), checkpoint_ids: ids });
              }
              for (const r of local.replacedWrites.values()) {
                const ns = r.checkpointNs ? { checkpoint_ns: r.checkpointNs } : {};
                ops.push({ op: "writes.put", thread_id: threadId, ...ns, checkpoint_id: r.checkpointId, task_id: r.taskId, writes: r.writes });
              }
            } else {
              // An ended run needs no execution part any more: it is not kept.
              final = { ...withoutExecution(stored), status, updated_at: now };
              ops.push({ op: "run.put", run: final, expect: { status: ["running"] } });
            }
            queued = inFlight > 1;
            if (thread) {
              const graphId = core.graphs.has(graphIdOf(thread) ?? "") ? graphIdOf(thread)! : run.execution!.graph_id;
              const graph = await core.graph(graphId, run.execution!.config);
              // A run that finished without pausing needs no snapshot: its result has the values
              // (also when cancelled after it finished with its last checkpoints folded in here).
              const state =
                done?.status === "done" && (!local.cancel || fold) ? { values: done.values, next: [] as string[], tasks: [] } : await graph.getState(store, threadId);
              result = error ? { __error__: error } : finalValues(state.values, Object.values(interruptsOf(state)).flat());
              if (run.execution?.temporary) {
                ops.push({ op: "thread.delete", thread_id: threadId });
              } else {
                const wroteState = local.written.size > 0 || !!fold?.some((op) => op.op === "checkpoint.put");
                const next = projectThread(thread, state, { ...(error ? { error } : {}), cancelled: !!local.cancel, queued, wroteState, now });
                ops.push({ op: "thread.put", thread: next, expect: { sameAs: thread } });
                statusChange = next.status !== thread.status ? { status: next.status, previous: thread.status } : undefined;
              }
            }
            ops.push(
              { op: "lease.delete", key: threadKey(threadId), owner: core.owner },
              { op: "notify", topic: `run:${runId}`, payload: local.cancel === "rollback" ? "deleted" : status },
              ...(queued ? [runsReady(core, threadId)] : []),
            );
            await commitIf(store, ops);
          }), this.closing.signal);
          recorded = true;
        } catch (err) {
          // (Still unavailable as this runtime closes: left unrecorded, to be resumed.)
          if (!fold || err instanceof LostRace || GraphdockError.is(err, "conflict") || isUnavailable(err)) throw err;
          // The commit holding the run's last checkpoints failed and wrote nothing: the run fails
          // with the store's error (as when a queued commit fails), recorded without them.
          fold = undefined;
          done = undefined;
          error = errorInfo(err);
          status = "error";
          core.store.events.publish(runId, "error", error);
        }
      }
    } catch (err) {
      // The store failed while recording the outcome (or stayed unavailable until this runtime
      // closed): the run stays in flight in the store, and once this runtime's lease lapses
      // another attempt resumes it from its last checkpoint.
      if (!core.closed) reportFailure(core.log, err, { run_id: runId, thread_id: threadId }, "graphdock: recording the outcome of a run failed; it will be resumed");
      unrecorded = true;
    }
    this.local.delete(runId);
    if (drained || local.lost || unrecorded) {
      // The run goes on elsewhere (or later): its log stays open for the next attempt, and this
      // runtime's callers wait for its end in the store. This attempt's span ends here; the next
      // attempt's is another span of the same trace (the context is stored with the run).
      local.trace?.end("pending");
      local.resolve(this.outcomeFromStore(runId));
      return;
    }
    // Readers drain what was published; a rolled-back run's events go with it.
    await store.events.end(runId);
    if (local.cancel === "rollback") await store.events.drop(runId);
    local.resolve(result);
    local.trace?.end(status, error && (local.thrown ?? error));
    if (core.listening) {
      const stack = error && local.thrown instanceof Error ? local.thrown.stack : undefined;
      const traced = this.traceIdOf(local);
      core.emit(error ? { type: "run.finished", run: publicRun(final), error: stack ? { ...error, stack } : error, ...traced } : { type: "run.finished", run: publicRun(final), ...traced });
      if (statusChange) core.emit({ type: "thread.status", thread_id: threadId, ...statusChange });
    }
    if (local.cancel !== "rollback") sendWebhook(core, final, result, error);
    if (queued) this.poke(threadId);
  }

  /**
   * The ops handing a drained run back to the queue (D61): `pending` again as its next attempt
   * (a drain not counted against `maxAttempts`), the lease released, the other runtimes told.
   */
  private handBackOps(stored: RunRecord, fence: WriteOp): WriteOp[] {
    const { core } = this;
    const exec = stored.execution!;
    const pending: RunRecord = {
      ...stored,
      status: "pending",
      attempt: (stored.attempt ?? 1) + 1,
      updated_at: core.now(),
      execution: { ...exec, drains: (exec.drains ?? 0) + 1 },
    };
    return [
      fence,
      { op: "run.put", run: pending, expect: { status: ["running"] } },
      { op: "lease.delete", key: threadKey(stored.thread_id), owner: core.owner },
      runsReady(core, stored.thread_id),
    ];
  }

  /** A run's result once it has ended, whichever runtime ends it (rejects when this runtime closes first). */
  private outcomeFromStore(runId: string): Promise<RunResult> {
    // Work under way: it waits through a store outage (D72), until this runtime closes.
    return untilAvailable(async () => {
      const ended = await runEnded(this.core, runId);
      return ended ? storedOutcome(this.core, ended) : {};
    }, this.core.closeSignal);
  }

  /**
   * Ends a run whose execution was cut off and that is not resumed (D61: it used its attempts,
   * or it cannot be run from the store): takes over its expired lease (only if still expired),
   * marks it `error`, records the error on the head checkpoint's pending tasks (so clients
   * reading task errors show an error, not a breakpoint), recomputes the thread's status and
   * releases the lease, in one conditional commit; then its streams get the `error` event.
   */
  private async endStopped(run: RunRecord, failure: ErrorInfo): Promise<void> {
    const { core } = this;
    const { store } = core;
    const threadId = run.thread_id;
    await retryLostRaces(async () => {
      const current = await store.getRun(run.run_id);
      if (!current || !IN_FLIGHT.includes(current.status)) return;
      const nowMs = core.clock();
      const lease = await store.getLease(threadKey(threadId));
      if (lease && lease.expires_at > nowMs) return; // alive after all
      const now = core.now();
      const thread = await store.getThread(threadId);
      const ops: WriteOp[] = [
        {
          op: "lease.put",
          lease: { key: threadKey(threadId), owner: core.owner, expires_at: nowMs + core.leaseMs, data: { run_id: run.run_id } },
          expect: { state: "free", now: nowMs },
        },
        { op: "run.put", run: { ...withoutExecution(current), status: "error", updated_at: now }, expect: { status: IN_FLIGHT } },
      ];
      const graphId = thread ? graphIdOf(thread) : undefined;
      if (thread) {
        let state: { values: Record<string, unknown>; next: string[]; tasks: [] } = { values: thread.values, next: [], tasks: [] };
        if (graphId !== undefined && core.graphs.has(graphId)) {
          const snapshot = await (await core.graph(graphId, threadGraphConfig(thread, graphId))).getState(store, threadId);
          state = { values: snapshot.values, next: [], tasks: [] };
          const head = await store.getCheckpoint({ thread_id: threadId });
          if (head) {
            for (const task of snapshot.tasks) {
              if (task.error || task.interrupts.length) continue;
              const kept = head.pending_writes.filter((w) => w[0] === task.id);
              ops.push({
                op: "writes.put",
                thread_id: threadId,
                checkpoint_id: head.checkpoint.id,
                task_id: task.id,
                writes: [...kept, [task.id, "__error__", { name: failure.error, message: failure.message }]],
              });
            }
          }
        }
        const queued = (await store.countRuns({ thread_id: threadId, status: IN_FLIGHT })) > 1;
        ops.push({ op: "thread.put", thread: projectThread(thread, state, { error: failure, cancelled: false, queued, wroteState: false, now }), expect: { sameAs: thread } });
      }
      ops.push(
        { op: "lease.delete", key: threadKey(threadId), owner: core.owner },
        { op: "notify", topic: `run:${run.run_id}`, payload: "error" },
        runsReady(core, threadId),
      );
      await commitIf(store, ops);
      // Its log may never have been opened (the runtime stopped before), or not survived its
      // runtime (D62): readers must end, after the error.
      await store.events.open(run.run_id, { resumable: run.kwargs.resumable === true, from: attemptFirstSeq((current.attempt ?? 1) + 1) });
      store.events.publish(run.run_id, "error", failure);
      await store.events.end(run.run_id);
    });
  }

  /** Resumes runs whose lease expired and starts queued runs nobody is executing. */
  private async sweep(): Promise<void> {
    const { core } = this;
    const { store } = core;
    if (this.closed) return;
    try {
      const threads = new Set<string>();
      for (const lease of await store.expiredLeases("thread:", core.clock(), 100)) threads.add(lease.key.slice("thread:".length));
      // Queued runs get a grace period: the runtime that admitted one claims it itself (it has the
      // caller waiting); others step in when it could not (it stopped, or had no slot). A run
      // handed back by a drain (a later attempt) is anyone's at once.
      const grace = this.core.leaseMs / 2;
      const nowMs = core.clock();
      for (const run of await store.queryRuns({ status: IN_FLIGHT, sortBy: "queue", limit: 200 })) {
        if (this.local.has(run.run_id)) continue;
        const fresh = run.status === "pending" && run.execution && (run.attempt ?? 1) === 1;
        if (fresh && nowMs - Math.max(Date.parse(run.created_at), run.execution!.not_before) < grace) continue;
        threads.add(run.thread_id);
      }
      for (const threadId of threads) this.poke(threadId);
    } catch (err) {
      if (!this.closed) reportFailure(core.log, err, {}, "graphdock: the run sweeper failed");
    }
  }

  /**
   * Stops claiming; drains the runs executing here (D61: each stops, keeping what it
   * checkpointed, and goes back to the queue for another runtime, or the next start, to resume)
   * and waits until they are handed back.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.sweeper) clearInterval(this.sweeper);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const off of this.unsubscribe.splice(0)) off();
    const running = [...this.local.values()];
    for (const local of running) this.drainLocal(local);
    await Promise.all(running.map((l) => l.result.catch(() => undefined)));
    await Promise.all([...this.finishing]);
    // Renewed until their outcomes are recorded, so no other runtime takes them over meanwhile.
    if (this.renewer) clearInterval(this.renewer);
    this.alive?.();
  }

  /**
   * Another runtime on the store stopped (D64: its tab closed): the leases it still holds are
   * void, so its runs are taken over now instead of when those leases expire.
   */
  private async ownerGone(owner: string): Promise<void> {
    const { store } = this.core;
    if (this.closed) return;
    try {
      for (const run of await store.queryRuns({ status: "running", sortBy: "queue", limit: 200 })) {
        if (this.local.has(run.run_id)) continue;
        const key = threadKey(run.thread_id);
        if ((await store.getLease(key))?.owner !== owner) continue;
        // Only if that owner still holds it: the op does nothing otherwise.
        await store.commit([{ op: "lease.delete", key, owner }]);
        this.poke(run.thread_id);
      }
    } catch (err) {
      if (!this.closed) reportFailure(this.core.log, err, {}, "graphdock: taking over the runs of a runtime that stopped failed; they resume when their leases expire");
    }
  }
}
