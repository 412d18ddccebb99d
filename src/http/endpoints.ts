/**
 * Endpoints served beside the agent-server API by the same fetch handler: the protocols (MCP,
 * A2A, the AI SDK chat stream) and the studio. Each is its own module, loaded only when enabled,
 * and reaches the runtime only through its public surface: `runtime.client({ headers })` binds a
 * request's caller, so the runtime's authentication and authorization apply as to every route.
 */
import type { HttpRuntime } from "./types.js";

/** What an endpoint is given with each request. */
export interface EndpointContext {
  /** The runtime the handler serves. */
  readonly runtime: HttpRuntime;
  /** The request's path with the handler's base path removed (e.g. `/mcp`). */
  readonly path: string;
  /** The base path the handler is mounted under (`""` at the root), for links the endpoint writes. */
  readonly basePath: string;
}

/** An endpoint served beside the agent-server API. */
export interface HttpEndpoint {
  /** Its name, as in `http.disable_<name>` of langgraph.json (e.g. `"mcp"`). */
  readonly name: string;
  /**
   * The paths it answers, below the base path: a request whose path equals one of them or lies
   * under it (`/a2a` answers `/a2a/<id>`) goes to {@link fetch}.
   */
  readonly paths: readonly string[];
  /** Answers one request. */
  fetch(request: Request, context: EndpointContext): Promise<Response>;
}

/** The endpoint answering `path`, if any. */
export function endpointFor(endpoints: readonly HttpEndpoint[], path: string): HttpEndpoint | undefined {
  for (const endpoint of endpoints) {
    for (const p of endpoint.paths) if (path === p || path.startsWith(p.endsWith("/") ? p : `${p}/`)) return endpoint;
  }
  return undefined;
}
