/**
 * The LangGraph.js graph of the LangGraph benches (./langgraph.bench.ts, ./langgraph-costs.ts):
 * one `StateGraph` over `MessagesAnnotation` whose node answers with a ~200-character AI
 * message, and a turn's ~200-character user input.
 */
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const answer = (text: string) => new AIMessage(`${"y".repeat(190)} ${text.slice(-8)}`);

/** A new, uncompiled builder of the chat graph (each host compiles its own). */
export const builder = () =>
  new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({ messages: [answer(String(state.messages[state.messages.length - 1]?.content ?? ""))] }))
    .addEdge(START, "reply")
    .addEdge("reply", END);

/** Turn `i`'s input. */
export const input = (i: number) => ({ messages: [{ role: "user", content: `${"x".repeat(190)} turn ${i}` }] });
