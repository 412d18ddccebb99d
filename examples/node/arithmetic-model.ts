/**
 * A chat model that needs no network, for the LangGraph.js examples and tests (Node and browser:
 * it uses only `@langchain/core`). Asked an arithmetic question it calls `calculator`; given the
 * tool's result it answers "The answer is N."; anything else gets a fixed hint. It streams word
 * by word, so the `messages-tuple` stream mode shows its tokens.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";

const EXPRESSION = /[\d(][\d\s+\-*/().]*[\d)]/;

const textOf = (m: BaseMessage | undefined) => (m && typeof m.content === "string" ? m.content : "");

/** The offline chat model (see the file's comment). */
export class ArithmeticChatModel extends BaseChatModel {
  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return "graphdock-arithmetic";
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
