/**
 * Chunk concatenation (the legacy `messages/partial` and the engine's `on_chat_model_end`) against
 * LangChain's own `AIMessageChunk.concat`: the same streams of chunks, accumulated both ways, give
 * the same message.
 */
import { AIMessageChunk } from "@langchain/core/messages";
import { parsePartialJson as langchainPartialJson } from "@langchain/core/output_parsers";
import { describe, expect, test } from "vitest";
import { concatChunks, parsePartialJson } from "../../src/graph/chunks.js";

const asDict = (m: AIMessageChunk) => {
  const { type, data } = m.toDict();
  return { ...data, type } as Record<string, unknown>;
};

const streams: Record<string, AIMessageChunk[]> = {
  "text, then the provider's last chunk (finish reason, token usage)": [
    new AIMessageChunk({ id: "m1", content: "The " }),
    new AIMessageChunk({ id: "m1", content: "answer." }),
    new AIMessageChunk({
      id: "m1",
      content: "",
      response_metadata: { finish_reason: "stop", model_name: "m" },
      usage_metadata: { input_tokens: 5, output_tokens: 2, total_tokens: 7, input_token_details: { cache_read: 1 } },
    }),
  ],
  "a tool call whose arguments stream in pieces": [
    new AIMessageChunk({ id: "m2", content: "", tool_call_chunks: [{ type: "tool_call_chunk", name: "get_weather", args: '{"city": ', id: "c1", index: 0 }] }),
    new AIMessageChunk({ id: "m2", content: "", tool_call_chunks: [{ type: "tool_call_chunk", args: '"Par', index: 0 }] }),
    new AIMessageChunk({ id: "m2", content: "", tool_call_chunks: [{ type: "tool_call_chunk", args: 'is"}', index: 0 }] }),
  ],
  "two tool calls, usage on both ends": [
    new AIMessageChunk({ id: "m3", content: "", usage_metadata: { input_tokens: 3, output_tokens: 0, total_tokens: 3 }, tool_call_chunks: [{ type: "tool_call_chunk", name: "a", args: "{}", id: "c1", index: 0 }] }),
    new AIMessageChunk({ id: "m3", content: "", tool_call_chunks: [{ type: "tool_call_chunk", name: "b", args: '{"x": [1, tr', id: "c2", index: 1 }] }),
    new AIMessageChunk({ id: "m3", content: "", usage_metadata: { input_tokens: 0, output_tokens: 4, total_tokens: 4 }, tool_call_chunks: [{ type: "tool_call_chunk", args: "ue]}", index: 1 }] }),
  ],
};

describe("concatChunks accumulates a streamed message as LangChain does", () => {
  for (const [name, chunks] of Object.entries(streams)) {
    test(name, () => {
      let theirs = chunks[0]!;
      let ours = asDict(chunks[0]!);
      for (const chunk of chunks.slice(1)) {
        theirs = theirs.concat(chunk);
        ours = concatChunks(ours, asDict(chunk));
        // After every chunk: what a client showing `messages/partial` sees.
        const expected = asDict(theirs);
        for (const key of ["id", "content", "tool_call_chunks", "tool_calls", "invalid_tool_calls", "usage_metadata", "response_metadata"]) {
          expect(ours[key], key).toEqual(expected[key]);
        }
      }
    });
  }
});

describe("parsePartialJson reads arguments cut short as LangChain does", () => {
  test.each(['{"city": ', '{"city": "Par', '{"a": 1,', '{"a": [1, 2', '{"a": {"b": "c\\', '{"a": tr', '{"a": nu', "{", "[", '"abc', '{"a": 1}', '{"a":', "", '{"a": "x"}}'])("%j", (text) => {
    expect(parsePartialJson(text)).toEqual(langchainPartialJson(text));
  });
});
