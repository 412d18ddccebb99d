/**
 * A scripted LangChain chat model for the AI SDK tests: it streams its answer token by token and,
 * when the user mentions a city, first calls the `get_weather` tool (streaming the call's
 * arguments), then answers from the tool's result, as a real tool-calling model does.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/** What the model says next, from the conversation so far. */
function plan(messages: BaseMessage[]): { text: string; call?: { name: string; args: Record<string, unknown>; id: string } } {
  const last = messages.at(-1);
  const type = last?._getType();
  if (type === "tool") return { text: `${last?.name === "get_weather" ? "The weather" : "Result"}: ${textOf(last)}` };
  const said = textOf(last);
  const city = /weather in (\w+)/i.exec(said)?.[1];
  const email = /email (\w+)/i.exec(said)?.[1];
  if (city) return { text: "Let me check. ", call: { name: "get_weather", args: { city }, id: `call_${messages.length}` } };
  if (email) return { text: "", call: { name: "send_email", args: { to: email }, id: `call_${messages.length}` } };
  return { text: `You said: ${said}` };
}

export class ScriptedChatModel extends BaseChatModel {
  override _llmType() {
    return "scripted";
  }
  override bindTools() {
    return this as never;
  }
  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const { text, call } = plan(messages);
    const message = new AIMessage({ content: text, tool_calls: call ? [{ ...call, type: "tool_call" }] : [] });
    return { generations: [{ text, message }] };
  }
  override async *_streamResponseChunks(messages: BaseMessage[], _options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun) {
    const { text, call } = plan(messages);
    const tokens = text.match(/\S+\s*/g) ?? [];
    for (const token of tokens) {
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) });
      yield chunk;
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
    }
    if (call) {
      const args = JSON.stringify(call.args);
      const half = Math.ceil(args.length / 2);
      const parts = [
        { name: call.name, args: args.slice(0, half), id: call.id, index: 0 },
        { args: args.slice(half), index: 0 },
      ];
      for (const part of parts) {
        const chunk = new ChatGenerationChunk({ text: "", message: new AIMessageChunk({ content: "", tool_call_chunks: [{ ...part, type: "tool_call_chunk" }] }) });
        yield chunk;
        await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk });
      }
    }
  }
}
