/**
 * How a tool call's answer is framed (D102): as JSON when the run ends within
 * {@link JSON_WITHIN_MS}, else as an SSE stream that sends keep-alive comments until the answer
 * comes. A quick call (most of them) so skips the stream machinery on both ends, and a long one
 * still keeps idle proxies and clients from timing out, as the SDK's own SSE answer does.
 */

/** How long a tool call may take and still be answered as JSON (the stream starts then). */
export const JSON_WITHIN_MS = 1000;
/** The keep-alive comment's interval once streaming (the SDK's own SSE interval). */
export const KEEP_ALIVE_MS = 15_000;

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/**
 * `answer` (the SDK transport's JSON answer, pending until every response of the request is
 * ready) when it comes within `withinMs`; else a stream that carries it as SSE `message` events
 * (the SDK's framing) once it comes, with a keep-alive comment every `keepAliveMs` meanwhile. A
 * late answer that fails ends the stream and goes to `onFault` (the status is sent by then).
 */
export async function jsonOrStream(answer: Promise<Response>, onFault: (err: unknown) => void, withinMs = JSON_WITHIN_MS, keepAliveMs = KEEP_ALIVE_MS): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = Symbol("late");
  let first: Response | typeof late;
  try {
    first = await Promise.race([answer, new Promise<typeof late>((resolve) => (timer = setTimeout(resolve, withinMs, late)))]);
  } finally {
    clearTimeout(timer);
  }
  if (first !== late) return first;
  const encoder = new TextEncoder();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      keepAlive = setInterval(() => controller.enqueue(encoder.encode(": keepalive\n\n")), keepAliveMs);
      void answer
        .then((response) => response.text())
        .then((text) => {
          const parsed = JSON.parse(text) as unknown;
          for (const message of Array.isArray(parsed) ? parsed : [parsed]) controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
          controller.close();
        })
        .catch((err: unknown) => {
          onFault(err);
          controller.error(err);
        })
        .finally(() => clearInterval(keepAlive));
    },
    cancel() {
      clearInterval(keepAlive);
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
