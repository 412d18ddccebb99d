/**
 * Threads (`runtime.threads`): records, state and history, the thread's own stream, and the v2
 * streaming protocol's routes (D24, src/protocol-v2). Each route maps its snake_case body onto
 * one method's camelCase options and answers the runtime's record unchanged (D2).
 */
import * as z from "zod/mini";
import { checkpointSelector, schemas, selectable, STATE_SELECT_FIELDS, superstepUpdate, threadStreamMode } from "../../runtime/schemas.js";
import type { Api } from "../app.js";
import { empty, ok, raw, type Define } from "../route.js";
import { sseResponse } from "../sse.js";
import { camelKeys, queryBool, queryInt, queryList, queryString, wireObject } from "../wire.js";
import { PAGING_HEADERS, pageHeaders } from "./paging.js";

const filter = wireObject(schemas.threadCount, ["signal"]);
/** A state's `select` in a query: its fields or `values.<key>`, repeated or comma-separated. */
const stateSelect = queryList(selectable.state, `one of ${STATE_SELECT_FIELDS.join(", ")} or values.<key>`, true);
const stateQuery = z.object({ subgraphs: queryBool, select: stateSelect });

export const SSE = "text/event-stream";

export function threadRoutes(define: Define, api: Api): void {
  define({
    method: "POST",
    path: "/threads",
    id: "threads.create",
    summary: "Create a thread",
    description: "`supersteps` fill its state as runs would have.",
    body: z.extend(wireObject(schemas.threadCreate, ["signal", "graphId", "supersteps"]), {
      supersteps: z.optional(z.array(z.object({ updates: z.array(wireObject(superstepUpdate)) }))),
    }),
    responses: { 200: { description: "The thread.", json: "Thread" } },
    handle: async ({ client, body }) => {
      const { supersteps, ...rest } = body;
      const thread = await client.threads.create({
        ...camelKeys(rest),
        ...(supersteps ? { supersteps: supersteps.map((step) => ({ updates: step.updates.map(camelKeys) })) } : {}),
      });
      return ok(thread);
    },
  });
  define({
    method: "POST",
    path: "/threads/search",
    id: "threads.search",
    summary: "Search threads",
    body: wireObject(schemas.threadSearch, ["signal"]),
    responses: { 200: { description: "One page of threads (without their values).", json: "ThreadSummary[]", headers: PAGING_HEADERS } },
    handle: async ({ client, body }) => {
      const { limit = 10, offset = 0, ...rest } = body;
      const items = await client.threads.search({ ...camelKeys(rest), limit, offset });
      const { metadata, values, status, ids } = body;
      // `count` takes no ids; with an ids filter the total is the size of the unpaged result.
      const total = ids?.length
        ? (await client.threads.search({ ...camelKeys({ metadata, values, status, ids }), select: ["thread_id"], limit: Math.min(ids.length, 1000), offset: 0 })).length
        : await client.threads.count(camelKeys({ metadata, values, status }));
      return ok(items, pageHeaders(total, offset, limit));
    },
  });
  define({
    method: "POST",
    path: "/threads/count",
    id: "threads.count",
    summary: "Count threads",
    body: filter,
    responses: { 200: { description: "How many threads match.", json: "Count" } },
    handle: async ({ client, body }) => ok(await client.threads.count(camelKeys(body))),
  });
  define({
    method: "POST",
    path: "/threads/prune",
    id: "threads.prune",
    summary: "Prune threads",
    description: "`delete` removes the threads; `keep_latest` keeps each with its latest checkpoints. Threads the caller may not see, missing or busy ones are not counted.",
    body: z.object({ thread_ids: schemas.threadIds, strategy: z.optional(z.enum(["delete", "keep_latest"])) }),
    responses: { 200: { description: "How many threads were pruned.", json: "PruneResult" } },
    handle: async ({ client, body }) => ok(await client.threads.prune(body.thread_ids, body.strategy ? { strategy: body.strategy } : {})),
  });
  define({
    method: "GET",
    path: "/threads/:thread_id",
    id: "threads.get",
    summary: "Get a thread",
    responses: { 200: { description: "The thread.", json: "Thread" } },
    handle: async ({ client, params }) => ok(await client.threads.get(params.thread_id)),
  });
  define({
    method: "PATCH",
    path: "/threads/:thread_id",
    id: "threads.update",
    summary: "Update a thread's metadata",
    description: "The metadata given is merged into the thread's.",
    headers: { prefer: "`return=minimal`: answer 204 without the thread." },
    body: wireObject(schemas.threadUpdate, ["signal", "returnMinimal"]),
    responses: { 200: { description: "The thread.", json: "Thread" }, 204: { description: "Updated (`Prefer: return=minimal`)." } },
    handle: async ({ client, params, body, request }) => {
      // `Prefer: return=minimal` (the SDK's returnMinimal): no body.
      if (/return=minimal/.test(request.headers.get("prefer") ?? "")) {
        await client.threads.update(params.thread_id, { ...camelKeys(body), returnMinimal: true });
        return empty(204);
      }
      return ok(await client.threads.update(params.thread_id, camelKeys(body)));
    },
  });
  define({
    method: "DELETE",
    path: "/threads/:thread_id",
    id: "threads.delete",
    summary: "Delete a thread, its runs and checkpoints",
    responses: { 204: { description: "Deleted." } },
    handle: async ({ client, params }) => {
      await client.threads.delete(params.thread_id);
      return empty(204);
    },
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/copy",
    id: "threads.copy",
    summary: "Copy a thread with its history",
    responses: { 200: { description: "The new thread.", json: "Thread" } },
    handle: async ({ client, params }) => ok(await client.threads.copy(params.thread_id)),
  });

  define({
    method: "GET",
    path: "/threads/:thread_id/state",
    id: "threads.getState",
    summary: "Get a thread's latest state",
    query: stateQuery,
    responses: { 200: { description: "The state (only the `select`ed fields when asked).", json: "ThreadStateSelection" } },
    handle: async ({ client, params, query }) => ok(await client.threads.getState(params.thread_id, undefined, query)),
  });
  define({
    method: "GET",
    path: "/threads/:thread_id/state/:checkpoint_id",
    id: "threads.getStateAt",
    summary: "Get a thread's state at a checkpoint",
    query: stateQuery,
    responses: { 200: { description: "The state (only the `select`ed fields when asked).", json: "ThreadStateSelection" } },
    handle: async ({ client, params, query }) => ok(await client.threads.getState(params.thread_id, params.checkpoint_id, query)),
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/state/checkpoint",
    id: "threads.getStateAtCheckpoint",
    summary: "Get a thread's state at a checkpoint given by its parts",
    description: "Without an id, `checkpoint` names its namespace's latest checkpoint.",
    body: z.extend(z.pick(schemas.getStateOptions, { subgraphs: true, select: true }), { checkpoint: checkpointSelector }),
    responses: { 200: { description: "The state (only the `select`ed fields when asked).", json: "ThreadStateSelection" } },
    handle: async ({ client, params, body }) => {
      const { checkpoint, ...options } = body;
      return ok(await client.threads.getState(params.thread_id, checkpoint, options));
    },
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/state",
    id: "threads.updateState",
    summary: "Update a thread's state",
    description: "Writes `values` as node `as_node` would have.",
    body: wireObject(schemas.updateState, ["signal"]),
    responses: { 200: { description: "The checkpoint written.", json: "UpdatedState" } },
    handle: async ({ client, params, body }) => ok(await client.threads.updateState(params.thread_id, camelKeys(body))),
  });
  define({
    method: "PATCH",
    path: "/threads/:thread_id/state",
    id: "threads.patchState",
    summary: "Merge metadata into the latest checkpoint's",
    body: schemas.patchState,
    responses: { 204: { description: "Merged." } },
    handle: async ({ client, params, body }) => {
      await client.threads.patchState(params.thread_id, body.metadata);
      return empty(204);
    },
  });
  define({
    method: "GET",
    path: "/threads/:thread_id/history",
    id: "threads.getHistory",
    summary: "List a thread's past states",
    query: z.object({ limit: queryInt, before: queryString, select: stateSelect }),
    responses: { 200: { description: "The states, newest first.", json: "ThreadStateSelection[]" } },
    handle: async ({ client, params, query }) => {
      const history = await client.threads.getHistory(params.thread_id, { ...query, limit: query.limit ?? 10 });
      return ok(history);
    },
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/history",
    id: "threads.searchHistory",
    summary: "List a thread's past states, filtered",
    body: wireObject(schemas.history, ["signal"]),
    responses: { 200: { description: "The states, newest first.", json: "ThreadStateSelection[]" } },
    handle: async ({ client, params, body }) => {
      const history = await client.threads.getHistory(params.thread_id, { ...camelKeys(body), limit: body.limit ?? 10 });
      return ok(history);
    },
  });

  define({
    method: "GET",
    path: "/threads/:thread_id/stream",
    id: "threads.joinStream",
    summary: "Stream every run of a thread",
    description: "The runs in flight, then each run created later, each from its `metadata` event; ids are `<run id>:<event id>`.",
    headers: { "last-event-id": "Resume after this event (`-`: replay every retained run first)." },
    query: z.object({ stream_mode: queryList(threadStreamMode, `one of ${threadStreamMode.options.join(", ")}`) }),
    responses: { 200: { description: "The thread's events.", content: { [SSE]: "Run events (`event:`, `data:` JSON, `id:`), `: heartbeat` comments." } } },
    handle: async ({ c, client, params, query, request }) => {
      const parts = client.threads.joinStream(params.thread_id, {
        lastEventId: request.headers.get("last-event-id") ?? undefined,
        streamMode: query.stream_mode,
        signal: request.signal,
      });
      // Bad options, an unknown or hidden thread: HTTP errors. Then the headers go at once, since
      // an idle thread may have no event for a long while.
      await parts.ready;
      const response = sseResponse(parts.next(), parts, {
        heartbeatMs: api.heartbeatMs,
        signal: request.signal,
        headers: new Headers(),
        maxBufferBytes: api.limits.sseBufferBytes,
        onError: (err) => api.report(err, c.req.raw),
      });
      return raw(response);
    },
  });

  // D24: the v2 streaming protocol (src/protocol-v2, docs/protocol-v2.md); it checks its own input.
  define({
    method: "POST",
    path: "/threads/:thread_id/commands",
    id: "threads.protocolCommand",
    summary: "Send a v2 protocol command",
    body: z.unknown().check(z.describe("A v2 protocol command: `{ id, method, params }`.")),
    responses: { 200: { description: "The command's typed response.", json: "ProtocolResponse" } },
    handle: async ({ client, params, body }) => ok(await api.v2.command(params.thread_id, client, body)),
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/stream/events",
    id: "threads.protocolEvents",
    summary: "Subscribe to a thread's v2 protocol events",
    headers: { "last-event-id": "Resume after this event." },
    body: z.unknown().check(z.describe("The subscription: `{ channels, namespaces?, depth?, since? }`.")),
    responses: { 200: { description: "The thread's events.", content: { [SSE]: "Protocol events (`id:`, `data:` JSON)." } } },
    handle: async ({ client, params, body, request }) => raw(await api.v2.events(request, params.thread_id, client, body)),
  });
}
