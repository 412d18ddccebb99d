/**
 * A tool-calling agent with a human approval: the scripted model asks for `get_weather`, the
 * tool (run by LangGraph's `ToolNode`) pauses on `interrupt()` for approval, then answers.
 */
import { tool } from "@langchain/core/tools";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { ScriptedChatModel } from "./model.js";

export const getWeather = tool(
  async ({ city }: { city: string }) => {
    const answer = interrupt({ question: `Look up the weather in ${city}?` });
    return answer === "yes" || answer === true ? `sunny in ${city}` : `the user declined to look up ${city}`;
  },
  { name: "get_weather", description: "The weather in a city.", schema: z.object({ city: z.string() }) },
);

const model = new ScriptedChatModel();

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode([getWeather]))
  .addEdge(START, "model")
  .addConditionalEdges("model", (state) => ((state.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END), ["tools", END])
  .addEdge("tools", "model")
  .compile();
