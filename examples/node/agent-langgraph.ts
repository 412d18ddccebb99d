/**
 * The offline agent again, built with LangGraph.js instead of agentdock's engine: `createAgent`
 * from `langchain` with a deterministic fake chat model (it streams its answer token by token and
 * calls a calculator tool) and a human approval (`interrupt()`) inside the tool. No network, no
 * API keys. agentdock hosts it as is (D23):
 *
 *   createRuntime({ graphs: { agent: graph } })      // or graph.json: "./node/agent-langgraph.ts:graph"
 *
 * `echo` is a `StateGraph` over `MessagesAnnotation` answering through the same fake model.
 */
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { calculate } from "./agent.js";

const EXPRESSION = /[\d(][\d\s+\-*/().]*[\d)]/;

const textOf = (m: BaseMessage | undefined) => (m && typeof m.content === "string" ? m.content : "");

/**
 * A chat model that needs no network: asked an arithmetic question it calls `calculator`; given
 * the tool's result it answers "The answer is N."; anything else gets a fixed hint. It streams
 * word by word (the `messages-tuple` stream mode shows the tokens).
 */
export class ArithmeticChatModel extends BaseChatModel {
  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return "agentdock-arithmetic";
  }

  /** Tools are known by name (`calculator`); binding changes nothing. */
  override bindTools(): this {
    return this;
  }

  /** The reply, as chunks: one per word, or one carrying the tool call. */
  private reply(messages: BaseMessage[]): AIMessageChunk[] {
    const last = messages[messages.length - 1];
    // Ids depend only on the conversation, so runs are reproducible.
    const id = `ai-${messages.length}`;
    const type = last?.getType();
    const expression = type === "human" ? textOf(last).match(EXPRESSION)?.[0].trim() : undefined;
    if (expression && /[-+*/]/.test(expression)) {
      return [
        new AIMessageChunk({
          id,
          content: "",
          tool_call_chunks: [{ type: "tool_call_chunk", name: "calculator", args: JSON.stringify({ expression }), id: `call-${messages.length}`, index: 0 }],
        }),
      ];
    }
    const answer = type === "tool" ? `The answer is ${textOf(last)}.` : `I can do arithmetic. Ask me something like "what is 12 * (3 + 4)?" You said: ${textOf(last)}`;
    return answer.split(/(?<= )/).map((word) => new AIMessageChunk({ id, content: word }));
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const chunks = this.reply(messages);
    const message = chunks.slice(1).reduce((a, b) => a.concat(b), chunks[0]!);
    const full = new AIMessage({ id: message.id, content: message.content, tool_calls: message.tool_calls ?? [] });
    return { generations: [{ message: full, text: textOf(full) }] };
  }

  override async *_streamResponseChunks(messages: BaseMessage[], _options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    for (const message of this.reply(messages)) {
      const text = typeof message.content === "string" ? message.content : "";
      const chunk = new ChatGenerationChunk({ message, text });
      yield chunk;
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

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
