/** Graphs of the studio's walks: the offline agent, a talker that streams and waits, a graph with a subgraph. */
import { END, START, StateGraph, messagesState } from "../../src/index.js";
export { agent } from "../../examples/node/agent.js";
export { talkerGraph } from "../browser/page/talker.js";

/** `plan`, then `research`: a subgraph of `search` and `summarize`. */
export function researchGraph() {
  const inner = new StateGraph(messagesState)
    .addNode("search", () => ({ messages: [{ role: "assistant", content: "searched" }] }))
    .addNode("summarize", () => ({ messages: [{ role: "assistant", content: "summarized" }] }))
    .addEdge(START, "search")
    .addEdge("search", "summarize")
    .addEdge("summarize", END)
    .compile();
  return new StateGraph(messagesState)
    .addNode("plan", () => ({ messages: [{ role: "assistant", content: "planned" }] }))
    .addNode("research", inner)
    .addEdge(START, "plan")
    .addEdge("plan", "research")
    .addEdge("research", END)
    .compile();
}
