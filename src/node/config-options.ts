/**
 * langgraph.json's settings as the options of `createRuntime` and `serve` (D93): `store.index`
 * (semantic search), `store.ttl` (items' TTL), `checkpointer.ttl` (threads' TTL), and `http`'s
 * `cors`, `disable_*`, `mount_prefix` and `configurable_headers`. Each value is checked here, so a bad one is refused
 * with the key's name before anything starts. Which keys exist and which are warned about is
 * config-keys.ts.
 */
import { invalidInput } from "../errors.js";
import type { RouteGroup } from "../http/options.js";
import { isPlainObject } from "../json.js";
import type { IndexConfig } from "../items/types.js";
import type { ItemTtlConfig, ThreadTtlConfig } from "../runtime/index.js";
import { resolveEmbed } from "./embeddings.js";
import type { ServeOptions } from "./serve.js";

/** What langgraph.json sets. */
export interface ConfigOptions {
  runtime: { index?: IndexConfig; itemTtl?: ItemTtlConfig; threadTtl?: ThreadTtlConfig };
  serve: Pick<ServeOptions, "cors" | "disable" | "basePath" | "mcp" | "a2a" | "aiSdk" | "studio" | "docs" | "configurableHeaders">;
  /** `http.disable_webhooks`: runs may name a webhook, and none is sent. */
  disableWebhooks: boolean;
}

/** `http.disable_<name>` keys that remove a group of the API's routes. */
const ROUTE_GROUPS: Record<string, RouteGroup> = {
  disable_assistants: "assistants",
  disable_threads: "threads",
  disable_runs: "runs",
  disable_crons: "crons",
  disable_store: "store",
  disable_meta: "meta",
};

/** The options `config` (read from `file`, in `dir`) sets; `invalid_input` naming the key of a bad value. */
export async function configOptions(config: Record<string, unknown>, dir: string, file: string): Promise<ConfigOptions> {
  const bad = (key: string, what: string) => invalidInput(`graphdock: "${key}" in "${file}" ${what}`, [{ path: key, message: what }]);
  const section = (key: string, value: unknown): Record<string, unknown> => {
    if (value === undefined || value === null) return {};
    if (!isPlainObject(value)) throw bad(key, "must be an object");
    return value;
  };
  const minutes = (key: string, value: unknown): number | undefined => {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw bad(key, "must be a number of minutes > 0");
    return value;
  };
  const flag = (key: string, value: unknown): boolean => {
    if (value === undefined || value === null) return false;
    if (typeof value !== "boolean") throw bad(key, "must be true or false");
    return value;
  };
  const out: ConfigOptions = { runtime: {}, serve: {}, disableWebhooks: false };

  const store = section("store", config.store);
  if (store.index !== undefined && store.index !== null) {
    const index = section("store.index", store.index);
    const dims = index.dims;
    if (!Number.isSafeInteger(dims) || (dims as number) <= 0) throw bad("store.index.dims", "must be a positive integer (the length of the embedding vectors)");
    const fields = index.fields;
    if (fields !== undefined && fields !== null && !(Array.isArray(fields) && fields.every((f) => typeof f === "string"))) throw bad("store.index.fields", "must be a list of field paths");
    out.runtime.index = { dims: dims as number, embed: await resolveEmbed(index.embed, dir, file), ...(Array.isArray(fields) ? { fields: fields as string[] } : {}) };
  }
  if (store.ttl !== undefined && store.ttl !== null) {
    const ttl = section("store.ttl", store.ttl);
    const defaultTtl = minutes("store.ttl.default_ttl", ttl.default_ttl);
    const sweep = minutes("store.ttl.sweep_interval_minutes", ttl.sweep_interval_minutes);
    out.runtime.itemTtl = {
      ...(defaultTtl !== undefined ? { defaultTtl } : {}),
      ...(ttl.refresh_on_read !== undefined ? { refreshOnRead: flag("store.ttl.refresh_on_read", ttl.refresh_on_read) } : {}),
      ...(sweep !== undefined ? { sweepIntervalMinutes: sweep } : {}),
    };
  }

  const checkpointer = section("checkpointer", config.checkpointer);
  if (checkpointer.ttl !== undefined && checkpointer.ttl !== null) {
    const ttl = section("checkpointer.ttl", checkpointer.ttl);
    const strategy = ttl.strategy ?? "delete";
    if (strategy !== "delete" && strategy !== "keep_latest") throw bad("checkpointer.ttl.strategy", 'must be "delete" or "keep_latest"');
    const defaultTtl = minutes("checkpointer.ttl.default_ttl", ttl.default_ttl);
    const sweep = minutes("checkpointer.ttl.sweep_interval_minutes", ttl.sweep_interval_minutes);
    const limit = ttl.sweep_limit;
    if (limit !== undefined && limit !== null && !(Number.isSafeInteger(limit) && (limit as number) > 0)) throw bad("checkpointer.ttl.sweep_limit", "must be a positive integer");
    out.runtime.threadTtl = {
      strategy,
      ...(defaultTtl !== undefined ? { defaultTtl } : {}),
      ...(sweep !== undefined ? { sweepIntervalMinutes: sweep } : {}),
      ...(typeof limit === "number" ? { sweepLimit: limit } : {}),
    };
  }

  const http = section("http", config.http);
  const disable = Object.entries(ROUTE_GROUPS)
    .filter(([key]) => flag(`http.${key}`, http[key]))
    .map(([, group]) => group);
  if (disable.length > 0) out.serve.disable = disable;
  if (flag("http.disable_mcp", http.disable_mcp)) out.serve.mcp = false;
  if (flag("http.disable_a2a", http.disable_a2a)) out.serve.a2a = false;
  if (flag("http.disable_ai_sdk", http.disable_ai_sdk)) out.serve.aiSdk = false;
  if (flag("http.disable_studio", http.disable_studio)) out.serve.studio = false;
  // graphdock serves no generative UI components: with or without the key, there are none.
  flag("http.disable_ui", http.disable_ui);
  out.disableWebhooks = flag("http.disable_webhooks", http.disable_webhooks);
  if (http.mount_prefix !== undefined && http.mount_prefix !== null) {
    const prefix = http.mount_prefix;
    if (typeof prefix !== "string" || !/^\/[^?#]*[^/?#]$/.test(prefix)) throw bad("http.mount_prefix", 'must be a path such as "/api" (starting with "/", not ending with one)');
    out.serve.basePath = prefix;
  }
  if (http.cors !== undefined && http.cors !== null) {
    const cors = section("http.cors", http.cors);
    const origins = cors.allow_origins ?? ["*"];
    if (!Array.isArray(origins) || !origins.every((o) => typeof o === "string")) throw bad("http.cors.allow_origins", "must be a list of origins");
    const maxAge = cors.max_age;
    if (maxAge !== undefined && maxAge !== null && !(Number.isSafeInteger(maxAge) && (maxAge as number) >= 0)) throw bad("http.cors.max_age", "must be a number of seconds");
    out.serve.cors = { origin: origins.includes("*") ? "*" : (origins as string[]), ...(typeof maxAge === "number" ? { maxAgeSeconds: maxAge } : {}) };
  }
  if (http.configurable_headers !== undefined && http.configurable_headers !== null) {
    const rule = section("http.configurable_headers", http.configurable_headers);
    const list = (key: string): string[] | undefined => {
      // The schema has spelt them both ways (`includes` and `include`).
      const value = rule[`${key}s`] ?? rule[key];
      if (value === undefined || value === null) return undefined;
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw bad(`http.configurable_headers.${key}s`, "must be a list of header names or patterns");
      return value as string[];
    };
    const includes = list("include");
    const excludes = list("exclude");
    out.serve.configurableHeaders = { ...(includes ? { includes } : {}), ...(excludes ? { excludes } : {}) };
  }
  return out;
}
