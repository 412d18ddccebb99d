/**
 * The AI SDK chat endpoint (D32, D106-D109): `POST /ai-sdk/chat/{assistant_id}` takes what the
 * AI SDK's `DefaultChatTransport` (the transport of `useChat`) posts and answers the UI message
 * stream of a run of the assistant on the chat's thread, with the `ai` package (loaded at the
 * first request). The caller is bound as the API binds it, so auth applies as everywhere.
 *
 * What the caller got wrong at the HTTP level (method, credentials, body too large or not JSON,
 * an unknown assistant) is a 4xx JSON error `{ detail }` before any stream; what is wrong with the
 * chat request itself (its fields, its messages, a run the runtime refuses) is a UI message
 * stream holding one `error` part. Either way nothing is written.
 */
import type { UIMessageChunk } from "ai";
import type { HttpEndpoint } from "../http/endpoints.js";
import { authRefusal, callerOf, faultReporter, readJsonBody, segmentAfter, type BodyLimits } from "../http/endpoint-kit.js";
import type { HttpClient } from "../http/types.js";
import { GraphdockError } from "../errors.js";
import type { RunEvent } from "../runtime/types.js";
import { chatThreadId } from "./chat-thread.js";
import { planRun, type Plan } from "./plan.js";
import { ChatRequestError, readChatRequest } from "./request.js";
import { loadAiSdk, type AiSdk } from "./sdk.js";
import { RunTranslator } from "./translate.js";

/** Options of {@link aiSdkEndpoint}. */
export interface AiSdkEndpointOptions extends BodyLimits {
  /** Where it answers, below the handler's base path (default `/ai-sdk/chat`): `<path>/{assistant_id}`. */
  path?: string;
  /**
   * What a stream the client abandons (the hook's `stop()`, a closed tab) does to its run, unless
   * the request's `on_disconnect` says: `"continue"` (default, as the agent-server API) or `"cancel"`.
   */
  onDisconnect?: "cancel" | "continue";
  /** Interval of SSE keep-alive comments while a run is silent, in ms (default 15,000; 0: none). */
  keepAliveMs?: number;
  /** Called once for each internal fault (default: `console.error`), as the fetch handler's `onError`. */
  onError?: (error: unknown, request?: Request) => void;
}

const json = (status: number, detail: string, headers?: Headers) => {
  const out = new Headers(headers);
  out.set("content-type", "application/json");
  return new Response(JSON.stringify({ detail }), { status, headers: out });
};

/**
 * The AI SDK chat endpoint: mount it with `createFetchHandler(runtime, { endpoints: [aiSdkEndpoint()] })`
 * (or `serve`, which mounts it when `ai` is installed), and point `useChat` at it:
 * `new DefaultChatTransport({ api: "/ai-sdk/chat/<assistant_id>" })`.
 */
export function aiSdkEndpoint(options: AiSdkEndpointOptions = {}): HttpEndpoint {
  const path = (options.path ?? "/ai-sdk/chat").replace(/\/+$/, "");
  const report = faultReporter(options.onError);
  return {
    name: "ai_sdk",
    paths: [path],
    async fetch(request, context) {
      const assistantId = segmentAfter(context.path, path);
      if (!assistantId) return json(404, `The chat endpoint is ${path}/{assistant_id}`);
      if (request.method !== "POST") return json(405, `Method ${request.method} is not allowed here; use POST`, new Headers({ allow: "POST" }));
      let client: HttpClient;
      let assistant: string;
      try {
        client = await callerOf(request, context);
        assistant = await resolveAssistant(client, assistantId);
      } catch (err) {
        const refusal = authRefusal(err);
        if (refusal) return json(refusal.status, refusal.message, refusal.headers);
        if (GraphdockError.is(err, "not_found") || GraphdockError.is(err, "invalid_input")) return json(404, `No assistant ${assistantId} here`);
        throw err;
      }
      const body = await readJsonBody(request, options);
      if ("refused" in body) return json(body.refused.status, body.refused.message);
      const ai = await loadAiSdk();
      return chat(ai, client, assistant, body.value, { options, report: (err) => report(err, request) });
    },
  };
}

/** The assistant's id (the path may name a graph, as runs accept one for its default assistant). */
async function resolveAssistant(client: HttpClient, id: string): Promise<string> {
  try {
    return (await client.assistants.get(id)).assistant_id;
  } catch (err) {
    if (!GraphdockError.is(err, "not_found") && !GraphdockError.is(err, "invalid_input")) throw err;
    const [byGraph] = await client.assistants.search({ graphId: id, limit: 1, sortBy: "created_at", sortOrder: "asc" });
    if (!byGraph) throw err;
    return byGraph.assistant_id;
  }
}

interface Shared {
  options: AiSdkEndpointOptions;
  report: (err: unknown) => void;
}

/** A stream of one `error` part: the chat request could not be served (nothing was written). */
function errorStream(ai: AiSdk, errorText: string): Response {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      controller.enqueue({ type: "error", errorText });
      controller.close();
    },
  });
  return ai.createUIMessageStreamResponse({ stream });
}

/** Answers one chat request: checks it, plans its run, starts it and streams it. */
async function chat(ai: AiSdk, client: HttpClient, assistantId: string, body: unknown, shared: Shared): Promise<Response> {
  let plan: Plan;
  let threadId: string;
  let events: AsyncIterator<RunEvent>;
  let runId: string;
  try {
    const request = await readChatRequest(ai, body);
    threadId = await chatThreadId((await client.whoami()).identity, request.chatId);
    plan = await planRun(client, threadId, request);
    plan.payload.onDisconnect ??= shared.options.onDisconnect ?? "continue";
    events = client.runs.stream(threadId, assistantId, { ...plan.payload, streamMode: ["messages-tuple", "updates"] })[Symbol.asyncIterator]();
    const first = await events.next(); // the run exists (or was refused) once its metadata event comes
    runId = first.done ? "" : (first.value.data as { run_id: string }).run_id;
  } catch (err) {
    if (err instanceof ChatRequestError) return errorStream(ai, err.message);
    if (GraphdockError.is(err)) return errorStream(ai, err.message);
    throw err;
  }
  const translator = new RunTranslator(plan);
  const onDisconnect = plan.payload.onDisconnect;
  let ended = false;
  let cancelled = false;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      // A continuation keeps the client's message (a new id would make it a second message).
      controller.enqueue(plan.continuation ? { type: "start" } : { type: "start", messageId: runId });
      for (const chunk of translator.start()) controller.enqueue(chunk);
    },
    async pull(controller) {
      try {
        for (;;) {
          const next = await events.next();
          if (cancelled) return; // the client went away while the run was silent
          if (next.done) {
            ended = true;
            for (const chunk of translator.end()) controller.enqueue(chunk);
            controller.close();
            return;
          }
          if (next.value.event === "error") {
            ended = true;
            const { error, message } = next.value.data;
            controller.enqueue({ type: "error", errorText: message || error });
            controller.close();
            return;
          }
          const chunks = translator.event(next.value);
          if (!chunks.length) continue;
          for (const chunk of chunks) controller.enqueue(chunk);
          return;
        }
      } catch (err) {
        ended = true;
        if (cancelled) return;
        shared.report(err);
        controller.enqueue({ type: "error", errorText: "Internal error" });
        controller.close();
      }
    },
    async cancel() {
      // The client went away: the run goes on, or is cancelled (on_disconnect), at once.
      cancelled = true;
      if (!ended && onDisconnect === "cancel" && runId) void client.runs.cancel(threadId, runId, false, "interrupt").catch(() => undefined);
      void events.return?.(undefined)?.catch(() => undefined);
    },
  });
  const keepAliveMs = shared.options.keepAliveMs ?? 15_000;
  return ai.createUIMessageStreamResponse({ stream, ...(keepAliveMs > 0 ? { keepAliveMs } : {}) });
}
