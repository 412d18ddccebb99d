/**
 * Assistants (`runtime.assistants`): each route maps its snake_case body onto one method's
 * camelCase options and answers the runtime's record unchanged (D2).
 */
import * as z from "zod/mini";
import { schemas } from "../../runtime/schemas.js";
import { empty, ok, raw, type Define } from "../route.js";
import { camelKeys, queryBool, queryParam, readBool, wireObject } from "../wire.js";
import { PAGING_HEADERS, pageHeaders } from "./paging.js";

const search = wireObject(schemas.assistantSearch, ["signal", "includePagination"]);
const count = wireObject(schemas.assistantCount, ["signal"]);
/** `xray`: a depth, as the SDK sends it (`xray=1` is depth 1, not true; `0` draws no subgraph), or a boolean. */
const queryXray = z.optional(
  queryParam({ oneOf: [{ type: "integer", minimum: 0 }, { type: "boolean" }] }, (value, fail) =>
    typeof value === "string" && /^\d+$/.test(value) ? Number(value) : readBool(value, fail),
  ),
);

export function assistantRoutes(define: Define): void {
  define({
    method: "POST",
    path: "/assistants",
    id: "assistants.create",
    summary: "Create an assistant",
    body: wireObject(schemas.assistantCreate, ["signal"]),
    responses: { 200: { description: "The assistant.", json: "Assistant" } },
    handle: async ({ client, body }) => ok(await client.assistants.create(camelKeys(body))),
  });
  define({
    method: "POST",
    path: "/assistants/search",
    id: "assistants.search",
    summary: "Search assistants",
    body: search,
    responses: { 200: { description: "One page of assistants (only the `select`ed fields when asked).", json: "AssistantSelection[]", headers: PAGING_HEADERS } },
    handle: async ({ client, body }) => {
      const { limit = 10, offset = 0, ...rest } = body;
      const items = await client.assistants.search({ ...camelKeys(rest), limit, offset });
      const { graph_id, name, metadata } = body;
      const total = await client.assistants.count(camelKeys({ graph_id, name, metadata }));
      return ok(items, pageHeaders(total, offset, limit));
    },
  });
  define({
    method: "POST",
    path: "/assistants/count",
    id: "assistants.count",
    summary: "Count assistants",
    body: count,
    responses: { 200: { description: "How many assistants match.", json: "Count" } },
    handle: async ({ client, body }) => ok(await client.assistants.count(camelKeys(body))),
  });
  define({
    method: "GET",
    path: "/assistants/:assistant_id",
    id: "assistants.get",
    summary: "Get an assistant",
    responses: { 200: { description: "The assistant.", json: "Assistant" } },
    handle: async ({ client, params }) => ok(await client.assistants.get(params.assistant_id)),
  });
  define({
    method: "PATCH",
    path: "/assistants/:assistant_id",
    id: "assistants.update",
    summary: "Update an assistant",
    description: "Makes a new version of exactly what is given, and the active one.",
    body: wireObject(schemas.assistantUpdate, ["signal"]),
    responses: { 200: { description: "The assistant at its new version.", json: "Assistant" } },
    handle: async ({ client, params, body }) => ok(await client.assistants.update(params.assistant_id, camelKeys(body))),
  });
  define({
    method: "DELETE",
    path: "/assistants/:assistant_id",
    id: "assistants.delete",
    summary: "Delete an assistant and its versions",
    query: z.object({ delete_threads: queryBool }),
    responses: { 204: { description: "Deleted." } },
    handle: async ({ client, params, query }) => {
      await client.assistants.delete(params.assistant_id, { deleteThreads: query.delete_threads ?? false });
      return empty(204);
    },
  });
  define({
    method: "POST",
    path: "/assistants/:assistant_id/versions",
    id: "assistants.getVersions",
    summary: "List an assistant's versions",
    body: wireObject(schemas.assistantVersions, ["signal"]),
    responses: { 200: { description: "The versions, newest first.", json: "AssistantVersion[]" } },
    handle: async ({ client, params, body }) => ok(await client.assistants.getVersions(params.assistant_id, camelKeys(body))),
  });
  define({
    method: "POST",
    path: "/assistants/:assistant_id/latest",
    id: "assistants.setLatest",
    summary: "Make a version the active one",
    body: z.object({ version: schemas.version }),
    responses: { 200: { description: "The assistant at that version.", json: "Assistant" } },
    handle: async ({ client, params, body }) => ok(await client.assistants.setLatest(params.assistant_id, body.version)),
  });
  define({
    method: "GET",
    path: "/assistants/:assistant_id/graph",
    id: "assistants.getGraph",
    summary: "Get the assistant's graph, for drawing",
    query: z.object({ xray: queryXray }),
    responses: { 200: { description: "Its nodes and edges.", json: "AssistantGraph" } },
    handle: async ({ client, params, query }) => ok(await client.assistants.getGraph(params.assistant_id, { xray: query.xray })),
  });
  define({
    method: "GET",
    path: "/assistants/:assistant_id/schemas",
    id: "assistants.getSchemas",
    summary: "Get the JSON schemas of the assistant's graph",
    responses: { 200: { description: "Its input, output, state, config and context schemas.", json: "GraphSchema" } },
    handle: async ({ client, params }) => ok(await client.assistants.getSchemas(params.assistant_id)),
  });
  const subgraphs = z.object({ recurse: queryBool });
  const subgraphsAnswer = { 200: { description: "Schemas of its subgraphs, by namespace.", json: "Subgraphs" } } as const;
  define({
    method: "GET",
    path: "/assistants/:assistant_id/subgraphs",
    id: "assistants.getSubgraphs",
    summary: "Get the schemas of the assistant's subgraphs",
    query: subgraphs,
    responses: subgraphsAnswer,
    handle: async ({ client, params, query }) => ok(await client.assistants.getSubgraphs(params.assistant_id, { recurse: query.recurse })),
  });
  define({
    method: "GET",
    path: "/assistants/:assistant_id/subgraphs/:namespace",
    id: "assistants.getSubgraph",
    summary: "Get the schemas of one of the assistant's subgraphs",
    query: subgraphs,
    responses: subgraphsAnswer,
    handle: async ({ client, params, query }) =>
      ok(await client.assistants.getSubgraphs(params.assistant_id, { namespace: params.namespace, recurse: query.recurse })),
  });
}
