/**
 * What the HTTP adapter needs from a runtime: only its public surface.
 * `runtime.client(request)` authenticates the request's caller and returns the SDK-shaped
 * namespaces bound to that user (D13).
 */
import type { Runtime, RuntimeClient } from "../runtime/index.js";

/** A runtime, or anything with the same `client` binding (and `ping`, which `GET /ok` calls when given). */
export type HttpRuntime = Pick<Runtime, "client"> & Partial<Pick<Runtime, "ping">>;
/** The namespaces bound to one request's caller. */
export type HttpClient = RuntimeClient;
