/**
 * What every namespace of one runtime shares: the store, the graphs, ids and clock, the auth
 * hook, the lifecycle emitter, this runtime's identity on the store (lease owner) and its keyed
 * mutex. Namespaces are bound to a `Caller`.
 */
import { EventEmitter } from "eventemitter3";
import { conflict, notFound } from "../errors.js";
import type { AuthAction, AuthFilter, AuthProvider, AuthResource, AuthUser } from "../auth/types.js";
import { matchesAuthFilter } from "../auth/types.js";
import type { CompiledGraph, RunnableConfig } from "../graph/types.js";
import type { ItemStore } from "../items/types.js";
import { defaultAssistantId, uuid4, type Clock, type Ids } from "../ids.js";
import type { Store } from "../persistence/types.js";
import type { AssistantRecord, MultitaskStrategy, ThreadRecord } from "../types.js";
import { KeyedMutex } from "../mutex.js";
import type { LazyTracing } from "../otel/tracing.js";
import type { TraceCarrier } from "../otel/w3c.js";
import type { ThreadTtlConfig } from "./thread-ttl.js";
import { SILENT, type DiagnosticsLogger } from "../diagnostics.js";
import { instantiate, type ResolvedEntry } from "./graph-source.js";
import type { RuntimeEvent, WebhookOptions } from "./types.js";

/** Who is calling: resolved lazily, so the unbound runtime authenticates on every call (D13). */
export interface Caller {
  user(): Promise<AuthUser>;
  /** The span the caller's request names (its `traceparent`): the parent of the runs it creates. */
  readonly trace?: TraceCarrier;
}

export class Core {
  readonly emitter = new EventEmitter<{ event: [RuntimeEvent] }>();
  readonly mutex = new KeyedMutex();
  /** This runtime's id as a lease owner on the store. */
  readonly owner: string;
  closed = false;
  /** Long-term memory as graph nodes get it (`ctx.store`, trusted); set by `createRuntime`. */
  itemStore: ItemStore | undefined;
  /** Traces runs (src/otel); undefined when `createRuntime({ tracing: false })`. */
  tracing: LazyTracing | undefined;
  /** Threads' default TTL and its sweep (`createRuntime({ threadTtl })`), when configured. */
  threadTtl: ThreadTtlConfig | undefined;
  /** graphdock's own diagnostics (`createRuntime({ diagnostics })`; silent without it: D92). */
  log: DiagnosticsLogger = SILENT;
  /** Called once when the runtime closes (open thread streams end). */
  readonly onClose = new Set<() => void>();
  /** Aborted when the runtime closes: calls still waiting on the store stop (`conflict`). */
  private readonly closer = new AbortController();
  /** Calls waiting on the store that hold the process open (`hold`), and the timer that does it. */
  private holds = 0;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private readonly defaultAssistantIds: ReadonlySet<string>;
  /** Graph id -> its default assistant's id (a uuid5, costly to hash on every run). */
  private readonly defaultAssistantOf: ReadonlyMap<string, string>;

  constructor(
    readonly store: Store,
    /** Graph id -> compiled graph or factory (graph-source.ts). */
    readonly graphs: ReadonlyMap<string, ResolvedEntry>,
    readonly ids: Ids,
    readonly clock: Clock,
    readonly auth: AuthProvider | undefined,
    readonly defaultStrategy: MultitaskStrategy,
    readonly webhooks: WebhookOptions | undefined,
    /** How long a run's lease lasts without renewal (ms): a stopped runtime's runs are resumed after it. */
    readonly leaseMs: number,
    /** Attempts a run may make before a cut-off ends it `error` (drains not counted; D61). */
    readonly maxAttempts: number,
  ) {
    // Not from the injected ids: those are the records' (D19), and this is no record.
    this.owner = uuid4();
    this.defaultAssistantOf = new Map([...graphs.keys()].map((g) => [g, defaultAssistantId(g)]));
    this.defaultAssistantIds = new Set(this.defaultAssistantOf.values());
  }

  private lastMs = NaN;
  private lastIso = "";

  /** ISO time of the injected clock (D19); formatted once per clock value (a run asks several times a millisecond). */
  now(): string {
    const ms = this.clock();
    if (ms !== this.lastMs) {
      this.lastIso = new Date(ms).toISOString();
      this.lastMs = ms;
    }
    return this.lastIso;
  }

  /** Aborted (with a `conflict`) when the runtime closes. */
  get closeSignal(): AbortSignal {
    return this.closer.signal;
  }

  /**
   * Holds the process open while a call waits on the store (D63): a `runs.wait`, `join` or
   * stream whose run executes elsewhere waits on notifications, which keep nothing alive in
   * Node, so a script whose only work is such a wait would exit mid-way. One timer, referenced
   * while any call holds it (no timer per call); nothing in browsers. Returns the release.
   */
  hold(): () => void {
    if (this.closed) return () => undefined;
    if (this.holds++ === 0) {
      this.keepAlive ??= setInterval(() => undefined, 2 ** 31 - 1);
      (this.keepAlive as { ref?: () => void }).ref?.();
    }
    let held = true;
    return () => {
      if (!held || this.closed) return;
      held = false;
      if (--this.holds === 0 && this.keepAlive !== undefined) (this.keepAlive as { unref?: () => void }).unref?.();
    };
  }

  /** Marks the runtime closed: waiting calls stop and nothing holds the process open any more. */
  close(): void {
    this.closed = true;
    this.closer.abort(conflict("graphdock: the runtime closed while this call was waiting; call again on a new createRuntime() (a run still in flight goes on there)."));
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    this.holds = 0;
  }

  emit(event: RuntimeEvent): void {
    this.emitter.emit("event", event);
  }

  /** True when a lifecycle listener is subscribed: emitters skip building events nobody reads. */
  get listening(): boolean {
    return this.emitter.listenerCount("event") > 0;
  }

  /**
   * Calls `auth.authorize` for one authorization point before any existence check.
   * Without auth nothing is called and nothing is filtered. `value` may be mutated by the
   * handler; callers read it back.
   */
  async authorize(
    caller: Caller,
    resource: AuthResource,
    action: AuthAction,
    value: Record<string, unknown>,
  ): Promise<AuthFilter | undefined> {
    // Every method authorizes first, so this is also where calls on a closed runtime stop.
    if (this.closed) throw conflict(`graphdock: this runtime is closed; ${resource}:${action} needs a new createRuntime().`);
    if (!this.auth) return undefined;
    const user = await caller.user();
    return this.auth.authorize(user, { resource, action, value });
  }

  /** True for the default (system) assistant of a registered graph (D5). */
  isDefaultAssistant(assistantId: string): boolean {
    return this.defaultAssistantIds.has(assistantId);
  }

  /** A registered graph id names its default assistant (D5); anything else is used as is. */
  resolveAssistantId(id: string): string {
    return this.defaultAssistantOf.get(id) ?? id;
  }

  /** The assistant, or `not_found` when missing or hidden by the filter. */
  async visibleAssistant(assistantId: string, filter: AuthFilter | undefined): Promise<AssistantRecord> {
    const id = this.resolveAssistantId(assistantId);
    const assistant = await this.store.getAssistant(id);
    if (!assistant || !matchesAuthFilter(assistant.metadata, filter)) {
      // Worded as the agent server words it ("No assistant found for"): clients match on it.
      throw notFound(`graphdock: No assistant found for "${assistantId}". Pass an assistant id or a registered graph id (${[...this.graphs.keys()].join(", ")}).`);
    }
    return assistant;
  }

  /** The thread, or `not_found` when missing or hidden by the filter. */
  async visibleThread(threadId: string, filter: AuthFilter | undefined): Promise<ThreadRecord> {
    const thread = await this.store.getThread(threadId);
    if (!thread || !matchesAuthFilter(thread.metadata, filter)) throw notFound(`graphdock: thread ${threadId} not found.`);
    return thread;
  }

  /** `not_found` unless the thread has the checkpoint (a fork or state read from it). */
  async requireCheckpoint(threadId: string, checkpointId: string | undefined): Promise<void> {
    if (checkpointId !== undefined && !(await this.store.getCheckpoint({ thread_id: threadId, checkpoint_id: checkpointId }))) {
      throw notFound(`graphdock: checkpoint ${checkpointId} of thread ${threadId} not found.`);
    }
  }

  /** `not_found` unless `graphId` is registered (nothing is built). */
  requireGraph(graphId: string): ResolvedEntry {
    const entry = this.graphs.get(graphId);
    if (!entry) throw notFound(`graphdock: graph "${graphId}" not found. Registered graphs: ${[...this.graphs.keys()].join(", ") || "none"}.`);
    return entry;
  }

  /**
   * The compiled graph of `graphId` for one use; a factory is called with `config` (a run's
   * merged config, or the thread's / assistant's config with its ids for reads). `config` may be
   * a function making it: it is called only for a factory.
   */
  async graph(graphId: string, config?: Partial<RunnableConfig> | (() => Partial<RunnableConfig>)): Promise<CompiledGraph> {
    const entry = this.requireGraph(graphId);
    // A compiled graph is the same for every use: no config is made for it.
    if (entry.kind === "compiled") return entry.graph;
    const made = typeof config === "function" ? config() : config;
    return instantiate(graphId, entry, { ...made, configurable: { ...made?.configurable } });
  }
}
