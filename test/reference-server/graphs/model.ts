/** The scripted chat model (./script.ts) as a LangChain chat model. */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { script } from "./script.js";

const asScript = (messages: BaseMessage[]) => messages.map((m) => ({ type: m.getType(), content: m.content }));

export class ScriptedChatModel extends BaseChatModel {
  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return "scripted";
  }

  /** Tools are known by name; binding changes nothing. */
  override bindTools(): this {
    return this;
  }

  /** Not streamed: the message the chunks make (a model answers the same either way). */
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const chunks = script(asScript(messages)).chunks.map((c) => new AIMessageChunk(c));
    const m = chunks.slice(1).reduce((a, b) => a.concat(b), chunks[0]!);
    const message = new AIMessage({ id: m.id, content: m.content, tool_calls: m.tool_calls, response_metadata: m.response_metadata, usage_metadata: m.usage_metadata });
    return { generations: [{ message, text: typeof message.content === "string" ? message.content : "" }] };
  }

  override async *_streamResponseChunks(messages: BaseMessage[], _options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    const { chunks, pauseMs } = script(asScript(messages));
    for (const c of chunks) {
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const chunk = new ChatGenerationChunk({ message: new AIMessageChunk(c), text: c.content });
      yield chunk;
      await runManager?.handleLLMNewToken(c.content, undefined, undefined, undefined, undefined, { chunk });
    }
  }
}
