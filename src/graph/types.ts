/**
 * The contract between the graph engine (`src/graph/`) and its callers (the runtime). The engine
 * knows no HTTP, no SDK, no runs: it executes a compiled graph against a thread's checkpoints in
 * a `CheckpointStore` and reports what happens through `emit`.
 */
import type { ItemStore } from "../items/types.js";
import type { Clock, Ids } from "../ids.js";
import type { CheckpointMetadata, CheckpointStore } from "../persistence/types.js";
import type { Interrupt } from "../types.js";
import type { ToolCall, ToolResultMessage } from "./messages.js";

/** Stream modes the engine produces (the runtime adds `metadata` and `error`). */
export type EngineStreamMode =
  | "values"
  | "updates"
  /** messages-tuple: `[message chunk, metadata]` pairs (event name `messages`). */
  | "messages"
  | "custom"
  | "tasks"
  | "checkpoints"
  | "debug"
  /**
   * LangChain stream-events v2 objects (`on_chain_start`, `on_chain_stream`, `on_chain_end`, and per
   * message a node streams `on_chat_model_start` / `on_chat_model_stream` / `on_chat_model_end`).
   */
  | "events";

/** Config passed to nodes as `ctx.config`; the runtime merges assistant -> thread -> run. */
export interface RunnableConfig {
  configurable: Record<string, unknown>;
  recursion_limit?: number;
  tags?: string[];
  /** Merged run metadata; merged into every checkpoint's metadata the run writes. */
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Node context (the second argument of a node function). */
export interface NodeContext<Ctx = unknown> {
  /** Pauses the run (first call) or returns the resume value (after `Command({ resume })`). */
  interrupt<R = unknown>(value: unknown): R;
  config: RunnableConfig;
  /** The assistant's context merged with the run's. */
  context: Ctx;
  /** Aborted when the run is cancelled; long-running nodes should honour it. */
  signal: AbortSignal;
  /** Writes one item to the `custom` stream mode. */
  writer(chunk: unknown): void;
  /**
   * Emits a message chunk for the `messages-tuple` mode. Chunks of one message share its `id`;
   * the engine adds the tuple metadata (`langgraph_node`, `langgraph_step`, ...).
   */
  emitMessage(chunk: Record<string, unknown>): void;
  /**
   * Runs one tool call a model asked for, `fn(call.args)`, and resolves the tool message
   * answering it (`content`: the result, a string as is, anything else as JSON; `tool_call_id`
   * and `name` from the call). The `events` stream mode reports it as a tool run
   * (`on_tool_start`, then `on_tool_end`, or `on_tool_error` when `fn` throws or interrupts), as
   * it reports the runs of LangGraph's `ToolNode`. `ctx.interrupt()` inside `fn` pauses the node.
   */
  runTool(call: Pick<ToolCall, "name" | "args"> & { id?: string | null }, fn: (args: Record<string, unknown>) => unknown): Promise<ToolResultMessage>;
  threadId: string;
  step: number;
  /** Name of the node being run. */
  node: string;
  /**
   * Runs a compiled graphdock graph as a subgraph of this task (namespace `node:task_id`) and
   * resolves its final values. Its checkpoints, interrupts and stream events belong to this
   * run: an `interrupt()` inside it pauses this task, and a resume from the parent continues it.
   * One subgraph per task; declare it with `addNode(name, fn, { subgraphs: [graph] })` so state
   * reads can show its state.
   */
  invoke<O = Record<string, unknown>>(graph: CompiledGraph, input: unknown): Promise<O>;
  /**
   * Long-term memory shared across threads (the runtime's `store`, trusted: no auth handler
   * runs). Outside a runtime (a graph executed directly) its methods reject.
   */
  store: ItemStore;
}

/** One update of a superstep (thread creation with `supersteps`, `threads.updateState`). */
export interface SuperstepUpdate {
  values?: unknown;
  command?: { resume?: unknown; update?: unknown; goto?: unknown } | null;
  as_node?: string;
}
export interface Superstep {
  updates: SuperstepUpdate[];
}

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  checkpoint_map: Record<string, unknown> | null;
}

/**
 * Where a subgraph task keeps its state (`tasks[].checkpoint`): its thread and namespace, without
 * a checkpoint id (the latest of that namespace), as the agent server gives it (the subgraph's
 * config). Pass it to `getState`, `getHistory` or `updateState` to read or edit the subgraph's
 * state.
 */
export interface SubgraphCheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  /** Always undefined (absent on the wire): the namespace's latest checkpoint. */
  checkpoint_id: undefined;
  /** Always undefined (absent on the wire). */
  checkpoint_map: undefined;
}

/** A task in a snapshot. */
export interface TaskView {
  id: string;
  name: string;
  path: unknown[];
  error: string | null;
  interrupts: Interrupt[];
  /** Subgraph tasks, when subgraph states were not asked for: where the subgraph's state lives. */
  checkpoint: SubgraphCheckpointRef | null;
  state: unknown | null;
  result: unknown | null;
}

/** Thread state snapshot, exactly as D7 says. */
export interface StateSnapshot {
  values: Record<string, unknown>;
  next: string[];
  tasks: TaskView[];
  /** Checkpoint metadata plus `thread_id` and `checkpoint_id`; null for an empty thread. */
  metadata: (CheckpointMetadata & { thread_id: string; checkpoint_id: string }) | null;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  /** Every task's interrupts, flattened. */
  interrupts: Interrupt[];
}

export interface ExecuteOptions {
  store: CheckpointStore;
  threadId: string;
  /**
   * Graph input, a `Command` (resume / update / goto), or null/undefined to continue from the
   * current checkpoint (breakpoint resume, retry after error).
   */
  input: unknown;
  /** Start from this checkpoint instead of the latest (fork). */
  checkpointId?: string;
  config: RunnableConfig;
  context?: unknown;
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
  signal?: AbortSignal;
  ids: Ids;
  clock: Clock;
  /** Modes to produce; the engine skips the work for modes not listed. */
  streamModes?: ReadonlySet<EngineStreamMode>;
  /**
   * Receives events as they happen, in order. Must not throw (the runtime isolates listeners).
   * `namespace` is set for events of a subgraph: its checkpoint namespace split on `|`
   * (`["node:task_id", ...]`).
   */
  emit?: (mode: EngineStreamMode, data: unknown, namespace?: readonly string[]) => void;
  /**
   * False while an event emitted now reaches no one (nobody reads the run's events and they are
   * not retained): the engine may then emit it with `data` left `undefined`, sparing the work of
   * producing it (a hosted LangGraph.js graph converts its whole state per step). Absent: always.
   */
  listening?: () => boolean;
  /** Long-term memory for the nodes (`ctx.store`); the runtime passes its trusted item store. */
  itemStore?: ItemStore;
  /** The checkpoint namespace to run in; `""` (the root graph) by default. */
  checkpointNs?: string;
  /** Also emit the events of subgraphs (with their namespace); root events only otherwise. */
  streamSubgraphs?: boolean;
  /**
   * Where the run's work is reported for tracing (the runtime passes one for a run that is
   * traced: src/otel/run-trace.ts). Absent: nothing is reported.
   */
  trace?: TraceScope;
  /** @internal Set by a parent graph running this graph as a subgraph. */
  parent?: SubgraphParent;
}

/** How a traced piece of work ended: an error, an `interrupt()`, a cancel, or none (it succeeded). */
export interface TraceOutcome {
  error?: unknown;
  interrupted?: boolean;
  cancelled?: boolean;
}

/**
 * Where an engine reports a run's work for tracing: each node execution, and in it the tool
 * calls, chat-model calls and the nodes of subgraphs it runs. The engine knows nothing of
 * OpenTelemetry; the runtime's implementation turns these into spans (src/otel/run-trace.ts).
 */
export interface TraceScope {
  /** A node task starts (its name, task id, step and checkpoint namespace). */
  node(task: { name: string; id: string; step: number; namespace: string }): NodeTrace;
}

/** One node execution being traced; what it runs is reported to it. */
export interface NodeTrace extends TraceScope {
  /** A tool call starts (`ctx.runTool`, a LangChain tool run). */
  tool(call: { name: string; id?: string | null; description?: string }): { end(outcome: TraceOutcome): void };
  /** A chat-model call starts (a LangChain chat model run, or a message a node streams). */
  chat(model: ChatStart): { end(outcome: ChatOutcome): void };
  /** Calls `fn` with this node current, so work the node's own code traces nests under it. */
  within<T>(fn: () => T): T;
  end(outcome: TraceOutcome): void;
}

/** What is known when a chat-model call starts. */
export interface ChatStart {
  /** The model asked for (`gpt-4o`), when known. */
  model?: string;
  /** Who serves it (`openai`, `anthropic`, ...), when known. */
  provider?: string;
  temperature?: number;
  maxTokens?: number;
}

/** What is known when a chat-model call ends. */
export interface ChatOutcome extends TraceOutcome {
  /** The model that answered, when reported. */
  model?: string;
  responseId?: string;
  finishReasons?: string[];
  inputTokens?: number;
  outputTokens?: number;
}

/** @internal What a parent graph hands a graph it runs as a subgraph. */
export interface SubgraphParent {
  /** Checkpoint namespace -> checkpoint id of every enclosing graph (the metadata `parents`). */
  parents: Readonly<Record<string, string>>;
  /** Takes the pending plain resume value of an enclosing graph, if any is left. */
  takeNullResume(): { value: unknown } | undefined;
  /** `Command({ resume: { [interrupt id]: value } })` of the root run, for interrupts inside. */
  resumeMap: Readonly<Record<string, unknown>> | undefined;
  /** Stream-events run ids of the enclosing graph and node (`parent_ids`). */
  eventParents: readonly string[];
  /** Message ids the run's `messages` mode has reported (or seen as node input). */
  seenMessages: Set<string>;
}

export interface ExecuteResult {
  /** `interrupted`: stopped at a static breakpoint or a dynamic `interrupt()`. */
  status: "done" | "interrupted";
  /** The latest values (with `__interrupt__` added when interrupted by `interrupt()`). */
  values: Record<string, unknown>;
  interrupts: Interrupt[];
  /** The latest checkpoint id of the thread after the run. */
  checkpointId: string | null;
}

export interface HistoryOptions {
  limit?: number;
  /** Checkpoint id: only entries older than it. */
  before?: string;
  /** Metadata containment filter. */
  filter?: Record<string, unknown>;
  /** Start listing from this checkpoint (inclusive) instead of the latest. */
  checkpointId?: string;
  /** A subgraph's namespace (`node:task_id`, joined with `|`): list its checkpoints. */
  checkpointNs?: string;
}

export interface UpdateStateOptions {
  /** Apply on top of this checkpoint instead of the latest (fork). */
  checkpointId?: string;
  /** Merged into the new checkpoints' metadata (run/thread metadata, graph_id, ...). */
  metadata?: Record<string, unknown>;
  /** A subgraph's namespace: update the subgraph's state there instead of the root graph's. */
  checkpointNs?: string;
  ids: Ids;
  clock: Clock;
}

/** What `getGraph` returns: the agent server's drawable graph JSON. */
export interface DrawableGraph {
  nodes: Array<{ id: string; type: "schema" | "runnable"; data: unknown; metadata?: unknown }>;
  edges: Array<{ source: string; target: string; data?: unknown; conditional?: boolean }>;
}

/** JSON schemas of a graph, best effort from the channel declaration. */
export interface GraphSchemas {
  input_schema: Record<string, unknown> | null;
  output_schema: Record<string, unknown> | null;
  state_schema: Record<string, unknown> | null;
  config_schema: Record<string, unknown> | null;
  context_schema: Record<string, unknown> | null;
}

/** Static breakpoints of a run (or a compile): `"*"` (every node) or a list of node names. */
export interface Breakpoints {
  interruptBefore?: string[] | "*";
  interruptAfter?: string[] | "*";
}

/** The thread a run's input is checked against by `CompiledGraph.validateInput`. */
export interface InputState {
  store: CheckpointStore;
  threadId: string;
  /** The checkpoint the run will start from (fork); the latest when absent. */
  checkpointId?: string;
}

/** What `StateGraph.compile()` returns and the runtime registers under a graph id. */
export interface CompiledGraph {
  /** Declared node names, in declaration order (without `__start__`). */
  readonly nodeNames: readonly string[];
  /**
   * Runs the graph on a thread, superstep by superstep, committing checkpoints and pending
   * writes through `store`. Resolves when the run finishes or pauses; rejects with the node's
   * error, `GraphRecursionError`, `InvalidUpdateError`, or `GraphAbortError` when `signal`
   * aborts (checkpoints already committed stay).
   */
  execute(options: ExecuteOptions): Promise<ExecuteResult>;
  /**
   * Checks a run's input before the run exists, writing nothing; `execute` makes the same checks.
   * Rejects with `GraphdockError("invalid_input")` for: an input that is not null/undefined, an
   * object or a `Command`; input values a state key refuses (messages that cannot be coerced); a
   * `Command` whose `update` is not an object or a list of `[key, value]` pairs or whose `goto`
   * names an unknown node; breakpoints naming unknown nodes. With `state`, also for: a checkpoint
   * id the thread lacks, `Command({ resume })` with no pending interrupt, a resume map id that
   * matches no pending interrupt, and a plain resume value while several interrupts are pending.
   */
  validateInput(input: unknown, state?: InputState, breakpoints?: Breakpoints): Promise<void>;
  /**
   * The latest state, or the state at `checkpointId`. `checkpointNs` reads a
   * subgraph's state; `subgraphs` nests each subgraph task's state in `tasks[].state`.
   */
  getState(store: CheckpointStore, threadId: string, options?: GetStateOptions): Promise<StateSnapshot>;
  /** Snapshots newest first; reads only as many checkpoints as `limit` needs (without filter). */
  getHistory(store: CheckpointStore, threadId: string, options?: HistoryOptions): Promise<StateSnapshot[]>;
  /**
   * Applies supersteps in order, one checkpoint each; returns the config of the
   * last checkpoint written.
   */
  bulkUpdateState(
    store: CheckpointStore,
    threadId: string,
    supersteps: Superstep[],
    options: UpdateStateOptions,
  ): Promise<CheckpointRef>;
  /**
   * The drawable graph. `xray` (true, or a depth) replaces each subgraph node by its
   * subgraph's nodes, ids prefixed `node:`, with the edges wired through (as LangGraph.js draws it).
   */
  getGraph(options?: { xray?: boolean | number }): DrawableGraph;
  /** JSON Schemas of the graph (`assistants.getSchemas`); may be computed asynchronously. */
  getSchemas(): GraphSchemas | Promise<GraphSchemas>;
  /**
   * Checks a run's context (the assistant's merged under the run's) before the run exists;
   * rejects with `GraphdockError("invalid_input")`. Optional: graphs without a context schema
   * need none.
   */
  validateContext?(context: unknown): Promise<void>;
  /**
   * Schemas of the graph's subgraphs keyed by namespace (node names joined with `|`, no task
   * ids): the direct ones, every level with `recurse`, or only the one at `namespace`.
   */
  getSubgraphs?(options?: { namespace?: string; recurse?: boolean }): Promise<Record<string, GraphSchemas>>;
}

/** Options of `CompiledGraph.getState`. */
export interface GetStateOptions {
  checkpointId?: string;
  /** A subgraph's namespace (`node:task_id`, joined with `|`); `""` is the root graph. */
  checkpointNs?: string;
  /** Nest the state of each subgraph task in `tasks[].state` (recursively). */
  subgraphs?: boolean;
}
