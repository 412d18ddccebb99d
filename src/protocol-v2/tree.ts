/**
 * `agent.getTree` (docs/protocol-v2.md): the subgraph namespaces a run opened, read from the
 * `lifecycle` events the translator sends for them (`started` with the node's name as
 * `graph_name`, then `completed` / `failed` / `interrupted`). Each child's status is the latest
 * lifecycle event of its namespace; children nest by namespace (`["a:1", "b:2"]` sits under
 * `["a:1"]`), in the order they started.
 */
import type { DraftEvent } from "./types.js";

/** A status of the `lifecycle` channel (the protocol's `AgentStatus`). */
export type AgentStatus = "started" | "running" | "completed" | "failed" | "interrupted";

/** One node of `agent.getTree`'s result (the protocol's `AgentTreeNode`). */
export interface AgentTreeNode {
  namespace: string[];
  status: AgentStatus;
  graph_name: string;
  children: AgentTreeNode[];
}

const STATUSES = new Set<string>(["started", "running", "completed", "failed", "interrupted"]);
/** How many runs' trees a session remembers (the latest ones). */
const KEPT_RUNS = 16;

/** Subgraph namespaces per run, as lifecycle events report them. */
export class SubgraphTrees {
  private readonly runs = new Map<string, Map<string, { namespace: string[]; status: AgentStatus; graph_name: string }>>();

  /** Records the subgraph lifecycle events among `drafts`, all of run `runId`. */
  note(runId: string, drafts: readonly DraftEvent[]): void {
    for (const d of drafts) {
      if (d.method !== "lifecycle" || d.namespace.length === 0) continue;
      const data = (d.data ?? {}) as { event?: unknown; graph_name?: unknown };
      if (typeof data.event !== "string" || !STATUSES.has(data.event)) continue;
      let tree = this.runs.get(runId);
      if (!tree) {
        tree = new Map();
        this.runs.set(runId, tree);
        if (this.runs.size > KEPT_RUNS) this.runs.delete(this.runs.keys().next().value!);
      }
      const key = d.namespace.join("|");
      const last = d.namespace[d.namespace.length - 1]!;
      const name = typeof data.graph_name === "string" ? data.graph_name : (tree.get(key)?.graph_name ?? last.slice(0, last.lastIndexOf(":")));
      tree.set(key, { namespace: [...d.namespace], status: data.event as AgentStatus, graph_name: name });
    }
  }

  /** The subgraphs of run `runId` nested by namespace (`[]` for a run without any, or unknown). */
  children(runId: string | undefined): AgentTreeNode[] {
    const tree = runId === undefined ? undefined : this.runs.get(runId);
    if (!tree) return [];
    const byKey = new Map<string, AgentTreeNode>();
    const roots: AgentTreeNode[] = [];
    for (const [key, n] of tree) {
      const node: AgentTreeNode = { namespace: n.namespace, status: n.status, graph_name: n.graph_name, children: [] };
      byKey.set(key, node);
      const parent = byKey.get(n.namespace.slice(0, -1).join("|"));
      (n.namespace.length > 1 && parent ? parent.children : roots).push(node);
    }
    return roots;
  }
}
