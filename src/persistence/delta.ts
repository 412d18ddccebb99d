/**
 * Delta encoding of checkpoint values, shared by the JSON-file and IndexedDB stores. Core-safe:
 * no Node built-ins, no browser globals.
 *
 * A chat's state is dominated by a message list that grows by a few items per step. Storing each
 * checkpoint's full values costs O(n^2) bytes over a thread's life; storing deltas against the
 * parent makes reads rebuild long chains. Instead every array channel of at least `LIST_MIN`
 * items lives in a per-thread append-only *list log*, and a checkpoint stores, per channel, either
 * the value inline (`{ v }`) or a reference to the first `n` items of a list (`{ l, n }`).
 * A child checkpoint whose list extends its parent's appends only the new tail to the parent's
 * log. So a thread costs O(total items) bytes, persisting a checkpoint costs O(its change), and
 * reading any checkpoint rebuilds it from one record plus one slice per list (no delta chain: the
 * "full snapshot every k" of a chain-based codec is k = 1 here).
 *
 * The codec knows nothing of the engine: any top-level channel value that is a JSON array is a
 * list candidate; every other value is stored inline.
 *
 * Logs are prefix-immutable: items are only ever appended, and a fork whose items differ from
 * what the log already holds past the parent's length starts a new log. A cached prefix of a log
 * therefore never goes stale, which is what lets the IndexedDB store cache items across tabs.
 *
 * `diffObject` / `patchObject` (end of this file) express a record as the keys that differ from
 * another; the JSON-file store writes checkpoints and runs that way (./json-file/codec.ts).
 */
import { isPlainObject, jsonEqual } from "../json.js";
import type { StoredCheckpoint } from "./types.js";
import type { ThreadRecord } from "../types.js";

/** Arrays shorter than this are stored inline. */
export const LIST_MIN = 4;

/** One stored channel value: inline, or the first `n` items of list log `l`. */
export type EncodedValue = { v: unknown } | ListRef;
export interface ListRef {
  l: string;
  n: number;
  /**
   * Legacy (stores written before the engine dropped its chunked-list form): the list was a
   * `{ $chunks }` value of `c` items per chunk. Read back as the plain array.
   */
  c?: number;
}
export type EncodedValues = Record<string, EncodedValue>;

/** Items to add to list log `list` starting at index `at` (which must be its current length). */
export interface ListAppend {
  list: string;
  at: number;
  items: unknown[];
}

/** The current items of a list log, or undefined if the store has no such log. */
export type ListLookup = (listId: string) => readonly unknown[] | undefined;

const sameItem = (a: unknown, b: unknown) => a === b || jsonEqual(a, b);

/**
 * Encodes `values` against `base` (the parent's encoded values). With `append: false` (thread
 * records, which mirror a checkpoint) a list is referenced only if the log already holds it, else
 * stored inline; nothing is appended.
 */
export function encodeValues(
  values: Record<string, unknown>,
  base: EncodedValues | undefined,
  lists: ListLookup,
  newListId: () => string,
  append = true,
): { values: EncodedValues; appends: ListAppend[] } {
  const out: EncodedValues = {};
  const appends: ListAppend[] = [];
  for (const [channel, value] of Object.entries(values)) {
    out[channel] = encodeOne(value, base?.[channel], lists, newListId, append, appends);
  }
  return { values: out, appends };
}

function encodeOne(
  value: unknown,
  prev: EncodedValue | undefined,
  lists: ListLookup,
  newListId: () => string,
  append: boolean,
  appends: ListAppend[],
): EncodedValue {
  const flat = value;
  if (!Array.isArray(flat)) return { v: value };
  const ref = (l: string, n: number): ListRef => ({ l, n });
  const items = prev && "l" in prev ? lists(prev.l) : undefined;
  if (prev && "l" in prev && items && flat.length >= prev.n) {
    let k = 0;
    while (k < flat.length && k < items.length && sameItem(flat[k], items[k])) k++;
    if (k >= prev.n) {
      if (k === flat.length) return ref(prev.l, k);
      if (k === items.length && append) {
        appends.push({ list: prev.l, at: k, items: flat.slice(k) });
        return ref(prev.l, flat.length);
      }
    }
  }
  if (!append || flat.length < LIST_MIN) return { v: value };
  const list = newListId();
  appends.push({ list, at: 0, items: [...flat] });
  return ref(list, flat.length);
}

/** Rebuilds plain values. Throws if a referenced log is missing or short (a corrupt store). */
export function decodeValues(values: EncodedValues, lists: ListLookup): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [channel, enc] of Object.entries(values)) {
    if ("v" in enc) {
      out[channel] = enc.v;
      continue;
    }
    const items = lists(enc.l);
    if (!items || items.length < enc.n) {
      throw new Error(`graphdock store: list ${enc.l} of channel "${channel}" is missing or short (corrupt store)`);
    }
    out[channel] = items.slice(0, enc.n);
  }
  return out;
}

/** The list logs `values` reference, with the item count each needs. */
export function listRefs(values: EncodedValues): ListRef[] {
  return Object.values(values).filter((e): e is ListRef => "l" in e);
}

// ---------------------------------------------------------------------------------------------
// Records. An encoded checkpoint or thread has the record's shape with its values replaced by
// `EncodedValues`, so stores keep it in the same places as the plain record.

/** A `StoredCheckpoint` whose `checkpoint.channel_values` holds `EncodedValues`. */
export type EncodedCheckpoint = StoredCheckpoint;
/** A `ThreadRecord` whose `values` holds `EncodedValues`. */
export type EncodedThread = ThreadRecord;

export const encodedValuesOf = (cp: EncodedCheckpoint) => cp.checkpoint.channel_values as EncodedValues;

export function encodeCheckpoint(
  cp: StoredCheckpoint,
  parent: EncodedCheckpoint | undefined,
  lists: ListLookup,
  newListId: () => string,
): { checkpoint: EncodedCheckpoint; appends: ListAppend[] } {
  const base = parent && encodedValuesOf(parent);
  const { values, appends } = encodeValues(cp.checkpoint.channel_values, base, lists, newListId);
  return { checkpoint: { ...cp, checkpoint: { ...cp.checkpoint, channel_values: values } }, appends };
}

export function decodeCheckpoint(cp: EncodedCheckpoint, lists: ListLookup): StoredCheckpoint {
  const channel_values = decodeValues(encodedValuesOf(cp), lists);
  return { ...cp, checkpoint: { ...cp.checkpoint, channel_values } };
}

/** Encodes a thread's `values` by reference to its latest checkpoint's lists where they match. */
export function encodeThread(
  thread: ThreadRecord,
  latest: EncodedCheckpoint | undefined,
  lists: ListLookup,
): EncodedThread {
  const base = latest && encodedValuesOf(latest);
  const noList = () => {
    throw new Error("unreachable: thread values never start a list");
  };
  return { ...thread, values: encodeValues(thread.values ?? {}, base, lists, noList, false).values };
}

export function decodeThread(thread: EncodedThread, lists: ListLookup): ThreadRecord {
  return { ...thread, values: decodeValues(thread.values as EncodedValues, lists) };
}

// ---------------------------------------------------------------------------------------------
// Record diffs. Consecutive checkpoints of a thread repeat most of their record (run metadata,
// unchanged channel versions, the namespace, list references that only grow): a store may keep a
// checkpoint as the keys that differ from its parent's record.

/**
 * How a JSON object differs from a base object: keys set to a new value (`s`), keys whose values
 * are both objects patched recursively (`p`), keys removed (`d`).
 */
export interface ObjectDiff {
  s?: Record<string, unknown>;
  p?: Record<string, ObjectDiff>;
  d?: string[];
}


/** Sets an own key (a key named `__proto__` included) without touching the prototype. */
function setKey(obj: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The diff turning `base` into `value`; undefined when they are equal JSON. */
export function diffObject(value: Record<string, unknown>, base: Record<string, unknown>): ObjectDiff | undefined {
  const diff: ObjectDiff = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const b = Object.hasOwn(base, k) ? base[k] : undefined;
    if (b !== undefined && sameItem(v, b)) continue;
    const sub = isPlainObject(v) && isPlainObject(b) ? diffObject(v, b) : undefined;
    if (sub) setKey((diff.p ??= {}), k, sub);
    else setKey((diff.s ??= {}), k, v);
  }
  for (const [k, b] of Object.entries(base)) {
    if (b !== undefined && (!Object.hasOwn(value, k) || value[k] === undefined)) (diff.d ??= []).push(k);
  }
  return diff.s || diff.p || diff.d ? diff : undefined;
}

/** Applies `diff` to `base`, returning a new object (`base` is not changed). */
export function patchObject(base: Record<string, unknown>, diff: ObjectDiff | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  if (!diff) return out;
  for (const k of diff.d ?? []) delete out[k];
  for (const [k, v] of Object.entries(diff.s ?? {})) setKey(out, k, v);
  for (const [k, sub] of Object.entries(diff.p ?? {})) {
    const b = out[k];
    if (!isPlainObject(b)) throw new Error(`graphdock store: diff patches key "${k}", which is not an object in its base (corrupt store)`);
    setKey(out, k, patchObject(b, sub));
  }
  return out;
}

/**
 * An encoded checkpoint as a diff against its parent's encoded record; the parent id is implied
 * (it is the base). Use with `undiffCheckpoint` and the same parent record.
 */
export function diffCheckpoint(cp: EncodedCheckpoint, parent: EncodedCheckpoint): ObjectDiff | undefined {
  const record = { ...cp, parent_checkpoint_id: parent.parent_checkpoint_id };
  return diffObject(record as unknown as Record<string, unknown>, parent as unknown as Record<string, unknown>);
}

export function undiffCheckpoint(diff: ObjectDiff | undefined, parent: EncodedCheckpoint): EncodedCheckpoint {
  const record = patchObject(parent as unknown as Record<string, unknown>, diff) as unknown as EncodedCheckpoint;
  return { ...record, parent_checkpoint_id: parent.checkpoint.id };
}
