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
  /**
   * Its OpenAPI 3.1 path items, by path (`{ "/mcp": { post: {...} } }`), for `GET /openapi.json`;
   * without them its paths are listed as opaque.
   */
  readonly openapi?: Readonly<Record<string, Record<string, unknown>>>;
}

