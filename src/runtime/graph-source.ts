/**
 * What a graph id names (D5): a compiled graph, a promise of one (awaited once, when the
 * runtime is created) or a factory called with the config of each use (a run's merged config; the
 * thread's or assistant's config for state reads and schemas), as the agent server allows
 * (`export const graph = async (config) => ...` in a langgraph.json module). This file is the one
 * place where a registered value becomes a `CompiledGraph`: other kinds of graph objects are
 * recognised in `compiledGraphOf`.
 */
import { invalidInput } from "../errors.js";
import type { CompiledGraph, RunnableConfig } from "../graph/types.js";
import type { ThreadRecord } from "../types.js";
import { isCompiledGraph, isLangGraphGraph, toCompiledGraph, type HostedGraph } from "./graph-port.js";

/** A graph built per use from the config of that use (a run, a state read, a schema request). */
export type GraphFactory = (config: RunnableConfig) => HostedGraph | PromiseLike<HostedGraph>;

/** What `createRuntime({ graphs })` accepts for one graph id. */
export type GraphEntry = HostedGraph | PromiseLike<HostedGraph> | GraphFactory;

/** A registered graph once its promise (if any) settled: compiled, or a factory. */
export type ResolvedEntry = { kind: "compiled"; graph: CompiledGraph } | { kind: "factory"; factory: GraphFactory };

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  (typeof v === "object" || typeof v === "function") && v !== null && typeof (v as { then?: unknown }).then === "function";

/**
 * The value as the graph the runtime drives: an graphdock graph as is, a LangGraph.js graph or
 * agent through its adapter (graph-port.ts); undefined when it is neither.
 */
async function compiledGraphOf(graphId: string, value: unknown): Promise<CompiledGraph | undefined> {
  if (isCompiledGraph(value)) return value;
  if (isLangGraphGraph(value)) return toCompiledGraph(graphId, value);
  return undefined;
}

const notAGraph = (graphId: string, what: string) =>
  invalidInput(
    `graphdock: graph "${graphId}" ${what} is not a compiled graph; register new StateGraph(...).compile(), a promise of one, or a factory (config) => graph.`,
  );

/**
 * Settles each entry: a promise is awaited (its rejection names the graph), a function is kept as
 * a factory, anything else must be a compiled graph. Throws `invalid_input` naming every bad id.
 */
export async function resolveEntries(graphs: Record<string, unknown>): Promise<Map<string, ResolvedEntry>> {
  const out = new Map<string, ResolvedEntry>();
  const bad: string[] = [];
  for (const [id, raw] of Object.entries(graphs)) {
    let value = raw;
    if (isThenable(value)) {
      try {
        value = await value;
      } catch (err) {
        throw invalidInput(`graphdock: the promise of graph "${id}" rejected: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const compiled = await compiledGraphOf(id, value);
    if (compiled) out.set(id, { kind: "compiled", graph: compiled });
    else if (typeof value === "function") out.set(id, { kind: "factory", factory: value as GraphFactory });
    else bad.push(id);
  }
  if (bad.length) {
    throw invalidInput(
      `graphdock: createRuntime: graphs ${bad.join(", ")} are not compiled graphs; pass new StateGraph(...).compile(), a promise of one, or a factory (config) => graph.`,
    );
  }
  return out;
}

/** The compiled graph of an entry for one use: a factory is called with `config`. */
export async function instantiate(graphId: string, entry: ResolvedEntry, config: RunnableConfig): Promise<CompiledGraph> {
  if (entry.kind === "compiled") return entry.graph;
  let made: unknown = entry.factory(config);
  if (isThenable(made)) made = await made;
  const compiled = await compiledGraphOf(graphId, made);
  if (!compiled) throw notAGraph(graphId, "(what its factory returned)");
  return compiled;
}

/** The config a graph factory gets for reads of a thread: its carried config plus its ids. */
export function threadGraphConfig(thread: ThreadRecord, graphId: string): Partial<RunnableConfig> {
  const assistantId = thread.metadata.assistant_id;
  return {
    ...thread.config,
    configurable: {
      ...thread.config?.configurable,
      thread_id: thread.thread_id,
      graph_id: graphId,
      ...(typeof assistantId === "string" ? { assistant_id: assistantId } : {}),
    },
  };
}
