/**
 * Public types of the runtime (D1): `createRuntime` returns a `Runtime` whose `assistants`,
 * `threads` and `runs` namespaces have the method names, positional arguments and camelCase
 * options of the official `@langchain/langgraph-sdk` `Client`, and return the snake_case records
 * of the HTTP API (D2). Record types are typed as the SDK types them, so code written against the
 * SDK compiles unchanged against a runtime.
 */
import type { AuthProvider, AuthUser } from "../auth/types.js";
import type { IndexConfig, ItemStore } from "../items/types.js";
import type { CheckpointRef, DrawableGraph, GraphSchemas, TaskView } from "../graph/types.js";
import type { Clock, Ids } from "../ids.js";
import type { CheckpointMetadata, Store } from "../persistence/types.js";
import type { createUploadApi } from "../upload/api.js";
import type { CronsApi } from "./cron-types.js";
import type { AssistantDefaults } from "./assistant-defaults.js";
import type { GraphEntry } from "./graph-source.js";
import type { SdkLogger } from "./sdk-logger.js";
import type { TracingOptions } from "../otel/run-trace.js";
import type { DiagnosticsLogger } from "../diagnostics.js";
import type { ItemTtlConfig } from "./items.js";
import type { ThreadTtlConfig } from "./thread-ttl.js";
import type {
  AssistantRecord,
  AssistantVersionRecord,
  Config,
  Interrupt,
  Metadata,
  MultitaskStrategy,
  RunRecord,
  RunStatus,
  ThreadRecord,
  ThreadStatus,
} from "../types.js";

// ---------------------------------------------------------------------------------------------
// Records as returned by the namespaces.

/** An assistant, as the agent server returns it: `description` is `null` when unset. */
export type Assistant = AssistantRecord;
/** One stored version of an assistant (D6). */
export type AssistantVersion = AssistantVersionRecord;

/** A thread. `values` is its latest state; `threads.search` leaves it out (D8): see `ThreadSummary`. */
export type Thread<Values = Record<string, unknown>> = Omit<ThreadRecord, "values"> & { values: Values };
/** A thread as `threads.search` returns it without `select`: every field but `values` (D8). */
export type ThreadSummary = Omit<ThreadRecord, "values">;

/** A checkpoint pointer (`{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`), the engine's `CheckpointRef`. */
export type CheckpointConfig = { [K in keyof CheckpointRef]: CheckpointRef[K] };

/** A task of a snapshot; `state` is a nested snapshot for subgraph tasks. */
export type ThreadTask = Omit<TaskView, "state"> & { state: ThreadState | null };

/**
 * A state snapshot (D7). A thread without checkpoints (never run) has `checkpoint: null`,
 * `metadata: null` and `values: {}` (the React hook relies on the latter).
 */
export interface ThreadState<Values = Record<string, unknown>> {
  values: Values;
  next: string[];
  tasks: ThreadTask[];
  metadata: (CheckpointMetadata & { thread_id: string; checkpoint_id: string }) | null;
  created_at: string | null;
  checkpoint: CheckpointConfig | null;
  parent_checkpoint: CheckpointConfig | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  interrupts: Interrupt[];
}

/** A state at one of the thread's checkpoints (a history entry): `checkpoint` is set. */
export type CheckpointState<Values = Record<string, unknown>> = ThreadState<Values> & { checkpoint: CheckpointConfig; checkpoint_id: string };

/** A run as callers see it (its internal `execution` part left out), with its `attempt` (D60). */
export type Run = Omit<RunRecord, "execution" | "attempt"> & { attempt: number };

/** `assistants.getSchemas` result. */
export type GraphSchema = GraphSchemas & { graph_id: string };
/**
 * One subgraph's schemas (`assistants.getSubgraphs`): a `GraphSchema`, and the same schemas under
 * the keys the JS agent server answers with (`state`, `input`, `output`, `config`).
 */
export type SubgraphSchema = GraphSchema & {
  state: GraphSchemas["state_schema"];
  input: GraphSchemas["input_schema"];
  output: GraphSchemas["output_schema"];
  config: GraphSchemas["config_schema"];
};
/** `assistants.getGraph` result: the engine's `DrawableGraph`. */
export interface AssistantGraph {
  nodes: Array<{ id: string; type: DrawableGraph["nodes"][number]["type"]; data?: Record<string, unknown> | string; metadata?: unknown }>;
  edges: Array<{ source: string; target: string; data?: string; conditional?: boolean }>;
}

// ---------------------------------------------------------------------------------------------
// Streaming.

/**
 * Stream modes a run accepts. `messages-tuple` events are named `messages`; the
 * legacy `messages` mode sends `messages/metadata`, `messages/partial` and `messages/complete`;
 * `events` sends LangChain stream-events v2 objects. `tools` and `lifecycle` are accepted for SDK
 * compatibility and produce no events. With `streamSubgraphs`, subgraph events are named
 * `<mode>|<namespace>`.
 */
export type StreamMode =
  | "values"
  | "updates"
  | "messages-tuple"
  | "messages"
  | "custom"
  | "tasks"
  | "checkpoints"
  | "debug"
  | "events"
  | "tools"
  | "lifecycle";

/**
 * One event of a run stream: `id` counts from `"0"` per run. The first is always `metadata`;
 * then the requested modes; `error` when the run fails (the stream then ends). There is no
 * terminal event: the iterable just ends.
 */
export type RunEvent =
  /** `{run_id, attempt}`, as the agent server sends it. */
  | { id: string; event: "metadata"; data: { run_id: string; attempt: number } }
  | { id: string; event: "values"; data: Record<string, unknown> }
  | { id: string; event: "updates"; data: Record<string, unknown> }
  | { id: string; event: "messages"; data: [message: Record<string, unknown>, metadata: Record<string, unknown>] }
  | { id: string; event: "custom"; data: unknown }
  | { id: string; event: "tasks"; data: Record<string, unknown> & { id: string; name: string } }
  | { id: string; event: "checkpoints"; data: Record<string, unknown> & { values: Record<string, unknown>; next: string[] } }
  | { id: string; event: "debug"; data: unknown }
  | { id: string; event: "error"; data: { error: string; message: string } }
  /** `events` mode: a LangChain stream-events v2 object. */
  | { id: string; event: "events"; data: StreamEventData }
  /** Legacy `messages` mode: the run metadata of a message, once, when its first chunk arrives. */
  | { id: string; event: "messages/metadata"; data: Record<string, { metadata: Record<string, unknown> }> }
  /** Legacy `messages` mode: the streamed message accumulated so far / messages the state gained. */
  | { id: string; event: "messages/partial" | "messages/complete"; data: Array<Record<string, unknown>> }
  /** A subgraph's event (with `streamSubgraphs`): `<mode>|<node>:<task id>[|...]`. */
  | { id: string; event: `${NamespacedMode}|${string}`; data: unknown };

/** Modes whose events a subgraph also sends, with its namespace in the event name. */
export type NamespacedMode = "values" | "updates" | "messages" | "custom" | "tasks" | "checkpoints" | "debug";

/**
 * One LangChain stream-events v2 object (`events` mode), as the LangGraph.js server sends it: the
 * graph's and each node's `on_chain_start` / `on_chain_end`, each router's (`RunnableLambda`),
 * a chat model's `on_chat_model_start` / `on_chat_model_stream` / `on_chat_model_end`, a tool's
 * `on_tool_start` / `on_tool_end` / `on_tool_error`, and whatever else a LangGraph.js graph's
 * runnables report (`on_custom_event`, `on_retriever_*`, ...). Messages in `data` are in
 * LangChain's `toDict()` form (`type: "ai"` for a chunk too).
 */
export interface StreamEventData {
  event: "on_chain_start" | "on_chain_end" | "on_chat_model_start" | "on_chat_model_stream" | "on_chat_model_end" | "on_tool_start" | "on_tool_end" | "on_tool_error" | (string & {});
  name: string;
  run_id: string;
  tags: string[];
  metadata: Record<string, unknown>;
  data: Record<string, unknown>;
  /** The enclosing runs' ids, outermost first: graphdock's own graphs give them (LangChain.js's events have none). */
  parent_ids?: string[];
}

/** The name of a `RunEvent`. */
export type RunEventName = RunEvent["event"];

// ---------------------------------------------------------------------------------------------
// Option types (camelCase, as in the SDK).

/** Metadata as options accept it (`null` is the same as absent, as the SDK allows). */
export type MetadataInput = Metadata | null;
export type SortOrder = "asc" | "desc";
export type AssistantSortBy = "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
export type ThreadSortBy = "thread_id" | "status" | "created_at" | "updated_at" | "state_updated_at";
/** Fields `threads.search` can `select` (`context` is accepted and absent from threads). */
export type ThreadSelectField = keyof ThreadRecord | "context";
export type AssistantSelectField = keyof AssistantRecord;
/** Fields `getState` / `getHistory` can `select`; `values.<key>` selects one state key (D28). */
export type ThreadStateSelectField =
  | "values"
  | "next"
  | "tasks"
  | "checkpoint"
  | "metadata"
  | "created_at"
  | "parent_checkpoint"
  | "interrupts"
  | "checkpoint_id"
  | "parent_checkpoint_id"
  | `values.${string}`;
export type RunSelectField = keyof RunRecord | "cancel_reason";
export type OnConflictBehavior = "raise" | "do_nothing";
export type CancelAction = "interrupt" | "rollback";

/** Every option accepts an `AbortSignal`, as in the SDK; it aborts the call (not a run). */
export interface CallOptions {
  signal?: AbortSignal;
}

/** `threads.getState` options besides `select`. */
export interface ThreadGetStateOptions extends CallOptions {
  /** Nest each subgraph's state in its task (`tasks[].state`). */
  subgraphs?: boolean;
}

export interface AssistantCreatePayload extends CallOptions {
  graphId: string;
  config?: Config;
  context?: unknown;
  metadata?: MetadataInput;
  assistantId?: string;
  ifExists?: OnConflictBehavior;
  name?: string;
  /** `null`: no description. */
  description?: string | null;
}

/** An update creates version max+1 built from exactly what is supplied (D6). */
export interface AssistantUpdatePayload extends CallOptions {
  graphId?: string;
  config?: Config;
  context?: unknown;
  metadata?: MetadataInput;
  name?: string;
  /** `null` clears it. */
  description?: string | null;
}

export interface AssistantSearchQuery extends CallOptions {
  graphId?: string;
  /** Case-insensitive substring of the name. */
  name?: string;
  /** JSON containment. */
  metadata?: MetadataInput;
  limit?: number;
  offset?: number;
  sortBy?: AssistantSortBy;
  sortOrder?: SortOrder;
  select?: AssistantSelectField[];
}

/** A superstep of `threads.create`, camelCase as in the SDK. */
export interface SuperstepPayload {
  updates: Array<{ values?: unknown; command?: RunCommand | null; asNode?: string }>;
}

export interface ThreadCreatePayload extends CallOptions {
  metadata?: MetadataInput;
  threadId?: string;
  ifExists?: OnConflictBehavior;
  /** Stored as `metadata.graph_id`. */
  graphId?: string;
  supersteps?: SuperstepPayload[];
  /**
   * Minutes the thread lives after its last write (or `{ ttl, strategy }`: `delete` removes it,
   * `keep_latest` keeps it and its latest checkpoints); default: `createRuntime({ threadTtl })`'s.
   */
  ttl?: number | { ttl: number; strategy?: "delete" | "keep_latest" };
}

export interface ThreadUpdatePayload extends CallOptions {
  /** Merged into the thread's metadata. */
  metadata?: MetadataInput;
  /** Sets the thread's time to live from now, as in `threads.create`. */
  ttl?: number | { ttl: number; strategy?: "delete" | "keep_latest" };
}

export interface ThreadSearchQuery extends CallOptions {
  metadata?: MetadataInput;
  ids?: string[];
  limit?: number;
  offset?: number;
  status?: ThreadStatus;
  sortBy?: ThreadSortBy;
  sortOrder?: SortOrder;
  select?: ThreadSelectField[];
  values?: Record<string, unknown>;
}

export interface ThreadCountQuery extends CallOptions {
  metadata?: MetadataInput;
  values?: unknown;
  status?: ThreadStatus;
}

/**
 * A checkpoint as calls name one (D27): its id, a selector, or a config holding its id (the
 * SDK's form). A selector without an id names the latest checkpoint of its namespace.
 */
export type CheckpointArg = string | CheckpointSelector | { configurable: { checkpoint_id: string; checkpoint_ns?: string } };

/** A checkpoint selector: `{checkpoint_id, checkpoint_ns?, checkpoint_map?}`. */
export interface CheckpointSelector {
  thread_id?: string;
  checkpoint_id?: string | null;
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, unknown> | null;
}

export interface UpdateStatePayload<Values = unknown> extends CallOptions {
  values: Values;
  /** The checkpoint to write after (default: the latest). */
  checkpoint?: CheckpointArg;
  checkpointId?: string;
  asNode?: string;
}

export interface HistoryQuery extends CallOptions {
  limit?: number;
  /** Entries older than this checkpoint (`{configurable: {checkpoint_id}}`, as the SDK sends it). */
  before?: CheckpointArg | Config;
  /** Start from this checkpoint (inclusive). */
  checkpoint?: CheckpointArg;
  /** Checkpoint metadata containment filter. */
  metadata?: MetadataInput;
  /** Only these fields of each state (`values.<key>`: one state key; D28). */
  select?: ThreadStateSelectField[];
}

/** A LangGraph `Command` as runs and supersteps take it. */
export interface RunCommand {
  update?: Record<string, unknown> | [string, unknown][] | null;
  resume?: unknown;
  goto?: RunSend | string | Array<RunSend | string>;
}
/** A `goto` target with its own input. */
export interface RunSend {
  node: string;
  input: unknown | null;
}

/** Options shared by every run-creating method (camelCase). */
export interface RunPayload extends CallOptions {
  /** The graph's input: any JSON value (a graphdock `StateGraph` takes an object of state keys). */
  input?: unknown;
  command?: RunCommand | null;
  metadata?: MetadataInput;
  config?: Config;
  context?: unknown;
  checkpointId?: string;
  /** Start from this checkpoint (a fork); `checkpointId` names it by id alone. */
  checkpoint?: CheckpointArg;
  interruptBefore?: "*" | string[];
  interruptAfter?: "*" | string[];
  multitaskStrategy?: MultitaskStrategy;
  ifNotExists?: "create" | "reject";
  /** Stateless runs: `delete` (default) removes the temporary thread when the run ends. */
  onCompletion?: "delete" | "keep" | "complete" | "continue";
  /** `cancel`: a consumer that stops reading the stream cancels the run. */
  onDisconnect?: "cancel" | "continue";
  /** Delay before the run may start. */
  afterSeconds?: number;
  streamMode?: StreamMode | StreamMode[];
  streamSubgraphs?: boolean;
  /** Keep every event so `joinStream` can replay from any id while the run is joinable. */
  streamResumable?: boolean;
  /**
   * When the run's checkpoints reach the store (docs/runtime.md, "Durability"): `"sync"` commits
   * each before the next step; `"async"` (default) and `"exit"` let the next step run while the
   * store writes, and the run ends only once everything it wrote is stored.
   */
  durability?: "exit" | "async" | "sync";
  checkpointDuring?: boolean;
  /** POSTed to when the run ends; needs `createRuntime({ webhooks })` allowing the URL. */
  webhook?: string;
  feedbackKeys?: string[];
  /** Called once the run exists, before its first event (SDK `onRunCreated`). */
  onRunCreated?: (params: { run_id: string; thread_id?: string }) => void;
}

export interface RunWaitPayload extends RunPayload {
  /** Default true: a failed run rejects with `Error("<error>: <message>")`, as the SDK. */
  raiseError?: boolean;
}

export interface RunListQuery extends CallOptions {
  limit?: number;
  offset?: number;
  status?: RunStatus;
  select?: RunSelectField[];
}

export interface JoinStreamOptions extends CallOptions {
  /** Replay events after this id (`"-1"`: from the first) for `streamResumable` runs. */
  lastEventId?: string;
  cancelOnDisconnect?: boolean;
  streamMode?: StreamMode | StreamMode[];
}

/** What `wait`/`join` resolve: the final values, or `{__error__}` when the run failed. */
export type RunResult = Record<string, unknown> & { __error__?: { error: string; message: string } };

// ---------------------------------------------------------------------------------------------
// `select` (D28): a result has the fields asked for.

/**
 * A record of which `select` kept the fields `S` names: exactly those when the call writes the
 * list out (`select: ["thread_id", "status"]`), any of them when `S` is an array type whose
 * members are not known. A name the record lacks (`context` on a thread) adds nothing.
 */
export type Selection<T, S extends readonly PropertyKey[]> = number extends S["length"]
  ? Partial<Pick<T, Extract<S[number], keyof T>>>
  : Pick<T, Extract<S[number], keyof T>>;

/** The state keys `values.<key>` fields name. */
type SelectedValueKeys<F> = F extends `values.${infer K}` ? K : never;

/**
 * A state snapshot of which `select` kept the fields `S` names; `values.<key>` fields make
 * `values` hold only those keys (each absent when the state lacks it).
 */
export type StateSelection<Values, S extends readonly ThreadStateSelectField[]> = number extends S["length"]
  ? Partial<Omit<ThreadState<Values>, "values">> & { values?: Partial<Values> }
  : Selection<ThreadState<Values>, S> &
      ("values" extends S[number]
        ? unknown
        : [SelectedValueKeys<S[number]>] extends [never]
          ? unknown
          : { values: { [K in SelectedValueKeys<S[number]>]?: K extends keyof Values ? Values[K] : unknown } });

// ---------------------------------------------------------------------------------------------
// Namespaces.

/** `runtime.assistants`: the SDK's `client.assistants`. */
export interface AssistantsApi {
  create(payload: AssistantCreatePayload): Promise<Assistant>;
  get(assistantId: string, options?: CallOptions): Promise<Assistant>;
  update(assistantId: string, payload: AssistantUpdatePayload): Promise<Assistant>;
  /**
   * Removes the assistant and all its versions (D6); `deleteThreads` also its threads. A graph's
   * default assistant cannot be deleted (`conflict`).
   */
  delete(assistantId: string, options?: CallOptions & { deleteThreads?: boolean }): Promise<void>;
  search(query: AssistantSearchQuery & { includePagination: true; select?: undefined }): Promise<{ assistants: Assistant[]; next: string | null }>;
  search(query?: AssistantSearchQuery & { includePagination?: false; select?: undefined }): Promise<Assistant[]>;
  /** With `select`: only the fields named (D28). */
  search<const S extends readonly AssistantSelectField[] = readonly AssistantSelectField[]>(
    query: Omit<AssistantSearchQuery, "select"> & { includePagination: true; select?: S },
  ): Promise<{ assistants: Selection<Assistant, S>[]; next: string | null }>;
  search<const S extends readonly AssistantSelectField[] = readonly AssistantSelectField[]>(
    query?: Omit<AssistantSearchQuery, "select"> & { includePagination?: false; select?: S },
  ): Promise<Selection<Assistant, S>[]>;
  count(query?: CallOptions & { metadata?: MetadataInput; graphId?: string; name?: string }): Promise<number>;
  /** Newest version first. */
  getVersions(
    assistantId: string,
    payload?: CallOptions & { metadata?: MetadataInput; limit?: number; offset?: number },
  ): Promise<AssistantVersion[]>;
  setLatest(assistantId: string, version: number, options?: CallOptions): Promise<Assistant>;
  getGraph(assistantId: string, options?: CallOptions & { xray?: boolean | number }): Promise<AssistantGraph>;
  getSchemas(assistantId: string, options?: CallOptions): Promise<GraphSchema>;
  /**
   * Schemas of the assistant's subgraphs, keyed by namespace without task ids (nested ones joined
   * with `|`, e.g. `outer|inner`): the direct ones, all levels with `recurse`, or only the one at
   * `namespace` (a nested one needs `recurse`). `{}` for a graph without subgraphs.
   */
  getSubgraphs(assistantId: string, options?: CallOptions & { namespace?: string; recurse?: boolean }): Promise<Record<string, SubgraphSchema>>;
}

/** `runtime.threads`: the SDK's `client.threads`. */
export interface ThreadsApi {
  create<Values = Record<string, unknown>>(payload?: ThreadCreatePayload): Promise<Thread<Values>>;
  get<Values = Record<string, unknown>>(threadId: string, options?: CallOptions & { include?: string[] }): Promise<Thread<Values>>;
  update(threadId: string, payload?: ThreadUpdatePayload & { returnMinimal?: false }): Promise<Thread>;
  update(threadId: string, payload: ThreadUpdatePayload & { returnMinimal: true }): Promise<void>;
  update(threadId: string, payload: ThreadUpdatePayload & { returnMinimal: boolean }): Promise<Thread | void>;
  delete(threadId: string, options?: CallOptions): Promise<void>;
  /**
   * Prunes threads: `delete` (the default) removes them as `delete` does, `keep_latest` keeps each
   * thread and the latest checkpoint of each namespace. Threads the caller may not see, missing
   * ones and (for `keep_latest`) busy ones are skipped; resolves how many were pruned.
   */
  prune(threadIds: string[], options?: CallOptions & { strategy?: "delete" | "keep_latest" }): Promise<{ pruned_count: number }>;
  /** Without `select`, threads without their `values` (D8). */
  search(query?: ThreadSearchQuery & { select?: undefined }): Promise<ThreadSummary[]>;
  /** With `select`: only the fields named (D28). */
  search<Values = Record<string, unknown>, const S extends readonly ThreadSelectField[] = readonly ThreadSelectField[]>(
    query?: Omit<ThreadSearchQuery, "select"> & { select?: S },
  ): Promise<Selection<Thread<Values>, S>[]>;
  count(query?: ThreadCountQuery): Promise<number>;
  /** A new independent thread with the same history (runs are not copied). */
  copy<Values = Record<string, unknown>>(threadId: string, options?: CallOptions): Promise<Thread<Values>>;
  /** The thread's latest state, or its state at `checkpoint`. */
  getState<Values = Record<string, unknown>>(
    threadId: string,
    checkpoint?: CheckpointArg,
    options?: ThreadGetStateOptions & { select?: undefined },
  ): Promise<ThreadState<Values>>;
  /** With `select`: only the named fields (`values.<key>`: one state key; D28). */
  getState<Values = Record<string, unknown>, const S extends readonly ThreadStateSelectField[] = readonly ThreadStateSelectField[]>(
    threadId: string,
    checkpoint?: CheckpointArg,
    options?: ThreadGetStateOptions & { select?: S },
  ): Promise<StateSelection<Values, S>>;
  /** Resolves the new checkpoint, as `checkpoint` (the HTTP body) and `configurable` (the SDK's type). */
  updateState<Values = unknown>(
    threadId: string,
    options: UpdateStatePayload<Values>,
  ): Promise<{ checkpoint: CheckpointConfig; configurable: CheckpointConfig }>;
  /** The thread's states, newest first. */
  getHistory<Values = Record<string, unknown>>(threadId: string, options?: HistoryQuery & { select?: undefined }): Promise<CheckpointState<Values>[]>;
  /** With `select`: only the named fields of each state (D28). */
  getHistory<Values = Record<string, unknown>, const S extends readonly ThreadStateSelectField[] = readonly ThreadStateSelectField[]>(
    threadId: string,
    options?: Omit<HistoryQuery, "select"> & { select?: S },
  ): Promise<StateSelection<Values, S>[]>;
  /**
   * Merges `metadata` into the metadata of the thread's latest checkpoint (`PATCH
   * /threads/{id}/state`). `conflict` while a run is in flight.
   */
  patchState(threadIdOrConfig: string | { configurable: { thread_id: string } }, metadata: Metadata, options?: CallOptions): Promise<void>;
  /**
   * Every run on the thread as one stream that stays open (`GET /threads/{id}/stream`): the runs
   * in flight, then each run created afterwards, each starting with its `metadata` event. Ids are
   * `<run id>:<event id>`; `lastEventId` resumes after one (`"-"`: replay every retained run
   * first). Only the `run_modes` stream mode is served. Ends when the caller stops reading, its
   * signal aborts or the runtime closes; `ready` settles once it is attached (or refused).
   */
  joinStream(
    threadId: string,
    options?: CallOptions & { lastEventId?: string; streamMode?: ThreadStreamMode | ThreadStreamMode[] },
  ): AsyncGenerator<RunEvent> & { ready: Promise<void> };
}

/** Modes of a thread stream (the SDK's `ThreadStreamMode`); graphdock serves `run_modes`. */
export type ThreadStreamMode = "run_modes" | "lifecycle" | "state_update";

/** `runtime.runs`: the SDK's `client.runs`. */
export interface RunsApi {
  /**
   * Creates a run and streams its events. Errors before the run exists (unknown assistant,
   * multitask `reject`, bad input) reject the first `next()`, before any event.
   */
  stream(threadId: string | null, assistantId: string, payload?: RunPayload): AsyncGenerator<RunEvent>;
  /** Creates a background run (status `pending`). */
  create(threadId: string | null, assistantId: string, payload?: RunPayload): Promise<Run>;
  createBatch(payloads: Array<RunPayload & { assistantId: string }>, options?: CallOptions): Promise<Run[]>;
  /** Creates a run and resolves its final values (from the latest checkpoint). */
  wait(threadId: string | null, assistantId: string, payload?: RunWaitPayload): Promise<RunResult>;
  /** Newest first. */
  list(threadId: string, options?: RunListQuery & { select?: undefined }): Promise<Run[]>;
  /** With `select`: only the fields named. */
  list<const S extends readonly RunSelectField[] = readonly RunSelectField[]>(
    threadId: string,
    options?: Omit<RunListQuery, "select"> & { select?: S },
  ): Promise<Selection<Run, S>[]>;
  get(threadId: string, runId: string, options?: CallOptions): Promise<Run>;
  /** Cancels a pending or running run; `rollback` also deletes it and its checkpoints (D9). */
  cancel(threadId: string, runId: string, wait?: boolean, action?: CancelAction, options?: CallOptions): Promise<void>;
  /** Waits for the run to finish and resolves its final values, or `{__error__}`. */
  join(threadId: string, runId: string, options?: CallOptions & { cancelOnDisconnect?: boolean }): Promise<RunResult>;
  /** Attaches to a run's events (replaying from `lastEventId` for resumable runs). */
  joinStream(threadId: string | null | undefined, runId: string, options?: JoinStreamOptions | AbortSignal): AsyncGenerator<RunEvent>;
  delete(threadId: string, runId: string, options?: CallOptions): Promise<void>;
}

type UploadNamespaces = ReturnType<typeof createUploadApi>;

/** The SDK-shaped object, bound to one caller (`runtime.client(...)`) or the default caller. */
export interface RuntimeClient {
  assistants: AssistantsApi;
  threads: ThreadsApi;
  runs: RunsApi;
  /** Scheduled runs: the SDK's `client.crons`. */
  crons: CronsApi;
  /** Experiment upload and reading, scoped to the caller's tenant (mounted from `createUploadApi`). */
  experiments: UploadNamespaces["experiments"];
  datasets: UploadNamespaces["datasets"];
  /** Long-term memory shared across threads (the SDK's `client.store`), authorized as resource `store`. */
  store: ItemStore;
  /**
   * The caller this client is bound to, as the auth handler identified it (the owner without
   * auth), for code that keeps per-user data of its own (the AI SDK endpoint's chat ids). Not a
   * member of the SDK's `Client`.
   */
  whoami(): Promise<AuthUser>;
}

// ---------------------------------------------------------------------------------------------
// Lifecycle events.

/** Lifecycle events delivered to `runtime.subscribe` listeners. */
export type RuntimeEvent =
  | { type: "run.created"; run: Run }
  | {
      type: "run.started";
      run: Run;
      /** The trace the run belongs to (its span's, or the stored parent's when it is not traced). */
      trace_id?: string;
    }
  | {
      type: "run.finished";
      run: Run;
      /** Present when the run failed; `stack` when it failed here with an error that has one. */
      error?: { error: string; message: string; stack?: string };
      /** The trace the run belongs to, as in `run.started`. */
      trace_id?: string;
    }
  | { type: "thread.status"; thread_id: string; status: ThreadStatus; previous: ThreadStatus | null }
  | {
      /**
       * Another runtime on the same store created a run (this runtime's own runs are
       * `run.created`). Read it with `runs.get` / `runs.joinStream` from any runtime.
       */
      type: "run.created.external";
      run: Run;
    }
  | {
      /** A run's webhook POST failed (the request rejected or the answer was not 2xx); it is not retried. */
      type: "webhook.failed";
      run: Run;
      url: string;
      error: { error: string; message: string };
    };

export type RuntimeEventType = RuntimeEvent["type"];
export type RuntimeListener<T extends RuntimeEventType = RuntimeEventType> = (event: Extract<RuntimeEvent, { type: T }>) => void;

/** What a caller presents to `runtime.client` (header names are lower-cased). */
export interface ClientRequest {
  headers?: Record<string, string> | Headers;
  method?: string;
  path?: string;
  url?: string;
}

/**
 * Opt-in for run webhooks (`webhook` on runs.create/stream/wait): when a run ends, its record
 * and outcome are POSTed to the URL. Without this option a run with a webhook is refused, so
 * callers cannot make the runtime send data to arbitrary addresses (SSRF).
 */
export interface WebhookOptions {
  /** Decides, at run creation, whether a run may POST to `url` (an absolute http(s) URL). */
  allow(url: URL): boolean;
  /** The fetch used to deliver; defaults to `globalThis.fetch`. */
  fetch?: typeof fetch;
}

export interface CreateRuntimeOptions {
  /**
   * Graph id -> compiled graph (graphdock's `StateGraph(...).compile()`, or a compiled LangGraph.js
   * graph or `createAgent` agent: D23), a promise of one (awaited by `createRuntime`), or a factory
   * `(config) => graph` called with each run's merged config (and with the thread's or the
   * assistant's config for state reads and schemas). Every graph gets a default assistant (D5).
   */
  graphs: Record<string, GraphEntry>;
  /**
   * Graph id -> the `config` and `context` its default assistant is created with (the
   * `LANGGRAPH_CONFIG` convention of agent-server deployments; `assistantDefaultsFromEnv` reads
   * it). A default assistant that already exists in the store is left as it is.
   */
  assistantDefaults?: Record<string, AssistantDefaults>;
  /** Defaults to `memoryStore()`. */
  store?: Store;
  /** Custom authentication and authorization (D12, D13). Without it every caller is the owner. */
  auth?: AuthProvider;
  /** Default multitask strategy of runs (D9); `reject` unless set. */
  multitaskStrategy?: MultitaskStrategy;
  /** Enables run webhooks for the URLs `allow` accepts; without it `webhook` is refused. */
  webhooks?: WebhookOptions;
  clock?: Clock;
  ids?: Ids;
  /**
   * How long (ms) a running run's lease lasts; the runtime executing it renews it every third of
   * that. When a runtime stops (a crash, a killed process) its runs are resumed from their last
   * checkpoint once their lease expires, by whichever runtime on the store notices (at once
   * where the store can tell: a JSON-file store reopened, a closed tab; docs/durable.md).
   * Default 30,000.
   */
  leaseMs?: number;
  /**
   * How many attempts a run may make: a run whose execution is cut off (its runtime stopped or
   * lost its lease) is resumed as its next attempt, and one cut off in its last attempt ends
   * `error`. Attempts ended by a drain (`close()`) do not count. Default 3.
   */
  maxAttempts?: number;
  /**
   * Semantic search of the `store` namespace: items are embedded on put (per `fields`, or the
   * put's `index` option) and `searchItems(prefix, { query })` ranks them by cosine similarity.
   * Without it, a `query` is refused with `invalid_input`.
   */
  index?: IndexConfig;
  /**
   * The logger graphs get from `getLogger()` of `@langchain/langgraph-sdk/logging`, as on the
   * agent server (a global; this option replaces it). Without it a console logger is registered
   * unless one already is.
   */
  logger?: SdkLogger;
  /** Items' time to live by default and its sweep (langgraph.json's `store.ttl`). */
  itemTtl?: ItemTtlConfig;
  /**
   * Threads' time to live by default, what happens when it runs out (`delete`, `keep_latest`)
   * and its sweep (langgraph.json's `checkpointer.ttl`; D94). Without it, only threads created or
   * updated with a `ttl` expire.
   */
  threadTtl?: ThreadTtlConfig;
  /**
   * Where graphdock's own diagnostics go (a background sweep that failed, a lifecycle listener
   * that threw): a logger in pino's convention, `(fields, message)`; a pino logger fits as it is.
   * Nothing is logged without it. Not the graphs' logger: that is `logger`.
   */
  diagnostics?: DiagnosticsLogger;
  /**
   * OpenTelemetry tracing of runs (docs/observability.md): on by default, and a no-op until the
   * application registers a tracer provider (or passes one here); `false` turns it off.
   */
  tracing?: false | TracingOptions;
}

/** The runtime: the default caller's namespaces plus binding, subscription and shutdown. */
export interface Runtime extends RuntimeClient {
  /**
   * Authenticates the caller through `auth.authenticate` and returns the namespaces bound to
   * that user. Rejects with `unauthenticated` (or the handler's error). Without auth the caller
   * is the owner.
   */
  client(request?: ClientRequest): Promise<RuntimeClient>;
  /** Subscribes to lifecycle events (all, or one type); returns the unsubscribe function. */
  subscribe(listener: RuntimeListener): () => void;
  subscribe<T extends RuntimeEventType>(type: T, listener: RuntimeListener<T>): () => void;
  /** The registered graph ids. */
  readonly graphIds: readonly string[];
  /**
   * Resolves when the store can be reached now; rejects with an `unavailable` `GraphdockError`
   * when it cannot (its database is down). Always resolves on stores held in this process's
   * memory or files. `GET /ok` answers 503 while it rejects.
   */
  ping(): Promise<void>;
  /**
   * Interrupts the runs this runtime executes and waits for their outcomes; runs it had queued stay
   * queued for the other runtimes on the store. Closes the store when no other runtime of this
   * process uses the same store object. Idempotent.
   */
  close(): Promise<void>;
}

