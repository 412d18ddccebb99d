/**
 * The store routes: long-term memory over HTTP, as the official SDK's `client.store`
 * sends them (query parameters for GET, JSON bodies otherwise), each mapped onto one method of
 * the caller's `store` namespace. The runtime validates and authorizes.
 */
import { invalidInput } from "../errors.js";
import { pick } from "./body.js";
import type { HttpClient } from "./types.js";

/** What a store route needs of a request (the router's context). */
export interface StoreRouteContext {
  query: URLSearchParams;
  client(): Promise<HttpClient>;
  body(): Promise<Record<string, unknown>>;
}

type Register = (method: string, path: string, handle: (c: StoreRouteContext) => Promise<Response>) => void;

const json = (data: unknown) => new Response(JSON.stringify(data ?? null), { status: 200, headers: { "content-type": "application/json" } });
const noContent = () => new Response(null, { status: 204 });

function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no)$/i.test(v)) return false;
  throw invalidInput(`Query parameter "${name}" must be true or false, got "${v}"`, [{ path: name, message: "expected a boolean" }]);
}

function required(q: URLSearchParams, name: string): string {
  const v = q.get(name);
  if (v === null) throw invalidInput(`Query parameter "${name}" is required`, [{ path: name, message: "required" }]);
  return v;
}

/** Registers `PUT/GET/DELETE /store/items`, `POST /store/items/search` and `POST /store/namespaces`. */
export function registerStoreRoutes(on: Register): void {
  on("PUT", "/store/items", async (c) => {
    const body = await c.body();
    await (await c.client()).store.putItem(body.namespace as string[], body.key as string, body.value as Record<string, unknown>, {
      ...(body.index !== undefined ? { index: body.index as false | string[] | null } : {}),
      ...(body.ttl !== undefined ? { ttl: body.ttl as number | null } : {}),
    });
    return noContent();
  });
  on("GET", "/store/items", async (c) => {
    // The namespace travels as its labels joined with "." (labels cannot contain ".").
    const namespace = required(c.query, "namespace").split(".");
    const refreshTtl = queryBool(c.query, "refresh_ttl");
    const item = await (await c.client()).store.getItem(namespace, required(c.query, "key"), refreshTtl === undefined ? {} : { refreshTtl });
    return json(item);
  });
  on("DELETE", "/store/items", async (c) => {
    const body = await c.body();
    await (await c.client()).store.deleteItem((body.namespace ?? []) as string[], body.key as string);
    return noContent();
  });
  on("POST", "/store/items/search", async (c) => {
    const body = await c.body();
    const prefix = body.namespace_prefix;
    if (prefix === undefined || prefix === null) {
      throw invalidInput("namespace_prefix is required (an array of labels; [] searches every namespace)", [{ path: "namespace_prefix", message: "required" }]);
    }
    const options = pick(body, ["filter", "limit", "offset", "query", "refresh_ttl"], false);
    return json(await (await c.client()).store.searchItems(prefix as string[], options));
  });
  on("POST", "/store/namespaces", async (c) => {
    const body = await c.body();
    const options = pick(body, ["prefix", "suffix", "max_depth", "limit", "offset"], false);
    return json(await (await c.client()).store.listNamespaces(options));
  });
}
