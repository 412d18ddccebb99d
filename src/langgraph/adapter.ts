/**
 * `fromLangGraph`: gives a compiled LangGraph.js graph the surface the runtime drives every graph
 * through (`CompiledGraph`, src/graph/types.ts), so the runtime hosts it unchanged (D23). Runs and
 * state reads go through LangGraph's own Pregel loop with an `GraphdockSaver` lent through the
 * config (`__pregel_checkpointer`, as LangGraph lends a parent's checkpointer to subgraphs), so
 * the graph's object is never mutated and one graph can serve several runtimes and stores.
 */
import { invalidInput, notFound } from "../errors.js";
import { Command, Send } from "../graph/constants.js";
import type {
  Breakpoints,
  CheckpointRef,
  CompiledGraph,
  DrawableGraph,
  EngineStreamMode,
  ExecuteOptions,
  ExecuteResult,
  GetStateOptions,
  GraphSchemas,
  HistoryOptions,
  InputState,
  StateSnapshot,
  Superstep,
  TaskView,
  UpdateStateOptions,
} from "../graph/types.js";
import { isPlainObject } from "../json.js";
import type { CheckpointStore } from "../persistence/types.js";
import { isLangGraphGraph, langGraphOf, type LangGraphAgent, type LangGraphGraph } from "../runtime/graph-port.js";
import type { Interrupt } from "../types.js";
import { checkInstalledLangGraphNow } from "./installed.js";
import { GraphdockItemStore, type ItemStoreLike } from "./item-store.js";
import { subgraphCheckpointOf, toServerPayload } from "./checkpoint-events.js";
import { graphSchemas, type TypeSchemasSource } from "./schemas.js";
import { GraphdockSaver } from "./saver.js";
import { traceCallbacks } from "./trace-callbacks.js";
import { eventToWire, toLangGraphInput, toWire } from "./wire.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- LangGraph's snapshots and chunks are read by shape */
type Any = any;

/** The surface of a compiled LangGraph.js graph the adapter uses (a `Pregel`). */
export interface LangGraphPregel extends LangGraphGraph {
  streamEvents(input: Any, options: Any): AsyncIterable<Any>;
  getStateHistory(config: Any, options?: Any): AsyncIterable<Any>;
  bulkUpdateState(config: Any, supersteps: Any): Promise<Any>;
  getGraph(config?: Any): { toJSON(): Any };
  getGraphAsync?(config?: Any): Promise<{ toJSON(): Any }>;
  getSubgraphsAsync?(namespace?: string, recurse?: boolean): AsyncIterable<[string, Any]>;
  readonly channels?: Record<string, unknown>;
  readonly builder?: { channels?: Record<string, unknown>; _schemaDefinition?: unknown };
  readonly interruptBefore?: unknown;
  readonly interruptAfter?: unknown;
  readonly name?: string;
}

/** Options of `fromLangGraph`. */
export interface FromLangGraphOptions {
  /**
   * The item store nodes reach as `config.store` / `getStore()` (LangGraph's `BaseStore`, over
   * graphdock's item store). A run's `itemStore` (the runtime's item store) takes precedence.
   */
  items?: ItemStoreLike;
  /**
   * Schemas read from the graph's TypeScript types, by namespace (`""` the graph, `"node|inner"`
   * a subgraph), used where the graph object does not carry its own (src/langgraph/schemas.ts).
   * graph.json loading gives them (D42).
   */
  typeSchemas?: TypeSchemasSource;
}


const START = "__start__";
const END = "__end__";
const CHECKPOINTER = "__pregel_checkpointer";

const ENGINE_MODES: readonly EngineStreamMode[] = ["values", "updates", "messages", "custom", "tasks", "checkpoints", "debug"];
const NO_MODES: ReadonlySet<EngineStreamMode> = new Set();
const NO_NAMESPACE: string[] = [];

/**
 * The namespace of the graph a `messages` chunk comes from. LangGraph before 1.4 names it by the
 * namespace of the node's own task (`node:<task id>`, the `langgraph_checkpoint_ns` of its
 * metadata), where later releases, and every other mode, name the graph's: the node's task
 * segments are dropped (one, plus one per `Send` a pushed task came through), as LangGraph 1.4
 * does.
 */
function messageNamespace(ns: string[], data: unknown): string[] {
  const meta = Array.isArray(data) && isPlainObject(data[1]) ? data[1] : undefined;
  if (!meta || ns.length === 0 || ns.join("|") !== meta.langgraph_checkpoint_ns) return ns;
  let path = meta.langgraph_path;
  let segments = 1;
  while (Array.isArray(path) && path[0] === "__pregel_push" && path[path.length - 1] === true) {
    segments += 1;
    path = path[1];
  }
  return ns.slice(0, Math.max(ns.length - segments, 0));
}

/** A stream-events v2 event of LangChain's `streamEvents` (the fields the adapter reads). */
interface StreamEvent {
  event: string;
  run_id: string;
  tags?: string[];
  data: { chunk?: unknown };
}

/** Whether breakpoints name any node (`"*"` or a non-empty list). */
const hasBreakpoints = (b: unknown): boolean => b === "*" || (Array.isArray(b) && b.length > 0);

const isCompiled = (g: unknown): g is LangGraphPregel =>
  typeof g === "object" && g !== null && (g as { lg_is_pregel?: unknown }).lg_is_pregel === true && typeof (g as { stream?: unknown }).stream === "function";

/**
 * Hosts a compiled LangGraph.js graph (`StateGraph(...).compile()`, `createAgent(...)`,
 * `createReactAgent(...)`): returns the `CompiledGraph` the runtime registers. `createRuntime`
 * calls it for a LangGraph.js graph passed as is; call it yourself where a `CompiledGraph` type
 * is expected.
 */
export function fromLangGraph(graphOrAgent: LangGraphGraph | LangGraphAgent, options: FromLangGraphOptions = {}): CompiledGraph {
  checkInstalledLangGraphNow();
  const graph = isLangGraphGraph(graphOrAgent) ? langGraphOf(graphOrAgent) : graphOrAgent;
  if (!isCompiled(graph)) throw invalidInput("graphdock: fromLangGraph expects a compiled LangGraph.js graph (StateGraph(...).compile(), createAgent(...)).");
  return new LangGraphAdapter(graph, options);
}

/** A LangGraph error name and message as graphdock reports a node failure. */
function errorText(err: unknown): string | null {
  if (err === undefined || err === null) return null;
  if (typeof err === "string") return err;
  const e = err as { name?: string; message?: string };
  return `${e.name ?? "Error"}: ${e.message ?? ""}`;
}

const toInterrupt = (i: Any): Interrupt => ({ id: String(i?.id ?? ""), value: toWire(i?.value) });

/** The LangGraph.js graph, as the runtime's `CompiledGraph`. */
export class LangGraphAdapter implements CompiledGraph {
  readonly nodeNames: readonly string[];
  private readonly items: ItemStoreLike | undefined;
  private readonly typeSchemas: TypeSchemasSource | undefined;
  /** The `BaseStore` lent over each item store (it keeps no state of its own: one per item store). */
  private readonly lentStores = new WeakMap<ItemStoreLike, GraphdockItemStore>();
  /** Whether the graph was compiled with breakpoints (a run of it may pause without an interrupt). */
  private readonly compiledBreakpoints: boolean;

  constructor(
    readonly graph: LangGraphPregel,
    options: FromLangGraphOptions = {},
  ) {
    this.nodeNames = Object.keys(graph.nodes).filter((n) => n !== START);
    this.items = options.items;
    this.typeSchemas = options.typeSchemas;
    this.compiledBreakpoints = hasBreakpoints(graph.interruptBefore) || hasBreakpoints(graph.interruptAfter);
  }

  /** LangGraph's `BaseStore` over an item store, made once per item store. */
  private lentStore(items: ItemStoreLike): GraphdockItemStore {
    let lent = this.lentStores.get(items);
    if (!lent) this.lentStores.set(items, (lent = new GraphdockItemStore(items)));
    return lent;
  }

  /** A config addressing the thread (at a checkpoint) with a saver over `store` lent to the graph. */
  private config(store: CheckpointStore, threadId: string, extra: { checkpointId?: string; metadata?: Record<string, unknown>; checkpointNs?: string } = {}) {
    const saver = new GraphdockSaver(store, extra.metadata ? { metadata: extra.metadata } : {});
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: extra.checkpointNs ?? "",
        ...(extra.checkpointId !== undefined ? { checkpoint_id: extra.checkpointId } : {}),
        [CHECKPOINTER]: saver,
      },
    };
  }

  /**
   * The graph whose checkpoints live in namespace `ns` (`node:task_id`, nested ones joined with
   * `|`): this graph for the root, else the subgraph its node path names, as LangGraph finds it
   * for a graph with its own checkpointer (here the checkpointer is lent, so LangGraph would read
   * the root graph at the subgraph's checkpoint). A path that names no subgraph is `invalid_input`.
   */
  private async graphAt(ns: string | undefined): Promise<LangGraphPregel> {
    if (!ns) return this.graph;
    const path = ns
      .split("|")
      .map((part) => part.split(":")[0])
      .join("|");
    if (this.graph.getSubgraphsAsync) {
      for await (const [name, sub] of this.graph.getSubgraphsAsync(path, true)) if (name === path) return sub as LangGraphPregel;
    }
    throw invalidInput(`graphdock: checkpoint namespace "${ns}" names no subgraph of this graph.`);
  }

  /** The checkpoint `id` of namespace `ns`, or `not_found`. */
  private async requireCheckpoint(store: CheckpointStore, threadId: string, id: string, ns: string | undefined): Promise<void> {
    if (!(await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns ?? "", checkpoint_id: id }))) {
      throw notFound(`graphdock: checkpoint ${id} of thread ${threadId}${ns ? ` (namespace "${ns}")` : ""} not found.`);
    }
  }

  async execute(options: ExecuteOptions): Promise<ExecuteResult> {
    const { store, threadId, config, emit, listening } = options;
    const modes: ReadonlySet<EngineStreamMode> = options.streamModes ?? NO_MODES;
    const saver = new GraphdockSaver(store, config.metadata ? { metadata: config.metadata } : {});
    const { configurable, recursion_limit, tags, metadata, ...rest } = config;
    // Values are always streamed (the result needs them), the rest only when asked for.
    const wantsEvents = modes.has("events");
    // A run streaming `events` also runs LangGraph's `debug` mode, as the reference server always
    // does: the mode's work in the loop decides where other modes' frames fall among the events.
    const lgModes = ENGINE_MODES.filter((m) => m === "values" || modes.has(m) || (m === "debug" && wantsEvents));
    const streamSubgraphs = options.streamSubgraphs === true;
    // The root run names no checkpoint namespace: LangGraph before 1.4 splits a given "" into
    // the namespace [""], so every chunk of the root would come out as a subgraph's.
    const { checkpoint_ns: _ns, ...runConfigurable } = configurable ?? {};
    const lgConfig: Record<string, unknown> = {
      ...rest,
      configurable: {
        ...runConfigurable,
        thread_id: threadId,
        ...(options.checkpointId !== undefined ? { checkpoint_id: options.checkpointId } : {}),
        [CHECKPOINTER]: saver,
      },
      ...(recursion_limit !== undefined ? { recursionLimit: recursion_limit } : {}),
      ...(tags !== undefined ? { tags } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      ...(options.context !== undefined ? { context: options.context } : {}),
      ...(options.interruptBefore !== undefined ? { interruptBefore: options.interruptBefore } : {}),
      ...(options.interruptAfter !== undefined ? { interruptAfter: options.interruptAfter } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      // A traced run's nodes, tools and model calls, from LangChain's callbacks (./trace-callbacks.ts).
      ...(options.trace ? { callbacks: [traceCallbacks(options.trace)] } : {}),
      streamMode: lgModes,
      subgraphs: streamSubgraphs,
    };
    const items = options.itemStore ?? this.items;
    if (items) lgConfig.store = this.lentStore(items);
    // The last root values, converted once at the end (a long chat's state is large).
    let values: unknown = {};
    let interruptsSeen = false;
    const input = toLangGraphInput(options.input);
    // The `events` mode is LangChain's stream events (v2), as the reference server streams them: the
    // graph's own run carries the stream modes' chunks as its `on_chain_stream` events (which are
    // not events of the mode); every other event but those tagged `langsmith:hidden` is one.
    const rootRunId = wantsEvents ? (typeof configurable?.run_id === "string" ? configurable.run_id : options.ids.uuid()) : "";
    const source: AsyncIterable<unknown> = wantsEvents
      ? this.graph.streamEvents(input, { ...lgConfig, version: "v2", runId: rootRunId })
      : await this.graph.stream(input, lgConfig);
    for await (const item of source) {
      let chunk = item;
      if (wantsEvents) {
        const event = item as StreamEvent;
        if (event.event !== "on_chain_stream" || event.run_id !== rootRunId) {
          if (emit && !event.tags?.includes("langsmith:hidden")) emit("events", listening && !listening() ? undefined : eventToWire(event));
          continue;
        }
        chunk = event.data.chunk;
      }
      const [chunkNs, mode, data] = (streamSubgraphs ? chunk : [NO_NAMESPACE, ...(chunk as unknown[])]) as [string[], EngineStreamMode, unknown];
      const ns = mode === "messages" ? messageNamespace(chunkNs, data) : chunkNs;
      const nested = ns.length > 0;
      if (!nested && mode === "values") {
        if (isPlainObject(data) && "__interrupt__" in data) interruptsSeen = true;
        else values = data;
      }
      if (!emit || !modes.has(mode)) continue;
      // Nobody receives an event emitted now: it is emitted (the run's events keep their
      // numbering) without converting its data, which for `values` is the whole state.
      const wire = listening && !listening() ? undefined : toWire(toServerPayload(mode, data), mode === "messages");
      if (nested) emit(mode, wire, ns);
      else emit(mode, wire);
    }
    // Only a run that may have paused needs the snapshot: an interrupt was reported, or
    // breakpoints were set (at compile time or for this run).
    const mayHavePaused = interruptsSeen || this.compiledBreakpoints || hasBreakpoints(options.interruptBefore) || hasBreakpoints(options.interruptAfter);
    if (!mayHavePaused) {
      // The last root checkpoint holds these values and no node ran since it was put: its
      // messages' serialized form is reused.
      return { status: "done", values: toWire(values, false, saver.serializedMessage) as Record<string, unknown>, interrupts: [], checkpointId: saver.lastCheckpointId(threadId, "") ?? null };
    }
    const state = await this.graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: "", [CHECKPOINTER]: saver } });
    const interrupts: Interrupt[] = [];
    for (const t of state.tasks ?? []) for (const i of t.interrupts ?? []) interrupts.push(toInterrupt(i));
    const checkpointId = (state.config?.configurable?.checkpoint_id as string | undefined) ?? null;
    const paused = (state.next?.length ?? 0) > 0 || interrupts.length > 0;
    // A static breakpoint ends LangGraph's stream without an `__interrupt__` chunk; graphdock's
    // engine (and the reference server) report it as `values {__interrupt__: []}`.
    if (paused && !interruptsSeen && emit && modes.has("values")) emit("values", { __interrupt__: interrupts });
    const finalValues = toWire(paused ? state.values : values) as Record<string, unknown>;
    return {
      status: paused ? "interrupted" : "done",
      values: interrupts.length ? { ...finalValues, __interrupt__: interrupts } : finalValues,
      interrupts,
      checkpointId,
    };
  }

  async validateInput(input: unknown, state?: InputState, breakpoints?: Breakpoints): Promise<void> {
    const nodes = new Set(this.nodeNames);
    // Names are LangGraph's to match (D40): one that names no node of this graph is ignored.
    const named = (list: unknown, what: string) => {
      if (list === undefined || list === "*") return;
      if (!Array.isArray(list) || list.some((n) => typeof n !== "string")) throw invalidInput(`graphdock: ${what} must be "*" or a list of node names.`);
    };
    named(breakpoints?.interruptBefore, "interruptBefore");
    named(breakpoints?.interruptAfter, "interruptAfter");
    if (input !== null && input !== undefined && !Command.is(input) && !isPlainObject(input)) {
      throw invalidInput("graphdock: run input must be an object of state values, null, or a command.");
    }
    if (Command.is(input)) {
      const { update, goto } = input;
      if (update !== undefined && !isPlainObject(update) && !(Array.isArray(update) && update.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === "string"))) {
        throw invalidInput("graphdock: command.update must be an object of state values or a list of [key, value] pairs.");
      }
      for (const g of goto === undefined ? [] : Array.isArray(goto) ? goto : [goto]) {
        const node = Send.is(g) ? g.node : g;
        if (typeof node !== "string" || (node !== END && !nodes.has(node))) throw invalidInput(`graphdock: command.goto names unknown node ${String(node)}; nodes: ${[...nodes].join(", ")}.`);
      }
    }
    if (!state) return;
    if (state.checkpointId !== undefined && !(await state.store.getCheckpoint({ thread_id: state.threadId, checkpoint_id: state.checkpointId }))) {
      throw notFound(`graphdock: checkpoint ${state.checkpointId} of thread ${state.threadId} not found.`);
    }
    if (Command.is(input) && input.resume !== undefined) {
      const config = this.config(state.store, state.threadId, state.checkpointId !== undefined ? { checkpointId: state.checkpointId } : {});
      const snapshot = await this.graph.getState(config);
      const pending: string[] = [];
      for (const t of snapshot.tasks ?? []) for (const i of t.interrupts ?? []) pending.push(String(i.id));
      if (pending.length === 0) throw invalidInput(`graphdock: thread ${state.threadId} has no pending interrupt to resume.`);
      const resume = input.resume;
      if (isPlainObject(resume) && Object.keys(resume).length > 0 && Object.keys(resume).every((k) => /^[0-9a-f]{32}$/.test(k))) {
        const unknown = Object.keys(resume).filter((k) => !pending.includes(k));
        if (unknown.length) throw invalidInput(`graphdock: resume names interrupts ${unknown.join(", ")} that are not pending on thread ${state.threadId}.`);
      } else if (pending.length > 1) {
        throw invalidInput(`graphdock: thread ${state.threadId} has ${pending.length} pending interrupts; resume with a map of interrupt id -> value.`);
      }
    }
  }

  async getState(store: CheckpointStore, threadId: string, options: GetStateOptions = {}): Promise<StateSnapshot> {
    const { checkpointId, checkpointNs } = options;
    const graph = await this.graphAt(checkpointNs);
    const config = this.config(store, threadId, { ...(checkpointId !== undefined ? { checkpointId } : {}), ...(checkpointNs ? { checkpointNs } : {}) });
    if (checkpointId !== undefined) await this.requireCheckpoint(store, threadId, checkpointId, checkpointNs);
    return toSnapshot(await graph.getState(config, options.subgraphs ? { subgraphs: true } : undefined), threadId);
  }

  async getHistory(store: CheckpointStore, threadId: string, options: HistoryOptions = {}): Promise<StateSnapshot[]> {
    const out: StateSnapshot[] = [];
    let limit = options.limit;
    let before = options.before;
    const ns = options.checkpointNs;
    const graph = await this.graphAt(ns);
    const config = this.config(store, threadId, ns ? { checkpointNs: ns } : {});
    for (const id of [options.before, options.checkpointId]) if (id !== undefined) await this.requireCheckpoint(store, threadId, id, ns);
    if (options.checkpointId !== undefined) {
      // Listing starts at this checkpoint (inclusive), then goes on with the older ones.
      const stored = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns ?? "", checkpoint_id: options.checkpointId });
      if (!stored) return [];
      if (before === undefined || stored.checkpoint.id < before) {
        const first = toSnapshot(await graph.getState({ configurable: { ...config.configurable, checkpoint_id: options.checkpointId } }), threadId);
        if (!options.filter || contains(first.metadata, options.filter)) {
          out.push(first);
          if (limit !== undefined) limit--;
        }
      }
      if (before === undefined || options.checkpointId < before) before = options.checkpointId;
    }
    if (limit !== undefined && limit <= 0) return out;
    for await (const s of graph.getStateHistory(config, {
      ...(limit !== undefined ? { limit } : {}),
      ...(before !== undefined ? { before: { configurable: { checkpoint_id: before } } } : {}),
      ...(options.filter ? { filter: options.filter } : {}),
    })) {
      out.push(toSnapshot(s, threadId));
    }
    return out;
  }

  async bulkUpdateState(store: CheckpointStore, threadId: string, supersteps: Superstep[], options: UpdateStateOptions): Promise<CheckpointRef> {
    const graph = await this.graphAt(options.checkpointNs);
    const config = this.config(store, threadId, {
      ...(options.checkpointId !== undefined ? { checkpointId: options.checkpointId } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
      ...(options.checkpointNs ? { checkpointNs: options.checkpointNs } : {}),
    });
    const names = graph === this.graph ? this.nodeNames : Object.keys(graph.nodes).filter((n) => n !== START);
    const nodes = new Set([...names, "__input__", "__copy__", START]);
    const steps = supersteps.map((s) => ({
      updates: s.updates.map((u) => {
        if (u.as_node !== undefined && u.as_node !== null && !nodes.has(u.as_node)) {
          throw invalidInput(`graphdock: as_node names unknown node ${u.as_node}; nodes: ${names.join(", ")}.`);
        }
        const values = u.command ? toLangGraphInput(new Command(u.command as ConstructorParameters<typeof Command>[0])) : u.values;
        return { values, ...(u.as_node ? { asNode: u.as_node } : {}) };
      }),
    }));
    let next: Any;
    try {
      next = await graph.bulkUpdateState(config, steps);
    } catch (err) {
      const e = err as { name?: string; message?: string };
      if (e?.name === "InvalidUpdateError" || e?.name === "GraphValueError" || e?.name === "EmptyInputError") throw invalidInput(`graphdock: ${e.message}`);
      throw err;
    }
    const c = next?.configurable ?? {};
    return { thread_id: threadId, checkpoint_ns: c.checkpoint_ns ?? "", checkpoint_id: c.checkpoint_id, checkpoint_map: c.checkpoint_map ?? null };
  }

  getGraph(options?: { xray?: boolean | number }): DrawableGraph {
    const drawable = this.graph.getGraph(options?.xray === undefined ? undefined : { xray: options.xray }).toJSON();
    return toWire(drawable) as DrawableGraph;
  }

  getSchemas(): Promise<GraphSchemas> {
    return graphSchemas(this.graph, "", this.typeSchemas);
  }

  /** Schemas of the graph's subgraphs by namespace (`assistants.getSubgraphs`). */
  async getSubgraphs(options: { namespace?: string; recurse?: boolean } = {}): Promise<Record<string, GraphSchemas>> {
    const out: Record<string, GraphSchemas> = {};
    if (!this.graph.getSubgraphsAsync) return out;
    for await (const [ns, sub] of this.graph.getSubgraphsAsync(options.namespace, options.recurse ?? false)) out[ns] = await graphSchemas(sub, ns, this.typeSchemas);
    return out;
  }
}

function contains(value: unknown, filter: Record<string, unknown>): boolean {
  if (!isPlainObject(value)) return false;
  return Object.entries(filter).every(([k, f]) => (isPlainObject(f) ? contains(value[k], f) : JSON.stringify(value[k]) === JSON.stringify(f)));
}

function ref(threadId: string, configurable: Any): CheckpointRef | null {
  const id = configurable?.checkpoint_id;
  if (typeof id !== "string") return null;
  return { thread_id: threadId, checkpoint_ns: configurable.checkpoint_ns ?? "", checkpoint_id: id, checkpoint_map: configurable.checkpoint_map ?? null };
}

/** A LangGraph `StateSnapshot` as graphdock's (the reference server's shape). */
function toSnapshot(s: Any, threadId: string): StateSnapshot {
  const checkpoint = ref(threadId, s.config?.configurable);
  const parent = ref(threadId, s.parentConfig?.configurable);
  const interrupts: Interrupt[] = [];
  const tasks: TaskView[] = (s.tasks ?? []).map((t: Any) => {
    const taskInterrupts = (t.interrupts ?? []).map(toInterrupt);
    interrupts.push(...taskInterrupts);
    const nested = t.state && typeof t.state === "object" && "values" in t.state ? t.state : undefined;
    return {
      id: t.id,
      name: t.name,
      path: toWire(t.path ?? []) as unknown[],
      error: errorText(t.error),
      interrupts: taskInterrupts,
      // A subgraph task names its checkpoint namespace (without an id: that namespace's latest).
      checkpoint: nested ? null : subgraphCheckpointOf(t.state),
      state: nested ? toSnapshot(nested, threadId) : null,
      result: t.result === undefined ? null : toWire(t.result),
    };
  });
  const metadata = s.metadata && checkpoint ? { ...(toWire(s.metadata) as StateSnapshot["metadata"] & object), thread_id: threadId, checkpoint_id: checkpoint.checkpoint_id } : null;
  return {
    values: (toWire(s.values ?? {}) ?? {}) as Record<string, unknown>,
    next: [...(s.next ?? [])],
    tasks,
    metadata,
    created_at: s.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parent,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parent?.checkpoint_id ?? null,
    interrupts,
  };
}

