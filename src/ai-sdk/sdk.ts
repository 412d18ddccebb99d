/**
 * The parts of the AI SDK's `ai` package the chat endpoint uses, imported at the first request
 * (D101): `ai` is an optional peer dependency, so neither the core nor `graphdock/http` loads it.
 * Its own validator reads the chat request's messages, and its own response writes the UI
 * message stream (SSE framing, headers, keep-alive comments).
 */
import type { createUIMessageStreamResponse, safeValidateUIMessages } from "ai";
import { loads } from "../http/endpoint-kit.js";

export interface AiSdk {
  safeValidateUIMessages: typeof safeValidateUIMessages;
  createUIMessageStreamResponse: typeof createUIMessageStreamResponse;
}

let loading: Promise<AiSdk> | undefined;

/** The library, loaded once; rejects with the install command when it is not installed. */
export function loadAiSdk(): Promise<AiSdk> {
  return (loading ??= (async () => {
    try {
      const ai = await import("ai");
      return { safeValidateUIMessages: ai.safeValidateUIMessages, createUIMessageStreamResponse: ai.createUIMessageStreamResponse };
    } catch (err) {
      loading = undefined;
      throw new Error("graphdock/ai-sdk needs the AI SDK: npm install ai", { cause: err });
    }
  })());
}

/** True when `ai` can be loaded (what `serve` checks before mounting the endpoint). */
export const aiSdkInstalled = (): Promise<boolean> => loads(loadAiSdk);
