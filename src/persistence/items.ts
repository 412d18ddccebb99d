/**
 * The meaning of items queries (`ItemQuery`, `ItemNamespaceQuery`), shared by the stores that
 * evaluate them in memory (memory, JSON file, IndexedDB; PostgreSQL ranks vectors with it), plus
 * the checks every store makes of an item, and an index of items by expiry. Core-safe.
 */
import { matchesAuthFilter } from "../auth/types.js";
import { invalidInput } from "../errors.js";
import { checkJson, isPlainObject, jsonEqual } from "../json.js";
import type { ExpiredItem, ItemNamespaceQuery, ItemQuery, ScoredItem, StoredItem } from "./types.js";

/** The comparison operators of an item filter. */
export const FILTER_OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** A namespace's identity: its labels joined with `.` (labels never contain `.`). */
export const namespaceKey = (namespace: readonly string[]): string => namespace.join(".");

/** An item's identity in one string: namespace key, NUL, key. */
export const itemId = (namespace: readonly string[], key: string): string => `${namespaceKey(namespace)}\u0000${key}`;

/**
 * Throws `invalid_input` unless `namespace` is an array of non-empty strings without `.` (as the
 * agent server requires), non-empty unless `allowEmpty` (a search prefix may be `[]`).
 */
export function checkNamespace(namespace: unknown, where: string, allowEmpty = false): asserts namespace is string[] {
  if (!Array.isArray(namespace)) {
    throw invalidInput(`${where} must be an array of labels (strings), got ${describe(namespace)}`, [{ path: where, message: "expected an array of strings" }]);
  }
  if (namespace.length === 0 && !allowEmpty) {
    throw invalidInput(`${where} is required: give at least one label, e.g. ["memories", "user-1"]`, [{ path: where, message: "empty namespace" }]);
  }
  namespace.forEach((label, i) => {
    if (typeof label !== "string" || label === "" || label.includes(".")) {
      throw invalidInput(`${where}[${i}] is ${describe(label)}: namespace labels cannot be empty or contain periods (".")`, [
        { path: `${where}.${i}`, message: "labels are non-empty strings without periods" },
      ]);
    }
  });
}

function describe(v: unknown): string {
  if (v === undefined) return "undefined";
  try {
    return JSON.stringify(v)?.slice(0, 80) ?? typeof v;
  } catch {
    return typeof v;
  }
}

/** Throws `invalid_input` unless `filter` is a valid item filter (see `ItemFilter`). */
export function checkItemFilter(filter: unknown, where = "filter"): asserts filter is Record<string, unknown> | undefined {
  if (filter === undefined || filter === null) return;
  if (!isPlainObject(filter)) throw invalidInput(`${where} must be an object, got ${describe(filter)}`, [{ path: where, message: "expected an object" }]);
  for (const [field, cond] of Object.entries(filter)) {
    if (!isOperatorObject(cond)) {
      if (cond !== undefined) checkJson(cond, `${where}.${field}`);
      continue;
    }
    for (const [op, operand] of Object.entries(cond)) {
      if (!(FILTER_OPERATORS as readonly string[]).includes(op)) {
        throw invalidInput(`${where}.${field}: unknown operator ${op}; use ${FILTER_OPERATORS.join(", ")} or a plain value`, [
          { path: `${where}.${field}`, message: `unknown operator ${op}` },
        ]);
      }
      if (op === "$eq" || op === "$ne") checkJson(operand, `${where}.${field}.${op}`);
      else if (!(typeof operand === "string" || (typeof operand === "number" && Number.isFinite(operand)))) {
        throw invalidInput(`${where}.${field}.${op} must be a number or a string, got ${describe(operand)}`, [
          { path: `${where}.${field}.${op}`, message: "expected a number or a string" },
        ]);
      }
    }
  }
}

/** An object whose keys all start with `$` (and at least one): a condition of operators. A mix is refused by `checkItemFilter`. */
function isOperatorObject(cond: unknown): cond is Record<string, unknown> {
  if (!isPlainObject(cond)) return false;
  const keys = Object.keys(cond);
  const ops = keys.filter((k) => k.startsWith("$"));
  if (ops.length > 0 && ops.length < keys.length) {
    throw invalidInput(`an item filter condition mixes operators and fields: ${describe(cond)}; use either { $op: value } or a plain value`, [
      { path: "filter", message: "operators and fields mixed" },
    ]);
  }
  return ops.length > 0;
}

function compare(actual: unknown, operand: unknown): number | undefined {
  if (typeof operand === "number") return typeof actual === "number" ? actual - operand : undefined;
  if (typeof operand === "string" && typeof actual === "string") return codePointCompare(actual, operand);
  return undefined;
}

/** Compares strings by code point (as PostgreSQL's `COLLATE "C"` on UTF-8 does), not by UTF-16 unit. */
export function codePointCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** True when the item's value satisfies a filter `checkItemFilter` accepted. */
export function matchesItemFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  for (const [field, cond] of Object.entries(filter)) {
    if (cond === undefined) continue;
    const actual = value[field];
    if (!isOperatorObject(cond)) {
      if (actual === undefined || !jsonEqual(actual, cond)) return false;
      continue;
    }
    for (const [op, operand] of Object.entries(cond)) {
      if (op === "$eq") {
        if (actual === undefined || !jsonEqual(actual, operand)) return false;
      } else if (op === "$ne") {
        if (actual !== undefined && jsonEqual(actual, operand)) return false;
      } else {
        const c = compare(actual, operand);
        if (c === undefined) return false;
        if (op === "$gt" ? !(c > 0) : op === "$gte" ? !(c >= 0) : op === "$lt" ? !(c < 0) : !(c <= 0)) return false;
      }
    }
  }
  return true;
}

/** What an authorization filter is matched against for an item: its value plus `namespace` and `key`. */
export const itemAuthMetadata = (item: Pick<StoredItem, "namespace" | "key" | "value">): Record<string, unknown> => ({
  ...item.value,
  namespace: [...item.namespace],
  key: item.key,
});

export const isExpired = (item: Pick<StoredItem, "expires_at">, now: number): boolean => item.expires_at !== null && item.expires_at <= now;

/** True when the namespace starts with `prefix`, label by label (`[]`: every namespace). */
export function hasPrefix(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  for (let i = 0; i < prefix.length; i++) if (namespace[i] !== prefix[i]) return false;
  return true;
}

/** An item matches a query's prefix, expiry, filter and auth (order and paging aside). */
export function matchesItemQuery(item: StoredItem, q: ItemQuery): boolean {
  return (
    hasPrefix(item.namespace, q.prefix) &&
    !isExpired(item, q.now) &&
    matchesItemFilter(item.value, q.filter) &&
    (q.auth === undefined || matchesAuthFilter(itemAuthMetadata(item), q.auth))
  );
}

/** The default order: `updated_at` descending, then namespace and key ascending. */
export function compareItems(a: StoredItem, b: StoredItem): number {
  if (a.updated_at !== b.updated_at) return a.updated_at < b.updated_at ? 1 : -1;
  return codePointCompare(namespaceKey(a.namespace), namespaceKey(b.namespace)) || codePointCompare(a.key, b.key);
}

/** Cosine similarity; 0 when either vector is all zeros or their lengths differ. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Orders and pages items that match a query (`matchesItemQuery`): by the default order, or with
 * `q.vector` by best cosine similarity over each item's vectors (scored), unindexed items last.
 */
export function rankItems(matching: Iterable<StoredItem>, q: Pick<ItemQuery, "vector" | "limit" | "offset">): ScoredItem[] {
  const offset = q.offset ?? 0;
  const end = q.limit === undefined ? undefined : offset + q.limit;
  const all = [...matching];
  if (!q.vector) return all.sort(compareItems).slice(offset, end);
  const vector = q.vector;
  const scored: Array<{ item: StoredItem; score: number }> = [];
  const rest: StoredItem[] = [];
  for (const item of all) {
    if (!item.vectors || item.vectors.length === 0) {
      rest.push(item);
      continue;
    }
    let best = -Infinity;
    for (const v of item.vectors) best = Math.max(best, cosine(vector, v));
    scored.push({ item, score: best });
  }
  scored.sort((a, b) => b.score - a.score || compareItems(a.item, b.item));
  rest.sort(compareItems);
  const ranked: ScoredItem[] = [...scored.map(({ item, score }) => ({ ...item, score })), ...rest];
  return ranked.slice(offset, end);
}

/** True when `namespace` meets `prefix` and `suffix` of a namespace query (`"*"` matches any label). */
export function namespaceMatches(namespace: readonly string[], q: Pick<ItemNamespaceQuery, "prefix" | "suffix">): boolean {
  const { prefix = [], suffix = [] } = q;
  if (prefix.length > namespace.length || suffix.length > namespace.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== "*" && prefix[i] !== namespace[i]) return false;
  const at = namespace.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (suffix[i] !== "*" && suffix[i] !== namespace[at + i]) return false;
  return true;
}

/**
 * Answers a namespace query over groups of items (each group: one namespace and its items):
 * a namespace counts when one of its items is live and visible to `auth`.
 */
export function listNamespacesOf(groups: Iterable<readonly [readonly string[], Iterable<StoredItem>]>, q: ItemNamespaceQuery): string[][] {
  const found = new Map<string, string[]>();
  for (const [namespace, items] of groups) {
    if (!namespaceMatches(namespace, q)) continue;
    const cut = q.maxDepth === undefined ? [...namespace] : namespace.slice(0, q.maxDepth);
    const k = namespaceKey(cut);
    if (found.has(k)) continue;
    for (const item of items) {
      if (isExpired(item, q.now)) continue;
      if (q.auth !== undefined && !matchesAuthFilter(itemAuthMetadata(item), q.auth)) continue;
      found.set(k, cut);
      break;
    }
  }
  const keys = [...found.keys()].sort(codePointCompare);
  const offset = q.offset ?? 0;
  const end = q.limit === undefined ? undefined : offset + q.limit;
  return keys.slice(offset, end).map((k) => found.get(k)!);
}

/** Throws `invalid_input` unless the item can be stored (stores check every `item.put`). */
export function checkStoredItem(item: StoredItem): void {
  if (!isPlainObject(item)) throw invalidInput("item.put: item must be an object");
  checkNamespace(item.namespace, "item.namespace");
  if (typeof item.key !== "string") throw invalidInput(`item.key must be a string, got ${describe(item.key)}`);
  if (!isPlainObject(item.value)) throw invalidInput(`item.value must be a JSON object, got ${describe(item.value)}`);
  checkJson(item.value, "item.value");
  for (const t of ["created_at", "updated_at"] as const) if (typeof item[t] !== "string") throw invalidInput(`item.${t} must be an ISO time string`);
  if (item.expires_at !== null && !Number.isFinite(item.expires_at)) throw invalidInput("item.expires_at must be epoch ms or null");
  if (item.ttl !== null && !(Number.isFinite(item.ttl) && item.ttl > 0)) throw invalidInput("item.ttl must be a positive number of minutes or null");
  if (item.vectors !== undefined) {
    if (!Array.isArray(item.vectors) || !item.vectors.every((v) => Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x)))) {
      throw invalidInput("item.vectors must be arrays of finite numbers");
    }
  }
}

/**
 * Items with an expiry, ordered by it: `[expires_at, id]` pairs kept sorted (binary search), so
 * finding what expired costs what is found, not the number of items.
 */
export class ExpiryIndex {
  private readonly entries: Array<{ at: number; id: string; namespace: readonly string[]; key: string }> = [];

  private find(at: number, id: string): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const e = this.entries[mid]!;
      if (e.at < at || (e.at === at && e.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  add(at: number, namespace: readonly string[], key: string): void {
    const id = itemId(namespace, key);
    const i = this.find(at, id);
    if (this.entries[i]?.at === at && this.entries[i]?.id === id) return;
    this.entries.splice(i, 0, { at, id, namespace, key });
  }

  remove(at: number, namespace: readonly string[], key: string): void {
    const id = itemId(namespace, key);
    const i = this.find(at, id);
    if (this.entries[i]?.at === at && this.entries[i]?.id === id) this.entries.splice(i, 1);
  }

  /** Items expired at `now`, soonest first. */
  expired(now: number, limit = Infinity): ExpiredItem[] {
    const out: ExpiredItem[] = [];
    for (const e of this.entries) {
      if (e.at > now || out.length >= limit) break;
      out.push({ namespace: e.namespace, key: e.key, expires_at: e.at });
    }
    return out;
  }
}
