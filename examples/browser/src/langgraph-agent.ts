/**
 * The same offline agent built with LangGraph.js, hosted by graphdock in this tab as is (D23): a
 * `StateGraph` over `MessagesAnnotation` from `@langchain/langgraph/web` (the entry without Node
 * built-ins) with the offline chat model of the Node example and a calculator tool.
 *
 * Browsers have no AsyncLocalStorage, and LangGraph.js's `interrupt()` finds its node's config
 * only there (it takes no config argument), so the approval here is a static breakpoint: the graph
 * pauses before `tools` (`interruptBefore`), the chat shows the pending tool call, and Approve
 * resumes the run with no input. For the same reason the model node hands its `config` to the
 * model, which is how its tokens reach the `messages-tuple` stream.
 */
import type { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph/web";
import { z } from "zod";
import { calculate } from "../../node/agent";
import { ArithmeticChatModel } from "../../node/arithmetic-model";

/** The graph id the runtime hosts it under (also its default assistant). */
export const LANGGRAPH_AGENT = "langgraph";

/** The calculator as a LangChain tool: invoked with a tool call, it returns the `ToolMessage`. */
const calculator = tool(async ({ expression }: { expression: string }) => String(calculate(expression)), {
  name: "calculator",
  description: "Evaluates an arithmetic expression (+ - * / and parentheses).",
  schema: z.object({ expression: z.string() }),
});

// The offline model knows its one tool by name; a real chat model would be given
// `.bindTools([calculator])` here.
const model = new ArithmeticChatModel();

const lastAi = (messages: unknown[]) => messages[messages.length - 1] as AIMessage;

/** model → (tool call?) tools → model …; compiled to pause before every tool run. */
export const langGraphAgent = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addNode("tools", async (state, config) => ({
    messages: await Promise.all((lastAi(state.messages).tool_calls ?? []).map((call) => calculator.invoke({ ...call, type: "tool_call" as const }, config))),
  }))
  .addEdge(START, "model")
  .addConditionalEdges("model", (state) => (lastAi(state.messages).tool_calls?.length ? "tools" : END), ["tools", END])
  .addEdge("tools", "model")
  .compile({ interruptBefore: ["tools"] });
