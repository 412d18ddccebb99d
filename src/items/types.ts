/**
 * Public types of long-term memory: the `store` namespace of a runtime,
 * with the method names and arguments of the official SDK's `client.store` (D1), and what graph
 * nodes get as `ctx.store`. Items are JSON objects filed under a namespace (a path of labels) and
 * a key, shared across threads.
 */

/**
 * One stored item, as the runtime and the HTTP API return it. (The SDK's client adds
 * camelCase `createdAt` / `updatedAt` copies of the two times on its side.)
 */
export interface Item {
  /** The item's namespace: one or more non-empty labels without `.`, e.g. `["memories", "user-1"]`. */
  namespace: string[];
  /** The item's key within its namespace. */
  key: string;
  /** The stored JSON object. */
  value: Record<string, unknown>;
  /** ISO time of the first put of this key (kept by later puts). */
  created_at: string;
  /** ISO time of the latest put. */
  updated_at: string;
}

/** An item found by `searchItems`; `score` is the cosine similarity to the `query` (semantic search only). */
export interface SearchItem extends Item {
  score?: number;
}

/** Options of `putItem`. */
export interface PutItemOptions {
  /**
   * Semantic indexing of this item (needs `createRuntime({ index })`): `false` to leave it out of
   * semantic search, a list of field paths to embed instead of the index's `fields`, or
   * null/absent for the index's default.
   */
  index?: false | string[] | null;
  /** Time to live in minutes; null/absent: the item never expires. */
  ttl?: number | null;
  signal?: AbortSignal;
}

/** Options of `getItem`. */
export interface GetItemOptions {
  /** Restart the item's time to live on this read (default true; items without a ttl are unaffected). */
  refreshTtl?: boolean | null;
  signal?: AbortSignal;
}

/**
 * A filter on an item's top-level value fields: `{ field: value }` (JSON equality) or
 * `{ field: { $eq | $ne | $gt | $gte | $lt | $lte: value } }` (several operators on one field all
 * hold). `$gt`/`$gte`/`$lt`/`$lte` compare numbers with numbers and strings with strings (code
 * point order); a field of another type does not match them.
 */
export type ItemFilter = Record<string, unknown>;

/** Options of `searchItems`. */
export interface SearchItemsOptions {
  filter?: ItemFilter;
  /** Default 10. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  /**
   * Natural-language query: results are ranked by cosine similarity of their embeddings to the
   * query's (items without an embedding come last, without a score). Needs `createRuntime({ index })`.
   * Without a query, results are ordered by `updated_at`, newest first.
   */
  query?: string;
  /** Restart the time to live of the items returned (default true). */
  refreshTtl?: boolean | null;
  signal?: AbortSignal;
}

/** Options of `listNamespaces`. `prefix` and `suffix` labels may be `"*"` (any one label). */
export interface ListNamespacesOptions {
  /** Only namespaces starting with these labels. */
  prefix?: string[];
  /** Only namespaces ending with these labels. */
  suffix?: string[];
  /** Namespaces are cut to their first `maxDepth` labels (duplicates then merged). */
  maxDepth?: number;
  /** Default 100. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  signal?: AbortSignal;
}

/**
 * Long-term memory shared across threads (the SDK's `client.store`): `runtime.store`, the
 * `store` of a bound client (authorized as resource `store`), and `ctx.store` in graph nodes
 * (trusted). Expired items are never returned.
 */
export interface ItemStore {
  /** Stores (or replaces) the item at `namespace` / `key`. */
  putItem(namespace: string[], key: string, value: Record<string, unknown>, options?: PutItemOptions): Promise<void>;
  /** The item, or null when there is none (or it expired, or the caller may not see it). */
  getItem(namespace: string[], key: string, options?: GetItemOptions): Promise<Item | null>;
  /** Deletes the item; deleting a missing item does nothing. */
  deleteItem(namespace: string[], key: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** Items whose namespace starts with `namespacePrefix` (`[]`: every item), filtered and paged. */
  searchItems(namespacePrefix: string[], options?: SearchItemsOptions): Promise<{ items: SearchItem[] }>;
  /** The namespaces holding items, in label order, filtered and paged. */
  listNamespaces(options?: ListNamespacesOptions): Promise<{ namespaces: string[][] }>;
}

/**
 * Semantic search configuration of `createRuntime({ index })`: items are embedded on put and
 * `searchItems(..., { query })` ranks them by cosine similarity.
 */
export interface IndexConfig {
  /** Embeds texts; returns one vector of `dims` numbers per text, in order. */
  embed(texts: string[]): Promise<number[][]> | number[][];
  /** Length of every vector `embed` returns. */
  dims: number;
  /**
   * Field paths of a value to embed by default (`"$"`: the whole value as JSON, the default).
   * Paths are dotted (`"profile.bio"`), with `[n]`, `[*]` or `*` for array items / every field.
   * Each text found is embedded separately; an item's score is its best match.
   */
  fields?: string[];
}
