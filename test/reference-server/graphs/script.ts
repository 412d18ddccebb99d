/**
 * What the scripted chat model answers (no network), as plain chunks, so that a LangChain model
 * (./model.ts) and a graphdock node stream exactly the same: asked about the weather in a city it
 * calls `get_weather`, its arguments streamed in two chunks; given the tool's answer it reports
 * it; anything else gets a greeting, word by word (a pause between words when asked to go
 * slowly). Its last chunk carries what real providers send last (`finish_reason`, token usage).
 * Message ids depend only on the conversation, so every server sees the same ones.
 */
export interface ScriptMessage {
  type: string;
  content: unknown;
}

export interface ScriptedChunk {
  id: string;
  content: string;
  tool_call_chunks?: Array<{ type: "tool_call_chunk"; name?: string; args: string; id?: string; index: number }>;
  response_metadata?: Record<string, unknown>;
  usage_metadata?: { input_tokens: number; output_tokens: number; total_tokens: number };
}

const textOf = (m: ScriptMessage | undefined) => (m && typeof m.content === "string" ? m.content : "");

/** The answer to a conversation: its chunks, and the pause before each (ms). */
export function script(messages: ScriptMessage[]): { chunks: ScriptedChunk[]; pauseMs: number } {
  const last = messages[messages.length - 1];
  const id = `ai-${messages.length}`;
  const done = (reason: string): ScriptedChunk => ({
    id,
    content: "",
    response_metadata: { finish_reason: reason, model_name: "scripted-1" },
    usage_metadata: { input_tokens: messages.length, output_tokens: 3, total_tokens: messages.length + 3 },
  });
  const asked = last?.type === "human" ? textOf(last) : "";
  const city = /weather in (\w+)/i.exec(asked)?.[1];
  if (city) {
    const call = `call-${messages.length}`;
    return {
      chunks: [
        { id, content: "", tool_call_chunks: [{ type: "tool_call_chunk", name: "get_weather", args: '{"city": ', id: call, index: 0 }] },
        { id, content: "", tool_call_chunks: [{ type: "tool_call_chunk", args: JSON.stringify(city) + "}", index: 0 }] },
        done("tool_calls"),
      ],
      pauseMs: 0,
    };
  }
  const answer = last?.type === "tool" ? `The forecast: ${textOf(last)}.` : "Hello! Ask me about the weather somewhere.";
  return { chunks: [...answer.split(/(?<= )/).map((word) => ({ id, content: word })), done("stop")], pauseMs: /slowly/i.test(asked) ? 150 : 0 };
}
