/**
 * Subgraphs: a node that runs a compiled graph keeps that graph's checkpoints under
 * the task's namespace `node:task_id` (nested ones joined with `|`). This module names
 * namespaces, finds the subgraph a namespace belongs to, and lists a graph's subgraphs.
 */
import { invalidInput, notFound } from "../errors.js";
import type { CompiledStateGraph } from "./graph.js";
import type { GraphSchemas } from "./types.js";

/** Separates the levels of a nested namespace. */
export const NS_SEP = "|";
/** Separates a node name from its task id within one level. */
export const NS_END = ":";

/** The namespace of a task of the graph running in `ns`: `node:task_id`, nested under `ns`. */
export const taskNamespace = (ns: string, name: string, taskId: string): string =>
  ns === "" ? `${name}${NS_END}${taskId}` : `${ns}${NS_SEP}${name}${NS_END}${taskId}`;

/** The levels of a namespace (`[]` for the root graph). */
export const nsSegments = (ns: string): string[] => (ns === "" ? [] : ns.split(NS_SEP));

/** The node names along a namespace (task ids dropped): `a:1|b:2` -> `["a", "b"]`. */
export const nodePath = (ns: string): string[] =>
  nsSegments(ns).map((segment) => (segment.includes(NS_END) ? segment.slice(0, segment.lastIndexOf(NS_END)) : segment));

/** True for an graphdock compiled graph (also across bundle copies). */
export function isCompiledStateGraph(value: unknown): value is CompiledStateGraph {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { execute?: unknown }).execute === "function" &&
    typeof (value as { nodeWrites?: unknown }).nodeWrites === "function" &&
    (value as { def?: unknown }).def !== undefined
  );
}

/**
 * The graph whose checkpoints live in namespace `ns` of a thread run by `root`: `root` itself
 * for `""`, else the subgraph declared on each node along the path. An unknown path is
 * `invalid_input` naming the graph's subgraphs.
 */
export function graphAt(root: CompiledStateGraph, ns: string): CompiledStateGraph {
  let graph = root;
  const walked: string[] = [];
  for (const name of nodePath(ns)) {
    const sub = graph.subgraphs.get(name);
    if (!sub) {
      const known = [...graph.subgraphs.keys()];
      const where = walked.length ? `subgraph "${walked.join(NS_SEP)}"` : "this graph";
      if (!graph.nodes.has(name)) throw notFound(`Checkpoint namespace "${ns}": ${where} has no node "${name}".`);
      throw invalidInput(
        `Checkpoint namespace "${ns}": node "${name}" of ${where} is not a subgraph` +
          (known.length ? ` (subgraph nodes: ${known.join(", ")}).` : " (it has no subgraph nodes)."),
      );
    }
    walked.push(name);
    graph = sub;
  }
  return graph;
}

/**
 * `getSubgraphs`: the subgraphs of `graph` keyed by namespace without task ids,
 * nested ones joined with `|` when `recurse`; with `namespace`, only the subgraph there
 * (a nested one needs `recurse`, as in LangGraph). Unknown namespaces give `{}`.
 */
export async function subgraphSchemas(graph: CompiledStateGraph, namespace: string | undefined, recurse: boolean): Promise<Record<string, GraphSchemas>> {
  const out: Record<string, Promise<GraphSchemas>> = {};
  const walk = (g: CompiledStateGraph, prefix: string, wanted: string | undefined): boolean => {
    for (const [name, sub] of g.subgraphs) {
      if (wanted !== undefined && wanted !== name && !wanted.startsWith(`${name}${NS_SEP}`)) continue;
      const key = `${prefix}${name}`;
      if (wanted === name) {
        out[key] = sub.getSchemas();
        return true;
      }
      if (wanted === undefined) out[key] = sub.getSchemas();
      if (recurse && walk(sub, `${key}${NS_SEP}`, wanted === undefined ? undefined : wanted.slice(name.length + 1))) return true;
    }
    return false;
  };
  walk(graph, "", namespace === "" ? undefined : namespace);
  const keys = Object.keys(out);
  const values = await Promise.all(keys.map((k) => out[k]!));
  return Object.fromEntries(keys.map((k, i) => [k, values[i]!]));
}
