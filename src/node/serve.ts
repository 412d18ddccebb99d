/**
 * `serve(runtime, options)`: the fetch handler of `agentdock/http` on `node:http`. The listener
 * turns each `IncomingMessage` into a `Request` whose `signal` aborts when the client goes away
 * (so streams apply `on_disconnect`), and writes the `Response` back, streams included.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createFetchHandler, type FetchHandler, type FetchHandlerOptions, type HttpRuntime } from "../http/index.js";
import { attachProtocolV2WebSocket } from "./protocol-v2-ws.js";

/** Options of {@link serve}: where to listen, plus the fetch handler's options. */
export interface ServeOptions extends FetchHandlerOptions {
  /** Port (default 2024; 0 picks a free one). */
  port?: number;
  /** Interface (default `127.0.0.1`). */
  host?: string;
  /**
   * When false and `port` is taken, try the next ports (up to 20) instead of failing, as a
   * development server does. Default true: the port asked for or an error.
   */
  strictPort?: boolean;
}

/** A running server. */
export interface ServeHandle {
  /** Base URL, e.g. `http://127.0.0.1:2024`. */
  url: string;
  port: number;
  host: string;
  server: Server;
  /** Stops accepting connections, ends open streams and resolves when the server is closed. */
  close(): Promise<void>;
}

/** Adapts a fetch handler to a `node:http` request listener. */
export function toNodeListener(handler: FetchHandler) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const abort = new AbortController();
    // The client closed the connection before the response finished (@hono/node-server does the same).
    res.on("close", () => {
      if (!res.writableFinished) abort.abort(new Error("Client connection closed"));
    });
    try {
      const chunks: Buffer[] = [];
      if (req.method !== "GET" && req.method !== "HEAD") for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      const host = /^[\w.:[\]-]+$/.test(req.headers.host ?? "") ? req.headers.host : "localhost";
      const request = new Request(`http://${host}${req.url ?? "/"}`, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
        signal: abort.signal,
      });
      const response = await handler(request);
      const outHeaders = Object.fromEntries(response.headers);
      if (!response.body || !outHeaders["content-type"]?.startsWith("text/event-stream")) {
        // A finite body: one write with its length (cheaper than pumping a stream).
        const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
        if (body) outHeaders["content-length"] = String(body.length);
        res.writeHead(response.status, outHeaders);
        return void res.end(body);
      }
      res.writeHead(response.status, outHeaders);
      res.flushHeaders();
      const reader = response.body.getReader();
      abort.signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
      }
      res.end();
    } catch (err) {
      if (abort.signal.aborted) return;
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: `agentdock: internal error: ${(err as Error).message}` }));
      } else res.destroy(err as Error);
    }
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
  const { port = 2024, host = "127.0.0.1", strictPort = true, ...handlerOptions } = options;
  const server = createServer(toNodeListener(createFetchHandler(runtime, handlerOptions)));
  const closeSockets = attachProtocolV2WebSocket(server, runtime, handlerOptions); // D24: v2 over WebSocket
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
        throw inUse ? new Error(`port ${port + attempt} on ${host} is in use; choose another with --port`) : err;
      }
    }
  }
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    host: address.address,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
        closeSockets();
      }),
  };
}
