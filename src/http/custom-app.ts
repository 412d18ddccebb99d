/**
 * Custom routes (graph.json `http.app`, `createFetchHandler({ app })`): a fetch-style app served in
 * front of the agent-server routes, as the agent server mounts a deployment's Hono app.
 *
 * - A function `(request) => Response` or an object with `fetch(request)` (a Hono app, or anything
 *   with the same `fetch` contract): its answer wins unless it is a 404, which falls through to
 *   the built-in routes (the request body is kept for them).
 * - An app that also has Hono's `notFound(handler)` is wired deeper: graphdock installs itself as
 *   the app's not-found handler, so requests no custom route matches reach the built-in routes
 *   *through the app's middleware*. Middleware then wraps the built-in routes too: it can answer
 *   instead of them, add headers to their answers, and change a JSON body before they read it
 *   (a body the middleware parsed with `c.req.json()` is handed on as it then is).
 *
 * CORS applies to every answer as to the built-in ones; authentication (the runtime's `auth`)
 * stays with the built-in routes: a custom route is the app's own code and checks its callers
 * itself.
 */
import { HttpError } from "./errors.js";

/** What Hono hands a not-found handler: the parts graphdock reads. */
export interface CustomAppContext {
  req: {
    /** The request as it arrived. */
    raw: Request;
    /** The JSON body (Hono: what middleware parsed, including its changes). */
    json?(): Promise<unknown>;
    /** The body as text (Hono: cached when middleware read it). */
    text?(): Promise<string>;
  };
}

/** An app with Hono's `fetch` contract, optionally with `notFound` (see the file comment). */
export interface FetchAppObject {
  fetch(request: Request, ...rest: never[]): Response | Promise<Response>;
  notFound?(handler: (c: CustomAppContext) => Response | Promise<Response>): unknown;
}

/** A custom app: `(request) => Response`, or an object with `fetch` (e.g. a Hono app). */
export type FetchApp = ((request: Request) => Response | Promise<Response>) | FetchAppObject;

/** True for what `createFetchHandler({ app })` accepts. */
export function isFetchApp(value: unknown): value is FetchApp {
  return typeof value === "function" || (typeof value === "object" && value !== null && typeof (value as FetchAppObject).fetch === "function");
}

const hasBody = (request: Request) => request.body !== null && request.method !== "GET" && request.method !== "HEAD";

/**
 * The request the built-in routes get from a not-found handler: the original, or (when the app's
 * middleware consumed its body) one carrying the body as the middleware left it.
 */
async function forwarded(c: CustomAppContext): Promise<Request> {
  const raw = c.req.raw;
  if (!raw.bodyUsed) return raw;
  let body: string | undefined;
  if (typeof c.req.json === "function") {
    try {
      body = JSON.stringify(await c.req.json());
    } catch {
      // not JSON: as text below
    }
  }
  if (body === undefined && typeof c.req.text === "function") body = await c.req.text();
  if (body === undefined) {
    throw new HttpError(500, "The custom app's middleware consumed the request body and offers no c.req.json() / c.req.text() to read it again");
  }
  const headers = new Headers(raw.headers);
  headers.delete("content-length");
  return new Request(raw.url, { method: raw.method, headers, body, signal: raw.signal });
}

/**
 * `builtIn` behind `app` (see the file comment). `builtIn` must answer every request itself
 * (errors included), as the handler of `createFetchHandler` does.
 */
export function withCustomApp(app: FetchApp, builtIn: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
  if (typeof app === "object" && typeof app.notFound === "function") {
    app.notFound(async (c) => builtIn(await forwarded(c)));
    return async (request) => app.fetch(request);
  }
  const fetchApp = typeof app === "function" ? app : (request: Request) => app.fetch(request);
  return async (request) => {
    // The app reads a copy, so a 404 can hand the untouched body on.
    const response = await fetchApp(hasBody(request) ? request.clone() : request);
    return response.status === 404 ? builtIn(request) : response;
  };
}
