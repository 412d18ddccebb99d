/**
 * Runs (`runtime.runs`): on a thread (`/threads/{thread_id}/runs...`) and stateless (`/runs...`,
 * on a temporary thread): created in the background, streamed (server-sent events, D11) or
 * waited for; listed, joined, cancelled, deleted. A created run's `Content-Location` names it;
 * a stream's `Location` is where the SDK reconnects with `Last-Event-ID`.
 */
import * as z from "zod/mini";
import { GraphdockError } from "../../errors.js";
import type { RunEvent } from "../../runtime/index.js";
import { cancelAction, runStatus, schemas, selectable, streamMode } from "../../runtime/schemas.js";
import type { Api } from "../app.js";
import { empty, ok, raw, type Define } from "../route.js";
import { sseResponse } from "../sse.js";
import type { HttpClient } from "../types.js";
import { camelKeys, queryBool, queryEnum, queryInt, queryList, wireObject } from "../wire.js";
import { SSE } from "./threads.js";
import { configurableHeaders } from "../configurable-headers.js";

/** A run's options as a body: what `runs.create` takes, and the assistant (or graph) to run. */
const run = z.extend(wireObject(schemas.run, ["signal", "onRunCreated", "raiseError"]), {
  assistant_id: z.string({ error: (issue) => (issue.input === undefined ? "required: pass an assistant id or a graph id" : undefined) }).check(z.minLength(1)),
});
type RunBody = z.input<typeof run>;

const created = { "content-location": "The run: `/threads/{thread_id}/runs/{run_id}`, or `/runs/{run_id}` for a stateless run." };
const streamed = {
  "content-location": created["content-location"],
  location: "Where to rejoin the stream (`GET`, with `Last-Event-ID`).",
};
const events = "Run events (`event:`, one-line `data:` JSON, `id:`), `: heartbeat` comments; the first is `metadata`, `error` ends a failed run.";
const joinQuery = z.object({ cancel_on_disconnect: queryBool, stream_mode: queryList(streamMode, `one of ${streamMode.options.join(", ")}`) });

/** `Content-Location` of a run: the thread form whenever the thread is known. */
const runLocation = (threadId: string | null | undefined, runId: string) => (threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`);

export function runRoutes(define: Define, api: Api): void {
  const fromHeaders = configurableHeaders(api.options.configurableHeaders ?? {});
  /**
   * A run's options from its body. A `webhook` that is a path (`/custom/webhook`) is resolved
   * against this server's URL (`selfUrl`, where the API is mounted), as the JS server loops such
   * webhooks back into its own app (custom routes); the runtime's `webhooks.allow` still decides. The
   * request's headers `configurableHeaders` names (by default its `x-*` headers and `user-agent`,
   * credentials aside) go into `config.configurable`, over the body's.
   */
  const options = ({ assistant_id: _assistant, ...body }: RunBody, request: Request, mount: string) => {
    const o = camelKeys(body);
    if (o.webhook?.startsWith("/") && !o.webhook.startsWith("//")) o.webhook = new URL(`${mount}${o.webhook}`, api.options.selfUrl?.() ?? request.url).href;
    const headers = fromHeaders(request.headers);
    if (Object.keys(headers).length > 0) o.config = { ...o.config, configurable: { ...o.config?.configurable, ...headers } };
    return o;
  };

  /**
   * Streams a run; the runtime's first `next()` rejects for errors before the run exists (they
   * are HTTP errors). `cancelOnDisconnect`: cancel the run at once when the client goes away (the
   * iterator's `return()` only takes effect at the run's next event, which may be far off).
   */
  async function stream(
    request: Request,
    client: HttpClient,
    parts: AsyncGenerator<RunEvent | NotFoundEvent>,
    runId: string | undefined,
    threadId: string | null | (() => string | undefined),
    created: boolean,
    cancelOnDisconnect: boolean,
  ): Promise<Response> {
    const first = await parts.next();
    const headers = new Headers();
    const id = runId ?? (!first.done && first.value.event === "metadata" ? first.value.data.run_id : undefined);
    // A stateless run's thread is known once the run exists (its onRunCreated).
    const tid = typeof threadId === "function" ? threadId() : threadId;
    // A stream that is only its error (a join of a run not found) names no run to reconnect to.
    if (id && !(!first.done && first.value.event === "error")) {
      if (created) headers.set("content-location", runLocation(tid, id));
      // Location lets the SDK reconnect to a dropped stream with Last-Event-ID (D11).
      if (tid) headers.set("location", `/threads/${tid}/runs/${id}/stream`);
    }
    const onDisconnect =
      cancelOnDisconnect && id && tid
        ? () => void client.runs.cancel(tid, id, false, "interrupt").catch(() => {}) // already finished: nothing to cancel
        : undefined;
    return sseResponse(first, parts, {
      heartbeatMs: api.heartbeatMs,
      signal: request.signal,
      headers,
      onDisconnect,
      maxBufferBytes: api.limits.sseBufferBytes,
      onError: (err) => api.report(err, request),
    });
  }

  for (const threaded of [true, false]) {
    const at = threaded ? "/threads/:thread_id/runs" : "/runs";
    const on = threaded ? "on a thread" : "on a temporary thread (stateless)";
    const which = threaded ? "runs" : "runs.stateless";
    const threadOf = (params: { thread_id?: string }) => params.thread_id ?? null;
    define({
      method: "POST",
      path: at,
      id: `${which}.create`,
      summary: `Create a background run ${on}`,
      body: run,
      responses: { 200: { description: "The run, pending.", json: "Run", headers: created } },
      handle: async ({ c, client, params, body, request }) => {
        const created = await client.runs.create(threadOf(params), body.assistant_id, options(body, request, api.mountPath(c)));
        return ok(created, new Headers({ "content-location": runLocation(created.thread_id, created.run_id) }));
      },
    });
    define({
      method: "POST",
      path: `${at}/stream`,
      id: `${which}.stream`,
      summary: `Create a run ${on} and stream its events`,
      body: run,
      responses: { 200: { description: "The run's events.", content: { [SSE]: events }, headers: streamed } },
      handle: async ({ c, client, params, body, request }) => {
        const threadId = threadOf(params);
        let createdOn: string | undefined;
        const parts = client.runs.stream(threadId, body.assistant_id, {
          ...options(body, request, api.mountPath(c)),
          onRunCreated: (m) => (createdOn = m.thread_id),
        });
        const response = await stream(request, client, parts, undefined, threadId ?? (() => createdOn), true, body.on_disconnect === "cancel");
        return raw(response);
      },
    });
    define({
      method: "POST",
      path: `${at}/wait`,
      id: `${which}.wait`,
      summary: `Create a run ${on} and wait for its end`,
      description: "A failed run answers 200 with `{ __error__: { error, message } }`.",
      body: run,
      responses: { 200: { description: "The run's final values.", json: "RunResult", headers: created } },
      handle: async ({ c, client, params, body, request }) => {
        const threadId = threadOf(params);
        let created: { run_id: string; thread_id?: string } | undefined;
        const values = await client.runs.wait(threadId, body.assistant_id, {
          ...options(body, request, api.mountPath(c)),
          signal: request.signal,
          raiseError: false,
          onRunCreated: (meta) => (created = meta),
        });
        const headers = new Headers();
        if (created) headers.set("content-location", runLocation(created.thread_id ?? threadId, created.run_id));
        return ok(values, headers);
      },
    });
    define({
      method: "GET",
      path: `${threaded ? "/threads/:thread_id" : ""}/runs/:run_id/stream`,
      id: `${which}.joinStream`,
      summary: "Join a run's stream",
      headers: { "last-event-id": "Replay the events after this one (`-1`: from the first) of a `stream_resumable` run." },
      query: joinQuery,
      responses: { 200: { description: "The run's events; a run not found: one `error` event whose message starts with `404: `.", content: { [SSE]: events } } },
      handle: async ({ client, params, query, request }) => {
        const threadId = threadOf(params);
        const cancelOnDisconnect = query.cancel_on_disconnect ?? false;
        const parts = notFoundInStream(
          client.runs.joinStream(threadId, params.run_id, {
            lastEventId: request.headers.get("last-event-id") ?? undefined,
            cancelOnDisconnect,
            streamMode: query.stream_mode,
            signal: request.signal,
          }),
        );
        return raw(await stream(request, client, parts, params.run_id, threadId, false, cancelOnDisconnect));
      },
    });
  }

  define({
    method: "GET",
    path: "/threads/:thread_id/runs",
    id: "runs.list",
    summary: "List a thread's runs",
    query: z.object({
      limit: queryInt,
      offset: queryInt,
      status: queryEnum(runStatus),
      select: queryList(selectable.run, `one of ${selectable.run.options.join(", ")}`),
    }),
    responses: { 200: { description: "Its runs, newest first (only the `select`ed fields when asked).", json: "RunSelection[]" } },
    handle: async ({ client, params, query }) => {
      const runs = await client.runs.list(params.thread_id, { ...query, limit: query.limit ?? 10, offset: query.offset ?? 0 });
      return ok(runs);
    },
  });
  define({
    method: "GET",
    path: "/threads/:thread_id/runs/:run_id",
    id: "runs.get",
    summary: "Get a run",
    responses: { 200: { description: "The run.", json: "Run" } },
    handle: async ({ client, params }) => ok(await client.runs.get(params.thread_id, params.run_id)),
  });
  define({
    method: "DELETE",
    path: "/threads/:thread_id/runs/:run_id",
    id: "runs.delete",
    summary: "Delete a run that has ended",
    responses: { 204: { description: "Deleted." } },
    handle: async ({ client, params }) => {
      await client.runs.delete(params.thread_id, params.run_id);
      return empty(204);
    },
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/runs/:run_id/cancel",
    id: "runs.cancel",
    summary: "Cancel a run",
    description: "`action: rollback` also deletes the run and what it wrote.",
    query: z.object({ wait: queryBool, action: queryEnum(cancelAction) }),
    responses: { 202: { description: "Cancelling." }, 204: { description: "Cancelled (`wait=true`)." } },
    handle: async ({ client, params, query }) => {
      const wait = query.wait ?? false;
      await client.runs.cancel(params.thread_id, params.run_id, wait, query.action ?? "interrupt");
      return empty(wait ? 204 : 202);
    },
  });
  define({
    method: "GET",
    path: "/threads/:thread_id/runs/:run_id/join",
    id: "runs.join",
    summary: "Wait for a run's end",
    query: z.object({ cancel_on_disconnect: queryBool }),
    responses: { 200: { description: "The run's final values, or `{ __error__ }`.", json: "RunResult" } },
    handle: async ({ client, params, query, request }) => {
      const cancelOnDisconnect = query.cancel_on_disconnect ?? false;
      return ok(await client.runs.join(params.thread_id, params.run_id, { cancelOnDisconnect, signal: request.signal }));
    },
  });
  define({
    method: "POST",
    path: "/runs/batch",
    id: "runs.createBatch",
    summary: "Create several background runs",
    body: z.array(run).check(z.minLength(1)),
    responses: { 200: { description: "The runs, in the order given.", json: "Run[]" } },
    handle: async ({ c, client, body, request }) => {
      const mount = api.mountPath(c);
      const runs = await client.runs.createBatch(body.map((item) => ({ ...options(item, request, mount), assistantId: item.assistant_id })));
      return ok(runs);
    },
  });
}

/** The one event of a joined stream whose run is not found: no id (nothing to resume from). */
type NotFoundEvent = { event: "error"; data: { error: string; message: string } };

/**
 * A joined stream whose run or thread is not found (or hidden from the caller) answers with an
 * open stream holding one `error` event whose message starts with "404", as the agent server's
 * join does, rather than a 404 response: its clients read the outcome from the stream.
 */
async function* notFoundInStream(parts: AsyncGenerator<RunEvent>): AsyncGenerator<RunEvent | NotFoundEvent> {
  let first: IteratorResult<RunEvent>;
  try {
    first = await parts.next();
  } catch (err) {
    if (!(err instanceof GraphdockError) || err.code !== "not_found") throw err;
    yield { event: "error", data: { error: err.name, message: `404: ${err.message}` } };
    return;
  }
  if (first.done) return;
  yield first.value;
  yield* parts;
}
