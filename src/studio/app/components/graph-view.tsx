/**
 * An assistant's graph (`getGraph({ xray })`) drawn as SVG, laid out by dagre: nodes, plain and
 * conditional (dashed) edges with their labels, and each expanded subgraph (node ids prefixed
 * `<node>:`) as a labelled box around its nodes. dagre loads with the first graph drawn.
 */
import { useEffect, useState } from "preact/hooks";

export interface DrawnGraph {
  nodes: Array<{ id: string | number; type?: string; data?: unknown; metadata?: Record<string, unknown> | null }>;
  edges: Array<{ source: string | number; target: string | number; conditional?: boolean; data?: unknown }>;
}

interface Layout {
  width: number;
  height: number;
  nodes: Array<{ id: string; label: string; x: number; y: number; w: number; h: number; kind: "start" | "end" | "node"; breakpoint?: string }>;
  clusters: Array<{ id: string; label: string; x: number; y: number; w: number; h: number }>;
  edges: Array<{ key: string; d: string; conditional: boolean; label?: string; lx?: number; ly?: number; source: string; target: string }>;
}

const CHAR = 7.4;

async function layoutOf(graph: DrawnGraph): Promise<Layout> {
  const { graphlib, layout } = await import("@dagrejs/dagre");
  const g = new graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const clusters = new Set<string>();
  for (const node of graph.nodes) {
    const id = String(node.id);
    const label = labelOf(id);
    g.setNode(id, { label, width: Math.max(72, label.length * CHAR + 28), height: 34 });
    // `a:b:c` is node c of the subgraph run by b, itself inside a's subgraph.
    const parts = id.split(":");
    for (let i = 1; i < parts.length; i++) {
      const cluster = `cluster:${parts.slice(0, i).join(":")}`;
      if (!clusters.has(cluster)) {
        clusters.add(cluster);
        g.setNode(cluster, { label: parts[i - 1] });
        if (i > 1) g.setParent(cluster, `cluster:${parts.slice(0, i - 1).join(":")}`);
      }
      if (i === parts.length - 1) g.setParent(id, cluster);
    }
  }
  graph.edges.forEach((edge, i) => {
    const label = typeof edge.data === "string" && edge.data !== String(edge.target) ? edge.data : undefined;
    g.setEdge(String(edge.source), String(edge.target), label ? { label, width: label.length * CHAR, height: 14 } : {}, `e${i}`);
  });
  layout(g);
  const out: Layout = { width: g.graph().width ?? 0, height: g.graph().height ?? 0, nodes: [], clusters: [], edges: [] };
  for (const id of g.nodes()) {
    const n = g.node(id) as { x: number; y: number; width: number; height: number; label?: string };
    if (clusters.has(id)) {
      out.clusters.push({ id, label: String(n.label ?? ""), x: n.x - n.width / 2, y: n.y - n.height / 2, w: n.width, h: n.height });
      continue;
    }
    const node = graph.nodes.find((m) => String(m.id) === id);
    const breakpoint = typeof node?.metadata?.__interrupt === "string" ? node.metadata.__interrupt : undefined;
    out.nodes.push({
      id,
      label: String(n.label),
      x: n.x - n.width / 2,
      y: n.y - n.height / 2,
      w: n.width,
      h: n.height,
      kind: id === "__start__" || id.endsWith(":__start__") ? "start" : id === "__end__" || id.endsWith(":__end__") ? "end" : "node",
      ...(breakpoint ? { breakpoint } : {}),
    });
  }
  graph.edges.forEach((edge, i) => {
    const e = g.edge({ v: String(edge.source), w: String(edge.target), name: `e${i}` }) as { points: Array<{ x: number; y: number }>; label?: string; x?: number; y?: number };
    const d = e.points.map((p, j) => `${j ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
    out.edges.push({ key: `e${i}`, d, conditional: !!edge.conditional, source: String(edge.source), target: String(edge.target), ...(e.label ? { label: e.label, lx: e.x, ly: e.y } : {}) });
  });
  return out;
}

const labelOf = (id: string) => {
  const last = id.split(":").pop()!;
  return last === "__start__" ? "start" : last === "__end__" ? "end" : last;
};

export function GraphView(props: { graph: DrawnGraph; title: string }) {
  const [layout, setLayout] = useState<Layout | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    layoutOf(props.graph).then((l) => live && setLayout(l), (err) => live && setError(String((err as Error).message ?? err)));
    return () => {
      live = false;
    };
  }, [props.graph]);
  if (error) return <p class="error-note">The graph could not be drawn: {error}</p>;
  if (!layout) return <p class="muted">Drawing the graph…</p>;
  const description = `${props.graph.nodes.length} nodes: ${layout.nodes.map((n) => n.id).join(", ")}. Edges: ${layout.edges
    .map((e) => `${e.source} to ${e.target}${e.conditional ? " (conditional)" : ""}`)
    .join("; ")}.`;
  return (
    <figure class="graph" data-testid="graph" tabIndex={0}>
      <svg viewBox={`0 0 ${layout.width} ${layout.height}`} width={layout.width} height={layout.height} role="img" aria-label={`${props.title}. ${description}`}>
        <defs>
          <marker id="gd-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="arrow" />
          </marker>
        </defs>
        {layout.clusters.map((c) => (
          <g key={c.id} class="cluster" data-testid="graph-cluster">
            <rect x={c.x} y={c.y} width={c.w} height={c.h} rx={8} />
            <text x={c.x + 8} y={c.y + 14}>
              {c.label}
            </text>
          </g>
        ))}
        {layout.edges.map((e) => (
          <g key={e.key} class={e.conditional ? "edge conditional" : "edge"}>
            <path d={e.d} marker-end="url(#gd-arrow)" />
            {e.label && e.lx !== undefined && (
              <text x={e.lx} y={e.ly} text-anchor="middle">
                {e.label}
              </text>
            )}
          </g>
        ))}
        {layout.nodes.map((n) => (
          <g key={n.id} class={`node node-${n.kind}`} data-testid="graph-node" data-node={n.id}>
            <rect x={n.x} y={n.y} width={n.w} height={n.h} rx={n.kind === "node" ? 6 : 17} />
            <text x={n.x + n.w / 2} y={n.y + n.h / 2 + 4} text-anchor="middle">
              {n.label}
              {n.breakpoint ? " ⏸" : ""}
            </text>
          </g>
        ))}
      </svg>
      <figcaption class="muted">Dashed edges are conditional. {layout.clusters.length ? "Boxes are subgraphs." : ""}</figcaption>
    </figure>
  );
}
