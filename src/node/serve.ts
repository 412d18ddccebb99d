/**
 * `serve(runtime, options)`: the fetch handler of `graphdock/http` on `node:http`. The listener
 * turns each `IncomingMessage` into a `Request` whose `signal` aborts when the client goes away
 * (so streams apply `on_disconnect`) and whose body streams from the socket (the handler caps
 * it), and writes the `Response` back, streams included, with backpressure.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createFetchHandler,
  DEFAULT_MAX_BODY_BYTES,
  INTERNAL_ERROR_DETAIL,
  logInternalError,
  type FetchHandler,
  type FetchHandlerOptions,
  type HttpRuntime,
  type RequestEvent,
} from "../http/index.js";
import { performance } from "node:perf_hooks";
import { apiDocs } from "./docs.js";
import { attachProtocolV2WebSocket } from "./protocol-v2-ws.js";
import { protocolEndpoints, type ProtocolOptions } from "./protocols.js";
import { studio, type StudioOptions } from "../studio/index.js";
import { logRuns } from "./run-log.js";
import { createMetrics, type Metrics, type MetricsOptions } from "../metrics/index.js";
import type { DiagnosticsLogger } from "../diagnostics.js";
import type { Runtime } from "../runtime/index.js";

/**
 * Options of {@link serve}: where to listen, plus the fetch handler's options, limits included
 * (D25: `maxBodyBytes` default 16 MiB, `maxDepth` default 128, `sseBufferBytes` default 4 MiB)
 * and `onError`, which also receives the listener's own faults, plus the protocol endpoints
 * (`mcp`, `a2a`, `aiSdk`: each mounted when its library is installed, unless `false`).
 */
export interface ServeOptions extends FetchHandlerOptions, ProtocolOptions {
  /**
   * Port; 0 picks a free one. Without it: 2024, or the next free port after it when 2024 is taken
   * (as a development server does; the handle's `url` says which).
   */
  port?: number;
  /** Interface (default `127.0.0.1`). */
  host?: string;
  /**
   * When false and the port is taken, try the next ports (up to 20) instead of failing. Default:
   * true when `port` is given (that port or an error), false without it.
   */
  strictPort?: boolean;
  /**
   * The studio at `/studio` (below `basePath`; src/studio): on by default, `false` turns it off
   * (langgraph.json `http.disable_studio`), an object passes its options.
   */
  studio?: boolean | StudioOptions;
  /**
   * `GET /docs`: the API's documentation, rendered from `GET /openapi.json` by Swagger UI
   * (`apiDocs()`, served from the package). Default true; off with `false` or when the meta
   * routes are disabled (`disable: ["meta"]`).
   */
  docs?: boolean;
  /**
   * Where the server logs (a pino logger fits; D92): each run's start and end (info; a failed run
   * at error with its stack), each request (debug: method, path, route template, status and
   * duration; no headers, no query) and each internal fault (error, unless `onError` is given).
   * Default: nothing is logged.
   */
  log?: DiagnosticsLogger;
  /**
   * `GET /metrics` in the Prometheus text format (src/metrics; D95), with a registry of this
   * server's own. Off by default; `true` serves it to anyone, `{ token }` only with
   * `Authorization: Bearer <token>` (what a server with an auth handler should use).
   */
  metrics?: boolean | MetricsOptions;
}

/** A running server. */
export interface ServeHandle {
  /** Base URL, e.g. `http://127.0.0.1:2024`. */
  url: string;
  port: number;
  host: string;
  server: Server;
  /** The server's metrics, when `metrics` is on (its registry, and where store timings go). */
  metrics?: Metrics;
  /** Stops accepting connections, ends open streams and resolves when the server is closed. */
  close(): Promise<void>;
}

/** Methods `Request` cannot carry (fetch forbids them); answered 405 here instead of failing. */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Called once for each internal fault of the listener itself (default: `console.error`). */
  onError?: (error: unknown, request?: Request) => void;
  /** Called when a stream's answer (server-sent events) starts; the function it returns, when it ends. */
  onStream?: () => () => void;
  /**
   * The handler's body limit (default 16 MiB, as `maxBodyBytes` of the fetch handler): the rest
   * of a body the handler answered without reading is read and dropped up to this size, so its
   * client, still sending, gets the answer; a larger one closes the connection.
   */
  maxBodyBytes?: number;
}

/** A request listener that can also serve `checkContinue` (see {@link toNodeListener}). */
export type NodeListener = ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & {
  /**
   * For `server.on("checkContinue", listener.checkContinue)`: a request sent with
   * `Expect: 100-continue` gets its `100 Continue` only when the handler starts reading the body,
   * so a body refused up front (413 on its Content-Length, 401, 404) is never sent at all.
   */
  checkContinue: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
};

/**
 * Called before answering a request whose body was not read to its end (answered without it,
 * or refused). A client still sending a body it was not asked for would get `EPIPE` (or a reset)
 * instead of the answer if the connection closed under it: so the rest is read and dropped,
 * when the body is no larger than `limit` (then true: the connection stays open). A larger one,
 * or an answer that closes the connection anyway (413), is not read: false, the connection closes.
 */
function dropRestOfBody(req: IncomingMessage, limit: number, closing: boolean): boolean {
  if (req.complete) return true;
  const declared = Number(req.headers["content-length"]);
  if (closing || (Number.isFinite(declared) && declared > limit)) return false;
  let dropped = 0;
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limit) req.socket.destroy();
  });
  req.resume();
  return true;
}

/** Writes a small JSON answer; the connection closes afterwards unless the rest of the body is dropped first. */
function answer(req: IncomingMessage, res: ServerResponse, limit: number, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  const out: Record<string, string> = { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) };
  if (!dropRestOfBody(req, limit, false)) out.connection = "close";
  res.writeHead(status, out);
  res.end(text);
}

/**
 * The request body as a web stream that reads the socket only as fast as it is consumed
 * (pull-based, no read-ahead): the fetch handler counts the bytes and stops at its
 * `maxBodyBytes`, so an oversized body is never buffered (D25).
 */
function bodyStream(req: IncomingMessage, onFirstPull?: () => void): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once("end", () => {
          try {
            controller.close();
          } catch {
            // cancelled
          }
        });
        const fail = (err: unknown) => {
          try {
            controller.error(err);
          } catch {
            // cancelled
          }
        };
        req.once("error", fail);
        // The client went away mid-body: the handler's read fails (400) instead of waiting forever.
        req.once("close", () => !req.complete && fail(new Error("The client closed the connection before the body ended")));
        req.pause();
      },
      pull() {
        onFirstPull?.();
        onFirstPull = undefined;
        req.resume();
      },
      cancel() {
        // The handler has all it will read (or refused the body): stop reading the socket. The
        // answer then closes the connection, since the rest of the body is never read.
        req.pause();
        req.removeAllListeners("data");
      },
    },
    // No read-ahead: the socket is read only when the handler reads (so `100 Continue` goes out
    // only then, and a body refused up front is never pulled in).
    { highWaterMark: 0 },
  );
}

/** Path and query of the request target (origin-form or absolute-form), or null when malformed. */
function targetOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url, "http://localhost");
    return parsed.pathname + parsed.search;
  } catch {
    return null;
  }
}

/**
 * Adapts a fetch handler to a `node:http` request listener. Request bodies stream into the
 * handler (it enforces its body limit while reading); SSE bodies are written only as fast as the
 * socket takes them (`write()` returning false waits for `drain`), so a client that does not read
 * leaves its backlog in the handler's bounded stream queue, which cuts it off when full.
 */
export function toNodeListener(handler: FetchHandler, options: NodeListenerOptions = {}): NodeListener {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const report = (err: unknown, request?: Request) => {
    try {
      (options.onError ?? logInternalError)(err, request);
    } catch {
      // a failing logger must not crash the server
    }
  };
  const listen = async (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    const abort = new AbortController();
    // The client closed the connection before the response finished (@hono/node-server does the same).
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new Error("Client connection closed"));
    });
    let request: Request | undefined;
    try {
      const method = req.method ?? "GET";
      if (FORBIDDEN_METHODS.has(method)) {
        return answer(req, res, limit, 405, { detail: `Method ${method} is not supported by this server` }, { allow: "GET, POST, PATCH, DELETE, OPTIONS" });
      }
      const target = targetOf(req.url);
      if (target === null) return answer(req, res, limit, 400, { detail: "Malformed request target" });
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      const host = /^[\w.:[\]-]+$/.test(req.headers.host ?? "") ? req.headers.host : "localhost";
      const hasBody = method !== "GET" && method !== "HEAD";
      try {
        request = new Request(`http://${host}${target}`, {
          method,
          headers,
          body: hasBody ? bodyStream(req, expectsContinue ? () => res.writeContinue() : undefined) : undefined,
          signal: abort.signal,
          // @ts-expect-error Node's fetch needs it for a stream body; the DOM types lack it
          duplex: "half",
        });
      } catch {
        // Something node:http let through that fetch refuses (a header value, a method name).
        return answer(req, res, limit, 400, { detail: "Malformed request: a header or the method is not valid" });
      }
      const response = await handler(request);
      const outHeaders = Object.fromEntries(response.headers);
      // A body that says it is chunked (a custom route streaming with Hono's `stream*` helpers)
      // streams like SSE. The framing is node:http's own: an app's Transfer-Encoding is dropped,
      // since a response carrying it next to the Content-Length written below is invalid.
      const chunked = /\bchunked\b/i.test(outHeaders["transfer-encoding"] ?? "");
      delete outHeaders["transfer-encoding"];
      if (!response.body || (!chunked && !outHeaders["content-type"]?.startsWith("text/event-stream"))) {
        // A finite body: one write with its length (cheaper than pumping a stream).
        const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
        if (body) outHeaders["content-length"] = String(body.length);
        // The request body was not read to its end (refused, or not needed): its rest is
        // dropped, or the connection closes after the answer.
        if (!dropRestOfBody(req, limit, outHeaders.connection === "close")) outHeaders.connection = "close";
        res.writeHead(response.status, outHeaders);
        return void res.end(body);
      }
      // A stream may still be reading the request body: it is left alone, and the connection
      // closes after the stream unless the body was read by then.
      if (!req.complete) outHeaders.connection = "close";
      res.writeHead(response.status, outHeaders);
      res.flushHeaders();
      const ended = options.onStream?.();
      try {
        await pump(response.body, res, abort.signal);
      } finally {
        ended?.();
      }
    } catch (err) {
      if (abort.signal.aborted) return;
      if ((err as { name?: unknown } | null)?.name === "SlowReaderError") return void res.destroy();
      report(err, request);
      if (!res.headersSent) answer(req, res, limit, 500, { detail: INTERNAL_ERROR_DETAIL });
      else res.destroy();
    }
  };
  return Object.assign((req: IncomingMessage, res: ServerResponse) => listen(req, res, false), {
    checkContinue: (req: IncomingMessage, res: ServerResponse) => listen(req, res, true),
  });
}

/**
 * Copies a stream body to the socket with backpressure: after a `write()` that returns false,
 * nothing more is read until `drain` (or the connection closes, or the stream fails, e.g. cut
 * off as a slow reader). One wake-up callback, so long streams accumulate no listeners.
 */
async function pump(body: ReadableStream<Uint8Array>, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  let wake: (() => void) | null = null;
  const wakeUp = () => wake?.();
  const onAbort = () => {
    wakeUp();
    void reader.cancel().catch(() => {});
  };
  signal.addEventListener("abort", onAbort, { once: true });
  res.on("drain", wakeUp);
  res.on("close", wakeUp);
  reader.closed.then(wakeUp, wakeUp);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value) && !res.destroyed) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    }
    res.end();
  } finally {
    signal.removeEventListener("abort", onAbort);
    res.off("drain", wakeUp);
    res.off("close", wakeUp);
  }
}

/** Where the SDK's `Client` looks for the server it runs in (see {@link bindLoopback}). */
const LOOPBACK_FETCH = Symbol.for("langgraph_api:fetch");
const LOOPBACK_URL = Symbol.for("langgraph_api:url");

/**
 * Lets code running in this server (a graph's node, a custom route) reach it with the SDK's
 * `new Client()` and no URL, as on the agent server: a `Client` made without `apiUrl` reads a
 * fetch and a URL from these globals. The fetch calls the handler in process (custom routes,
 * auth and all), without a round trip through a socket. The last server started in the process
 * is the one reached; closing it unbinds it.
 */
function bindLoopback(handler: FetchHandler, url: string): () => void {
  const global = globalThis as { [LOOPBACK_FETCH]?: unknown; [LOOPBACK_URL]?: unknown };
  const loopback = (input: string | URL | Request, init?: RequestInit) => handler(new Request(input, init));
  global[LOOPBACK_FETCH] = loopback;
  global[LOOPBACK_URL] = url;
  return () => {
    if (global[LOOPBACK_FETCH] !== loopback) return;
    delete global[LOOPBACK_FETCH];
    delete global[LOOPBACK_URL];
  };
}

/**
 * Serves `runtime` over HTTP on `node:http` and resolves once listening.
 *
 * @example
 * const server = await serve(runtime, { port: 2024 });
 * console.log(server.url);
 * await server.close();
 */
export async function serve(runtime: HttpRuntime, options: ServeOptions = {}): Promise<ServeHandle> {
  const { port = 2024, host = "127.0.0.1", strictPort = options.port !== undefined, mcp, a2a, aiSdk, studio: studioOption = true, docs = true, log, ...handlerOptions } = options;
  if (log && !handlerOptions.onError) handlerOptions.onError = (err, request) => log.error({ err, ...requestFields(request) }, "graphdock: internal error");
  const { maxBodyBytes, maxDepth, onError } = handlerOptions;
  const protocols = await protocolEndpoints({ mcp, a2a, aiSdk }, { maxBodyBytes, maxDepth, onError });
  const endpoints = [...(handlerOptions.endpoints ?? []), ...protocols];
  if (studioOption !== false) endpoints.push(studio(studioOption === true ? {} : studioOption));
  if (docs && !handlerOptions.disable?.includes("meta")) endpoints.push(apiDocs());
  const metrics = options.metrics && isSubscribable(runtime) ? createMetrics(runtime, options.metrics === true ? {} : options.metrics) : undefined;
  if (metrics) endpoints.push(metrics.endpoint);
  const observers = [handlerOptions.observe, metrics?.observe, log && requestLogger(log)].filter((o) => o !== undefined);
  const observe = (event: RequestEvent) => {
    for (const o of observers) {
      try {
        o(event);
      } catch {
        // one observer's fault is not the others'
      }
    }
  };
  let url: string | undefined;
  const handler = createFetchHandler(runtime, { selfUrl: () => url, ...handlerOptions, endpoints, ...(observers.length > 0 ? { observe } : {}) });
  const listener = toNodeListener(handler, {
    onError,
    ...(metrics ? { onStream: metrics.streamStarted } : {}),
    ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
  });
  const server = createServer(listener);
  server.on("checkContinue", listener.checkContinue);
  const closeSockets = attachProtocolV2WebSocket(server, runtime, handlerOptions); // the v2 protocol over WebSocket
  const listen = (p: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(p, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  for (let attempt = 0; ; attempt++) {
    try {
      await listen(port + attempt);
      break;
    } catch (err) {
      const inUse = (err as NodeJS.ErrnoException).code === "EADDRINUSE";
      if (!inUse || strictPort || port === 0 || attempt >= 19) {
        throw inUse ? new Error(`port ${port + attempt} on ${host} is in use; choose another port (0 picks a free one)`) : err;
      }
    }
  }
  const stopRunLog = log && isSubscribable(runtime) ? logRuns(runtime, log) : undefined;
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  url = `http://${shownHost}:${address.port}`;
  const unbind = bindLoopback(handler, url);
  return {
    url,
    port: address.port,
    host: address.address,
    server,
    ...(metrics ? { metrics } : {}),
    close: () =>
      new Promise<void>((resolve, reject) => {
        unbind();
        stopRunLog?.();
        metrics?.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
        closeSockets();
      }),
  };
}

/** A runtime with lifecycle events (anything `serve` is given has `client`; a runtime also has these). */
const isSubscribable = (runtime: HttpRuntime): runtime is HttpRuntime & Pick<Runtime, "subscribe"> =>
  typeof (runtime as Partial<Runtime>).subscribe === "function";

/** A debug line per request: method, path, route template, status and duration; no headers, no query. */
function requestLogger(log: DiagnosticsLogger): (event: RequestEvent) => void {
  return ({ request, response, route, start }) =>
    log.debug({ ...requestFields(request), route: route ?? null, status: response.status, duration_ms: Math.round((performance.now() - start) * 10) / 10 }, "graphdock: request");
}

/** A request's method and path (no query: it may carry a token), for log lines. */
function requestFields(request: Request | undefined): Record<string, string> {
  if (!request) return {};
  try {
    return { method: request.method, path: new URL(request.url).pathname };
  } catch {
    return { method: request.method };
  }
}
