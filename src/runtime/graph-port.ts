/**
 * The graphs a runtime hosts. The runtime drives every graph through one surface, `CompiledGraph`
 * (src/graph/types.ts: execute, validateInput, getState, getHistory, bulkUpdateState, getGraph,
 * getSchemas); graphdock's own `StateGraph(...).compile()` is one, and a compiled LangGraph.js
 * graph is given that surface by the adapter in `graphdock/langgraph` (D23).
 *
 * The core entry never imports `@langchain/*` (D18): a LangGraph.js graph is recognised here by
 * shape (its `lg_is_pregel` marker and methods), and only then is the adapter loaded. It is found
 * (1) where `graphdock/langgraph` registered itself when it was imported (browser bundles: import
 * it, or wrap graphs with its `fromLangGraph`), else (2) by a dynamic `import("graphdock/langgraph")`
 * whose specifier is a variable, so bundlers of apps that never use LangGraph.js do not follow it
 * into the optional peers (Node resolves it through the package's own exports).
 */
import { invalidInput } from "../errors.js";
import type { CompiledGraph } from "../graph/types.js";

/**
 * A compiled LangGraph.js graph (`StateGraph(...).compile()`, `createAgent`, `createReactAgent`),
 * as far as the runtime needs to recognise one. Typed loosely on purpose: the core entry does not
 * depend on `@langchain/langgraph`'s types.
 */
export interface LangGraphGraph {
  readonly lg_is_pregel: boolean;
  readonly nodes: Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  stream(input: any, options?: any): Promise<AsyncIterable<any>>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  getState(config: any, options?: any): Promise<any>;
}

/** An agent from `langchain`'s `createAgent`: it wraps its compiled graph (`agent.graph`). */
export interface LangGraphAgent {
  readonly graph: LangGraphGraph;
}

/** What `createRuntime({ graphs })` accepts per graph id: an graphdock graph, or a LangGraph.js graph or agent. */
export type HostedGraph = CompiledGraph | LangGraphGraph | LangGraphAgent;

/** What `graphdock/langgraph` provides to the core (and to the graph.json loader). */
export interface LangGraphHost {
  /** `options`: `graphdock/langgraph`'s `FromLangGraphOptions` (typed loosely: the core does not import it). */
  fromLangGraph(graph: LangGraphGraph, options?: Record<string, unknown>): CompiledGraph | Promise<CompiledGraph>;
}

/** Where `graphdock/langgraph` registers itself when loaded (one per realm, shared by bundle copies). */
export const LANGGRAPH_HOST_KEY = Symbol.for("graphdock.langgraph.host");

/** True for an graphdock compiled graph. */
export const isCompiledGraph = (g: unknown): g is CompiledGraph =>
  typeof g === "object" && g !== null && typeof (g as { execute?: unknown }).execute === "function" && typeof (g as { getState?: unknown }).getState === "function";

const isPregel = (g: unknown): g is LangGraphGraph =>
  typeof g === "object" &&
  g !== null &&
  (g as { lg_is_pregel?: unknown }).lg_is_pregel === true &&
  typeof (g as { stream?: unknown }).stream === "function" &&
  typeof (g as { getState?: unknown }).getState === "function";

/** True for a compiled LangGraph.js graph (a `Pregel`, by its marker and methods) or a `createAgent` agent wrapping one. */
export const isLangGraphGraph = (g: unknown): g is LangGraphGraph | LangGraphAgent =>
  isPregel(g) || (typeof g === "object" && g !== null && !isCompiledGraph(g) && isPregel((g as { graph?: unknown }).graph));

/** The compiled graph of a LangGraph.js graph or agent. */
export const langGraphOf = (g: LangGraphGraph | LangGraphAgent): LangGraphGraph => (isPregel(g) ? g : g.graph);

/** The import of `graphdock/langgraph` by name, made once (graphs are hosted concurrently). */
let imported: Promise<Partial<LangGraphHost>> | undefined;

/** The adapter: where `graphdock/langgraph` registered itself, else imported by name (module comment). */
export async function langGraphHost(graphId: string): Promise<LangGraphHost> {
  const registered = Reflect.get(globalThis, LANGGRAPH_HOST_KEY) as LangGraphHost | undefined;
  if (registered) return registered;
  const specifier = ["graphdock", "langgraph"].join("/");
  try {
    const mod = await (imported ??= import(/* @vite-ignore */ /* webpackIgnore: true */ specifier) as Promise<Partial<LangGraphHost>>);
    // Importing it registered its host (which checks the LangGraph.js release first).
    const host = (Reflect.get(globalThis, LANGGRAPH_HOST_KEY) as LangGraphHost | undefined) ?? (typeof mod.fromLangGraph === "function" ? { fromLangGraph: mod.fromLangGraph } : undefined);
    if (host) return host;
  } catch (err) {
    imported = undefined;
    throw invalidInput(
      `graphdock: graph "${graphId}" is a LangGraph.js graph, and its adapter could not be loaded (${String((err as Error)?.message ?? err)}). ` +
        `Install the optional peers (npm i @langchain/langgraph @langchain/core) and, in a browser bundle, import "graphdock/langgraph" or pass fromLangGraph(graph).`,
    );
  }
  throw invalidInput(`graphdock: graph "${graphId}" is a LangGraph.js graph; import "graphdock/langgraph" to host it.`);
}

/**
 * The graph the runtime drives for a resolved graph value: an graphdock graph as is, a LangGraph.js
 * graph through its adapter; anything else is `invalid_input` naming the graph id.
 */
export async function toCompiledGraph(graphId: string, graph: unknown): Promise<CompiledGraph> {
  if (isCompiledGraph(graph)) return graph;
  if (isLangGraphGraph(graph)) return (await langGraphHost(graphId)).fromLangGraph(langGraphOf(graph));
  throw invalidInput(
    `graphdock: createRuntime: graph "${graphId}" is not a compiled graph; pass new StateGraph(...).compile() (graphdock or @langchain/langgraph) or a createAgent(...) agent.`,
  );
}
