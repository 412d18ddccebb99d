/**
 * The v2 protocol over HTTP (what the SDK's `ProtocolSseTransportAdapter` calls):
 * `POST /threads/{id}/commands` (JSON command -> JSON response) and
 * `POST /threads/{id}/stream/events` (one filtered SSE subscription per connection, `id:` = the
 * event id, `since` / `Last-Event-ID` replay, the missed-events signal). Fetch API only.
 */
import type { RuntimeClient } from "../runtime/index.js";
import { dispatchCommand, filterOf } from "./commands.js";
import { type ProtocolRuntime, type ProtocolV2Options, SessionRegistry, wire } from "./session.js";
import type { CommandError, CommandSuccess, ProtocolEvent } from "./types.js";

export interface ProtocolV2HttpOptions extends ProtocolV2Options {
  /** Interval of SSE `: heartbeat` comments in ms (default 5000; 0 disables). */
  heartbeatMs?: number;
  /**
   * Events an SSE connection may have queued unread before it is closed (the client reconnects
   * and replays from the buffer). Default 10,000.
   */
  maxQueuedEvents?: number;
}

const encoder = new TextEncoder();
const oneLine = (s: string) => s.replace(/[\r\n]/g, " ");

const json = (data: unknown, status = 200) => new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json" } });

/** The v2 routes of one runtime. */
export function protocolV2Http(runtime: ProtocolRuntime, options: ProtocolV2HttpOptions = {}) {
  const registry = SessionRegistry.of(runtime, options);
  const heartbeatMs = options.heartbeatMs ?? 5000;
  const maxQueued = options.maxQueuedEvents ?? 10_000;

  return {
    registry,
    /** A command's typed response: what `POST /threads/{thread_id}/commands` answers (200). */
    command(threadId: string, client: RuntimeClient, body: unknown): Promise<CommandSuccess | CommandError> {
      return dispatchCommand({ registry, threadId, client }, body);
    },
    /** `POST /threads/{thread_id}/commands`: body a command, answer its typed response (200). */
    async commands(threadId: string, client: RuntimeClient, body: unknown): Promise<Response> {
      return json(await this.command(threadId, client, body));
    },

    /** `POST /threads/{thread_id}/stream/events`: an SSE subscription (404 when the thread does not exist). */
    async events(request: Request, threadId: string, client: RuntimeClient, body: unknown): Promise<Response> {
      let filter;
      try {
        filter = filterOf(body);
      } catch (err) {
        return json({ detail: (err as Error).message }, 422);
      }
      const raw = (body as { since?: unknown }).since;
      if (raw !== undefined && raw !== null && !(Number.isInteger(raw) && (raw as number) >= 0)) return json({ detail: "since must be a non-negative integer" }, 422);
      await client.threads.get(threadId); // 404 / 403 before any stream
      const lastEventId = request.headers.get("last-event-id");
      // A stream opened with a command in flight (the SDK sends `input.respond` as it opens its
      // stream) starts after that command: its replay begins with the command's run.
      if ((raw === undefined || raw === null) && !lastEventId) await registry.settled(threadId);
      const session = await registry.ready(threadId, client, true);
      let since = typeof raw === "number" ? raw : undefined;
      let staleId: string | undefined;
      if (since === undefined && lastEventId) {
        since = session.seqOf(lastEventId);
        if (since === undefined) staleId = lastEventId;
      }

      let close = () => {};
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          let closed = false;
          let timer: ReturnType<typeof setInterval> | undefined;
          const send = (text: string) => {
            if (closed) return;
            controller.enqueue(encoder.encode(text));
            // A reader this far behind is dropped; it reconnects and replays from the buffer.
            if ((controller.desiredSize ?? 0) < -maxQueued) close();
          };
          const frame = (e: ProtocolEvent) => send(`id: ${oneLine(e.event_id)}\ndata: ${wire(e)}\n\n`);
          const signal = (e: CommandError) => send(`event: error\ndata: ${JSON.stringify(e)}\n\n`);
          let sub: { close(): void } | undefined;
          close = () => {
            if (closed) return;
            closed = true;
            clearInterval(timer);
            sub?.close();
            request.signal.removeEventListener("abort", close);
            try {
              controller.close();
            } catch {
              // already cancelled by the consumer
            }
          };
          // Headers first, so the client's `ready` resolves before any event.
          send(": connected\n\n");
          if (staleId !== undefined) {
            signal({ ...missedFor(staleId), message: `graphdock: Last-Event-ID ${staleId} is not from this thread's current event log; events may have been missed. Reload the thread state.` });
          }
          const pending: ProtocolEvent[] = [];
          let replaying = true;
          const s = session.subscribe({ filter, deliver: (e) => (replaying ? pending.push(e) : frame(e)) }, since);
          sub = s;
          if (s.missed) signal(s.missed);
          for (const e of pending) frame(e);
          replaying = false;
          if (request.signal.aborted) return close();
          request.signal.addEventListener("abort", close);
          if (heartbeatMs > 0) {
            timer = setInterval(() => send(": heartbeat\n\n"), heartbeatMs);
            (timer as { unref?: () => void }).unref?.();
          }
        },
        cancel() {
          close();
        },
      });
      return new Response(stream, {
        status: 200,
        headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" },
      });
    },
  };
}

function missedFor(eventId: string): CommandError {
  return { type: "error", id: null, error: "invalid_argument", message: `stale event id ${eventId}` };
}
