/**
 * The agent-server HTTP API (api.md 1.1-1.5) as a fetch handler over the runtime's public API.
 * Each route maps a snake_case request onto one SDK-shaped runtime method (camelCase options) and
 * returns the runtime's snake_case record unchanged (D2). The runtime validates (D4) and
 * authorizes (D13); this layer parses JSON, maps errors to statuses (D3) and speaks SSE (D11).
 */
import { GraphdockError, invalidInput, notFound, unauthenticated, type ErrorCode } from "../errors.js";
import { jsonTextDepth, MAX_JSON_DEPTH } from "../json.js";
import { compareCsv, compareReport } from "../upload/report-entry.js";
import { protocolV2Http, type ProtocolV2HttpOptions } from "../protocol-v2/http.js";
import { cronRoutes } from "./crons.js";
import { sseResponse, type StreamPart } from "./sse.js";
import { registerStoreRoutes } from "./store-routes.js";
import { pick } from "./body.js";
import type { HttpClient, HttpRuntime } from "./types.js";
import type { FetchApp } from "./custom-app.js";
import type { HttpEndpoint } from "./endpoints.js";

/** Options of {@link createFetchHandler}. */
export interface FetchHandlerOptions {
  /** Path prefix to strip before routing, e.g. `"/api"` when mounted under `/api`. */
  basePath?: string;
  /** Interval of SSE `: heartbeat` comments in ms (default 5000; 0 disables). */
  heartbeatMs?: number;
  /**
   * CORS (default: any origin). `origin` is `"*"`, one origin, or a list (the request's origin is
   * echoed when listed). `false` sends no CORS headers and leaves OPTIONS to the router (404).
   */
  cors?: false | { origin?: string | string[]; maxAgeSeconds?: number };
  /**
   * When set, the experiment endpoints (`/api/v1/...`, seed: upload with `x-api-key`) require
   * this `x-api-key` (401 otherwise), in addition to the runtime's own auth.
   */
  apiKey?: string;
  /** Extra fields merged into the `GET /info` answer. */
  info?: Record<string, unknown>;
  /**
   * Largest request body in bytes (default 16 MiB, {@link DEFAULT_MAX_BODY_BYTES}; D25). A body
   * whose `Content-Length` is larger is refused with 413 before any of it is read; a body without
   * one is read as a stream and refused with 413 as soon as it passes the limit, so the server
   * never holds more than this much of one request.
   */
  maxBodyBytes?: number;
  /**
   * Deepest JSON nesting of objects and arrays accepted in a body (default 128,
   * {@link MAX_JSON_DEPTH}; D25). Deeper bodies are refused with 422 by a scan of the text before
   * it is parsed. The runtime refuses values deeper than 128 levels in any case, so a larger value
   * only changes which of the two answers the 422.
   */
  maxDepth?: number;
  /**
   * Bytes of SSE output queued for one client that is not reading fast enough (default 4 MiB,
   * {@link DEFAULT_SSE_BUFFER_BYTES}; D25). When the queue is full and another event arrives the
   * stream is cut: the connection closes, everything held for that client is released, and the
   * run goes on (unless `on_disconnect: "cancel"`); the client can resume with `Last-Event-ID` on a
   * resumable run. One event larger than the limit is still sent to a client that keeps up.
   */
  sseBufferBytes?: number;
  /**
   * Called once for each internal fault, i.e. each 500 (default: `console.error` with the stack).
   * The 500's body is always `{"detail": "Internal server error"}`, never the error's message.
   */
  onError?: (error: unknown, request?: Request) => void;
  /** Options of the v2 streaming protocol routes (D24): replay buffer size, idle sessions. */
  protocolV2?: ProtocolV2HttpOptions;
  /**
   * Custom routes (graph.json `http.app`): a fetch-style app served first; its 404s fall through
   * to the built-in routes, and an app with Hono's `notFound` wraps them in its middleware
   * (src/http/custom-app.ts).
   */
  app?: FetchApp;
  /**
   * Endpoints served beside the API (src/http/endpoints.ts): the protocols and the studio. A
   * request under one of an endpoint's paths goes to it, after the custom app and before the
   * built-in routes.
   */
  endpoints?: readonly HttpEndpoint[];
}

/** Default {@link FetchHandlerOptions.maxBodyBytes}: 16 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Default {@link FetchHandlerOptions.sseBufferBytes}: 4 MiB. */
export const DEFAULT_SSE_BUFFER_BYTES = 4 * 1024 * 1024;
export { MAX_JSON_DEPTH };

/** The limits in effect, checked once (a bad option is a programming error, thrown at creation). */
export function resolveLimits(options: FetchHandlerOptions) {
  const positive = (name: string, value: number | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !(value > 0) || !Number.isSafeInteger(value)) {
      throw invalidInput(`graphdock: the ${name} option must be a positive integer, got ${String(value)}`, [{ path: name, message: "expected a positive integer" }]);
    }
    return value;
  };
  return {
    maxBodyBytes: positive("maxBodyBytes", options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    maxDepth: positive("maxDepth", options.maxDepth, MAX_JSON_DEPTH),
    sseBufferBytes: positive("sseBufferBytes", options.sseBufferBytes, DEFAULT_SSE_BUFFER_BYTES),
  };
}

/** An answer decided by the HTTP layer itself (413, 400), outside the runtime's error codes. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The body of every 500: a fixed text, never an internal message (the error is logged instead). */
export const INTERNAL_ERROR_DETAIL = "Internal server error";

/** Default {@link FetchHandlerOptions.onError}: one log line with the stack (and the cause's). */
export function logInternalError(error: unknown, request?: Request): void {
  let where = "";
  try {
    if (request) where = ` on ${request.method} ${new URL(request.url).pathname}`;
  } catch {
    // an odd URL is no reason to lose the log line
  }
  console.error(`graphdock: internal error${where}:`, error);
}

/**
 * Reads a body as text, refusing it with 413 once it passes `max` bytes: at once when its
 * `Content-Length` says so, else as soon as the bytes read pass it (the rest is never read).
 */
export async function readBodyText(request: Request, max: number): Promise<string> {
  const tooLarge = () =>
    new HttpError(413, `The request body is larger than the server's limit of ${max} bytes (maxBodyBytes); send a smaller body`, {
      connection: "close",
    });
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\s*\d+\s*$/.test(declared) && Number(declared) > max) throw tooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  // Bytes are kept as they came and decoded at the end: a refused body then costs what was read,
  // without the garbage of decoding it piece by piece.
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      throw new HttpError(400, "The request body could not be read (the connection failed while it was being sent)");
    }
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > max) {
      chunks.length = 0;
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(chunk.value);
  }
  const decoder = new TextDecoder();
  let text = "";
  for (let i = 0; i < chunks.length; i++) {
    text += decoder.decode(chunks[i], { stream: true });
    chunks[i] = EMPTY; // decoded: let it go
  }
  return text + decoder.decode();
}
const EMPTY = new Uint8Array(0);

/** D3: the one table from error codes to HTTP statuses. */
const STATUS: Record<ErrorCode, number> = {
  not_found: 404,
  conflict: 409,
  invalid_input: 422,
  unauthenticated: 401,
  forbidden: 403,
};

/** Headers the SDK and the React hook read (api.md 0, D11); browsers only see exposed ones. */
const EXPOSED = "content-location, location, x-pagination-total, x-pagination-next";

type Body = Record<string, unknown>;

interface Ctx {
  request: Request;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The runtime bound to this request's headers (authenticates once, lazily). */
  client(): Promise<HttpClient>;
  /** The JSON body as an object (`{}` when empty); malformed JSON is a 422. */
  body(): Promise<Body>;
  /** The JSON body as parsed (for array bodies). */
  json(): Promise<unknown>;
}

type Handle = (c: Ctx) => Promise<Response>;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handle: Handle;
}

const json = (data: unknown, status = 200, headers = new Headers()) => {
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(data ?? null), { status, headers });
};
const text = (body: string, type: string) => new Response(body, { status: 200, headers: { "content-type": type } });
const empty = (status: number) => new Response(null, { status });

function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no|)$/i.test(v)) return false;
  throw invalidInput(`Query parameter "${name}" must be true or false, got "${v}"`, [{ path: name, message: "expected a boolean" }]);
}

function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw invalidInput(`Query parameter "${name}" must be an integer, got "${v}"`, [{ path: name, message: "expected an integer" }]);
  return n;
}

const queryList = (q: URLSearchParams, name: string) => {
  const all = q.getAll(name);
  return all.length ? all : undefined;
};
/** `select` as the SDK sends it in a query: repeated (`select=a&select=b`) or comma-separated. */
const querySelect = (q: URLSearchParams) => queryList(q, "select")?.flatMap((v) => v.split(",")).filter(Boolean);

const RUN_FIELDS = [
  "input",
  "command",
  "config",
  "context",
  "metadata",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
  "feedback_keys",
  "interrupt_before",
  "interrupt_after",
  "checkpoint",
  "checkpoint_id",
  "webhook",
  "strict_resume",
  "multitask_strategy",
  "on_completion",
  "on_disconnect",
  "after_seconds",
  "if_not_exists",
  "checkpoint_during",
  "durability",
] as const;

function assistantIdOf(body: Body): string {
  const id = body.assistant_id ?? body.assistantId;
  if (typeof id !== "string" || id === "") {
    throw invalidInput("assistant_id is required: pass an assistant id or a graph id", [{ path: "assistant_id", message: "required" }]);
  }
  return id;
}

/** `Content-Location` of a run (api.md 0): the thread form whenever the thread is known. */
const runLocation = (threadId: string | null | undefined, runId: string) =>
  threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;

/** Pagination headers with Python semantics (api.md 1.2): total, and next only when more exist. */
function paged(items: unknown[], total: number, offset: number, limit: number): Response {
  const headers = new Headers({ "x-pagination-total": String(total) });
  if (offset + limit < total) headers.set("x-pagination-next", String(offset + limit));
  return json(items, 200, headers);
}

export function createRouter(runtime: HttpRuntime, options: FetchHandlerOptions) {
  const heartbeatMs = options.heartbeatMs ?? 5000;
  const limits = resolveLimits(options);
  const routes: Route[] = [];
  const on = (method: string, path: string, handle: Handle) => {
    const keys: string[] = [];
    const source = path.replace(/:([a-z_]+)/g, (_, k: string) => {
      keys.push(k);
      return "([^/]+)";
    });
    routes.push({ method, pattern: new RegExp(`^${source}/?$`), keys, handle });
  };

  /**
   * Streams a run; the runtime's first `next()` rejects for errors before the run exists.
   * `cancelOnDisconnect`: cancel the run at once when the client goes away (the iterator's
   * `return()` only takes effect at the run's next event, which may be far off).
   */
  async function stream(
    c: Ctx,
    parts: AsyncIterable<StreamPart>,
    threadId: string | null | (() => string | undefined),
    created: boolean,
    cancelOnDisconnect: boolean,
  ) {
    const it = parts[Symbol.asyncIterator]();
    const first = await it.next();
    const headers = new Headers();
    const meta = first.done ? undefined : (first.value.data as { run_id?: string } | undefined);
    const runId = c.params.run_id ?? meta?.run_id;
    // A stateless run's thread is known once the run exists (its onRunCreated).
    const tid = typeof threadId === "function" ? threadId() : threadId;
    if (runId) {
      if (created) headers.set("content-location", runLocation(tid, runId));
      // Location lets the SDK reconnect to a dropped stream with Last-Event-ID (D11).
      if (tid) headers.set("location", `/threads/${tid}/runs/${runId}/stream`);
    }
    const client = await c.client();
    const onDisconnect =
      cancelOnDisconnect && runId && tid
        ? () => void client.runs.cancel(tid, runId, false, "interrupt").catch(() => {}) // already finished: nothing to cancel
        : undefined;
    return sseResponse(first, it, {
      heartbeatMs,
      signal: c.request.signal,
      headers,
      onDisconnect,
      maxBufferBytes: limits.sseBufferBytes,
      onError: (err) => (options.onError ?? logInternalError)(err, c.request),
    });
  }

  /**
   * A run's options from its body. A `webhook` that is a path (`/custom/webhook`) is resolved
   * against this server's URL (where the API is mounted), as the JS server loops such webhooks back
   * into its own app (custom routes); the runtime's `webhooks.allow` still decides.
   */
  const runOptions = (body: Body, c?: Ctx) => {
    const o = pick(body, RUN_FIELDS);
    if (c && typeof o.webhook === "string" && o.webhook.startsWith("/") && !o.webhook.startsWith("//")) {
      const base = (options.basePath ?? "").replace(/\/+$/, "");
      o.webhook = new URL(`${base}${o.webhook}`, c.request.url).href;
    }
    return o;
  };

  // 1.1 Meta (no auth: api.md 1.1)
  on("GET", "/ok", async () => json({ ok: true }));
  on("GET", "/info", async () =>
    json({
      version: "graphdock",
      context: "js",
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      ...options.info,
    }),
  );

  // 1.2 Assistants
  const ASSISTANT_FILTER = ["graph_id", "name", "metadata"];
  on("POST", "/assistants", async (c) =>
    json(
      await (await c.client()).assistants.create(
        pick(await c.body(), ["graph_id", "assistant_id", "config", "context", "metadata", "if_exists", "name", "description"]) as never,
      ),
    ),
  );
  on("POST", "/assistants/search", async (c) => {
    const body = await c.body();
    const client = await c.client();
    const query: Record<string, unknown> = { limit: 10, offset: 0, ...pick(body, [...ASSISTANT_FILTER, "limit", "offset", "sort_by", "sort_order", "select"]) };
    const items = await client.assistants.search(query as Parameters<typeof client.assistants.search>[0] & { includePagination?: false });
    const total = await client.assistants.count(pick(body, ASSISTANT_FILTER) as never);
    return paged(items, total, Number(query.offset), Number(query.limit));
  });
  on("POST", "/assistants/count", async (c) =>
    json(await (await c.client()).assistants.count(pick(await c.body(), ASSISTANT_FILTER) as never)),
  );
  on("GET", "/assistants/:assistant_id", async (c) => json(await (await c.client()).assistants.get(c.params.assistant_id)));
  on("PATCH", "/assistants/:assistant_id", async (c) =>
    json(
      await (await c.client()).assistants.update(
        c.params.assistant_id,
        pick(await c.body(), ["graph_id", "config", "context", "metadata", "name", "description"]) as never,
      ),
    ),
  );
  on("DELETE", "/assistants/:assistant_id", async (c) => {
    await (await c.client()).assistants.delete(c.params.assistant_id, { deleteThreads: queryBool(c.query, "delete_threads") ?? false });
    return empty(204);
  });
  on("POST", "/assistants/:assistant_id/versions", async (c) =>
    json(
      await (await c.client()).assistants.getVersions(c.params.assistant_id, pick(await c.body(), ["metadata", "limit", "offset"]) as never),
    ),
  );
  on("POST", "/assistants/:assistant_id/latest", async (c) => {
    const { version } = await c.body();
    return json(await (await c.client()).assistants.setLatest(c.params.assistant_id, version as number));
  });
  on("GET", "/assistants/:assistant_id/graph", async (c) => {
    const raw = c.query.get("xray");
    // The SDK sends a depth as digits (`xray=1` is depth 1, not true; `xray=0` draws no subgraph).
    const xray = raw !== null && /^\d+$/.test(raw) ? Number(raw) : queryBool(c.query, "xray");
    return json(await (await c.client()).assistants.getGraph(c.params.assistant_id, { xray }));
  });
  on("GET", "/assistants/:assistant_id/schemas", async (c) => json(await (await c.client()).assistants.getSchemas(c.params.assistant_id)));
  const subgraphs: Handle = async (c) =>
    // api.md 1.2
    json(await (await c.client()).assistants.getSubgraphs(c.params.assistant_id, { namespace: c.params.namespace, recurse: queryBool(c.query, "recurse") }));
  on("GET", "/assistants/:assistant_id/subgraphs", subgraphs);
  on("GET", "/assistants/:assistant_id/subgraphs/:namespace", subgraphs);

  // 1.3 Threads
  const THREAD_FILTER = ["metadata", "values", "status"];
  on("POST", "/threads", async (c) => {
    const body = await c.body();
    const payload = pick(body, ["metadata", "thread_id", "if_exists", "ttl"]);
    if (Array.isArray(body.supersteps)) {
      payload.supersteps = body.supersteps.map((step: { updates?: unknown }) => ({
        ...step,
        updates: Array.isArray(step?.updates) ? step.updates.map((u: Body) => pick(u ?? {}, ["values", "command", "as_node"])) : step?.updates,
      }));
    } else if (body.supersteps !== undefined) {
      payload.supersteps = body.supersteps; // the runtime rejects the wrong type (D4)
    }
    return json(await (await c.client()).threads.create(payload as never));
  });
  on("POST", "/threads/search", async (c) => {
    const body = await c.body();
    const client = await c.client();
    const query: Record<string, unknown> = {
      limit: 10,
      offset: 0,
      ...pick(body, [...THREAD_FILTER, "ids", "limit", "offset", "sort_by", "sort_order", "select", "extract"]),
    };
    const items = (await client.threads.search(query as never)) as unknown[];
    // `count` takes no ids; with an ids filter the total is the size of the unpaged result.
    const ids = query.ids;
    const total = Array.isArray(ids) && ids.length
      ? ((await client.threads.search({ ...pick(body, [...THREAD_FILTER, "ids"]), select: ["thread_id"], limit: Math.min(ids.length, 1000), offset: 0 } as never)) as unknown[]).length
      : await client.threads.count(pick(body, THREAD_FILTER) as never);
    return paged(items, total, Number(query.offset), Number(query.limit));
  });
  on("POST", "/threads/count", async (c) => json(await (await c.client()).threads.count(pick(await c.body(), THREAD_FILTER) as never)));
  on("GET", "/threads/:thread_id", async (c) =>
    json(await (await c.client()).threads.get(c.params.thread_id, { include: queryList(c.query, "include") } as never)),
  );
  on("PATCH", "/threads/:thread_id", async (c) => {
    // `Prefer: return=minimal` (the SDK's returnMinimal): no body.
    const returnMinimal = /return=minimal/.test(c.request.headers.get("prefer") ?? "");
    const thread = await (await c.client()).threads.update(c.params.thread_id, { ...pick(await c.body(), ["metadata", "ttl"]), returnMinimal });
    return returnMinimal ? empty(204) : json(thread);
  });
  on("DELETE", "/threads/:thread_id", async (c) => {
    await (await c.client()).threads.delete(c.params.thread_id);
    return empty(204);
  });
  // D24: the v2 streaming protocol (src/protocol-v2): commands, and one SSE subscription per request.
  const v2 = protocolV2Http(runtime, { ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}), ...options.protocolV2 });
  on("POST", "/threads/:thread_id/commands", async (c) => v2.commands(c.params.thread_id, await c.client(), await c.json()));
  on("POST", "/threads/:thread_id/stream/events", async (c) => v2.events(c.request, c.params.thread_id, await c.client(), await c.json()));
  on("POST", "/threads/:thread_id/copy", async (c) => json(await (await c.client()).threads.copy(c.params.thread_id)));
  on("GET", "/threads/:thread_id/state", async (c) =>
    json(
      await (await c.client()).threads.getState(c.params.thread_id, undefined, { subgraphs: queryBool(c.query, "subgraphs"), select: querySelect(c.query) } as never),
    ),
  );
  // Py / SDK patchState: merges metadata into the latest checkpoint's (api.md 1.3).
  on("PATCH", "/threads/:thread_id/state", async (c) => {
    await (await c.client()).threads.patchState(c.params.thread_id, (await c.body()).metadata as never);
    return empty(204);
  });
  // Every run of the thread, staying open (api.md 5.5; Py's thread stream).
  on("GET", "/threads/:thread_id/stream", async (c) => {
    const parts = (await c.client()).threads.joinStream(c.params.thread_id, {
      lastEventId: c.request.headers.get("last-event-id") ?? undefined,
      streamMode: queryList(c.query, "stream_mode"),
      signal: c.request.signal,
    } as never);
    // Bad options, an unknown or hidden thread: HTTP errors. Then the headers go at once, since
    // an idle thread may have no event for a long while.
    await parts.ready;
    return sseResponse(parts.next() as Promise<IteratorResult<StreamPart>>, parts as AsyncIterator<StreamPart>, {
      heartbeatMs,
      signal: c.request.signal,
      headers: new Headers(),
      maxBufferBytes: limits.sseBufferBytes,
      onError: (err) => (options.onError ?? logInternalError)(err, c.request),
    });
  });
  on("POST", "/threads/:thread_id/state", async (c) =>
    json(
      await (await c.client()).threads.updateState(
        c.params.thread_id,
        pick(await c.body(), ["values", "as_node", "checkpoint", "checkpoint_id"]) as never,
      ),
    ),
  );
  on("POST", "/threads/:thread_id/state/checkpoint", async (c) => {
    const body = await c.body();
    if (body.checkpoint === null || typeof body.checkpoint !== "object") {
      throw invalidInput("checkpoint is required: { checkpoint_id?, checkpoint_ns?, checkpoint_map? }", [{ path: "checkpoint", message: "required" }]);
    }
    return json(
      await (await c.client()).threads.getState(c.params.thread_id, body.checkpoint as never, {
        subgraphs: body.subgraphs as boolean | undefined,
        select: body.select,
      } as never),
    );
  });
  on("GET", "/threads/:thread_id/state/:checkpoint_id", async (c) =>
    json(
      await (await c.client()).threads.getState(c.params.thread_id, c.params.checkpoint_id, { subgraphs: queryBool(c.query, "subgraphs"), select: querySelect(c.query) } as never),
    ),
  );
  /** `before` is a checkpoint id (JS server) or a config (SDK); both are accepted (api.md 1.3). */
  const before = (v: unknown) => (typeof v === "string" ? { configurable: { checkpoint_id: v } } : v);
  on("GET", "/threads/:thread_id/history", async (c) =>
    json(
      await (await c.client()).threads.getHistory(c.params.thread_id, {
        limit: queryInt(c.query, "limit") ?? 10,
        before: before(c.query.get("before") ?? undefined),
        select: querySelect(c.query),
      } as never),
    ),
  );
  on("POST", "/threads/:thread_id/history", async (c) => {
    const body = await c.body();
    const opts = { limit: 10, ...pick(body, ["limit", "metadata", "checkpoint", "select"]) } as Record<string, unknown>;
    if (body.before != null) opts.before = before(body.before);
    return json(await (await c.client()).threads.getHistory(c.params.thread_id, opts as never));
  });

  // 1.4 Runs on a thread, 1.5 stateless runs (threadId null)
  const createRun = (threaded: boolean): Handle => async (c) => {
    const body = await c.body();
    const threadId = threaded ? c.params.thread_id : null;
    const run = await (await c.client()).runs.create(threadId as string, assistantIdOf(body), runOptions(body, c) as never);
    return json(run, 200, new Headers({ "content-location": runLocation(run.thread_id, run.run_id) }));
  };
  const streamRun = (threaded: boolean): Handle => async (c) => {
    const body = await c.body();
    const threadId = threaded ? c.params.thread_id : null;
    let createdOn: string | undefined;
    const parts = (await c.client()).runs.stream(threadId as string, assistantIdOf(body), {
      ...runOptions(body, c),
      onRunCreated: (m: { thread_id?: string }) => (createdOn = m.thread_id),
    } as never);
    return stream(c, parts as AsyncIterable<StreamPart>, threadId ?? (() => createdOn), true, body.on_disconnect === "cancel" || body.onDisconnect === "cancel");
  };
  const waitRun = (threaded: boolean): Handle => async (c) => {
    const body = await c.body();
    let created: { run_id: string; thread_id?: string } | undefined;
    const threadId = threaded ? c.params.thread_id : null;
    const values = await (await c.client()).runs.wait(threadId as string, assistantIdOf(body), {
      ...runOptions(body, c),
      signal: c.request.signal,
      // `/wait` answers `{__error__}` with 200 (api.md 1.4); the SDK raises on it client-side.
      raiseError: false,
      onRunCreated: (meta: { run_id: string; thread_id?: string }) => (created = meta),
    } as never);
    const headers = new Headers();
    if (created) headers.set("content-location", runLocation(created.thread_id ?? threadId, created.run_id));
    return json(values, 200, headers);
  };
  on("POST", "/threads/:thread_id/runs", createRun(true));
  on("POST", "/threads/:thread_id/runs/stream", streamRun(true));
  on("POST", "/threads/:thread_id/runs/wait", waitRun(true));
  on("GET", "/threads/:thread_id/runs", async (c) =>
    json(
      await (await c.client()).runs.list(c.params.thread_id, {
        limit: queryInt(c.query, "limit") ?? 10,
        offset: queryInt(c.query, "offset") ?? 0,
        status: c.query.get("status") ?? undefined,
        select: queryList(c.query, "select"),
      } as never),
    ),
  );
  on("GET", "/threads/:thread_id/runs/:run_id", async (c) => json(await (await c.client()).runs.get(c.params.thread_id, c.params.run_id)));
  on("DELETE", "/threads/:thread_id/runs/:run_id", async (c) => {
    await (await c.client()).runs.delete(c.params.thread_id, c.params.run_id);
    return empty(204);
  });
  on("POST", "/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const wait = queryBool(c.query, "wait") ?? false;
    const action = (c.query.get("action") ?? "interrupt") as "interrupt" | "rollback";
    await (await c.client()).runs.cancel(c.params.thread_id, c.params.run_id, wait, action);
    return empty(wait ? 204 : 202);
  });
  on("GET", "/threads/:thread_id/runs/:run_id/join", async (c) =>
    json(
      await (await c.client()).runs.join(c.params.thread_id, c.params.run_id, {
        cancelOnDisconnect: queryBool(c.query, "cancel_on_disconnect") ?? false,
        signal: c.request.signal,
      } as never),
    ),
  );
  const joinStream = (threaded: boolean): Handle => async (c) => {
    const threadId = threaded ? c.params.thread_id : null;
    const cancelOnDisconnect = queryBool(c.query, "cancel_on_disconnect") ?? false;
    const parts = (await c.client()).runs.joinStream(threadId as string, c.params.run_id, {
      lastEventId: c.request.headers.get("last-event-id") ?? undefined,
      cancelOnDisconnect,
      streamMode: queryList(c.query, "stream_mode"),
      signal: c.request.signal,
    } as never);
    return stream(c, parts as AsyncIterable<StreamPart>, threadId, false, cancelOnDisconnect);
  };
  on("GET", "/threads/:thread_id/runs/:run_id/stream", joinStream(true));
  on("POST", "/runs", createRun(false));
  on("POST", "/runs/stream", streamRun(false));
  on("POST", "/runs/wait", waitRun(false));
  on("POST", "/runs/batch", async (c) => {
    const items = await c.json();
    if (!Array.isArray(items) || items.length === 0) {
      throw invalidInput("The body of /runs/batch must be a non-empty array of run payloads", [{ path: "", message: "expected a non-empty array" }]);
    }
    const payloads = items.map((item, i) => {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        throw invalidInput(`Run payload ${i} of /runs/batch must be an object`, [{ path: String(i), message: "expected an object" }]);
      }
      return { ...runOptions(item as Body, c), assistantId: assistantIdOf(item as Body) };
    });
    return json(await (await c.client()).runs.createBatch(payloads as never));
  });
  on("GET", "/runs/:run_id/stream", joinStream(false));
  // 1.7 Crons (issue 16): ./crons.ts
  cronRoutes(on);

  // 1.6 Store (long-term memory)
  registerStoreRoutes(on);

  // Experiment upload and reading (seed: the upload endpoint carries /api/v1)
  on("POST", "/api/v1/datasets/upload-experiment", async (c) => json(await (await c.client()).experiments.upload((await c.body()) as never)));
  on("GET", "/api/v1/datasets", async (c) => json(await (await c.client()).datasets.list()));
  on("GET", "/api/v1/datasets/:dataset_id", async (c) => json(await (await c.client()).datasets.get(c.params.dataset_id)));
  on("GET", "/api/v1/datasets/:dataset_id/examples", async (c) => json(await (await c.client()).datasets.examples(c.params.dataset_id)));
  on("GET", "/api/v1/experiments", async (c) =>
    json(await (await c.client()).experiments.list({ datasetId: c.query.get("dataset_id") ?? undefined })),
  );
  // `?id=a&id=b` (or `id=a,b`), `baseline`, `lower_is_better`; `format=html|csv` (or Accept) for the report.
  on("GET", "/api/v1/experiments/compare", async (c) => {
    const ids = (queryList(c.query, "id") ?? []).flatMap((v) => v.split(",")).filter(Boolean);
    const lowerIsBetter = queryList(c.query, "lower_is_better")?.flatMap((v) => v.split(","));
    const comparison = await (await c.client()).experiments.compare(ids, {
      baseline: c.query.get("baseline") ?? undefined,
      lowerIsBetter,
    });
    const format = c.query.get("format") ?? (/text\/html/.test(c.request.headers.get("accept") ?? "") ? "html" : "json");
    if (format === "html") return text(compareReport(comparison), "text/html; charset=utf-8");
    if (format === "csv") return text(compareCsv(comparison), "text/csv; charset=utf-8");
    if (format !== "json") throw invalidInput(`format must be json, html or csv, got "${format}"`, [{ path: "format", message: "json | html | csv" }]);
    return json(comparison);
  });
  on("GET", "/api/v1/experiments/:experiment_id", async (c) => json(await (await c.client()).experiments.get(c.params.experiment_id)));
  on("GET", "/api/v1/experiments/:experiment_id/runs", async (c) => json(await (await c.client()).experiments.runs(c.params.experiment_id)));

  return {
    async route(request: Request, path: string): Promise<Response> {
      if (options.apiKey !== undefined && path.startsWith("/api/v1/") && request.headers.get("x-api-key") !== options.apiKey) {
        throw unauthenticated("The experiment endpoints need a valid x-api-key header");
      }
      let allowed: string[] = [];
      for (const r of routes) {
        const m = r.pattern.exec(path);
        if (!m) continue;
        if (r.method !== request.method) {
          allowed.push(r.method);
          continue;
        }
        const params: Record<string, string> = {};
        r.keys.forEach((k, i) => (params[k] = decodeSegment(m[i + 1])));
        return r.handle(context(request, path, params));
      }
      allowed = [...new Set(allowed)];
      if (allowed.length) {
        return json({ detail: `Method ${request.method} is not allowed on ${path}; use ${allowed.join(", ")}` }, 405, new Headers({ allow: allowed.join(", ") }));
      }
      throw notFound(`No endpoint ${request.method} ${path}: see the agent-server API (api.md 1)`);
    },
  };

  function context(request: Request, path: string, params: Record<string, string>): Ctx {
    let client: Promise<HttpClient> | undefined;
    let parsed: Promise<unknown> | undefined;
    const readJson = () =>
      (parsed ??= readBodyText(request, limits.maxBodyBytes).then((text) => {
        if (!text.trim()) return undefined;
        // D25: measured on the text, so a 100,000-level body is refused before it is built.
        if (jsonTextDepth(text, limits.maxDepth) > limits.maxDepth) {
          throw invalidInput(`The JSON body nests deeper than ${limits.maxDepth} levels of objects and arrays (maxDepth)`, [
            { path: "", message: `nested deeper than ${limits.maxDepth} levels` },
          ]);
        }
        try {
          return JSON.parse(text) as unknown;
        } catch (err) {
          throw invalidInput(`Malformed JSON body: ${(err as Error).message}`, [{ path: "", message: "malformed JSON" }]);
        }
      }));
    return {
      request,
      params,
      query: new URL(request.url).searchParams,
      client: () =>
        (client ??= runtime.client({
          headers: lowerCaseHeaders(request.headers),
          method: request.method,
          path,
          url: request.url,
        })),
      json: readJson,
      async body() {
        const body = await readJson();
        if (body === undefined || body === null) return {};
        if (typeof body !== "object" || Array.isArray(body)) {
          throw invalidInput("The request body must be a JSON object", [{ path: "", message: "expected an object" }]);
        }
        return body as Body;
      },
    };
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidInput(`Malformed path segment "${segment}"`, [{ path: "", message: "bad percent-encoding" }]);
  }
}

/** `graphId.fooBar` -> `graph_id.fooBar`: the first segment of a problem path in its wire name. */
function snakePath(path: string): string {
  const [head = "", ...rest] = path.split(".");
  return [head.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), ...rest].join(".");
}

/** Request headers as the auth hook receives them: lower-case names (auth.md, AuthRequest). */
function lowerCaseHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name.toLowerCase()] = value));
  return out;
}

/** The headers an auth handler's HTTPException (the error's cause) carries, e.g. WWW-Authenticate. */
export function causeHeaders(err: GraphdockError): Headers {
  const headers = new Headers();
  const extra = (err.cause as { headers?: unknown } | undefined)?.headers;
  if (extra && typeof extra === "object") {
    for (const [name, value] of Object.entries(extra)) {
      if (typeof value !== "string") continue;
      try {
        headers.set(name, value);
      } catch {
        // a header an auth handler got wrong (bad name or value) is dropped, not a 500
      }
    }
  }
  return headers;
}

/**
 * D3: GraphdockError codes to statuses with a JSON `detail`; the HTTP layer's own refusals
 * (413, 400) as they are; anything else is a genuine fault: 500 with a fixed detail, and
 * `report` is called with the error (it is the caller's single place to log it).
 */
export function errorResponse(err: unknown, report?: (err: unknown) => void): Response {
  if (err instanceof HttpError) return json({ detail: err.message }, err.status, new Headers(err.headers));
  if (GraphdockError.is(err) && Object.hasOwn(STATUS, err.code)) {
    const body: Record<string, unknown> = { detail: err.message };
    if (err.problems) {
      // Field names as the HTTP caller wrote them: the runtime validates the SDK's camelCase
      // options, the wire has their snake_case names (graphId -> graph_id).
      const renamed = err.problems.map((p) => ({ ...p, path: snakePath(p.path) }));
      let detail = err.message;
      for (const [i, p] of err.problems.entries()) if (p.path !== renamed[i]!.path) detail = detail.split(`${p.path}:`).join(`${renamed[i]!.path}:`);
      body.detail = detail;
      body.problems = renamed;
    }
    const headers = causeHeaders(err);
    return json(body, STATUS[err.code], headers);
  }
  report?.(err);
  return json({ detail: INTERNAL_ERROR_DETAIL }, 500);
}

export function applyCors(request: Request, response: Response, cors: FetchHandlerOptions["cors"]): Response {
  if (cors === false) return response;
  const allowed = cors?.origin ?? "*";
  const origin = request.headers.get("origin");
  let value: string | undefined;
  if (allowed === "*") value = "*";
  else if (origin && (Array.isArray(allowed) ? allowed.includes(origin) : allowed === origin)) value = origin;
  if (!value) return response;
  response.headers.set("access-control-allow-origin", value);
  response.headers.set("access-control-expose-headers", EXPOSED);
  if (value !== "*") response.headers.append("vary", "Origin");
  return response;
}

export function preflight(request: Request, cors: { maxAgeSeconds?: number } | undefined): Response {
  const headers = new Headers({
    "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "*",
    "access-control-max-age": String(cors?.maxAgeSeconds ?? 86400),
  });
  return new Response(null, { status: 204, headers });
}
