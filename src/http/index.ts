/**
 * `agentdock/http`: the runtime as the agent-server HTTP API, as a fetch handler
 * (`Request -> Response`) that mounts in Node (see `agentdock/node`), Deno, Bun, workers and
 * service workers, or is passed to the official client as `callerOptions.fetch`. No Node built-ins.
 *
 * @example
 * const handler = createFetchHandler(runtime);
 * Deno.serve(handler);
 * // or, with no network at all:
 * new Client({ apiUrl: "http://in-process", callerOptions: { fetch: (input, init) => handler(new Request(input, init)) } });
 */
import { applyCors, createRouter, errorResponse, logInternalError, preflight, type FetchHandlerOptions } from "./handler.js";
import type { HttpRuntime } from "./types.js";

export type { FetchHandlerOptions } from "./handler.js";
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_SSE_BUFFER_BYTES, MAX_JSON_DEPTH, INTERNAL_ERROR_DETAIL, logInternalError } from "./handler.js";
export type { HttpRuntime, HttpClient } from "./types.js";

/** A fetch-style request handler. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * Serves `runtime` over the agent-server HTTP API (api.md 1.1-1.5), SSE streams (D11), JSON
 * errors `{ detail }` with 404/409/422/401/403 (D3), pagination headers and CORS. Bodies, JSON
 * nesting and SSE send buffers are bounded (D25: `maxBodyBytes`, `maxDepth`, `sseBufferBytes`);
 * an internal fault is a 500 `{"detail": "Internal server error"}`, reported once to `onError`.
 */
export function createFetchHandler(runtime: HttpRuntime, options: FetchHandlerOptions = {}): FetchHandler {
  const router = createRouter(runtime, options);
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const report = (err: unknown, request: Request) => {
    try {
      (options.onError ?? logInternalError)(err, request);
    } catch {
      // a failing logger must not turn a 500 into a crash
    }
  };
  return async (request) => {
    let response: Response;
    try {
      let path = new URL(request.url).pathname;
      if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length) || "/";
      response =
        request.method === "OPTIONS" && options.cors !== false
          ? preflight(request, options.cors || undefined)
          : await router.route(request, path);
    } catch (err) {
      response = errorResponse(err, (e) => report(e, request));
    }
    return applyCors(request, response, options.cors);
  };
}
export { InProcessTransport, protocolV2Http, SessionRegistry } from "../protocol-v2/index.js";
export type { InProcessTransportOptions, ProtocolV2HttpOptions, ProtocolV2Options } from "../protocol-v2/index.js";
export type { EventMethod, InProcessEventStream, WireEvent, WireMessage } from "../protocol-v2/index.js";
