/**
 * The `store` namespace (long-term memory): SDK-shaped `ItemStore`s over
 * the Store's item ops. `api(caller)` authorizes every call as resource `store`;
 * `trusted` is what graph nodes get as `ctx.store`. Also the items' time to live (minutes;
 * expired items are never returned, and a sweep removes them by the store's expiry index) and
 * semantic search (`createRuntime({ index })`: items embedded on put, queries ranked by cosine
 * similarity).
 *
 * Choices where the LangGraph servers are silent or leak (recorded here and in docs/memory.md):
 * - An item the caller's auth filter hides reads as missing: `getItem` gives null (the JS server
 *   answers 404 for hidden items and null for missing ones, which tells them apart). Deleting a
 *   hidden item is refused (`forbidden`) as deleting a missing item outside the caller's filter
 *   is; putting over a hidden item is `not_found`, as on the JS server.
 * - Auth filters are applied by the store inside the query, so there is no scan limit.
 */
import { matchesAuthFilter, type AuthFilter } from "../auth/types.js";
import { GraphdockError, forbidden, invalidInput, notFound } from "../errors.js";
import type { IndexConfig, Item, ItemStore, ListNamespacesOptions, PutItemOptions, SearchItem, SearchItemsOptions } from "../items/types.js";
import { checkJson, isPlainObject, MAX_JSON_DEPTH } from "../json.js";
import { checkItemFilter, checkNamespace, isExpired, itemAuthMetadata } from "../persistence/items.js";
import type { StoredItem, WriteOp } from "../persistence/types.js";
import type { Caller, Core } from "./core.js";
import { reportFailure } from "./outage.js";

/** How often (ms of the runtime's clock) expired items are swept: at most once a minute, on a call or a timer. */
export const ITEM_SWEEP_MS = 60_000;
/** Items removed per sweep commit. */
const SWEEP_BATCH = 500;
const MINUTE = 60_000;

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key === "") {
    throw invalidInput(`key must be a non-empty string, got ${JSON.stringify(key) ?? String(key)}`, [{ path: "key", message: "expected a non-empty string" }]);
  }
}

function checkValue(value: unknown): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) throw invalidInput("value must be a JSON object", [{ path: "value", message: "expected an object" }]);
  checkJson(value, "value", 0, MAX_JSON_DEPTH);
}

/** The longest ttl accepted (minutes; about 19,000 years): expiry times stay exact integers everywhere. */
const MAX_TTL = 1e10;

function checkTtl(ttl: unknown): number | null {
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_TTL) {
    throw invalidInput(`ttl must be a positive number of minutes up to ${MAX_TTL} (or null for none), got ${JSON.stringify(ttl)}`, [
      { path: "ttl", message: "expected minutes > 0" },
    ]);
  }
  return ttl;
}

/** When an item with `ttl` minutes expires if read or written at `now` (whole epoch ms). */
const expiry = (now: number, ttl: number) => Math.round(now + ttl * MINUTE);

function checkInt(v: unknown, name: string, min: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw invalidInput(`${name} must be an integer of at least ${min}, got ${JSON.stringify(v)}`, [{ path: name, message: `expected an integer >= ${min}` }]);
  }
  return v;
}

function checkLabels(labels: unknown, name: string): string[] | undefined {
  if (labels === undefined || labels === null) return undefined;
  checkNamespace(labels, name, true);
  return labels;
}

/** A deep copy of a JSON value (stored and returned values are never the caller's objects). */
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const toItem = (s: StoredItem): Item => ({
  namespace: [...s.namespace],
  key: s.key,
  value: copy(s.value),
  created_at: s.created_at,
  updated_at: s.updated_at,
});

/** Tokens of a field path: `a.b[0].c` -> a, b, [0], c; `*` and `[*]` are wildcards. */
const tokens = (path: string) => path.match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];

/** The texts at a field path of a value (`$`: the whole value as JSON), as `IndexConfig.fields` describes. */
export function textsAt(value: Record<string, unknown>, path: string): string[] {
  if (path === "$") return [JSON.stringify(value)];
  let current: unknown[] = [value];
  for (const t of tokens(path)) {
    const next: unknown[] = [];
    for (const v of current) {
      if (t === "*" || t === "[*]") {
        if (Array.isArray(v)) next.push(...v);
        else if (t === "*" && isPlainObject(v)) next.push(...Object.values(v));
      } else if (/^\[-?\d+\]$/.test(t)) {
        if (!Array.isArray(v)) continue;
        let i = Number(t.slice(1, -1));
        if (i < 0) i += v.length;
        if (i >= 0 && i < v.length) next.push(v[i]);
      } else if (isPlainObject(v) && Object.hasOwn(v, t)) next.push(v[t]);
    }
    current = next;
  }
  return current.flatMap((v) =>
    v === null || v === undefined ? [] : typeof v === "string" ? [v] : typeof v === "object" ? [JSON.stringify(v)] : [String(v)],
  );
}

/**
 * Time to live of items by default (`createRuntime({ itemTtl })`, langgraph.json's `store.ttl`):
 * minutes an item put without a `ttl` lives, whether reads refresh it unless told, how often
 * expired items are swept.
 */
export interface ItemTtlConfig {
  /** Minutes an item put without `ttl` lives (default: no expiry). */
  defaultTtl?: number;
  /** Whether `getItem` / `searchItems` refresh an item's ttl when the call does not say (default true). */
  refreshOnRead?: boolean;
  /** Minutes between sweeps of expired items (default 1). Expired items are never returned either way. */
  sweepIntervalMinutes?: number;
}

/** Checks `createRuntime`'s `itemTtl`. */
export function checkItemTtl(ttl: unknown): ItemTtlConfig {
  if (ttl === undefined) return {};
  const positive = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v) && v > 0 && v <= MAX_TTL);
  if (!isPlainObject(ttl) || !positive(ttl.defaultTtl) || !positive(ttl.sweepIntervalMinutes) || !(ttl.refreshOnRead === undefined || typeof ttl.refreshOnRead === "boolean")) {
    throw invalidInput("graphdock: createRuntime: itemTtl must be { defaultTtl?: minutes > 0, refreshOnRead?: boolean, sweepIntervalMinutes?: minutes > 0 }.");
  }
  return ttl as ItemTtlConfig;
}

/** Long-term memory of one runtime: the authorized and trusted `ItemStore`s and the expiry sweep. */
export class ItemService {
  private nextSweepAt: number;
  private sweeping: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** What graph nodes get as `ctx.store`: no authorization. */
  readonly trusted: ItemStore;

  private readonly sweepMs: number;

  constructor(
    private readonly core: Core,
    private readonly index: IndexConfig | undefined,
    private readonly ttl: ItemTtlConfig = {},
  ) {
    this.trusted = this.api(undefined);
    this.sweepMs = ttl.sweepIntervalMinutes !== undefined ? ttl.sweepIntervalMinutes * MINUTE : ITEM_SWEEP_MS;
    this.nextSweepAt = core.clock() + this.sweepMs;
  }

  /** Starts the sweep timer (unref'd: it never keeps a process alive). */
  start(): void {
    this.timer = setInterval(() => this.maybeSweep(), this.sweepMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /**
   * Removes every item expired now, in batches, from the store's expiry index; each delete only
   * takes an item still expired (one refreshed meanwhile stays). Resolves how many were removed.
   */
  async sweep(): Promise<number> {
    let removed = 0;
    for (;;) {
      const now = this.core.clock();
      const batch = await this.core.store.expiredItems(now, SWEEP_BATCH);
      if (batch.length === 0) return removed;
      await this.core.store.commit(batch.map((e) => ({ op: "item.delete", namespace: e.namespace, key: e.key, expiredAt: now }) satisfies WriteOp));
      removed += batch.length;
      if (batch.length < SWEEP_BATCH) return removed;
    }
  }

  /** Starts a sweep when one is due by the runtime's clock (checked on every call, so an injected clock drives it). */
  private maybeSweep(): void {
    if (this.core.closed || this.sweeping || this.core.clock() < this.nextSweepAt) return;
    this.nextSweepAt = this.core.clock() + this.sweepMs;
    this.sweeping = this.sweep()
      .then(
        () => undefined,
        (err: unknown) => {
          if (!this.core.closed) reportFailure(this.core.log, err, {}, "graphdock: sweeping expired store items failed");
        },
      )
      .finally(() => (this.sweeping = undefined));
  }

  private async embed(texts: string[]): Promise<number[][]> {
    const index = this.index!;
    const vectors = await index.embed(texts);
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new Error(`graphdock: index.embed returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors for ${texts.length} texts`);
    }
    for (const v of vectors) {
      if (!Array.isArray(v) || v.length !== index.dims || !v.every((x) => typeof x === "number" && Number.isFinite(x))) {
        throw new Error(`graphdock: index.embed returned a vector that is not ${index.dims} finite numbers (index.dims)`);
      }
    }
    return vectors.map((v) => [...v]);
  }

  /** The vectors of a value to store, per the put's `index` option and the runtime's index. */
  private async vectorsOf(value: Record<string, unknown>, option: PutItemOptions["index"]): Promise<number[][] | undefined> {
    if (option === false) return undefined;
    if (option !== undefined && option !== null && !(Array.isArray(option) && option.every((p) => typeof p === "string" && p !== ""))) {
      throw invalidInput("index must be false, null or a list of field paths", [{ path: "index", message: "expected false | string[] | null" }]);
    }
    if (!this.index) {
      if (Array.isArray(option)) {
        throw invalidInput("index: field paths need semantic search; create the runtime with createRuntime({ index: { embed, dims } })", [
          { path: "index", message: "no index configured" },
        ]);
      }
      return undefined;
    }
    const paths = option ?? this.index.fields ?? ["$"];
    const texts = paths.flatMap((p) => textsAt(value, p));
    return texts.length === 0 ? undefined : this.embed(texts);
  }

  /** The ItemStore of a caller (authorized), or without one the trusted store. */
  api(caller: Caller | undefined): ItemStore {
    const { core } = this;
    const store = core.store;
    const authorize = async (action: "put" | "get" | "delete" | "search" | "list_namespaces", value: Record<string, unknown>): Promise<AuthFilter | undefined> => {
      if (caller) return core.authorize(caller, "store", action, value);
      if (core.closed) throw new GraphdockError("conflict", "graphdock: this runtime is closed; store calls need a new createRuntime().");
      return undefined;
    };
    const touch = async (items: readonly StoredItem[], refresh: boolean | null | undefined) => {
      // Without a per-call choice, reads refresh unless `itemTtl.refreshOnRead` is false.
      if (refresh === false || ((refresh === undefined || refresh === null) && service.ttl.refreshOnRead === false)) return;
      const now = core.clock();
      const ops: WriteOp[] = items
        .filter((i) => i.ttl !== null)
        .map((i) => ({ op: "item.touch", namespace: i.namespace, key: i.key, expires_at: expiry(now, i.ttl!) }));
      if (ops.length > 0) await store.commit(ops);
    };
    const service = this;
    // A handler may rewrite the namespace (and key) it is given, e.g. to put each user's items
    // under their identity (the Python pattern): the call goes on with what it left (checked again).
    const scoped = (payload: Record<string, unknown>) => {
      checkNamespace(payload.namespace, "namespace");
      checkKey(payload.key);
      return { namespace: payload.namespace, key: payload.key };
    };

    return {
      async putItem(namespace, key, value, options = {}) {
        checkNamespace(namespace, "namespace");
        checkKey(key);
        checkValue(value);
        // A put without a ttl gets `itemTtl.defaultTtl` (explicit null: none).
        const ttl = options?.ttl === undefined ? (service.ttl.defaultTtl ?? null) : checkTtl(options.ttl);
        const payload: Record<string, unknown> = { namespace: [...namespace], key, value };
        const filter = await authorize("put", payload);
        // The handler may have rewritten namespace, key or value: check them again.
        checkNamespace(payload.namespace, "namespace");
        checkKey(payload.key);
        checkValue(payload.value);
        const ns = payload.namespace;
        const k = payload.key;
        const v = copy(payload.value);
        const now = core.clock();
        const stored = await store.getItem(ns, k);
        const existing = stored && !isExpired(stored, now) ? stored : undefined;
        if (filter) {
          if (existing && !matchesAuthFilter(itemAuthMetadata(existing), filter)) throw notFound(`graphdock: item "${k}" in namespace ${JSON.stringify(ns)} not found.`);
          if (!matchesAuthFilter(itemAuthMetadata({ namespace: ns, key: k, value: v }), filter)) {
            throw forbidden(`Not authorized: the item "${k}" in namespace ${JSON.stringify(ns)} would be outside what the auth filter lets this user see.`);
          }
        }
        const vectors = await service.vectorsOf(v, options?.index);
        const iso = new Date(now).toISOString();
        const item: StoredItem = {
          namespace: [...ns],
          key: k,
          value: v,
          created_at: existing?.created_at ?? iso,
          updated_at: iso,
          expires_at: ttl === null ? null : expiry(now, ttl),
          ttl,
          ...(vectors ? { vectors } : {}),
        };
        await store.commit([{ op: "item.put", item }]);
        service.maybeSweep();
      },

      async getItem(ns, k, options = {}) {
        checkNamespace(ns, "namespace");
        checkKey(k);
        const payload: Record<string, unknown> = { namespace: [...ns], key: k };
        const filter = await authorize("get", payload);
        const { namespace, key } = scoped(payload);
        const item = await store.getItem(namespace, key);
        service.maybeSweep();
        if (!item || isExpired(item, core.clock())) return null;
        if (filter && !matchesAuthFilter(itemAuthMetadata(item), filter)) return null;
        await touch([item], options?.refreshTtl);
        return toItem(item);
      },

      async deleteItem(ns, k) {
        checkNamespace(ns, "namespace");
        checkKey(k);
        const payload: Record<string, unknown> = { namespace: [...ns], key: k };
        const filter = await authorize("delete", payload);
        const { namespace, key } = scoped(payload);
        const item = await store.getItem(namespace, key);
        const live = item && !isExpired(item, core.clock()) ? item : undefined;
        if (filter && !(live && matchesAuthFilter(itemAuthMetadata(live), filter))) {
          // Hidden or missing: refused when outside the filter, as a missing item would be (no existence leak).
          if (!matchesAuthFilter({ namespace: [...namespace], key }, filter)) {
            throw forbidden(`Not authorized: the item "${key}" in namespace ${JSON.stringify(namespace)} is outside what the auth filter lets this user change.`);
          }
          return;
        }
        if (item) await store.commit([{ op: "item.delete", namespace: [...namespace], key }]);
        service.maybeSweep();
      },

      async searchItems(namespacePrefix, options: SearchItemsOptions = {}) {
        checkNamespace(namespacePrefix, "namespace_prefix", true);
        const opts = options ?? {};
        checkItemFilter(opts.filter);
        const limit = checkInt(opts.limit, "limit", 0) ?? 10;
        const offset = checkInt(opts.offset, "offset", 0) ?? 0;
        const query = opts.query ?? undefined;
        if (query !== undefined && typeof query !== "string") throw invalidInput("query must be a string", [{ path: "query", message: "expected a string" }]);
        if (query !== undefined && !service.index) {
          throw invalidInput("query: semantic search needs an embedding index; create the runtime with createRuntime({ index: { embed, dims } })", [
            { path: "query", message: "no index configured" },
          ]);
        }
        const payload: Record<string, unknown> = { namespace: [...namespacePrefix], filter: opts.filter ?? null, limit, offset, query: query ?? null };
        const filter = await authorize("search", payload);
        checkNamespace(payload.namespace, "namespace_prefix", true);
        const vector = query !== undefined ? (await service.embed([query]))[0] : undefined;
        const found = await store.searchItems({
          prefix: [...payload.namespace],
          ...(opts.filter ? { filter: opts.filter } : {}),
          ...(filter ? { auth: filter } : {}),
          now: core.clock(),
          ...(vector ? { vector } : {}),
          limit,
          offset,
        });
        await touch(found, opts.refreshTtl);
        service.maybeSweep();
        return {
          items: found.map((s): SearchItem => (vector && s.score !== undefined ? { ...toItem(s), score: s.score } : toItem(s))),
        };
      },

      async listNamespaces(options: ListNamespacesOptions = {}) {
        const opts = options ?? {};
        const prefix = checkLabels(opts.prefix, "prefix");
        const suffix = checkLabels(opts.suffix, "suffix");
        const maxDepth = checkInt(opts.maxDepth, "max_depth", 1);
        const limit = checkInt(opts.limit, "limit", 0) ?? 100;
        const offset = checkInt(opts.offset, "offset", 0) ?? 0;
        const payload: Record<string, unknown> = {
          namespace: prefix ?? null,
          suffix: suffix ?? null,
          max_depth: maxDepth ?? null,
          limit,
          offset,
        };
        const filter = await authorize("list_namespaces", payload);
        const scopedPrefix = checkLabels(payload.namespace, "prefix");
        const namespaces = await store.listItemNamespaces({
          ...(scopedPrefix ? { prefix: scopedPrefix } : {}),
          ...(suffix ? { suffix } : {}),
          ...(maxDepth !== undefined ? { maxDepth } : {}),
          ...(filter ? { auth: filter } : {}),
          now: core.clock(),
          limit,
          offset,
        });
        service.maybeSweep();
        return { namespaces };
      },
    };
  }
}

/** Checks `createRuntime({ index })`. */
export function checkIndexConfig(index: unknown): IndexConfig | undefined {
  if (index === undefined) return undefined;
  const i = index as Partial<IndexConfig> | null;
  if (!i || typeof i.embed !== "function" || !(Number.isInteger(i.dims) && i.dims! > 0)) {
    throw invalidInput("graphdock: createRuntime: index must be { embed: (texts) => vectors, dims: a positive integer, fields?: string[] }.");
  }
  if (i.fields !== undefined && !(Array.isArray(i.fields) && i.fields.every((f) => typeof f === "string" && f !== ""))) {
    throw invalidInput("graphdock: createRuntime: index.fields must be a list of field paths (strings).");
  }
  return i as IndexConfig;
}
