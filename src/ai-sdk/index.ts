/**
 * `graphdock/ai-sdk`: each assistant as a chat of the Vercel AI SDK's `useChat` hook, at
 * `POST /ai-sdk/chat/{assistant_id}` (the UI message stream protocol), an endpoint for
 * `createFetchHandler(runtime, { endpoints: [aiSdkEndpoint()] })`. Needs the optional peer `ai`,
 * loaded at the first request. See docs/ai-sdk.md.
 */
export { aiSdkEndpoint } from "./endpoint.js";
export type { AiSdkEndpointOptions } from "./endpoint.js";
export { chatThreadId } from "./chat-thread.js";
export { aiSdkInstalled } from "./sdk.js";
