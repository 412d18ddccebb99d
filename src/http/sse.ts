/**
 * Server-sent events at the edge (D11): a pure transform from the runtime's async iterable of
 * `{ event, data, id }` to a `text/event-stream` body. One event per frame (`event:`, one-line
 * `data:` JSON, `id:`, blank line), `: heartbeat` comments on a timer, no terminal event.
 */

/** One streamed run event, as the runtime yields it. */
export interface StreamPart {
  event: string;
  data: unknown;
  id?: string;
}

const encoder = new TextEncoder();

/** Event names and ids go on one line each; a CR or LF would end the field early. */
const oneLine = (s: string) => s.replace(/[\r\n]/g, " ");

/** Encodes one event as an SSE frame. `JSON.stringify` escapes newlines, so data stays on one line. */
export function sseFrame(part: StreamPart): string {
  let frame = `event: ${oneLine(part.event)}\ndata: ${JSON.stringify(part.data ?? null)}\n`;
  if (part.id !== undefined && part.id !== null) frame += `id: ${oneLine(String(part.id))}\n`;
  return frame + "\n";
}

export interface SseOptions {
  /** Interval of `: heartbeat` comments in ms; 0 disables them. */
  heartbeatMs: number;
  /** Aborted when the client goes away; ends the iteration (the runtime applies `on_disconnect`). */
  signal: AbortSignal;
  /** Called once if the client goes away (or is cut off as too slow) before the stream ended. */
  onDisconnect?: () => void;
  headers: Headers;
  /**
   * Bytes that may wait in the body's queue for a client that is not reading (D25). When the
   * queue holds this much and another frame is due, the stream is errored with a
   * {@link SlowReaderError}: the queue is dropped, the run's iteration is stopped (so the
   * runtime drops what it holds for this reader) and the transport closes the connection.
   */
  maxBufferBytes?: number;
  /** Called with an error the run's iterator threw that is not an `GraphdockError` (a fault). */
  onError?: (err: unknown) => void;
}

/** Why a stream was cut: its client did not read `limit` bytes of queued events. */
export class SlowReaderError extends Error {
  override readonly name = "SlowReaderError";
  constructor(readonly limit: number) {
    super(`The client did not read ${limit} bytes of queued events (sseBufferBytes); the stream was closed`);
  }
}

/** One turn of the event loop (setImmediate where there is one: Node, Deno, Bun; else a timer). */
const nextTurn = () =>
  new Promise<void>((resolve) => (typeof setImmediate === "function" ? setImmediate(resolve) : setTimeout(resolve, 0)));

const isGraphdockError = (e: unknown): e is { name: string; message: string } =>
  typeof e === "object" && e !== null && (e as { name?: unknown }).name === "GraphdockError";

/**
 * Opens the stream of the iterator whose first result is already known. The first `next()` is
 * awaited by the caller before this is called, so errors raised before the run exists become
 * ordinary HTTP errors; an error thrown later is sent in-band as an `error` event
 * (an `GraphdockError` with its message, any other error as `Internal server error`, reported to
 * `onError`). A run's own failure is an event of the run, not a throw, and keeps its message.
 *
 * The run's events are pulled as they come (the runtime would otherwise queue them for this
 * reader without bound) into a body whose queue counts bytes; a client that stops reading fills
 * it, and at `maxBufferBytes` it is cut off (see {@link SseOptions.maxBufferBytes}). A transport
 * must therefore read the body only as fast as it can write (node:http `serve()` waits for
 * `drain`), so the queue is where a slow client's backlog shows up.
 */
export function sseResponse(
  first: IteratorResult<StreamPart> | Promise<IteratorResult<StreamPart>>,
  it: AsyncIterator<StreamPart>,
  opts: SseOptions,
): Response {
  const limit = opts.maxBufferBytes ?? Infinity;
  let finish: (how: "done" | "gone" | "slow") => void = () => {};
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let closed = false;
        let timer: ReturnType<typeof setInterval> | undefined;
        // Full: `limit` bytes wait unread (one frame may pass the limit of an emptier queue).
        const full = () => (controller.desiredSize ?? 0) <= 0;
        const send = (text: string) => {
          if (!closed) controller.enqueue(encoder.encode(text));
        };
        const onAbort = () => finish("gone");
        finish = (how) => {
          if (closed) return;
          closed = true;
          clearInterval(timer);
          opts.signal.removeEventListener("abort", onAbort);
          if (how !== "done") {
            // The client went away or was cut off: stop the runtime's iteration (it applies
            // on_disconnect and drops this reader's queue).
            try {
              void Promise.resolve(it.return?.()).catch(() => {});
            } catch {
              // a throwing return() still ends our side
            }
            opts.onDisconnect?.();
          }
          try {
            // Erroring drops the queued bytes at once; closing would keep them until read.
            if (how === "slow") controller.error(new SlowReaderError(limit));
            else controller.close();
          } catch {
            // the consumer already cancelled the body
          }
        };
        if (opts.signal.aborted) return finish("gone");
        opts.signal.addEventListener("abort", onAbort);
        // A heartbeat is only for an idle stream: none while bytes wait unread.
        if (opts.heartbeatMs > 0) timer = setInterval(() => !full() && send(": heartbeat\n\n"), opts.heartbeatMs);
        void (async () => {
          try {
            // A pending first result (a stream that may stay idle, like a thread's) does not hold the headers back.
            for (let r = await first; !r.done && !closed; r = await it.next()) {
              if (full()) {
                // Give the transport one turn of the event loop to write (a burst of events can
                // fill the queue before a socket ever reports drain); still full: too slow.
                await nextTurn();
                if (closed) break;
                if (full()) {
                  finish("slow");
                  break;
                }
              }
              send(sseFrame(r.value));
            }
          } catch (err) {
            if (closed) return;
            if (full()) return finish("slow");
            // An GraphdockError is for the caller (its message names the fix); anything else is a
            // fault: reported once, and the stream says no more than a 500 would.
            const data = isGraphdockError(err)
              ? { error: err.name, message: err.message }
              : (opts.onError?.(err), { error: "InternalServerError", message: "Internal server error" });
            send(sseFrame({ event: "error", data }));
          }
          finish("done");
        })();
      },
      cancel() {
        finish("gone");
      },
    },
    // Counts bytes, so `desiredSize` is what the client may still leave unread.
    { highWaterMark: Number.isFinite(limit) ? limit : 2 ** 53, size: (chunk) => chunk.byteLength },
  );
  const headers = opts.headers;
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.set("cache-control", "no-cache");
  headers.set("connection", "keep-alive");
  return new Response(body, { status: 200, headers });
}
