/**
 * The offline agent again, built with LangGraph.js instead of graphdock's engine: `createAgent`
 * from `langchain` with a deterministic fake chat model (it streams its answer token by token and
 * calls a calculator tool) and a human approval (`interrupt()`) inside the tool. No network, no
 * API keys. graphdock hosts it as is (D23):
 *
 *   createRuntime({ graphs: { agent: graph } })      // or graph.json: "./node/agent-langgraph.ts:graph"
 *
 * `echo` is a `StateGraph` over `MessagesAnnotation` answering through the same fake model.
 */
import { tool } from "@langchain/core/tools";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { calculate } from "./agent.js";
import { ArithmeticChatModel } from "./arithmetic-model.js";

export { ArithmeticChatModel };

/** The calculator, after a human approves it (`interrupt`; resume with `true`/"yes" to run it). */
export const calculator = tool(
  async ({ expression }: { expression: string }) => {
    const answer = interrupt<{ question: string }, unknown>({ question: `Run calculator(${expression})?` });
    const ok = answer === true || answer === "yes" || (typeof answer === "object" && answer !== null && (answer as { approved?: unknown }).approved === true);
    return ok ? String(calculate(expression)) : "the user declined to run the calculator";
  },
  { name: "calculator", description: "Evaluates an arithmetic expression (+ - * / and parentheses).", schema: z.object({ expression: z.string() }) },
);

/** The agent: `createAgent` with the fake model and the approved calculator. */
export const graph = createAgent({ model: new ArithmeticChatModel(), tools: [calculator], name: "agent" });

/** echo: a `StateGraph` over `MessagesAnnotation` whose one node asks the fake model (no tools). */
export const echo = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => ({ messages: [await new ArithmeticChatModel().invoke(state.messages)] }))
  .addEdge(START, "model")
  .addEdge("model", END)
  .compile();
