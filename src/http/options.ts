/**
 * The options of the HTTP handler (`createFetchHandler`, `createApp`, `serve`) and the limits
 * they set (D25).
 */
import { invalidInput } from "../errors.js";
import { MAX_JSON_DEPTH } from "../json.js";
import type { ProtocolV2HttpOptions } from "../protocol-v2/http.js";
import type { FetchApp } from "./custom-app.js";
import type { ConfigurableHeaders } from "./configurable-headers.js";
import type { HttpEndpoint } from "./endpoints.js";

/** Options of `createFetchHandler`, `createApp` and `serve`. */
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
  /**
   * Request headers copied into the `config.configurable` of each run a request creates
   * (langgraph.json's `http.configurable_headers`): those matching `includes` (default `x-*` and
   * `user-agent`, as the agent servers copy them) and not `excludes`; never credentials
   * (`authorization`, `cookie`, `x-api-key`, `x-tenant-id`, `x-service-key`).
   */
  configurableHeaders?: ConfigurableHeaders;
  /**
   * Route groups not to serve (langgraph.json's `http.disable_<group>`): their paths answer 404
   * and leave the OpenAPI document. `meta` is `/ok`, `/info`, `/openapi.json`.
   */
  disable?: readonly RouteGroup[];
  /**
   * Called once for each request the API answers (its routes, endpoints, 404s and 405s), when
   * the answer is ready (a stream's: when its headers are), for metrics and request logs: the
   * route template that matched (`/threads/:thread_id/runs`; an endpoint's path; `undefined`
   * when none did) carries no ids. A throwing observer is ignored.
   */
  observe?: (event: RequestEvent) => void;
  /**
   * The URL this server is reached at from where it runs, for a run's `webhook` given as a path
   * (`/custom/webhook`: delivered to this server itself, as the agent server does). Default: the
   * request's own URL, which behind a proxy is the proxy's. `serve()` sets it to its listening URL.
   */
  selfUrl?: () => string | undefined;
}

/** The groups of routes, one file each under src/http/routes. */
export type RouteGroup = "meta" | "assistants" | "threads" | "runs" | "crons" | "store" | "experiments";

/** What {@link FetchHandlerOptions.observe} is told about a request. */
export interface RequestEvent {
  readonly request: Request;
  readonly response: Response;
  /** The route template that matched (`/threads/:thread_id`), undefined when none did. */
  readonly route: string | undefined;
  /** `performance.now()` when the API received the request. */
  readonly start: number;
}

/** Default {@link FetchHandlerOptions.maxBodyBytes}: 16 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Default {@link FetchHandlerOptions.sseBufferBytes}: 4 MiB. */
export const DEFAULT_SSE_BUFFER_BYTES = 4 * 1024 * 1024;
export { MAX_JSON_DEPTH };

/** The limits of one handler (D25). */
export interface Limits {
  readonly maxBodyBytes: number;
  readonly maxDepth: number;
  readonly sseBufferBytes: number;
}

/** The limits in effect, checked once (a bad option is a programming error, thrown at creation). */
export function resolveLimits(options: FetchHandlerOptions): Limits {
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

