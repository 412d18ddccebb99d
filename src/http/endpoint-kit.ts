/**
 * What the endpoints beside the API (src/http/endpoints.ts) share, kept apart from the fetch
 * handler so the page bundle of `graphdock/http` does not carry it: the caller bound as the API
 * binds it, auth refusals with their headers, JSON-RPC bodies read within the body limits, fault
 * reports, and whether an endpoint's optional library is installed.
 */
import { GraphdockError } from "../errors.js";
import { jsonTextDepth, MAX_JSON_DEPTH } from "../json.js";
import type { EndpointContext } from "./endpoints.js";
import { readBodyText } from "./body.js";
import { causeHeaders, HttpError, logInternalError } from "./errors.js";
import { DEFAULT_MAX_BODY_BYTES } from "./options.js";
import type { HttpClient } from "./types.js";

/**
 * The runtime bound to the request's caller, exactly as the API routes bind it: the auth
 * handlers see the same headers (lower-case names), method, path and URL.
 */
export function callerOf(request: Request, { runtime, path }: EndpointContext): Promise<HttpClient> {
  return runtime.client({ headers: Object.fromEntries(request.headers), method: request.method, path, url: request.url });
}

/** How an auth handler refused a caller: the status, its message and the headers it set. */
export interface AuthRefusal {
  status: 401 | 403;
  message: string;
  headers: Headers;
}

/**
 * The refusal carried by `err` when it is one (an auth handler's 401 or 403), else undefined. A
 * 401 always carries `WWW-Authenticate` (HTTP requires it; `Bearer` unless the handler set one).
 */
export function authRefusal(err: unknown): AuthRefusal | undefined {
  if (!GraphdockError.is(err) || (err.code !== "unauthenticated" && err.code !== "forbidden")) return undefined;
  const headers = causeHeaders(err);
  const status = err.code === "unauthenticated" ? 401 : 403;
  if (status === 401 && !headers.has("www-authenticate")) headers.set("www-authenticate", "Bearer");
  return { status, message: err.message, headers };
}

/** Body limits of an endpoint (as the fetch handler's `maxBodyBytes` and `maxDepth`; D25). */
export interface BodyLimits {
  /** Largest body in bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /** Deepest JSON nesting (default 128). */
  maxDepth?: number;
}

/** Why a JSON body was refused: the HTTP status and the JSON-RPC error it answers. */
export interface BodyRefusal {
  status: number;
  code: number;
  message: string;
}

/**
 * A JSON-RPC body, read within `limits` before it is parsed (too large: 413; too deep: 400;
 * unreadable or not JSON: a parse error), or the refusal.
 */
export async function readJsonBody(request: Request, limits: BodyLimits = {}): Promise<{ value: unknown } | { refused: BodyRefusal }> {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  let text: string;
  try {
    text = await readBodyText(request, limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof HttpError) return { refused: { status: err.status, code: err.status === 413 ? -32600 : -32700, message: err.message } };
    throw err;
  }
  if (jsonTextDepth(text, maxDepth) > maxDepth) {
    return { refused: { status: 400, code: -32600, message: `The JSON body nests deeper than ${maxDepth} levels of objects and arrays` } };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { refused: { status: 400, code: -32700, message: `Parse error: the body is not JSON (${(err as Error).message})` } };
  }
}

/** A JSON-RPC error answer with no request id (the request could not be read or was refused). */
export function jsonRpcError(status: number, code: number, message: string, headers?: Headers): Response {
  const out = new Headers(headers);
  out.set("content-type", "application/json");
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), { status, headers: out });
}

/**
 * Reports an internal fault once to an endpoint's `onError` (default: `console.error`, as the
 * fetch handler's); a logger that throws does not fail the request.
 */
export function faultReporter(onError: ((error: unknown, request?: Request) => void) | undefined): (err: unknown, request: Request) => void {
  return (err, request) => {
    try {
      (onError ?? logInternalError)(err, request);
    } catch {
      // a failing logger must not fail the request
    }
  };
}

/** True when `load` (an endpoint's loader of its optional library) succeeds: what `serve` checks before mounting it. */
export const loads = (load: () => Promise<unknown>): Promise<boolean> => load().then(() => true, () => false);

/** The one path segment after `prefix` (`/a2a/{id}`: the id), decoded; undefined when there is not exactly one. */
export function segmentAfter(path: string, prefix: string): string | undefined {
  const rest = path.slice(prefix.length + 1);
  if (!rest || rest.includes("/")) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}
