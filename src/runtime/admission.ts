/**
 * Run admission (D9): parse and check a run request, authorize it, apply the
 * multitask strategy and enqueue the run, all in one conditional commit. The store is the queue
 * (D20): the commit that creates a run enqueues it; whichever runtime claims it executes it.
 */
import { matchesAuthFilter } from "../auth/types.js";
import { conflict, invalidInput, notFound } from "../errors.js";
import { flattenStrings } from "../flat-strings.js";
import { Command, Send } from "../graph/constants.js";
import type { Breakpoints, CompiledGraph, RunnableConfig } from "../graph/types.js";
import { isPlainObject } from "../json.js";
import type { WriteOp } from "../persistence/types.js";
import type { AssistantRecord, Config, Metadata, MultitaskStrategy, RunRecord, ThreadRecord } from "../types.js";
import type { Caller, Core } from "./core.js";
import { LostRace, commitIf, retryLostRaces } from "./races.js";
import { runCreatedNotice } from "./external-runs.js";
import { shareKwargs, sharedIfEmpty } from "./shared-values.js";
import { IN_FLIGHT, threadKey, withoutExecution } from "./outcome.js";
import { checkpointIdOf, checkpointNsOf, type schemas } from "./schemas.js";
import type { StreamMode } from "./types.js";
import { expiryOp, threadTtlOf } from "./thread-ttl.js";

export type RunOptions = ReturnType<typeof schemas.run.parse>;

/** configurable keys only the runtime writes (D12): callers' values are dropped. */
const AUTH_KEYS = ["graph_auth_user", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"];

export const withoutAuthKeys = (configurable: Record<string, unknown> | undefined) => {
  const out = { ...(configurable ?? {}) };
  for (const key of AUTH_KEYS) delete out[key];
  return out;
};

/** `configurable` keys that belong to one run only: a thread never carries them to the next. */
const RUN_ONLY_KEYS = new Set([...AUTH_KEYS, "user_id", "run_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map"]);

/**
 * What a thread keeps of its run's merged config for the next run: everything but
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

/** Marks a rejection handled (the promise is awaited, or dropped, later). */
const ignore = (): undefined => undefined;

export const asModes = (m: StreamMode | StreamMode[] | undefined): StreamMode[] => (m === undefined ? ["values"] : Array.isArray(m) ? m : [m]);

/** The engine input of a run: its `input`, or a `Command` built from `command`. */
export function toEngineInput(kwargs: { input?: unknown; command?: RunOptions["command"] | null }): unknown {
  const command = kwargs.command;
  if (!command) return kwargs.input ?? null;
  const goto = command.goto;
  const target = (g: string | { node: string; input: unknown }) => (typeof g === "string" ? g : new Send(g.node, g.input));
  return new Command({
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    ...(command.update != null ? { update: command.update } : {}),
    ...(goto !== undefined && goto !== null ? { goto: Array.isArray(goto) ? goto.map(target) : target(goto) } : {}),
  });
}

export const breakpointsOf = (kwargs: { interrupt_before?: unknown; interrupt_after?: unknown }): Breakpoints => ({
  ...(kwargs.interrupt_before != null ? { interruptBefore: kwargs.interrupt_before as Breakpoints["interruptBefore"] } : {}),
  ...(kwargs.interrupt_after != null ? { interruptAfter: kwargs.interrupt_after as Breakpoints["interruptAfter"] } : {}),
});

/**
 * The URL a run's webhook goes to, when `createRuntime({ webhooks })` allows it; otherwise
 * `invalid_input` before anything is written (no webhook to arbitrary addresses: SSRF).
 */
function allowedWebhook(core: Core, webhook: string, what: string): URL {
  if (!core.webhooks) {
    throw invalidInput(`graphdock: ${what}: webhooks are disabled; pass createRuntime({ webhooks: { allow: (url) => ... } }) to send them, or drop "webhook".`);
  }
  let url: URL | undefined;
  try {
    url = new URL(webhook);
  } catch {
    // not a URL: refused below
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw invalidInput(`graphdock: ${what}: webhook "${webhook}" is not an absolute http(s) URL.`);
  }
  if (!core.webhooks.allow(url)) {
    throw invalidInput(`graphdock: ${what}: webhook "${webhook}" is not allowed by createRuntime's webhooks.allow.`);
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

function mergeContext(assistantContext: unknown, runContext: unknown): unknown {
  if (runContext === undefined) return assistantContext;
  if (isPlainObject(assistantContext) && isPlainObject(runContext)) return { ...assistantContext, ...runContext };
  return runContext;
}

/**
 * Config merge assistant -> thread -> run, `configurable` key-wise; the thread's
 * config holds only what carries over (`carriedConfig`). The ids are forced into
 * `configurable` and the user lands per D12.
 */
function runConfig(
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

export interface CheckedRun {
  assistant: AssistantRecord;
  graph: CompiledGraph;
  input: unknown;
  breakpoints: Breakpoints;
}

/**
 * What a run is checked for before its thread is looked at, writing nothing: the webhook
 * (opt-in), the assistant (`assistants:read` unless a default one) and the static part of the
 * graph's input checks (`validateInput` without state).
 */
export async function checkRun(core: Core, caller: Caller, threadIdArg: string | null, assistantIdArg: string, p: RunOptions, what: string): Promise<CheckedRun> {
  if (p.webhook !== undefined) allowedWebhook(core, p.webhook, what);
  const assistant = await runnableAssistant(core, caller, assistantIdArg);
  // A graph factory gets the assistant's config under the request's (the run's own config,
  // with its ids, is what the factory gets when the run executes).
  // (Built only for a factory: a compiled graph needs no config.)
  const graph = await core.graph(assistant.graph_id, () => ({
    ...assistant.config,
    ...p.config,
    configurable: {
      ...withoutAuthKeys(assistant.config?.configurable),
      ...withoutAuthKeys(p.config?.configurable),
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
      ...(threadIdArg !== null ? { thread_id: threadIdArg } : {}),
    },
  }));
  if (threadIdArg === null && p.command?.resume !== undefined) {
    throw invalidInput(`graphdock: ${what}: a resume command needs a thread id; a stateless run has no interrupt to resume.`);
  }
  if (checkpointNsOf(p.checkpoint) !== undefined) {
    throw invalidInput(
      `graphdock: ${what}: runs start from a checkpoint of the root graph, and checkpoint_ns names a subgraph's. ` +
        `To continue a subgraph, run the parent (a null input, or Command({ resume })); to change its state, use threads.updateState with that checkpoint.`,
    );
  }
  const input = toEngineInput(p);
  const breakpoints = breakpointsOf({ interrupt_before: p.interruptBefore, interrupt_after: p.interruptAfter });
  await graph.validateInput(input, undefined, breakpoints);
  // A declared context schema checks the context the run will get (assistant's under the run's).
  await graph.validateContext?.(mergeContext(assistant.context, p.context));
  return { assistant, graph, input, breakpoints };
}

/** A run as stored by its admission, with the thread it was admitted on. */
export interface Admitted {
  /** The run as created (`pending`). */
  run: RunRecord;
  /** The run as stored when its admission also claimed it for this runtime (`running`): start it. */
  claimed: RunRecord | undefined;
  thread: ThreadRecord;
  previousStatus: ThreadRecord["status"] | null;
}

/**
 * Creates a run: authorizes `threads:create_run`, resolves assistant and thread,
 * applies the multitask strategy (D9) and writes thread and run in one conditional commit, so
 * two runtimes admitting runs on one thread at once cannot both see it idle. `interrupt` and
 * `rollback` end the thread's pending runs in that commit and ask the executing runtime to
 * cancel the running one (a persisted cancel request); the new run starts after them.
 */
export async function admitRun(
  core: Core,
  caller: Caller,
  threadIdArg: string | null,
  assistantIdArg: string,
  p: RunOptions,
  what: string,
  runId: string = core.ids.uuid(),
  /**
   * More ops for the commit that enqueues the run, asked for on every attempt (a cron's tick
   * claim): they succeed or fail with the run. To give up, it throws (not `LostRace`).
   */
  withOps?: () => Promise<readonly WriteOp[]>,
): Promise<Admitted> {
  const strategy: MultitaskStrategy = p.multitaskStrategy ?? core.defaultStrategy;
  // Kept with the run and (its messages) the thread: ropes become flat strings (../flat-strings.ts).
  flattenStrings(p.input);
  const kwargs: Record<string, unknown> = {
    input: p.input ?? null,
    command: p.command ?? null,
    config: { ...(p.config ?? {}), configurable: withoutAuthKeys(p.config?.configurable) },
    context: p.context ?? {},
    stream_mode: asModes(p.streamMode),
    interrupt_before: p.interruptBefore ?? null,
    interrupt_after: p.interruptAfter ?? null,
    checkpoint_id: p.checkpointId ?? checkpointIdOf(p.checkpoint) ?? null,
    webhook: p.webhook ?? null,
    feedback_keys: p.feedbackKeys ?? null,
    subgraphs: p.streamSubgraphs ?? false,
    resumable: p.streamResumable ?? false,
    on_disconnect: p.onDisconnect ?? "continue",
    after_seconds: p.afterSeconds ?? 0,
    // Only when given (runtime/durability.ts; the default is async).
    ...(p.durability !== undefined ? { durability: p.durability } : {}),
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
  // The thread is read at once, alongside the assistant (`checkRun`): a store that batches reads
  // issued together (IndexedDB) serves both in one transaction. The read is used by the first
  // attempt below only when no other admission of the thread was under way here when it was made
  // or is when that attempt starts (otherwise it is read again); a thread changed meanwhile by
  // anyone else fails the commit's `sameAs` expectation, and the next attempt reads it again.
  const threadKeyArg = threadIdArg === null ? undefined : threadKey(threadIdArg);
  let early = threadKeyArg !== undefined && !core.mutex.held(threadKeyArg) ? core.store.getThread(threadIdArg!) : undefined;
  early?.catch(ignore);
  const { assistant, graph, input, breakpoints } = await checkRun(core, caller, threadIdArg, assistantIdArg, p, what);
  const threadId = threadIdArg ?? core.ids.uuid();
  const temporary = threadIdArg === null && (p.onCompletion ?? "delete") !== "keep" && p.onCompletion !== "continue";
  const checkpointId = p.checkpointId ?? checkpointIdOf(p.checkpoint);
  const user = core.auth ? await caller.user() : undefined;
  // Where the run's trace continues: the span current here, else the caller's traceparent (D90).
  const pending = core.tracing?.tracer();
  const tracing = pending instanceof Promise ? await pending : pending;
  const trace = tracing ? tracing.parentOf(caller.trace) : core.tracing && caller.trace;

  // One admission per thread at a time in this runtime (no self-inflicted retries); across
  // runtimes the conditional commit decides.
  let fastClaim = true;
  if (early && core.mutex.held(threadKey(threadId))) early = undefined;
  return core.mutex.run(threadKey(threadId), () =>
    retryLostRaces(async () => {
      const read = early;
      early = undefined;
      let stored = threadIdArg === null ? undefined : await (read ?? core.store.getThread(threadId));
      const existed = stored !== undefined;
      const thread = stored && matchesAuthFilter(stored.metadata, filter) ? stored : undefined;
      const now = core.now();
      if (existed && !thread) throw notFound(`graphdock: thread ${threadId} not found.`);
      if (!thread && threadIdArg !== null && (p.ifNotExists ?? "reject") !== "create") {
        throw notFound(`graphdock: thread ${threadId} not found. Create it first or pass ifNotExists: "create".`);
      }
      const base: ThreadRecord = thread ?? {
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
      await core.requireCheckpoint(threadId, checkpointId);
      // A thread has runs in flight exactly while it is busy (every commit that changes one
      // changes the other), so an idle thread needs no look at the queue.
      const inFlight = thread?.status === "busy" ? await core.store.queryRuns({ thread_id: threadId, status: IN_FLIGHT, sortBy: "queue" }) : [];
      // Against the thread's state (a resume needs a pending interrupt) only when no run ahead
      // of this one may still change it; the static checks passed in `checkRun` and the named
      // checkpoint exists (`requireCheckpoint`), so only a resume has anything left to check.
      if (!inFlight.length && p.command?.resume !== undefined) {
        await graph.validateInput(input, { store: core.store, threadId, ...(checkpointId !== undefined ? { checkpointId } : {}) }, breakpoints);
      }
      if (inFlight.length && strategy === "reject") {
        throw conflict(
          `graphdock: thread ${threadId} is already running run ${inFlight[0]!.run_id}. Wait for it, cancel it, or choose multitaskStrategy "enqueue", "interrupt" or "rollback".`,
        );
      }
      const config = runConfig(assistant, base, p, { runId, threadId, user, metadata: runMetadata });
      const run: RunRecord = {
        run_id: runId,
        thread_id: threadId,
        assistant_id: assistant.assistant_id,
        created_at: now,
        updated_at: now,
        status: "pending",
        metadata: sharedIfEmpty(runMetadata),
        // Assigned onto a fresh object, not spread: a spread copy gets a hidden class of its own, kept
        // with every stored run (about 1 KB a run). Its empty parts are shared (./shared-values.ts).
        kwargs: shareKwargs(Object.assign({}, kwargs, { temporary })),
        multitask_strategy: strategy,
        attempt: 1,
        execution: {
          graph_id: assistant.graph_id,
          config,
          context: mergeContext(assistant.context, p.context),
          temporary,
          not_before: core.clock() + (p.afterSeconds ?? 0) * 1000,
          ...(trace ? { trace } : {}),
        },
      };
      // The thread keeps its last run's merged config for the next run (JS only when not busy).
      const next: ThreadRecord = {
        ...base,
        status: "busy",
        updated_at: now,
        metadata: { ...base.metadata, graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
        config: base.status === "busy" ? base.config : carriedConfig(config),
      };
      // With nothing ahead of it, the run is claimed in the same commit (the lease taken, the run
      // marked running), so this runtime starts it at once without another round trip.
      const nowMs = core.clock();
      const claim = fastClaim && !inFlight.length && run.execution!.not_before <= nowMs;
      const admitted: RunRecord = claim ? { ...run, status: "running" } : run;
      const ops: WriteOp[] = [
        { op: "thread.put", thread: next, expect: thread ? { sameAs: thread } : { exists: false } },
        { op: "run.put", run: admitted, expect: { exists: false } },
      ];
      // Thread streams (thread-stream.ts) and other runtimes on the store (./external-runs.ts)
      // learn of the run from this notify.
      ops.push(runCreatedNotice(core, threadId, runId));
      if (claim) {
        ops.push({
          op: "lease.put",
          lease: { key: threadKey(threadId), owner: core.owner, expires_at: nowMs + core.leaseMs, data: { run_id: runId } },
          expect: { state: "free", now: nowMs },
        });
      }
      if (withOps) ops.push(...(await withOps()));
      // A thread a run creates gets the runtime's default TTL (D94).
      const ttl = !thread && !temporary && core.threadTtl?.defaultTtl !== undefined ? threadTtlOf(undefined, core.threadTtl) : undefined;
      if (ttl) ops.push(expiryOp(threadId, ttl, nowMs));
      // D9: interrupt / rollback end every in-flight run; the new one starts after them.
      if (strategy === "interrupt" || strategy === "rollback") {
        for (const old of inFlight) {
          if (old.status === "pending") {
            ops.push(
              strategy === "rollback"
                ? { op: "run.delete", run_id: old.run_id, expect: { status: ["pending"] } }
                : { op: "run.put", run: { ...withoutExecution(old), status: "interrupted", updated_at: now }, expect: { status: ["pending"] } },
              { op: "notify", topic: `run:${old.run_id}`, payload: strategy === "rollback" ? "deleted" : "interrupted" },
            );
          } else {
            ops.push(
              { op: "cancel.put", request: { run_id: old.run_id, thread_id: threadId, action: strategy, requested_at: now } },
              { op: "notify", topic: `cancel:${old.run_id}`, payload: strategy },
            );
          }
        }
      }
      try {
        await commitIf(core.store, ops);
      } catch (err) {
        // The lease may be held without a run (a state update): admit the run as queued instead.
        if (err instanceof LostRace && claim) fastClaim = false;
        throw err;
      }
      // Runs ended before they started: their (empty) event logs end, so their readers end too.
      if (strategy === "interrupt" || strategy === "rollback") {
        for (const old of inFlight) if (old.status === "pending") await endEmptyLog(core, old.run_id);
      }
      return { run, claimed: claim ? admitted : undefined, thread: next, previousStatus: thread ? thread.status : null };
    }),
  );
}

/** Ends the event log of a run that never started (cancelled or rolled back while pending). */
export async function endEmptyLog(core: Core, runId: string): Promise<void> {
  await core.store.events.open(runId, { resumable: false });
  await core.store.events.end(runId);
}
