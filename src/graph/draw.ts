/**
 * `getGraph({ xray })`: the drawable graph JSON of a compiled graph, with subgraphs
 * expanded as LangGraph.js draws them. With `xray` true (or a depth n > 0, which expands n
 * levels), each node that runs a subgraph is replaced by the subgraph's own nodes, their ids
 * prefixed `node:` (`sub:c1`, nested `sub:leaf:c1`) and the subgraph's `__start__`/`__end__`
 * trimmed; edges into the node go to the subgraph's first node, edges out of it leave from its
 * last node. As in LangGraph, a subgraph that has a single node once trimmed stays one node,
 * a subgraph with no single last node gets no outgoing edges, and `__end__` is drawn only
 * when an edge reaches it.
 */
import { invalidInput } from "../errors.js";
import { END, START } from "./constants.js";
import type { DrawableGraph } from "./types.js";

type DrawnNode = DrawableGraph["nodes"][number];
type DrawnEdge = DrawableGraph["edges"][number];

/** What `drawGraph` needs of a compiled graph. */
export interface DrawSource {
  readonly nodeNames: readonly string[];
  /** Plain edges; a list of sources is a join. */
  readonly edgeList: ReadonlyArray<{ from: readonly string[]; to: string }>;
  /** Conditional edges by source: label -> target (the path map, or every other node and END). */
  readonly branchTargets: ReadonlyArray<{ from: string; targets: ReadonlyArray<readonly [string, string]> }>;
  /** Breakpoints, drawn as `metadata.__interrupt` ("before", "after" or "before,after"). */
  readonly interruptBefore: readonly string[] | "*";
  readonly interruptAfter: readonly string[] | "*";
  /** Node name -> the graph it runs as a subgraph. */
  readonly subgraphs: ReadonlyMap<string, DrawSource>;
}

/** The node with no incoming edge (sources in `exclude` ignored), if exactly one. */
function firstNode(g: DrawableGraph, exclude: string[] = []): DrawnNode | undefined {
  const targets = new Set(g.edges.filter((e) => !exclude.includes(e.source)).map((e) => e.target));
  const found = g.nodes.filter((n) => !exclude.includes(n.id) && !targets.has(n.id));
  return found.length === 1 ? found[0] : undefined;
}
/** The node with no outgoing edge (targets in `exclude` ignored), if exactly one. */
function lastNode(g: DrawableGraph, exclude: string[] = []): DrawnNode | undefined {
  const sources = new Set(g.edges.filter((e) => !exclude.includes(e.target)).map((e) => e.source));
  const found = g.nodes.filter((n) => !exclude.includes(n.id) && !sources.has(n.id));
  return found.length === 1 ? found[0] : undefined;
}
function removeNode(g: DrawableGraph, id: string): void {
  g.nodes = g.nodes.filter((n) => n.id !== id);
  g.edges = g.edges.filter((e) => e.source !== id && e.target !== id);
}
/** Drops the first (last) node when another single first (last) node remains behind it. */
function trim(g: DrawableGraph): void {
  const first = firstNode(g);
  if (first && firstNode(g, [first.id])) removeNode(g, first.id);
  const last = lastNode(g);
  if (last && lastNode(g, [last.id])) removeNode(g, last.id);
}

const breakpointOf = (list: readonly string[] | "*", name: string) => list === "*" || list.includes(name);

/** Draws `graph`, expanding subgraphs `xray` levels deep (true: all levels; false/0/absent: none). */
export function drawGraph(graph: DrawSource, xray?: boolean | number): DrawableGraph {
  if (xray !== undefined && typeof xray !== "boolean" && !(Number.isInteger(xray) && xray >= 0)) {
    throw invalidInput(`getGraph: xray must be a boolean or a non-negative integer depth, got ${String(xray)}.`, [
      { path: "xray", message: "expected boolean or integer >= 0" },
    ]);
  }
  const out: DrawableGraph = { nodes: [{ id: START, type: "schema", data: START }], edges: [] };
  // Where an edge leaving (entering) a node name starts (ends) in the drawing.
  const leaving = new Map<string, string>([[START, START]]);
  const entering = new Map<string, string>();
  for (const name of graph.nodeNames) {
    const sub = xray ? graph.subgraphs.get(name) : undefined;
    if (sub) {
      const inner = drawGraph(sub, typeof xray === "number" ? xray - 1 : xray);
      trim(inner);
      if (inner.nodes.length > 1) {
        const prefixed = (id: string) => `${name}:${id}`;
        for (const n of inner.nodes) out.nodes.push({ ...n, id: prefixed(n.id) });
        for (const e of inner.edges) out.edges.push({ ...e, source: prefixed(e.source), target: prefixed(e.target) });
        const first = firstNode(inner);
        const last = lastNode(inner);
        if (!first) throw invalidInput(`getGraph: subgraph "${name}" has no single entry node to draw.`);
        entering.set(name, prefixed(first.id));
        if (last) leaving.set(name, prefixed(last.id));
        continue;
      }
    }
    const before = breakpointOf(graph.interruptBefore, name);
    const after = breakpointOf(graph.interruptAfter, name);
    const interrupt = before && after ? "before,after" : before ? "before" : after ? "after" : undefined;
    out.nodes.push({
      id: name,
      type: "runnable",
      data: { id: ["graphdock", "graph", name], name },
      ...(interrupt ? { metadata: { __interrupt: interrupt } } : {}),
    });
    leaving.set(name, name);
    entering.set(name, name);
  }
  const drawn: Array<{ source: string; target: string; conditional: boolean }> = [];
  const addEdge = (source: string, target: string, conditional: boolean, label?: string) => {
    if (target === END && !entering.has(END)) {
      out.nodes.push({ id: END, type: "schema", data: END });
      entering.set(END, END);
    }
    const from = leaving.get(source);
    const to = entering.get(target);
    if (from === undefined || to === undefined) return;
    drawn.push({ source, target, conditional });
    const edge: DrawnEdge = { source: from, target: to, conditional, ...(label !== undefined && label !== target ? { data: label } : {}) };
    out.edges.push(edge);
  };
  const plain = graph.edgeList.flatMap((e) => e.from.map((f) => [f, e.to] as const)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [from, to] of plain) addEdge(from, to, false);
  for (const { from, targets } of graph.branchTargets) for (const [label, to] of targets) addEdge(from, to, true, label);
  // A node reached by a plain edge that has no edge out ends the graph (LangGraph draws it so).
  const sources = new Set(drawn.map((e) => e.source));
  const ends = [...new Set(drawn.filter((e) => !e.conditional && e.target !== END).map((e) => e.target))].sort();
  for (const name of ends) if (!sources.has(name)) addEdge(name, END, false);
  return out;
}
