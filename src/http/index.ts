/**
 * `graphdock/http`: the runtime as the agent-server HTTP API, as a fetch handler
 * (`Request -> Response`) that mounts in Node (see `graphdock/node`), Deno, Bun, workers and
 * service workers, or is passed to the official client as `callerOptions.fetch`; or as a Hono
 * app to mount in your own (`createApp`). No Node built-ins.
 *
 * @example
 * const handler = createFetchHandler(runtime);
 * Deno.serve(handler);
 * // or, with no network at all:
 * new Client({ apiUrl: "http://in-process", callerOptions: { fetch: (input, init) => handler(new Request(input, init)) } });
 */
import { invalidInput, notFound } from "../errors.js";
import { createApp, methodsOn, pathOf } from "./app.js";
import { applyCors, preflight } from "./cors.js";
import { isFetchApp, withCustomApp, type FetchApp } from "./custom-app.js";
import { errorResponse, json, logInternalError } from "./errors.js";
import type { FetchHandlerOptions } from "./options.js";
import type { HttpRuntime } from "./types.js";

export { createApp, type AppOptions, type GraphdockApp } from "./app.js";
export type { FetchApp, FetchAppObject, CustomAppContext } from "./custom-app.js";
export type { HttpEndpoint, EndpointContext } from "./endpoints.js";
export type { FetchHandlerOptions, RequestEvent, RouteGroup } from "./options.js";
export type { ConfigurableHeaders } from "./configurable-headers.js";
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_SSE_BUFFER_BYTES, MAX_JSON_DEPTH } from "./options.js";
export { INTERNAL_ERROR_DETAIL, logInternalError } from "./errors.js";
export type { HttpRuntime, HttpClient } from "./types.js";

/** A fetch-style request handler. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * Serves `runtime` over the agent-server HTTP API (`GET /openapi.json` describes it): SSE streams
 * (D11), JSON errors `{ detail }` with 404/409/422/401/403 (D3), pagination headers and CORS.
 * Bodies, JSON nesting and SSE send buffers are bounded (D25: `maxBodyBytes`, `maxDepth`,
 * `sseBufferBytes`); an internal fault is a 500 `{"detail": "Internal server error"}`, reported
 * once to `onError`. Custom routes (`app`) are served first, endpoints (`endpoints`) beside the API.
 */
export function createFetchHandler(runtime: HttpRuntime, options: FetchHandlerOptions = {}): FetchHandler {
  const app = createApp(runtime, options);
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const builtIn = async (request: Request): Promise<Response> => {
    try {
      // HEAD is not a GET without its body here (a GET may open a stream): 405, as for another method.
      if (request.method === "HEAD") {
        const path = pathOf(request.url, base);
        const allowed = methodsOn(app, path);
        if (allowed) {
          if (!allowed.length) throw notFound(`No endpoint HEAD ${path}`);
          const allow = allowed.join(", ");
          return json({ detail: `Method HEAD is not allowed on ${path}; use ${allow}` }, 405, new Headers({ allow }));
        }
      }
      return await app.fetch(request);
    } catch (err) {
      return errorResponse(err, (e) => report(options, e, request));
    }
  };
  // Custom routes first, their middleware around the built-in ones (custom-app.ts).
  const serveApp = options.app === undefined ? builtIn : withCustomApp(checkedApp(options.app), builtIn);
  return async (request) => {
    let response: Response;
    if (request.method === "OPTIONS" && options.cors !== false) response = preflight(request, options.cors || undefined);
    else {
      try {
        response = await serveApp(request);
      } catch (err) {
        response = errorResponse(err, (e) => report(options, e, request));
      }
    }
    try {
      return applyCors(request, response, options.cors);
    } catch {
      // A custom app's answer may have immutable headers (a fetched or redirect Response).
      return applyCors(request, new Response(response.body, response), options.cors);
    }
  };
}

function report(options: FetchHandlerOptions, err: unknown, request: Request) {
  try {
    (options.onError ?? logInternalError)(err, request);
  } catch {
    // a failing logger must not turn a 500 into a crash
  }
}

function checkedApp(app: unknown): FetchApp {
  if (!isFetchApp(app)) {
    throw invalidInput("graphdock: createFetchHandler: app must be a function (request) => Response or an object with fetch(request) (e.g. a Hono app)", [
      { path: "app", message: "expected a fetch-style app" },
    ]);
  }
  return app;
}
export { InProcessTransport, protocolV2Http, SessionRegistry } from "../protocol-v2/index.js";
export type { InProcessTransportOptions, ProtocolV2HttpOptions, ProtocolV2Options } from "../protocol-v2/index.js";
export type { EventMethod, InProcessEventStream, WireEvent, WireMessage } from "../protocol-v2/index.js";
