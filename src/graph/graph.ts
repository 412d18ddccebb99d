/**
 * `StateGraph`: the builder users declare graphs with, compiled into channels and triggers
 * and a `CompiledGraph` (src/graph/types.ts).
 */
import { freeze } from "immer";
import { invalidInput } from "../errors.js";
import type { Ids } from "../ids.js";
import { branchChannel, type ChannelDef, type GraphDef, type Write, updateChannel } from "./algo.js";
import { COPY, Command, END, INPUT, INTERRUPT, START, Send, TASKS } from "./constants.js";
import { InvalidUpdateError } from "./errors.js";
import { checkBreakpoints, describeValue, execute, validateInput } from "./loop.js";
import { bulkUpdateState, getHistory, getState } from "./state.js";
import { isCompiledStateGraph, subgraphSchemas } from "./subgraphs.js";
import { drawGraph, type DrawSource } from "./draw.js";
import { exactObject } from "../exact-objects.js";
import type {
  CompiledGraph,
  GetStateOptions,
  DrawableGraph,
  ExecuteOptions,
  ExecuteResult,
  GraphSchemas,
  Breakpoints,
  HistoryOptions,
  InputState,
  NodeContext,
  RunnableConfig,
  StateSnapshot,
  Superstep,
  UpdateStateOptions,
  CheckpointRef,
} from "./types.js";
import type { CheckpointStore } from "../persistence/types.js";
import { isPlainObject } from "../json.js";
import { addMessages } from "./messages.js";
import { checkWithSchema, markMessages, toJsonSchema, type GraphSchemaOptions } from "./schemas.js";

/** Declaration of one state key. */
export interface ChannelSpec<V = any, U = V> {
  /** Combines the current value with an update; without one the key keeps the last value written. */
  reducer?: (left: V, right: U) => V;
  /** Factory of the initial value of a new thread. */
  default?: () => V;
  /** JSON Schema of the value, reported by `getSchemas()` (inferred from the default otherwise). */
  schema?: Record<string, unknown>;
}
/** A graph's state declaration: key -> channel spec. */
export type StateSpec = Record<string, ChannelSpec<any, any>>;

/** The state values a node receives. */
export type StateOf<S extends StateSpec> = {
  [K in keyof S]: S[K] extends { default: () => infer V }
    ? V
    : S[K] extends { reducer: (...args: any[]) => infer V }
      ? V
      : S[K] extends ChannelSpec<infer V, any>
        ? V
        : unknown;
};
/** What a node may return as its state update. */
export type UpdateOf<S extends StateSpec> = {
  [K in keyof S]?: S[K] extends { reducer: (left: any, right: infer U) => any } ? U : StateOf<S>[K];
};
/** A node's return value: an update, a `Command`, or nothing. */
export type NodeResult<S extends StateSpec> = UpdateOf<S> | Command | void | null | undefined;
/** A node: `(state, ctx) => update | Command | void`, sync or async. */
export type NodeFn<S extends StateSpec = StateSpec, Ctx = any> = (
  state: StateOf<S>,
  ctx: NodeContext<Ctx>,
) => NodeResult<S> | Promise<NodeResult<S>>;
/** What a router may return: a node name, `END`, a `Send`, or a list of them. */
export type Route = string | Send;
export type Router<S extends StateSpec = StateSpec> = (
  state: StateOf<S>,
  config: RunnableConfig,
) => Route | Route[] | Promise<Route | Route[]>;

interface Branch {
  router: Router<any>;
  pathMap?: Record<string, string>;
}

/** Options of `addNode`. */
export interface AddNodeOptions {
  /**
   * Compiled graphs the node function runs with `ctx.invoke` (the first one is the node's
   * subgraph): state reads then show the subgraph's state, and `getSubgraphs` lists it.
   */
  subgraphs?: CompiledGraph[];
}

export interface CompileOptions {
  /** Pause before these nodes run (`"*"`: every node). Runs may override it. */
  interruptBefore?: string[] | "*";
  /** Pause after these nodes ran (`"*"`: every node). Runs may override it. */
  interruptAfter?: string[] | "*";
  /** Name reported by `getGraph()`. */
  name?: string;
}

const RESERVED = new Set([START, END, INPUT, COPY, INTERRUPT]);

/**
 * Declares a graph: `new StateGraph({ key: { reducer?, default? } })`, then nodes and edges, then
 * `compile()`. A key without reducer keeps the last value; two writes to it in one step fail.
 */
export class StateGraph<S extends StateSpec = StateSpec, Ctx = any> {
  private readonly nodes = new Map<string, NodeFn<S, Ctx>>();
  private readonly edges: Array<{ from: string[]; to: string }> = [];
  private readonly branches = new Map<string, Branch[]>();
  private readonly subgraphs = new Map<string, CompiledStateGraph>();

  /**
   * `options` declares zod schemas of the graph's input, output, config and context: reported by
   * `getSchemas()` (JSON Schema), input and context also checked when a run is created.
   */
  constructor(
    readonly spec: S,
    private readonly schemaOptions: GraphSchemaOptions<Ctx> = {},
  ) {
    for (const [key, cs] of Object.entries(spec)) {
      if (!isPlainObject(cs)) throw invalidInput(`State key "${key}" must be declared as { reducer?, default? }.`);
      if (RESERVED.has(key) || key.startsWith("branch:") || key.startsWith("join:")) {
        throw invalidInput(`"${key}" is reserved and cannot be a state key.`);
      }
    }
  }

  /**
   * Adds a node: a function, or a compiled graphdock graph run as a subgraph (it gets the
   * state, and its final values are the node's update; keys the parent lacks are dropped).
   * Names must be unique and not reserved (`__start__`, `__end__`, ...).
   */
  addNode(name: string, fn: NodeFn<S, Ctx> | CompiledGraph, options: AddNodeOptions = {}): this {
    if (RESERVED.has(name) || name.includes(":") || name.includes("|")) throw invalidInput(`"${name}" is a reserved node name.`);
    if (this.nodes.has(name)) throw invalidInput(`Node "${name}" is already present.`);
    if (name in this.spec) throw invalidInput(`Node "${name}" has the name of a state key.`);
    const declared = options.subgraphs ?? [];
    if (!Array.isArray(declared)) throw invalidInput(`addNode("${name}"): subgraphs must be a list of compiled graphs.`);
    for (const g of [fn, ...declared]) {
      if (typeof g === "object" && g !== null && !isCompiledStateGraph(g)) {
        throw invalidInput(`Node "${name}": only graphs compiled with graphdock's StateGraph can be subgraphs.`);
      }
    }
    if (isCompiledStateGraph(fn)) {
      const sub = fn;
      this.nodes.set(name, (state, ctx) => ctx.invoke(sub, state));
      this.subgraphs.set(name, sub);
      return this;
    }
    if (typeof fn !== "function") throw invalidInput(`Node "${name}" must be a function or a compiled graph.`);
    this.nodes.set(name, fn);
    if (declared.length > 0) this.subgraphs.set(name, declared[0] as CompiledStateGraph);
    return this;
  }

  /** Adds an edge; a list of sources is a join (`to` runs once all of them ran). */
  addEdge(from: string | string[], to: string): this {
    const list = Array.isArray(from) ? [...from] : [from];
    if (list.length === 0) throw invalidInput("addEdge needs at least one source node.");
    if (list.includes(END)) throw invalidInput("END cannot be the source of an edge.");
    if (to === START) throw invalidInput("START cannot be the target of an edge.");
    if (list.length > 1 && list.includes(START)) throw invalidInput("START cannot be part of a join.");
    this.edges.push({ from: list, to });
    return this;
  }

  /** Routes after `from` by `router`'s return value(s), mapped through `pathMap` when given. */
  addConditionalEdges(from: string, router: Router<S>, pathMap?: Record<string, string> | string[]): this {
    if (from === END) throw invalidInput("END cannot be the source of an edge.");
    const map = Array.isArray(pathMap) ? Object.fromEntries(pathMap.map((n) => [n, n])) : pathMap;
    const list = this.branches.get(from) ?? [];
    list.push({ router: router as Router<any>, ...(map ? { pathMap: map } : {}) });
    this.branches.set(from, list);
    return this;
  }

  /** Validates the graph and compiles it. */
  compile(options: CompileOptions = {}): CompiledStateGraph {
    const known = (n: string) => n === START || this.nodes.has(n);
    for (const e of this.edges) {
      for (const f of e.from) if (!known(f)) throw invalidInput(`Edge source "${f}" is not a node.`);
      if (e.to !== END && !this.nodes.has(e.to)) throw invalidInput(`Edge target "${e.to}" is not a node.`);
    }
    for (const [from, branches] of this.branches) {
      if (!known(from)) throw invalidInput(`Conditional edge source "${from}" is not a node.`);
      for (const b of branches) {
        for (const t of Object.values(b.pathMap ?? {})) {
          if (t !== END && !this.nodes.has(t)) throw invalidInput(`Conditional edge target "${t}" is not a node.`);
        }
      }
    }
    if (!this.edges.some((e) => e.from.includes(START)) && !this.branches.has(START)) {
      throw invalidInput("The graph has no entry point: add an edge from START.");
    }
    const breakpoints = checkBreakpoints(this.nodes, options);
    return new CompiledStateGraph(this.spec, this.nodes, this.edges, this.branches, { ...options, ...breakpoints }, this.schemaOptions, this.subgraphs);
  }
}

/** @internal Reports each router a node's writes go through (the `events` stream mode). */
export interface RouterRun {
  /** A router starts, on the state it reads; the function returned takes what it returned. */
  start(state: unknown): (output: unknown) => void;
}

/** The compiled form of a `StateGraph`: what the runtime registers under a graph id. */
export class CompiledStateGraph implements CompiledGraph {
  readonly nodeNames: readonly string[];
  /** @internal */
  readonly def: GraphDef;
  /** @internal */
  readonly interruptBefore: string[] | "*";
  /** @internal */
  readonly interruptAfter: string[] | "*";
  private readonly outEdges = new Map<string, string[]>();

  constructor(
    readonly spec: StateSpec,
    /** @internal */ readonly nodes: ReadonlyMap<string, NodeFn<any, any>>,
    private readonly edges: ReadonlyArray<{ from: string[]; to: string }>,
    private readonly branches: ReadonlyMap<string, Branch[]>,
    private readonly options: CompileOptions,
    /** The zod schemas declared with `new StateGraph(spec, schemas)`. */
    readonly declaredSchemas: GraphSchemaOptions = {},
    /** @internal Node name -> the compiled graph it runs as a subgraph. */
    readonly subgraphs: ReadonlyMap<string, CompiledStateGraph> = new Map(),
  ) {
    this.nodeNames = [...nodes.keys()];
    this.interruptBefore = options.interruptBefore ?? [];
    this.interruptAfter = options.interruptAfter ?? [];
    const channels = new Map<string, ChannelDef>();
    const defaults = new Map<string, () => unknown>();
    for (const [key, cs] of Object.entries(spec)) {
      if (cs.reducer) {
        const prepare = (cs.reducer as { prepare?: (value: unknown, mint: () => string) => unknown }).prepare;
        channels.set(key, { kind: "reduce", reducer: cs.reducer, ...(prepare ? { prepare } : {}) });
      } else channels.set(key, { kind: "last" });
      if (cs.default) defaults.set(key, cs.default);
    }
    channels.set(START, { kind: "ephemeral" });
    channels.set(TASKS, { kind: "topic" });
    const triggers = new Map<string, string[]>([[START, [START]]]);
    for (const name of this.nodeNames) {
      channels.set(branchChannel(name), { kind: "ephemeral" });
      triggers.set(name, [branchChannel(name)]);
    }
    for (const e of edges) {
      if (e.from.length > 1) {
        const ch = `join:${e.from.join("+")}:${e.to}`;
        channels.set(ch, { kind: "barrier", names: [...e.from] });
        triggers.get(e.to)!.push(ch);
      } else if (e.to !== END) {
        const list = this.outEdges.get(e.from[0]!) ?? [];
        list.push(e.to);
        this.outEdges.set(e.from[0]!, list);
      }
    }
    this.def = {
      channels,
      stateKeys: Object.keys(spec),
      defaults,
      triggers,
      sortedNodes: [...triggers.keys()].sort(),
    };
  }

  /**
   * The writes of node `name` for `update` (its return value, or the values of an update "as
   * node"): state writes (coerced and given ids), then static edges, then conditional edges
   * evaluated on `state` plus these writes, then `Command.goto`. `shown` is the
   * update as recorded (the `updates` stream mode and metadata `writes`).
   * @internal
   */
  async nodeWrites(
    name: string,
    update: unknown,
    state: Record<string, unknown>,
    config: RunnableConfig,
    ids: Pick<Ids, "uuid">,
    routerRun?: RouterRun,
  ): Promise<{ writes: Write[]; shown: Record<string, unknown> | null }> {
    const writes: Write[] = [];
    let stateUpdate: unknown = update;
    let goto: unknown[] = [];
    if (Command.is(update)) {
      stateUpdate = update.update;
      if (update.goto !== undefined) goto = Array.isArray(update.goto) ? update.goto : [update.goto];
    }
    let shown: Record<string, unknown> | null = null;
    if (stateUpdate !== undefined && stateUpdate !== null) {
      if (!isPlainObject(stateUpdate)) {
        throw new InvalidUpdateError(
          `Expected node "${name}" to return an object, a Command or nothing, got ${Array.isArray(stateUpdate) ? "an array" : typeof stateUpdate}.`,
          "INVALID_GRAPH_NODE_RETURN_VALUE",
        );
      }
      for (const key of Object.keys(stateUpdate)) {
        const cdef = this.def.channels.get(key);
        const raw = stateUpdate[key];
        if (!cdef || !this.def.stateKeys.includes(key) || raw === undefined) continue;
        const value = freeze(cdef.kind === "reduce" && cdef.prepare ? cdef.prepare(raw, ids.uuid) : raw, true);
        writes.push([key, value]);
        (shown ??= {})[key] = value;
      }
    }
    for (const to of this.outEdges.get(name) ?? []) writes.push([branchChannel(to), null]);
    for (const e of this.edges) if (e.from.length > 1 && e.from.includes(name)) writes.push([`join:${e.from.join("+")}:${e.to}`, name]);
    const branches = this.branches.get(name);
    if (branches) {
      const local = this.localRead(state, writes);
      for (const b of branches) {
        const end = routerRun?.start(local);
        const out = await b.router(local, config);
        end?.(out);
        for (const dest of Array.isArray(out) ? out : [out]) {
          const mapped = typeof dest === "string" && b.pathMap ? b.pathMap[dest] : dest;
          if (mapped === undefined) throw new InvalidUpdateError(`Router of "${name}" returned "${String(dest)}", which is not in its path map.`);
          this.route(name, mapped, writes);
        }
      }
    }
    for (const dest of goto) this.route(name, dest, writes);
    return { writes, shown: shown && freeze(shown) };
  }

  private route(from: string, dest: unknown, writes: Write[]): void {
    if (dest === END) return;
    if (Send.is(dest) || (isPlainObject(dest) && typeof dest.node === "string")) {
      // A `Send`, or its wire form `{ node, input }` (SDK `Command.goto`).
      const send = dest as { node: string; args?: unknown; input?: unknown };
      if (!this.nodes.has(send.node)) throw new InvalidUpdateError(`"${from}" sent to unknown node "${send.node}".`);
      writes.push([TASKS, freeze({ node: send.node, args: Send.is(dest) ? send.args : send.input ?? send.args }, true)]);
    } else if (typeof dest === "string" && this.nodes.has(dest)) {
      writes.push([branchChannel(dest), null]);
    } else {
      throw new InvalidUpdateError(`"${from}" routed to unknown node "${String(dest)}".`);
    }
  }

  /** The state plus only these writes, through the reducers ("fresh local read"). */
  private localRead(state: Record<string, unknown>, writes: readonly Write[]): Record<string, unknown> {
    const byKey = new Map<string, unknown[]>();
    for (const [ch, v] of writes) if (this.def.stateKeys.includes(ch)) byKey.set(ch, [...(byKey.get(ch) ?? []), v]);
    if (byKey.size === 0) return state;
    const out = { ...state };
    for (const [key, values] of byKey) out[key] = updateChannel(key, this.def.channels.get(key)!, state[key], values);
    return Object.freeze(out);
  }

  /**
   * Coerces run input for the state keys (message ids assigned now). Bad input is an
   * `invalid_input` error naming the key.
   * @internal
   */
  prepareInput(input: unknown, ids: Pick<Ids, "uuid">, what = "Graph input"): Record<string, unknown> {
    if (!isPlainObject(input)) {
      throw invalidInput(
        `${what} must be an object with state keys (${this.def.stateKeys.join(", ")}), got ${Array.isArray(input) ? "an array" : typeof input}.`,
        [{ path: "", message: "expected an object" }],
      );
    }
    const out: Record<string, unknown> = {};
    for (const key of this.def.stateKeys) {
      if (!(key in input) || input[key] === undefined) continue;
      const cdef = this.def.channels.get(key)!;
      try {
        out[key] = cdef.kind === "reduce" && cdef.prepare ? cdef.prepare(input[key], ids.uuid) : input[key];
      } catch (err) {
        throw invalidInput(`Invalid input for "${key}": ${(err as Error).message}`, [{ path: key, message: (err as Error).message }]);
      }
    }
    // At its exact size (src/exact-objects.ts): the input checkpoint keeps it.
    return freeze(exactObject(out), true);
  }

  /**
   * The writes of a `Command` given as run input: `update` (an object, or a list of `[key, value]`
   * pairs) as state writes, then `goto` (node names, `END`, `Send`s or `{ node, input }`) as
   * branch and `Send` writes. Anything else is `invalid_input` naming the fix.
   * @internal
   */
  commandWrites(cmd: Command, ids: Pick<Ids, "uuid">): Write[] {
    const writes: Write[] = [];
    if (cmd.update !== undefined && cmd.update !== null) {
      for (const entry of Object.entries(this.prepareInput(updateObject(cmd.update), ids, "Command.update"))) writes.push(entry);
    }
    const goto: unknown[] = cmd.goto === undefined || cmd.goto === null ? [] : Array.isArray(cmd.goto) ? cmd.goto : [cmd.goto];
    for (const dest of goto) {
      const node = typeof dest === "string" ? dest : isPlainObject(dest) ? dest.node : undefined;
      if (typeof node !== "string") {
        throw invalidInput(`Command.goto entries must be node names, END, Send objects or { node, input }, got ${describeValue(dest)}.`, [
          { path: "goto", message: "expected a node name or { node, input }" },
        ]);
      }
      if (dest !== END && !this.nodes.has(node)) {
        throw invalidInput(`Command.goto names "${node}", which is not a node of this graph. Use END or one of: ${this.nodeNames.join(", ")}.`, [
          { path: "goto", message: `unknown node "${node}"` },
        ]);
      }
      this.route(INPUT, dest, writes);
    }
    return writes;
  }

  async validateInput(input: unknown, state?: InputState, breakpoints?: Breakpoints): Promise<void> {
    // A declared input schema checks plain-object input (not a Command, not null: a resume).
    if (this.declaredSchemas.input && isPlainObject(input)) await checkWithSchema(this.declaredSchemas.input, input, "input");
    return validateInput(this, input, state, breakpoints);
  }
  async validateContext(context: unknown): Promise<void> {
    if (this.declaredSchemas.context) await checkWithSchema(this.declaredSchemas.context, context ?? {}, "context");
  }
  async execute(options: ExecuteOptions): Promise<ExecuteResult> {
    if (this.declaredSchemas.input && isPlainObject(options.input)) await checkWithSchema(this.declaredSchemas.input, options.input, "input");
    await this.validateContext(options.context);
    return execute(this, options);
  }
  /** The graph's name (`compile({ name })`), reported by the `events` stream mode; "LangGraph" by default. */
  get name(): string {
    return this.options.name ?? "LangGraph";
  }
  getState(store: CheckpointStore, threadId: string, options?: GetStateOptions): Promise<StateSnapshot> {
    return getState(this, store, threadId, options);
  }
  getHistory(store: CheckpointStore, threadId: string, options?: HistoryOptions): Promise<StateSnapshot[]> {
    return getHistory(this, store, threadId, options);
  }
  bulkUpdateState(store: CheckpointStore, threadId: string, supersteps: Superstep[], options: UpdateStateOptions): Promise<CheckpointRef> {
    return bulkUpdateState(this, store, threadId, supersteps, options);
  }

  /**
   * The drawable graph; `xray` (true or a depth) expands subgraph nodes into their
   * subgraphs' nodes, ids prefixed `node:` (src/graph/draw.ts).
   */
  getGraph(options?: { xray?: boolean | number }): DrawableGraph {
    return drawGraph(this.drawSource(), options?.xray);
  }

  /** @internal What `drawGraph` reads of this graph (and, recursively, of its subgraphs). */
  drawSource(): DrawSource {
    const branchTargets = [...this.branches].flatMap(([from, branches]) =>
      branches.map((b) => ({
        from,
        targets: b.pathMap
          ? Object.entries(b.pathMap)
          : [...this.nodeNames.filter((n) => n !== from), END].map((t) => [t, t] as const),
      })),
    );
    return {
      nodeNames: this.nodeNames,
      edgeList: this.edges,
      branchTargets,
      interruptBefore: this.interruptBefore,
      interruptAfter: this.interruptAfter,
      subgraphs: new Map([...this.subgraphs].map(([name, sub]) => [name, sub.drawSource()])),
    };
  }

  getSubgraphs(options: { namespace?: string; recurse?: boolean } = {}): Promise<Record<string, GraphSchemas>> {
    return subgraphSchemas(this, options.namespace, options.recurse ?? false);
  }

  /**
   * JSON Schemas (draft-07): the state from the channel declarations, input / output / config /
   * context from the declared zod schemas (the state schema stands in for undeclared input and
   * output). Channels with the `addMessages` reducer carry LangGraph's `langgraph_type: "messages"`.
   */
  async getSchemas(): Promise<GraphSchemas> {
    const properties: Record<string, unknown> = {};
    for (const [key, cs] of Object.entries(this.spec)) properties[key] = cs.schema ?? inferSchema(cs.default?.());
    const messageKeys = Object.entries(this.spec).filter(([, cs]) => cs.reducer === addMessages).map(([key]) => key);
    const state = markMessages({ type: "object", title: this.options.name ?? "State", properties }, messageKeys);
    const { input, output, config, context } = this.declaredSchemas;
    return {
      input_schema: input ? markMessages(await toJsonSchema(input, "input"), messageKeys) : state,
      output_schema: output ? markMessages(await toJsonSchema(output, "output"), messageKeys) : state,
      state_schema: state,
      config_schema: config ? await toJsonSchema(config, "input") : null,
      context_schema: context ? await toJsonSchema(context, "input") : null,
    };
  }
}

/** `Command.update` as an object: a list of `[key, value]` pairs becomes one (each key once). */
function updateObject(update: unknown): unknown {
  if (!Array.isArray(update)) return update;
  const entries = new Map<string, unknown>();
  for (const pair of update) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
      throw invalidInput(`Command.update must be an object or a list of [key, value] pairs, got an entry that is ${describeValue(pair)}.`, [
        { path: "update", message: "expected [key, value]" },
      ]);
    }
    if (entries.has(pair[0])) throw invalidInput(`Command.update sets "${pair[0]}" twice; give each key once.`, [{ path: "update", message: `duplicate key "${pair[0]}"` }]);
    entries.set(pair[0], pair[1]);
  }
  return Object.fromEntries(entries);
}

function inferSchema(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) return { type: "array", items: {} };
  if (value === null || value === undefined) return {};
  if (typeof value === "object") return { type: "object" };
  return { type: typeof value === "bigint" ? "integer" : typeof value };
}
