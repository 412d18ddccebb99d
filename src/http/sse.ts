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
  /** Called once if the client goes away before the stream ended. */
  onDisconnect?: () => void;
  headers: Headers;
}

/**
 * Opens the stream of the iterator whose first result is already known. The first `next()` is
 * awaited by the caller before this is called, so errors raised before the run exists become
 * ordinary HTTP errors (api.md 5.1); an error thrown later is sent in-band as an `error` event.
 */
export function sseResponse(first: IteratorResult<StreamPart>, it: AsyncIterator<StreamPart>, opts: SseOptions): Response {
  let finish: (cancelRun: boolean) => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      let timer: ReturnType<typeof setInterval> | undefined;
      const send = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const onAbort = () => finish(true);
      finish = (cancelRun) => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        opts.signal.removeEventListener("abort", onAbort);
        // The client went away: stop the runtime's iteration, which applies on_disconnect.
        if (cancelRun) {
          void Promise.resolve(it.return?.()).catch(() => {});
          opts.onDisconnect?.();
        }
        try {
          controller.close();
        } catch {
          // the consumer already cancelled the body
        }
      };
      if (opts.signal.aborted) return finish(true);
      opts.signal.addEventListener("abort", onAbort);
      if (opts.heartbeatMs > 0) timer = setInterval(() => send(": heartbeat\n\n"), opts.heartbeatMs);
      void (async () => {
        try {
          for (let r = first; !r.done && !closed; r = await it.next()) send(sseFrame(r.value));
        } catch (err) {
          const e = err as { name?: string; message?: string } | null;
          send(sseFrame({ event: "error", data: { error: e?.name ?? "Error", message: e?.message ?? String(err) } }));
        }
        finish(false);
      })();
    },
    cancel() {
      finish(true);
    },
  });
  const headers = opts.headers;
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.set("cache-control", "no-cache");
  headers.set("connection", "keep-alive");
  return new Response(body, { status: 200, headers });
}
