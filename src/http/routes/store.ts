/**
 * The store (long-term memory, `runtime.store`), as the official SDK's `client.store` calls it:
 * query parameters for `GET /store/items`, JSON bodies otherwise. The runtime checks namespaces,
 * keys and values and authorizes (resource `store`).
 */
import * as z from "zod/mini";
import { empty, ok, type Define } from "../route.js";
import { queryBool, requiredQueryString } from "../wire.js";

const strings = z.array(z.string());
const count = z.optional(z.int().check(z.minimum(0)));

export function storeRoutes(define: Define): void {
  define({
    method: "PUT",
    path: "/store/items",
    id: "store.putItem",
    summary: "Store an item",
    body: z.object({
      namespace: strings,
      key: z.string(),
      value: z.record(z.string(), z.unknown()),
      index: z.nullish(z.union([z.literal(false), strings])).check(z.describe("Fields to embed for semantic search; `false`: none; absent: the index's default.")),
      ttl: z.nullish(z.number()).check(z.describe("Minutes to live; absent: for ever.")),
    }),
    responses: { 204: { description: "Stored." } },
    handle: async ({ client, body }) => {
      const { namespace, key, value, ...options } = body;
      await client.store.putItem(namespace, key, value, options);
      return empty(204);
    },
  });
  define({
    method: "GET",
    path: "/store/items",
    id: "store.getItem",
    summary: "Get an item",
    query: z.object({
      // The namespace travels as its labels joined with "." (labels cannot contain ".").
      namespace: requiredQueryString,
      key: requiredQueryString,
      refresh_ttl: queryBool,
    }),
    responses: { 200: { description: "The item, or null.", json: "Item" } },
    handle: async ({ client, query }) => {
      const { namespace, key, refresh_ttl } = query;
      return ok(await client.store.getItem(namespace.split("."), key, refresh_ttl === undefined ? {} : { refreshTtl: refresh_ttl }));
    },
  });
  define({
    method: "DELETE",
    path: "/store/items",
    id: "store.deleteItem",
    summary: "Delete an item",
    body: z.object({ namespace: z.optional(strings), key: z.string() }),
    responses: { 204: { description: "Deleted (or there was none)." } },
    handle: async ({ client, body }) => {
      await client.store.deleteItem(body.namespace ?? [], body.key);
      return empty(204);
    },
  });
  define({
    method: "POST",
    path: "/store/items/search",
    id: "store.searchItems",
    summary: "Search items",
    description: "`namespace_prefix: []` searches every namespace; `query` ranks by semantic similarity (with an index).",
    body: z.object({
      namespace_prefix: strings,
      filter: z.optional(z.record(z.string(), z.unknown())),
      limit: count,
      offset: count,
      query: z.optional(z.string()),
      refresh_ttl: z.optional(z.boolean()),
    }),
    nulls: "drop",
    responses: { 200: { description: "The items found.", json: "SearchItems" } },
    handle: async ({ client, body }) => {
      const { namespace_prefix, refresh_ttl, ...options } = body;
      return ok(await client.store.searchItems(namespace_prefix, { ...options, refreshTtl: refresh_ttl }));
    },
  });
  define({
    method: "POST",
    path: "/store/namespaces",
    id: "store.listNamespaces",
    summary: "List namespaces",
    body: z.object({ prefix: z.optional(strings), suffix: z.optional(strings), max_depth: count, limit: count, offset: count }),
    nulls: "drop",
    responses: { 200: { description: "The namespaces holding items.", json: "Namespaces" } },
    handle: async ({ client, body }) => {
      const { max_depth, ...options } = body;
      return ok(await client.store.listNamespaces({ ...options, maxDepth: max_depth }));
    },
  });
}
