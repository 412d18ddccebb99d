/**
 * The conversations both servers are put through (graphs in ./graphs): the weather agent asked,
 * paused at its tool's approval and resumed, once per stream mode and in the mixes clients use;
 * the subgraph graph with its subgraphs' events; then what the REST API answers about them.
 */
import type { Recorder } from "./transcript.js";

/** Every stream mode a run accepts that produces events. */
export const STREAM_MODES = ["values", "updates", "messages-tuple", "messages", "events", "custom", "tasks", "checkpoints", "debug"] as const;

/** The mixes clients send: the SDK's `useStream` and the AG-UI adapter. */
export const MIXES: string[][] = [
  ["messages", "values"],
  ["values", "messages-tuple", "updates"],
  ["events", "values", "updates", "messages-tuple"],
];

const ask = (content: string) => ({ messages: [{ type: "human", content, id: "question" }] });

/** The weather agent: a question that pauses at the tool's approval, then the approval. */
export async function agentConversation(r: Recorder, streamMode: string | string[]): Promise<string> {
  const modes = Array.isArray(streamMode) ? streamMode.join(",") : streamMode;
  const thread = await r.json<{ thread_id: string }>("POST", "/threads", {}, "POST /threads");
  const t = `/threads/${thread.thread_id}`;
  await r.stream(`${t}/runs/stream`, { assistant_id: "agent", input: ask("What is the weather in Paris?"), stream_mode: streamMode }, `agent ${modes}: ask`);
  await r.stream(`${t}/runs/stream`, { assistant_id: "agent", command: { resume: "yes" }, stream_mode: streamMode }, `agent ${modes}: approve`);
  return thread.thread_id;
}

/** The subgraph graph, with its subgraphs' events. */
export async function subgraphConversation(r: Recorder, streamMode: string | string[]): Promise<string> {
  const modes = Array.isArray(streamMode) ? streamMode.join(",") : streamMode;
  const thread = await r.json<{ thread_id: string }>("POST", "/threads", {}, "POST /threads");
  await r.stream(`/threads/${thread.thread_id}/runs/stream`, { assistant_id: "subgraph", input: ask("Hi"), stream_mode: streamMode, stream_subgraphs: true }, `subgraph ${modes}`);
  return thread.thread_id;
}

/** What the REST API says of a thread the agent conversation left, its runs and the agent. */
export async function restAnswers(r: Recorder, threadId: string): Promise<void> {
  const t = `/threads/${threadId}`;
  await r.json("GET", t, undefined, "GET /threads/<agent thread>");
  await r.json("GET", `${t}/state`, undefined, "GET /threads/<agent thread>/state");
  await r.json("POST", `${t}/history`, { limit: 10 }, "POST /threads/<agent thread>/history");
  const runs = await r.json<Array<{ run_id: string }>>("GET", `${t}/runs`, undefined, "GET /threads/<agent thread>/runs");
  await r.json("GET", `${t}/runs/${runs.at(-1)!.run_id}`, undefined, "GET /threads/<agent thread>/runs/<first>");
  const waited = await r.json<{ thread_id: string }>("POST", "/threads", {}, "POST /threads");
  await r.json("POST", `/threads/${waited.thread_id}/runs/wait`, { assistant_id: "agent", input: ask("Hello") }, "POST /threads/<new>/runs/wait");
  await r.json("POST", `/threads/${waited.thread_id}/runs/wait`, { assistant_id: "agent", input: ask("What is the weather in Rome?") }, "POST /threads/<new>/runs/wait (pauses)");
  const [assistant] = await r.json<Array<{ assistant_id: string }>>("POST", "/assistants/search", { graph_id: "agent" }, "POST /assistants/search");
  const a = `/assistants/${assistant!.assistant_id}`;
  await r.json("GET", a, undefined, "GET /assistants/<agent>");
  await r.json("GET", `${a}/graph`, undefined, "GET /assistants/<agent>/graph");
}

/** Everything above, in order. */
export async function converse(r: Recorder): Promise<void> {
  let last = "";
  for (const mode of [...STREAM_MODES, ...MIXES]) last = await agentConversation(r, mode);
  for (const mode of [...STREAM_MODES, ["values", "updates", "messages-tuple", "custom"]]) await subgraphConversation(r, mode);
  await restAnswers(r, last);
}
