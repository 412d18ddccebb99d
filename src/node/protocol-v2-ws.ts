/**
 * The v2 protocol's WebSocket transport on `node:http` (D24): upgrades
 * `GET /threads/{thread_id}/stream/events` with `ws` and runs one `ProtocolConnection` per socket.
 * A refused connection closes with 4000 + the HTTP status (4401, 4403, 4404), which the SDK's
 * WebSocket transport reads as a non-retryable error.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { GraphdockError } from "../errors.js";
import type { HttpRuntime } from "../http/index.js";
import { ProtocolConnection } from "../protocol-v2/connection.js";
import { SessionRegistry, type ProtocolV2Options } from "../protocol-v2/session.js";

export interface ProtocolV2WebSocketOptions {
  basePath?: string;
  protocolV2?: ProtocolV2Options & {
    /** Bytes a socket may have unsent before it is closed (the client reconnects and replays). Default 64 MiB. */
    maxBufferedBytes?: number;
  };
}

const STATUS = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403, unavailable: 503 } as const;
const ROUTE = /^\/threads\/([^/]+)\/stream\/events\/?$/;

/** Serves the v2 WebSocket transport on `server`; returns a function that closes every socket. */
export function attachProtocolV2WebSocket(server: Server, runtime: HttpRuntime, options: ProtocolV2WebSocketOptions = {}): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const maxBuffered = options.protocolV2?.maxBufferedBytes ?? 64 * 1024 * 1024;
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let path = new URL(req.url ?? "/", "http://x").pathname;
    if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length) || "/";
    const m = ROUTE.exec(path);
    if (!m) {
      socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    let threadId: string;
    try {
      threadId = decodeURIComponent(m[1]!);
    } catch {
      socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => void accept(ws, req, threadId));
  });

  async function accept(ws: WebSocket, req: IncomingMessage, threadId: string) {
    const early: string[] = [];
    let conn: ProtocolConnection | undefined;
    ws.on("message", (data) => {
      const text = data.toString();
      if (conn) conn.receive(text);
      else early.push(text);
    });
    ws.on("close", () => conn?.close());
    ws.on("error", () => conn?.close());
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      const client = await runtime.client({ headers, method: "GET", path: req.url ?? "/", url: `http://${req.headers.host ?? "localhost"}${req.url ?? "/"}` });
      // A thread that does not exist yet is fine: run.start on this socket creates it.
      let verified = true;
      try {
        await client.threads.get(threadId);
      } catch (err) {
        if (!GraphdockError.is(err, "not_found")) throw err;
        verified = false;
      }
      if (ws.readyState !== ws.OPEN) return;
      conn = new ProtocolConnection({
        registry: SessionRegistry.of(runtime, options.protocolV2),
        threadId,
        client,
        verified,
        send: (text) => {
          if (ws.readyState !== ws.OPEN) return;
          if (ws.bufferedAmount > maxBuffered) return void ws.close(1013, "reader too slow; reconnect");
          ws.send(text);
        },
      });
      for (const text of early.splice(0)) conn.receive(text);
    } catch (err) {
      const own = (err as { status?: unknown } | null)?.status; // auth handlers throw HTTPException(status)
      const status = GraphdockError.is(err) ? STATUS[err.code] : typeof own === "number" && own >= 400 && own < 500 ? own : 500;
      ws.close(status >= 500 ? 1011 : 4000 + status, String((err as Error)?.message ?? err).slice(0, 120));
    }
  }

  return () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  };
}
