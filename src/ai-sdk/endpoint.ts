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
import type { RunEvent, StreamMode } from "../runtime/types.js";
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

/** A request's route below the endpoint's path: a chat, or a chat's stream to resume. */
type Route = { kind: "chat"; assistantId: string } | { kind: "resume"; assistantId: string; chatId: string };

function routeOf(requestPath: string, path: string): Route | undefined {
  const assistantId = segmentAfter(requestPath, path);
  if (assistantId) return { kind: "chat", assistantId };
  const [a, chat, tail, ...more] = requestPath.slice(path.length + 1).split("/");
  if (!a || !chat || tail !== "stream" || more.length) return undefined;
  try {
    return { kind: "resume", assistantId: decodeURIComponent(a), chatId: decodeURIComponent(chat) };
  } catch {
    return undefined;
  }
}

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
      const route = routeOf(context.path, path);
      if (!route) return json(404, `The chat endpoint is POST ${path}/{assistant_id} (and GET ${path}/{assistant_id}/{chat_id}/stream)`);
      const method = route.kind === "chat" ? "POST" : "GET";
      if (request.method !== method) return json(405, `Method ${request.method} is not allowed here; use ${method}`, new Headers({ allow: method }));
      let client: HttpClient;
      let assistant: string;
      try {
        client = await callerOf(request, context);
        assistant = await resolveAssistant(client, route.assistantId);
      } catch (err) {
        const refusal = authRefusal(err);
        if (refusal) return json(refusal.status, refusal.message, refusal.headers);
        if (GraphdockError.is(err, "not_found") || GraphdockError.is(err, "invalid_input")) return json(404, `No assistant ${route.assistantId} here`);
        throw err;
      }
      const shared = { options, report: (err: unknown) => report(err, request) };
      if (route.kind === "resume") return resume(await loadAiSdk(), client, assistant, route.chatId, shared);
      const body = await readJsonBody(request, options);
      if ("refused" in body) return json(body.refused.status, body.refused.message);
      return chat(await loadAiSdk(), client, assistant, body.value, shared);
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

/** The metadata event's run id (the first event of a run's stream). */
const runIdOf = (first: IteratorResult<RunEvent>) => (first.done ? "" : (first.value.data as { run_id: string }).run_id);

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
    // Resumable, so a client that reloads mid-answer can follow the run again from its start.
    const payload = { ...plan.payload, streamMode: ["messages-tuple", "updates"] as StreamMode[], streamResumable: true };
    events = client.runs.stream(threadId, assistantId, payload)[Symbol.asyncIterator]();
    runId = runIdOf(await events.next()); // the run exists (or was refused) once its metadata event comes
  } catch (err) {
    if (err instanceof ChatRequestError) return errorStream(ai, err.message);
    if (GraphdockError.is(err)) return errorStream(ai, err.message);
    throw err;
  }
  return streamRun(ai, client, { threadId, runId, events, plan, onDisconnect: plan.payload.onDisconnect }, shared);
}

/**
 * Answers the hook's reconnect (`useChat({ resume: true })`): the chat's run in flight replayed
 * from its start (the hook rebuilds the answer from it), or 204 when none is.
 */
async function resume(ai: AiSdk, client: HttpClient, assistantId: string, chatId: string, shared: Shared): Promise<Response> {
  const threadId = await chatThreadId((await client.whoami()).identity, chatId);
  const [run] = await client.runs.list(threadId, { limit: 1 }).catch((err: unknown) => {
    if (GraphdockError.is(err, "not_found")) return [];
    throw err;
  });
  if (!run || run.assistant_id !== assistantId || (run.status !== "pending" && run.status !== "running")) return new Response(null, { status: 204 });
  const events = client.runs.joinStream(threadId, run.run_id, { lastEventId: "-1", streamMode: ["messages-tuple", "updates"] })[Symbol.asyncIterator]();
  const plan: Plan = { payload: {}, continuation: false, before: new Set(), knownCalls: new Set(), denied: [] };
  return streamRun(ai, client, { threadId, runId: run.run_id, events, plan, onDisconnect: "continue" }, shared);
}

interface Following {
  threadId: string;
  runId: string;
  /** The run's events after its metadata event. */
  events: AsyncIterator<RunEvent>;
  plan: Plan;
  onDisconnect: "cancel" | "continue" | undefined;
}

/** The UI message stream of a run being followed. */
function streamRun(ai: AiSdk, client: HttpClient, { threadId, runId, events, plan, onDisconnect }: Following, shared: Shared): Response {
  const translator = new RunTranslator(plan);
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
