/**
 * The weather agent of test/reference-server/graphs/agent.ts written with graphdock's own engine:
 * the same scripted model (its chunks streamed with `ctx.emitMessage`), the same tool behind an
 * approval (`ctx.runTool`, `ctx.interrupt`), the same routing.
 */
import { END, START, StateGraph, messagesState, type AIMessage, type Message, type NodeContext } from "../../src/index.js";
import { script, type ScriptedChunk } from "../reference-server/graphs/script.js";

/** The scripted model as a node: streams its chunks, returns the message they make. */
async function model(state: { messages: Message[] }, ctx: NodeContext) {
  const { chunks, pauseMs } = script(state.messages);
  for (const chunk of chunks) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    ctx.emitMessage({ ...chunk, type: "AIMessageChunk" });
  }
  return { messages: [messageOf(chunks)] };
}

/** The message a model's chunks make. */
function messageOf(chunks: ScriptedChunk[]) {
  const last = chunks[chunks.length - 1]!;
  const calls = chunks.flatMap((c) => c.tool_call_chunks ?? []);
  const first = calls[0];
  return {
    id: last.id,
    type: "ai",
    content: chunks.map((c) => c.content).join(""),
    tool_calls: first ? [{ name: first.name!, args: JSON.parse(calls.map((c) => c.args).join("")), id: first.id!, type: "tool_call" as const }] : [],
    response_metadata: last.response_metadata ?? {},
    usage_metadata: last.usage_metadata ?? null,
  };
}

/** The tool calls of the last message, each behind a human approval. */
async function tools(state: { messages: Message[] }, ctx: NodeContext) {
  const last = state.messages[state.messages.length - 1] as AIMessage;
  const messages = [];
  for (const call of last.tool_calls) {
    messages.push(
      await ctx.runTool(call, ({ city }) => {
        const answer = ctx.interrupt({ question: `Look up the weather in ${String(city)}?` });
        return answer === "yes" || answer === true ? `sunny in ${String(city)}` : `the user declined to look up ${String(city)}`;
      }),
    );
  }
  return { messages };
}

export const nativeAgent = new StateGraph(messagesState)
  .addNode("model", model)
  .addNode("tools", tools)
  .addEdge(START, "model")
  .addConditionalEdges("model", (state) => ((state.messages[state.messages.length - 1] as AIMessage).tool_calls.length ? "tools" : END), ["tools", END])
  .addEdge("tools", "model")
  .compile();
