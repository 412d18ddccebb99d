/**
 * Where graphdock sends something other than the LangGraph.js agent server on purpose: each
 * decision of docs/decisions.md (D45-D49, D60) with the differences it explains, as predicates over
 * the differences the comparison finds (./transcript.ts). A difference none explains fails the
 * comparison.
 */
import type { Difference } from "./transcript.js";

export interface Decision {
  id: string;
  says: string;
  explains(d: Difference): boolean;
}

const last = (path: string) => path.slice(path.lastIndexOf(".") + 1);
const has = (d: Difference, key: string) => d.path.includes(key);
/** Absent from the reference, `value` in graphdock. */
const addedAs = (d: Difference, ...values: unknown[]) => d.reference === undefined && values.some((v) => JSON.stringify(v) === JSON.stringify(d.graphdock));
/** In a stream frame (not a REST answer). */
const inFrame = (d: Difference) => d.path.startsWith("frames[");
/** In a message dict: under a `messages` key, a messages-tuple frame's message, or a `messages/*` frame. */
const inMessage = (d: Difference) => /messages(\|[^\].]*)?(\[\d+\])?\.|messages\/(complete|partial)\[\d+\]\.|\bmessages(\|\S*)?\[0\]\./.test(d.path);

export const DECISIONS: Decision[] = [
  {
    id: "D45",
    says:
      "Messages outside the events mode are in their full wire form: name, id (null when absent), example, usage_metadata, artifact and status always there; " +
      "a message in state or an update has no tool_call_chunks; a messages-tuple chunk is typed AIMessageChunk.",
    explains: (d) =>
      !has(d, "events on_") &&
      inMessage(d) &&
      ((["name", "id", "usage_metadata", "artifact"].includes(last(d.path)) && addedAs(d, null)) ||
        (last(d.path) === "example" && addedAs(d, false)) ||
        (last(d.path) === "status" && addedAs(d, "success")) ||
        (last(d.path) === "tool_call_chunks" && d.graphdock === undefined && Array.isArray(d.reference)) ||
        (last(d.path) === "type" && d.reference === "ai" && d.graphdock === "AIMessageChunk")),
  },
  {
    id: "D46",
    says:
      "A run's metadata is what the client and the runtime give: no deployment-platform fields (langgraph_version, langgraph_plan, langgraph_host, " +
      "run_attempt, ls_integration in stored metadata), and a checkpoint's metadata holds no copy of the run's configurable (user-agent, x-* headers).",
    explains: (d) =>
      (["langgraph_version", "langgraph_plan", "langgraph_host", "langgraph_api_url", "run_attempt"].includes(last(d.path)) && d.graphdock === undefined) ||
      (/\bmetadata\.(user-agent|x-[\w-]+)$/.test(d.path) && d.graphdock === undefined) ||
      (last(d.path) === "ls_integration" && d.graphdock === undefined && !has(d, "events on_")),
  },
  {
    id: "D47",
    says:
      "REST records are the service's full records: threads with state_updated_at, error, values and interrupts, and the last run's configurable; states " +
      "with checkpoint_id, parent_checkpoint_id and interrupts; runs with every option in kwargs and the metadata they were given, newest first.",
    explains: (d) =>
      !inFrame(d) &&
      ((d.label.startsWith("POST /threads") && ["state_updated_at", "values", "interrupts", "error"].includes(last(d.path)) && d.reference === undefined) ||
        (d.label.startsWith("GET /threads/<agent thread>") && !d.label.includes("runs") && ["state_updated_at", "error", "checkpoint_id", "parent_checkpoint_id", "interrupts"].includes(last(d.path)) && d.reference === undefined) ||
        (d.label === "GET /threads/<agent thread>" && d.path.startsWith("body.config.configurable.") && d.reference === undefined) ||
        (d.label.includes("/history") && ["checkpoint_id", "parent_checkpoint_id", "interrupts"].includes(last(d.path)) && d.reference === undefined) ||
        (d.label.includes("/runs") && /^body(\[\d+\])?\.(kwargs|metadata)\b/.test(d.path))),
  },
  {
    id: "D48",
    says:
      "LangGraph.js 1.7's lightweight checkpoint envelopes (checkpoints frames nobody asked for, sent with stream_subgraphs and values) are not sent; " +
      "the legacy messages mode sends messages/complete with stream_subgraphs too.",
    explains: (d) =>
      d.path === "frames" &&
      Array.isArray(d.reference) &&
      Array.isArray(d.graphdock) &&
      JSON.stringify(withoutEnvelopes(d.reference as string[], d.graphdock as string[])) === JSON.stringify((d.graphdock as string[]).filter((n) => n !== "messages/complete")),
  },
  {
    id: "D49",
    says:
      "A checkpoints frame is the whole checkpoint (config, parent_config, checkpoint, parent_checkpoint, tasks besides values, metadata, next), as the " +
      "JS server's release 2.0.0 and the Python server send it; its latest release sends values, metadata and next only.",
    explains: (d) =>
      /^frames\[\d+\] checkpoints(\|\S*)?\.(config|parent_config|checkpoint|parent_checkpoint|tasks)$/.test(d.path) && d.reference === undefined,
  },
  {
    id: "D60",
    says: "A run record says which attempt it is in (`attempt`, 1 until a cut-off run is resumed); the JS server's runs have no such field.",
    explains: (d) => !inFrame(d) && d.label.includes("/runs") && /^body(\[\d+\])?\.attempt$/.test(d.path) && addedAs(d, 1),
  },
];

/** The reference's frame names without the checkpoint envelopes graphdock was not asked for (and without messages/complete, which it lacks with subgraphs). */
function withoutEnvelopes(reference: string[], graphdock: string[]): string[] {
  const asked = graphdock.some((n) => n.startsWith("checkpoints"));
  return reference.filter((n) => (asked || !n.startsWith("checkpoints")) && n !== "messages/complete");
}

/** The differences no decision explains. */
export const unexplained = (differences: Difference[]) => differences.filter((d) => !DECISIONS.some((x) => x.explains(d)));
