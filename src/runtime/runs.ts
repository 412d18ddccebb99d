/**
 * `runtime.runs` and the run queue (api.md 1.4, 1.5, 3, 4, 5; D9, D10). Runs execute in the
 * background, at most one running run per thread, the others pending in FIFO order. Each run
 * owns an AbortController (cancel, multitask interrupt/rollback, a consumer leaving a stream
 * with `onDisconnect: "cancel"`) and a `RunChannel` of its events.
 */
import type { AuthFilter } from "../auth/types.js";
import { matchesAuthFilter } from "../auth/types.js";
import { conflict, invalidInput, notFound } from "../errors.js";
import { Command, Send } from "../graph/constants.js";
import type { Breakpoints, CompiledGraph, EngineStreamMode, ExecuteResult, RunnableConfig } from "../graph/types.js";
import type { CheckpointStore, PendingWrite, WriteOp } from "../persistence/types.js";
import type { AssistantRecord, Config, Metadata, MultitaskStrategy, RunRecord, RunStatus, ThreadRecord, ThreadStatus } from "../types.js";
import { RunChannel } from "./channel.js";
import { type Caller, type Core, pick, sortAndPage } from "./core.js";
import { parse, schemas } from "./schemas.js";
import { graphOfThread, interruptsOf, type RunQueueView } from "./threads.js";
import type { CancelAction, Run, RunEvent, RunResult, RunsApi, StreamMode } from "./types.js";
import { isPlainObject } from "../json.js";

type RunOptions = ReturnType<typeof schemas.run.parse>;

/** configurable keys only the runtime writes (D12): callers' values are dropped. */
const AUTH_KEYS = ["graph_auth_user", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"];
/** Finished resumable runs whose events stay joinable (oldest dropped first). */
const MAX_FINISHED_CHANNELS = 256;

interface ActiveRun {
  run: RunRecord;
  graph: CompiledGraph;
  config: RunnableConfig;
  context: unknown;
  input: unknown;
  checkpointId?: string;
  breakpoints: Breakpoints;
  modes: Set<EngineStreamMode>;
  controller: AbortController;
  channel: RunChannel;
  cancel?: CancelAction;
  started: boolean;
  /** Stateless run whose thread is deleted when it ends. */
  temporary: boolean;
  /** Clock time before which the run may not start (`afterSeconds`). */
  notBefore: number;
  webhook?: URL;
  result: Promise<RunResult>;
  resolve(result: RunResult): void;
  /** Checkpoints the run wrote, and the original writes of tasks it recorded on older ones (rollback). */
  written: Set<string>;
  replacedWrites: Map<string, { checkpointId: string; taskId: string; writes: PendingWrite[] }>;
  /** Commits of the run still in flight: the outcome (a rollback above all) waits for them. */
  commits: Set<Promise<void>>;
  /** Writes to persist with the engine's first commit (the `running` status). */
  startOps: WriteOp[];
  /** Releases the store's `run:<id>` lock (shared stores), held while the run is in flight. */
  releaseLock(): void;
}


const withoutAuthKeys = (configurable: Record<string, unknown> | undefined) => {
  const out = { ...(configurable ?? {}) };
  for (const key of AUTH_KEYS) delete out[key];
  return out;
};

/** `configurable` keys that belong to one run only: a thread never carries them to the next. */
const RUN_ONLY_KEYS = new Set([...AUTH_KEYS, "user_id", "run_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map"]);

/**
 * What a thread keeps of its run's merged config for the next run (api.md 3.3): everything but
 * the run metadata, the run-only keys and internal `__`-prefixed keys, so nothing leaks from one
 * run or user to the next.
 */
function carriedConfig(config: RunnableConfig): Config {
  const keep = ([key]: [string, unknown]) => !key.startsWith("__");
  const { metadata: _metadata, configurable, ...rest } = config;
  return {
    ...Object.fromEntries(Object.entries(rest).filter(keep)),
    configurable: Object.fromEntries(Object.entries(configurable ?? {}).filter((e) => keep(e) && !RUN_ONLY_KEYS.has(e[0]))),
  };
}

/** Engine stream modes for the requested ones (`messages-tuple` and legacy `messages` alike). */
function engineModes(requested: StreamMode[]): Set<EngineStreamMode> {
  const out = new Set<EngineStreamMode>();
  for (const mode of requested) {
    if (mode === "messages-tuple" || mode === "messages") out.add("messages");
    else if (mode !== "events" && mode !== "tools" && mode !== "lifecycle") out.add(mode);
  }
  return out;
}

const asModes = (m: StreamMode | StreamMode[] | undefined): StreamMode[] => (m === undefined ? ["values"] : Array.isArray(m) ? m : [m]);

function toEngineInput(p: RunOptions): unknown {
  if (!p.command) return p.input ?? null;
  const goto = p.command.goto;
  const target = (g: string | { node: string; input: unknown }) => (typeof g === "string" ? g : new Send(g.node, g.input));
  return new Command({
    ...(p.command.resume !== undefined ? { resume: p.command.resume } : {}),
    ...(p.command.update != null ? { update: p.command.update } : {}),
    ...(goto !== undefined ? { goto: Array.isArray(goto) ? goto.map(target) : target(goto) } : {}),
  });
}

const errorInfo = (err: unknown) => ({
  error: err instanceof Error ? err.name || "Error" : "Error",
  message: err instanceof Error ? err.message : String(err),
});

/**
 * On a shared store, holds the cross-runtime lock `run:<id>` until released: other runtimes
 * (tabs) opening the data see the run is alive and leave it alone (D10). Resolves once held.
 */
async function holdRunLock(core: Core, runId: string): Promise<() => void> {
  const { store } = core;
  if (!store.capabilities.shared || !store.withLock) return () => undefined;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await new Promise<void>((granted) => {
    void store.withLock!(`run:${runId}`, () => {
      granted();
      return held;
    });
  });
  return release;
}

/** True when another runtime holds the run's lock (probed for `ms`; shared stores only). */
export async function runIsAlive(core: Core, runId: string, ms = 50): Promise<boolean> {
  const { store } = core;
  if (!store.capabilities.shared || !store.withLock) return false;
  let acquired = false;
  const probe = store.withLock(`run:${runId}`, async () => {
    acquired = true;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([probe, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
  return !acquired;
}

/**
 * The URL a run's webhook goes to, when `createRuntime({ webhooks })` allows it; otherwise
 * `invalid_input` before anything is written (no webhook to arbitrary addresses: SSRF).
 */
function allowedWebhook(core: Core, webhook: string, what: string): URL {
  if (!core.webhooks) {
    throw invalidInput(`agentdock: ${what}: webhooks are disabled; pass createRuntime({ webhooks: { allow: (url) => ... } }) to send them, or drop "webhook".`);
  }
  let url: URL | undefined;
  try {
    url = new URL(webhook);
  } catch {
    // not a URL: refused below
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw invalidInput(`agentdock: ${what}: webhook "${webhook}" is not an absolute http(s) URL.`);
  }
  if (!core.webhooks.allow(url)) {
    throw invalidInput(`agentdock: ${what}: webhook "${webhook}" is not allowed by createRuntime's webhooks.allow.`);
  }
  return url;
}

/**
 * The assistant a run may use: a graph's default (system) assistant is runnable by everyone
 * (its metadata has no owner); any other is subject to `assistants:read` and its filter, so an
 * assistant the caller cannot see is `not_found` and its config never reaches their run.
 */
async function runnableAssistant(core: Core, caller: Caller, assistantId: string): Promise<AssistantRecord> {
  const system = core.isDefaultAssistant(core.resolveAssistantId(assistantId));
  const filter = system ? undefined : await core.authorize(caller, "assistants", "read", { assistant_id: assistantId });
  return core.visibleAssistant(assistantId, filter);
}

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

/**
 * While the run is in flight, an abort of the caller's `signal` (a disconnect) cancels it. The
 * listener goes once the run has its outcome, so a signal reused across calls collects none.
 */
function cancelOnAbort(queue: RunQueue, active: ActiveRun, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const onAbort = () => queue.cancel(active, "interrupt");
  signal.addEventListener("abort", onAbort, { once: true });
  void active.result.finally(() => signal.removeEventListener("abort", onAbort));
}

export class RunQueue implements RunQueueView {
  private readonly active = new Map<string, ActiveRun>();
  /** Thread id -> its in-flight runs, oldest first; the head may be running. */
  private readonly queues = new Map<string, ActiveRun[]>();
  private readonly finished = new Map<string, { threadId: string; channel: RunChannel }>();
  /** Runs created and not yet resolved (close waits for them). */
  private readonly unresolved = new Set<ActiveRun>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly core: Core) {}

  inFlight(threadId: string): number {
    return this.queues.get(threadId)?.length ?? 0;
  }

  async cancelAll(threadId: string): Promise<void> {
    const runs = [...(this.queues.get(threadId) ?? [])];
    for (const run of runs) this.cancel(run, "rollback");
    await Promise.all(runs.map((r) => r.result));
  }

  forget(threadId: string): void {
    for (const [runId, f] of this.finished) if (f.threadId === threadId) this.finished.delete(runId);
  }

  /** Cancels every in-flight run and waits for them (runtime close). */
  async shutdown(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const run of this.active.values()) this.cancel(run, "interrupt");
    // Also the runs already recording their outcome (no longer active), so no write meets a closed store.
    await Promise.all([...this.unresolved].map((r) => r.result));
  }

  getActive(runId: string): ActiveRun | undefined {
    return this.active.get(runId);
  }

  finishedChannel(runId: string): RunChannel | undefined {
    return this.finished.get(runId)?.channel;
  }

  dropFinished(runId: string): void {
    this.finished.delete(runId);
  }

  /**
   * Creates a run (api.md 1.4): authorizes `threads:create_run`, resolves the assistant and
   * the thread, applies the multitask strategy (D9), persists run and thread in one commit and
   * queues it. `reader` attaches a reader to the channel before the first event.
   */
  async create(
    caller: Caller,
    threadIdArg: string | null,
    assistantIdArg: string,
    p: RunOptions,
    what: string,
    reader?: { onStop: (run: ActiveRun, finished: boolean) => void },
  ): Promise<{ active: ActiveRun; run: RunRecord; events?: AsyncGenerator<RunEvent> }> {
    const core = this.core;
    const runId = core.ids.uuid();
    const strategy: MultitaskStrategy = p.multitaskStrategy ?? core.defaultStrategy;
    const requestedModes = asModes(p.streamMode);
    const kwargs: Record<string, unknown> = {
      input: p.input ?? null,
      command: p.command ?? null,
      config: { ...(p.config ?? {}), configurable: withoutAuthKeys(p.config?.configurable) },
      context: p.context ?? {},
      stream_mode: requestedModes,
      interrupt_before: p.interruptBefore ?? null,
      interrupt_after: p.interruptAfter ?? null,
      checkpoint_id: p.checkpointId ?? p.checkpoint?.checkpoint_id ?? null,
      webhook: p.webhook ?? null,
      feedback_keys: p.feedbackKeys ?? null,
      subgraphs: p.streamSubgraphs ?? false,
      resumable: p.streamResumable ?? false,
      on_disconnect: p.onDisconnect ?? "continue",
      after_seconds: p.afterSeconds ?? 0,
    };
    const value: Record<string, unknown> = {
      thread_id: threadIdArg ?? undefined,
      assistant_id: assistantIdArg,
      run_id: runId,
      status: "pending",
      metadata: { ...(p.metadata ?? {}) },
      multitask_strategy: strategy,
      if_not_exists: p.ifNotExists ?? "reject",
      after_seconds: p.afterSeconds ?? 0,
      kwargs,
    };
    const filter = await core.authorize(caller, "threads", "create_run", value);
    const runMetadata = (value.metadata as Metadata | undefined) ?? {};
    const { assistant, graph, webhook, input, breakpoints } = await this.check(caller, threadIdArg, assistantIdArg, p, what);
    const threadId = threadIdArg ?? core.ids.uuid();
    const temporary = threadIdArg === null && (p.onCompletion ?? "delete") !== "keep" && p.onCompletion !== "continue";
    const checkpointId = p.checkpointId ?? p.checkpoint?.checkpoint_id ?? undefined;
    const user = core.auth ? await caller.user() : undefined;

    const active = await core.withLock(threadId, async () => {
      let thread = threadIdArg === null ? undefined : await core.store.getThread(threadId);
      if (thread && !matchesAuthFilter(thread.metadata, filter)) thread = undefined;
      const now = core.now();
      if (!thread) {
        if (threadIdArg !== null && (p.ifNotExists ?? "reject") !== "create") {
          throw notFound(`agentdock: thread ${threadId} not found. Create it first or pass ifNotExists: "create".`);
        }
        if (threadIdArg !== null && (await core.store.getThread(threadId))) {
          throw notFound(`agentdock: thread ${threadId} not found.`);
        }
        thread = {
          thread_id: threadId,
          created_at: now,
          updated_at: now,
          state_updated_at: now,
          metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id, ...runMetadata },
          status: "idle",
          config: {},
          values: {},
          interrupts: {},
        };
      }
      await core.requireCheckpoint(threadId, checkpointId);
      const inFlight = [...(this.queues.get(threadId) ?? [])];
      // Against the thread's state (a resume needs a pending interrupt) only when no run ahead
      // of this one may still change it; the static checks passed in `check`.
      if (!inFlight.length) {
        await graph.validateInput(input, { store: core.store, threadId, ...(checkpointId !== undefined ? { checkpointId } : {}) }, breakpoints);
      }
      if (inFlight.length && strategy === "reject") {
        throw conflict(
          `agentdock: thread ${threadId} is already running run ${inFlight[0]!.run.run_id}. Wait for it, cancel it, or choose multitaskStrategy "enqueue", "interrupt" or "rollback".`,
        );
      }
      // On a shared store another runtime (tab) may have runs on this thread: a live one is a
      // conflict (this queue cannot wait for it); one whose runtime is gone ends as an error (D10).
      const staleOps: WriteOp[] = [];
      if (core.store.capabilities.shared) {
        for (const foreign of await core.store.listRuns(threadId)) {
          if ((foreign.status !== "pending" && foreign.status !== "running") || this.active.has(foreign.run_id)) continue;
          if (await runIsAlive(core, foreign.run_id)) {
            throw conflict(`agentdock: thread ${threadId} is running run ${foreign.run_id} in another runtime on the same store (another tab). Retry when it is done.`);
          }
          staleOps.push({ op: "run.put", run: { ...foreign, status: "error", updated_at: now } });
        }
      }
      const config = this.runConfig(assistant, thread, p, { runId, threadId, user, metadata: runMetadata });
      const run: RunRecord = {
        run_id: runId,
        thread_id: threadId,
        assistant_id: assistant.assistant_id,
        created_at: now,
        updated_at: now,
        status: "pending",
        metadata: runMetadata,
        kwargs: { ...kwargs, temporary },
        multitask_strategy: strategy,
      };
      // The thread keeps its last run's merged config for the next one (api.md 3.3; JS only when not busy).
      const nextThread: ThreadRecord = {
        ...thread,
        status: "busy",
        updated_at: now,
        metadata: { ...thread.metadata, graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
        config: thread.status === "busy" ? thread.config : carriedConfig(config),
      };
      const releaseLock = await holdRunLock(core, runId);
      try {
        await core.store.commit([...staleOps, { op: "thread.put", thread: nextThread }, { op: "run.put", run }]);
      } catch (err) {
        releaseLock();
        throw err;
      }
      let resolve!: (r: RunResult) => void;
      const result = new Promise<RunResult>((r) => (resolve = r));
      const active: ActiveRun = {
        run,
        graph,
        config,
        context: mergeContext(assistant.context, p.context),
        input,
        ...(checkpointId !== undefined ? { checkpointId } : {}),
        breakpoints,
        modes: engineModes(requestedModes),
        controller: new AbortController(),
        channel: new RunChannel(p.streamResumable ?? false),
        started: false,
        temporary,
        notBefore: core.clock() + (p.afterSeconds ?? 0) * 1000,
        ...(webhook ? { webhook } : {}),
        result,
        resolve,
        written: new Set(),
        replacedWrites: new Map(),
        commits: new Set(),
        startOps: [],
        releaseLock,
      };
      this.active.set(runId, active);
      this.unresolved.add(active);
      this.queues.set(threadId, [...inFlight, active]);
      // D9: interrupt / rollback cancel every in-flight run; the new one starts after them.
      if (strategy === "interrupt" || strategy === "rollback") for (const old of inFlight) this.cancel(old, strategy);
      core.emit({ type: "run.created", run });
      if (thread.status !== "busy") core.emit({ type: "thread.status", thread_id: threadId, status: "busy", previous: thread.status });
      return active;
    });
    const events = reader ? active.channel.read(undefined, (finished) => reader.onStop(active, finished)) : undefined;
    active.channel.push("metadata", { run_id: runId, thread_id: threadId, attempt: 1 });
    const run = active.run;
    this.drain(threadId);
    return events ? { active, run, events } : { active, run };
  }

  /**
   * What a run is checked for before its thread is looked at, writing nothing: the webhook
   * (opt-in), the assistant (`assistants:read` unless a default one) and the static part of the
   * graph's input checks (`validateInput` without state).
   */
  async check(caller: Caller, threadIdArg: string | null, assistantIdArg: string, p: RunOptions, what: string) {
    const webhook = p.webhook === undefined ? undefined : allowedWebhook(this.core, p.webhook, what);
    const assistant = await runnableAssistant(this.core, caller, assistantIdArg);
    const graph = this.core.graph(assistant.graph_id);
    if (threadIdArg === null && p.command?.resume !== undefined) {
      throw invalidInput(`agentdock: ${what}: a resume command needs a thread id; a stateless run has no interrupt to resume.`);
    }
    const input = toEngineInput(p);
    const breakpoints: Breakpoints = {
      ...(p.interruptBefore !== undefined ? { interruptBefore: p.interruptBefore } : {}),
      ...(p.interruptAfter !== undefined ? { interruptAfter: p.interruptAfter } : {}),
    };
    await graph.validateInput(input, undefined, breakpoints);
    return { assistant, graph, webhook, input, breakpoints };
  }

  /**
   * Config merge assistant -> thread -> run (api.md 3.3), `configurable` key-wise; the thread's
   * config holds only what carries over (`carriedConfig`). The ids are forced into
   * `configurable` and the user lands per D12.
   */
  private runConfig(
    assistant: AssistantRecord,
    thread: ThreadRecord,
    p: RunOptions,
    o: { runId: string; threadId: string; user: Record<string, unknown> | undefined; metadata: Metadata },
  ): RunnableConfig {
    const a: Config = assistant.config ?? {};
    const t: Config = thread.config ?? {};
    const r: Config = p.config ?? {};
    const configurable: Record<string, unknown> = {
      ...withoutAuthKeys(a.configurable),
      ...t.configurable,
      ...withoutAuthKeys(r.configurable),
      run_id: o.runId,
      thread_id: o.threadId,
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
    };
    if (o.user) {
      const identity = o.user.identity;
      configurable.user_id ??= identity;
      configurable.graph_auth_user = o.user;
      configurable.langgraph_auth_user = o.user;
      configurable.langgraph_auth_user_id = identity;
      configurable.langgraph_auth_permissions = o.user.permissions;
    }
    return {
      ...a,
      ...t,
      ...r,
      configurable,
      metadata: {
        ...assistant.metadata,
        ...thread.metadata,
        ...o.metadata,
        run_id: o.runId,
        thread_id: o.threadId,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        run_attempt: 1,
      },
    };
  }

  /** Starts the oldest pending run of the thread when none is running. */
  private drain(threadId: string): void {
    const head = this.queues.get(threadId)?.[0];
    if (!head || head.started) return;
    const wait = head.notBefore - this.core.clock();
    if (wait > 0) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.drain(threadId);
      }, wait);
      this.timers.add(timer);
      return;
    }
    head.started = true;
    void this.execute(head);
  }

  /** The store the engine writes through: records what the run wrote, for rollback (D9). */
  private runStore(active: ActiveRun): CheckpointStore {
    const { store } = this.core;
    return {
      getCheckpoint: (threadId, checkpointId) => store.getCheckpoint(threadId, checkpointId),
      listCheckpoints: (threadId, options) => store.listCheckpoints(threadId, options),
      commit: (ops) => {
        const pending = this.commitFor(active, ops);
        active.commits.add(pending);
        void pending.catch(() => undefined).finally(() => active.commits.delete(pending));
        return pending;
      },
    };
  }

  /** One commit of the run's, recording what it wrote for a rollback (D9). */
  private async commitFor(active: ActiveRun, ops: readonly WriteOp[]): Promise<void> {
    const { store } = this.core;
    // The run's `running` status lands with its first checkpoint, in one commit.
    if (active.startOps.length) ops = [...active.startOps.splice(0), ...ops];
    for (const op of ops) {
      if (op.op === "checkpoint.put") active.written.add(op.checkpoint.checkpoint.id);
      else if (op.op === "writes.put" && !active.written.has(op.checkpoint_id)) {
        const key = `${op.checkpoint_id}\u0000${op.task_id}`;
        if (!active.replacedWrites.has(key)) {
          const cp = await store.getCheckpoint(op.thread_id, op.checkpoint_id);
          const writes = (cp?.pending_writes ?? []).filter((w) => w[0] === op.task_id);
          active.replacedWrites.set(key, { checkpointId: op.checkpoint_id, taskId: op.task_id, writes });
        }
      }
    }
    await store.commit(ops);
  }

  private async execute(active: ActiveRun): Promise<void> {
    const { core } = this;
    const threadId = active.run.thread_id;
    let error: { error: string; message: string } | undefined;
    let done: ExecuteResult | undefined;
    try {
      if (!active.cancel) {
        await core.withLock(threadId, async () => {
          const now = core.now();
          active.run = { ...active.run, status: "running", updated_at: now };
          active.startOps = [{ op: "run.put", run: active.run }];
          const thread = await core.store.getThread(threadId);
          if (thread && thread.status !== "busy") {
            // After a queued predecessor paused or failed, the thread is busy again.
            await core.store.commit([...active.startOps.splice(0), { op: "thread.put", thread: { ...thread, status: "busy", updated_at: now } }]);
            core.emit({ type: "thread.status", thread_id: threadId, status: "busy", previous: thread.status });
          }
        });
        core.emit({ type: "run.started", run: active.run });
        done = await active.graph.execute({
          store: this.runStore(active),
          threadId,
          input: active.input,
          ...(active.checkpointId !== undefined ? { checkpointId: active.checkpointId } : {}),
          config: active.config,
          context: active.context,
          ...active.breakpoints,
          signal: active.controller.signal,
          ids: core.ids,
          clock: core.clock,
          streamModes: active.modes,
          emit: (mode, data) => active.channel.push(mode, data),
        });
      }
    } catch (err) {
      if (!active.cancel) {
        error = errorInfo(err);
        active.channel.push("error", error);
      }
    }
    await this.finish(active, error, done);
  }

  /** Records the outcome (run status, thread status/values/interrupts per api.md 4) and starts the next run. */
  private async finish(
    active: ActiveRun,
    error: { error: string; message: string } | undefined,
    done?: ExecuteResult,
  ): Promise<void> {
    const { core } = this;
    const { store } = core;
    const threadId = active.run.thread_id;
    const runId = active.run.run_id;
    let result: RunResult = {};
    let statusChange: { status: ThreadStatus; previous: ThreadStatus } | undefined;
    const status: RunStatus = active.cancel ? "interrupted" : error ? "error" : "success";
    // A task's commit may still be in flight when an abort ends the run: let it land first, so a
    // rollback sees (and removes) everything the run wrote.
    await Promise.allSettled([...active.commits]);
    try {
      await core.withLock(threadId, async () => {
        const queue = (this.queues.get(threadId) ?? []).filter((r) => r !== active);
        if (queue.length) this.queues.set(threadId, queue);
        else this.queues.delete(threadId);
        this.active.delete(runId);
        const ops: WriteOp[] = [];
        active.startOps = []; // superseded by the final status
        if (active.cancel === "rollback") {
          // D9: the run and everything it wrote are removed.
          const undo: WriteOp[] = [...active.replacedWrites.values()].map((r) => ({
            op: "writes.put",
            thread_id: threadId,
            checkpoint_id: r.checkpointId,
            task_id: r.taskId,
            writes: r.writes,
          }));
          await store.commit([
            { op: "run.delete", run_id: runId },
            ...(active.written.size ? [{ op: "checkpoint.delete" as const, thread_id: threadId, checkpoint_ids: [...active.written] }] : []),
            ...undo,
          ]);
        } else {
          active.run = { ...active.run, status, updated_at: core.now() };
          ops.push({ op: "run.put", run: active.run });
        }
        const thread = await store.getThread(threadId);
        if (thread) {
          // A run that finished without pausing needs no snapshot: its result has the values.
          const state =
            done?.status === "done" && !active.cancel
              ? { values: done.values, next: [] as string[], tasks: [] }
              : await (graphOfThread(core, thread) ?? active.graph).getState(store, threadId);
          const interrupts = interruptsOf(state);
          const interruptList = Object.values(interrupts).flat();
          result = error ? { __error__: error } : finalValues(state.values, interruptList);
          if (active.temporary) {
            ops.push({ op: "thread.delete", thread_id: threadId });
          } else {
            const next: ThreadStatus = error
              ? "error"
              : !active.cancel && state.next.length
                ? "interrupted"
                : queue.length
                  ? "busy"
                  : "idle";
            const now = core.now();
            ops.push({
              op: "thread.put",
              thread: {
                ...thread,
                status: next,
                values: state.values,
                interrupts,
                error: error ?? null,
                updated_at: now,
                state_updated_at: active.written.size ? now : thread.state_updated_at,
              },
            });
            if (next !== thread.status) statusChange = { status: next, previous: thread.status };
          }
        }
        if (ops.length) await store.commit(ops);
      });
    } catch (err) {
      // The store failed while recording the outcome: report it to waiters rather than hang.
      console.error("agentdock: recording the outcome of run", runId, "failed", err);
      result = { __error__: errorInfo(err) };
    }
    active.releaseLock();
    active.channel.close();
    if (active.run.kwargs.resumable && active.cancel !== "rollback" && !active.temporary) {
      this.finished.set(runId, { threadId, channel: active.channel });
      if (this.finished.size > MAX_FINISHED_CHANNELS) this.finished.delete(this.finished.keys().next().value!);
    }
    active.resolve(result);
    this.unresolved.delete(active);
    core.emit(error ? { type: "run.finished", run: active.run, error } : { type: "run.finished", run: active.run });
    if (statusChange) core.emit({ type: "thread.status", thread_id: threadId, ...statusChange });
    if (active.webhook) this.sendWebhook(active, status, result, error);
    this.drain(threadId);
  }

  private sendWebhook(active: ActiveRun, status: RunStatus, result: RunResult, error?: { error: string; message: string }): void {
    const body = {
      ...active.run,
      status,
      webhook_sent_at: this.core.now(),
      ...(error ? { error: error.message } : { values: result }),
    };
    const url = active.webhook!.href;
    const failed = (error: { error: string; message: string }) => this.core.emit({ type: "webhook.failed", run: active.run, url, error });
    // Not retried; a failure is reported as a lifecycle event, never thrown into the run.
    const fetchFn = this.core.webhooks?.fetch ?? globalThis.fetch;
    void (async () => {
      try {
        const res = await fetchFn(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        if (!res.ok) failed({ error: "WebhookError", message: `agentdock: webhook ${url} answered HTTP ${res.status} for run ${active.run.run_id}.` });
      } catch (err) {
        failed(errorInfo(err));
      }
    })();
  }

  /** Cancels a run: a pending one ends at once, a running one is aborted (api.md 3.4). */
  cancel(active: ActiveRun, action: CancelAction): void {
    if (active.cancel) return;
    active.cancel = action;
    active.controller.abort();
    if (!active.started) {
      active.started = true;
      void this.finish(active, undefined);
    }
  }
}

function mergeContext(assistantContext: unknown, runContext: unknown): unknown {
  if (runContext === undefined) return assistantContext;
  if (isPlainObject(assistantContext) && isPlainObject(runContext)) return { ...assistantContext, ...runContext };
  return runContext;
}

/** What `wait`/`join` resolve for a run that ended: its final values, plus pending interrupts. */
const finalValues = (values: Record<string, unknown>, interrupts: readonly unknown[]): RunResult =>
  ({ ...values, ...(interrupts.length ? { __interrupt__: interrupts } : {}) }) as RunResult;

/** Waits for a run (or reads the outcome of a finished one) and resolves its final values. */
async function outcomeOf(core: Core, queue: RunQueue, thread: ThreadRecord, run: RunRecord): Promise<RunResult> {
  const active = queue.getActive(run.run_id);
  if (active) return active.result;
  if (run.status === "error" && thread.error) return { __error__: thread.error };
  const graph = graphOfThread(core, thread);
  if (!graph) return {};
  const state = await graph.getState(core.store, thread.thread_id);
  return finalValues(state.values, state.interrupts ?? []);
}

export function runsApi(core: Core, caller: Caller, queue: RunQueue): RunsApi {
  const { store } = core;

  async function runOf(threadId: string, runId: string, filter: AuthFilter | undefined): Promise<{ thread: ThreadRecord; run: RunRecord }> {
    const thread = await core.visibleThread(threadId, filter);
    const run = await store.getRun(runId);
    if (!run || run.thread_id !== threadId) throw notFound(`agentdock: run ${runId} not found on thread ${threadId}.`);
    return { thread, run };
  }

  function parseRun(threadId: unknown, assistantId: unknown, payload: unknown, what: string) {
    const t = threadId === null || threadId === undefined ? null : parse(schemas.id, threadId, what);
    const a = parse(schemas.id, assistantId, what);
    const p = parse(schemas.run, payload ?? {}, `${what}(${t ?? "stateless"}, ${a})`);
    return { t, a, p };
  }

  const notifyCreated = (p: RunOptions, run: RunRecord) => {
    try {
      p.onRunCreated?.({ run_id: run.run_id, thread_id: run.thread_id });
    } catch {
      // A throwing callback must not break the run.
    }
  };

  async function* stream(threadId: unknown, assistantId: unknown, payload?: unknown): AsyncGenerator<RunEvent> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.stream");
    const { active, events } = await queue.create(caller, t, a, p, "runs.stream", {
      onStop: (run, finished) => {
        if (!finished && p.onDisconnect === "cancel") queue.cancel(run, "interrupt");
      },
    });
    notifyCreated(p, active.run);
    yield* events!;
  }

  async function create(threadId: unknown, assistantId: unknown, payload?: unknown): Promise<Run> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.create");
    const { run } = await queue.create(caller, t, a, p, "runs.create");
    notifyCreated(p, run);
    return run;
  }

  async function createBatch(payloads: unknown, options?: unknown): Promise<Run[]> {
    parse(schemas.callOptions, options ?? {}, "runs.createBatch");
    if (!Array.isArray(payloads) || payloads.length === 0) {
      throw invalidInput("agentdock: runs.createBatch takes a non-empty array of run payloads, each with an assistantId.");
    }
    const parsed = payloads.map((payload, i) => {
      const { assistantId, ...rest } = (payload ?? {}) as { assistantId?: unknown };
      return parseRun(null, assistantId, rest, `runs.createBatch[${i}]`);
    });
    // Every payload is checked before the first run is created, so a bad one creates nothing.
    for (const [i, { a, p }] of parsed.entries()) await queue.check(caller, null, a, p, `runs.createBatch[${i}]`);
    const runs: Run[] = [];
    for (const { a, p } of parsed) runs.push((await queue.create(caller, null, a, p, "runs.createBatch")).run);
    return runs;
  }

  async function wait(threadId: unknown, assistantId: unknown, payload?: unknown): Promise<RunResult> {
    const { t, a, p } = parseRun(threadId, assistantId, payload, "runs.wait");
    const { active } = await queue.create(caller, t, a, p, "runs.wait");
    notifyCreated(p, active.run);
    // An aborted call is a disconnect: with onDisconnect "cancel" the run is cancelled too.
    if (p.onDisconnect === "cancel") cancelOnAbort(queue, active, p.signal);
    const result = await abortable(active.result, p.signal);
    if ((p.raiseError ?? true) && result.__error__) throw new Error(`${result.__error__.error}: ${result.__error__.message}`);
    return result;
  }

  async function list(threadId: unknown, options?: unknown): Promise<Run[]> {
    const id = parse(schemas.id, threadId, "runs.list");
    const o = parse(schemas.runList, options ?? {}, `runs.list(${id})`);
    const searchFilter = await core.authorize(caller, "threads", "search", { thread_id: id, metadata: {}, status: o.status });
    const readFilter = await core.authorize(caller, "threads", "read", { thread_id: id });
    const thread = await core.visibleThread(id, readFilter);
    if (!matchesAuthFilter(thread.metadata, searchFilter)) throw notFound(`agentdock: thread ${id} not found.`);
    const runs = (await store.listRuns(id)).filter((r) => o.status === undefined || r.status === o.status);
    return sortAndPage(runs, "created_at", "desc", o.offset ?? 0, o.limit ?? 10, "run_id").map((r) => pick(r, o.select));
  }

  async function get(threadId: unknown, runId: unknown, options?: unknown): Promise<Run> {
    const t = parse(schemas.id, threadId, "runs.get");
    const r = parse(schemas.id, runId, `runs.get(${t})`);
    parse(schemas.callOptions, options ?? {}, `runs.get(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "read", { thread_id: t });
    return (await runOf(t, r, filter)).run;
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
    const active = queue.getActive(r);
    if (!active) throw conflict(`agentdock: run ${r} of thread ${t} already finished (${run.status}); only pending or running runs can be cancelled.`);
    // A pending run ends at once (api.md 3.4): its outcome is recorded before cancel resolves.
    const pending = !active.started;
    queue.cancel(active, act);
    if (o.wait || pending) await active.result;
  }

  async function join(threadId: unknown, runId: unknown, options?: unknown): Promise<RunResult> {
    const t = parse(schemas.id, threadId, "runs.join");
    const r = parse(schemas.id, runId, `runs.join(${t})`);
    const o = parse(schemas.join, options ?? {}, `runs.join(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "read", { thread_id: t });
    const { thread, run } = await runOf(t, r, filter);
    const active = queue.getActive(r);
    if (active && o.cancelOnDisconnect) cancelOnAbort(queue, active, o.signal);
    return abortable(outcomeOf(core, queue, thread, run), o.signal);
  }

  async function* joinStream(threadId: unknown, runId: unknown, options?: unknown): AsyncGenerator<RunEvent> {
    const r = parse(schemas.id, runId, "runs.joinStream");
    const o = parse(schemas.joinStream, options instanceof AbortSignal ? { signal: options } : (options ?? {}), `runs.joinStream(${r})`);
    // Attach before the first await: a join without lastEventId sees every event from the moment
    // it was made, not from after the checks below. A failed check detaches again.
    const active = queue.getActive(r);
    const channel = active?.channel ?? queue.finishedChannel(r);
    const events = channel?.read(o.lastEventId, (finished) => {
      if (!finished && o.cancelOnDisconnect && active) queue.cancel(active, "interrupt");
    });
    try {
      const known = threadId === null || threadId === undefined ? (await store.getRun(r))?.thread_id : parse(schemas.id, threadId, "runs.joinStream");
      if (known === undefined) throw notFound(`agentdock: run ${r} not found.`);
      const filter = await core.authorize(caller, "threads", "read", { thread_id: known });
      await runOf(known, r, filter);
    } catch (err) {
      await events?.return(undefined);
      throw err;
    }
    if (!events) return;
    const modes = o.streamMode === undefined ? undefined : new Set(asModes(o.streamMode).map((m) => (m === "messages-tuple" ? "messages" : m)));
    for await (const ev of events) {
      if (!modes || ev.event === "metadata" || ev.event === "error" || modes.has(ev.event)) yield ev;
    }
  }

  async function remove(threadId: unknown, runId: unknown, options?: unknown): Promise<void> {
    const t = parse(schemas.id, threadId, "runs.delete");
    const r = parse(schemas.id, runId, `runs.delete(${t})`);
    parse(schemas.callOptions, options ?? {}, `runs.delete(${t}, ${r})`);
    const filter = await core.authorize(caller, "threads", "delete", { thread_id: t, run_id: r });
    await core.withLock(t, async () => {
      await runOf(t, r, filter);
      if (queue.getActive(r)) throw conflict(`agentdock: run ${r} of thread ${t} is still in flight; cancel it before deleting it.`);
      await store.commit([{ op: "run.delete", run_id: r }]);
    });
    queue.dropFinished(r);
  }

  return {
    stream: stream as RunsApi["stream"],
    create,
    createBatch: createBatch as RunsApi["createBatch"],
    wait,
    list,
    get,
    cancel,
    join,
    joinStream,
    delete: remove,
  };
}
