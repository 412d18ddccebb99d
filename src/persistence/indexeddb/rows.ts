/**
 * How the IndexedDB store keeps records (schema 3). Core-safe: no Node built-ins.
 *
 * One IndexedDB record per checkpoint, run, list item and thread, so a commit writes only what
 * it changes. A checkpoint row holds the checkpoint with its channel values delta-encoded
 * (../delta.ts: list channels are references into the thread's append-only list logs, one item
 * per record) and, to keep a chat's history small, values elsewhere in the record (pending
 * writes, `metadata.writes`, inline channels) that are also items of one of the checkpoint's list
 * logs are stored as references to that item: a JSON object with a string `id` identical to a
 * list item becomes `{"\u0000i": [list, index]}` (an object whose only key starts with `\u0000`
 * is escaped as `{"\u0000e": object}`). A task's writes are recorded before the next checkpoint
 * appends them to the list: when it does, the parent row is shared again (`shareItems`).
 *
 * A checkpoint row that has a *base* stores its record as the keys that differ from that base
 * (`diffObject`): the run metadata, namespace, channel names and unchanged versions repeat from
 * one checkpoint to the next. Bases are immutable records of their own (a copy of the first
 * record stored against them), so any row reads as two records at most, never a chain.
 */
import { isPlainObject, jsonEqual } from "../../json.js";
import { diffObject, patchObject, type ListLookup, type ObjectDiff } from "../delta.js";

const REF = "\u0000i";
const ESC = "\u0000e";

/** Sets an own key (`__proto__` included) without touching the prototype. */
const setOwn = (obj: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
};

const isMarker = (v: Record<string, unknown>) => {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0]!.charCodeAt(0) === 0;
};

/** Where an object with this id sits in a list log (the item is compared before it is shared). */
export type ItemIndex = Map<string, { list: string; at: number; item: unknown }>;

/** Indexes the items `[from, to)` of `list` that have a string `id`. */
export function indexItems(index: ItemIndex, list: string, items: readonly unknown[], from: number, to = items.length): void {
  for (let at = Math.max(0, from); at < to; at++) {
    const item = items[at];
    if (isPlainObject(item) && typeof item.id === "string" && !index.has(item.id)) index.set(item.id, { list, at, item });
  }
}

/**
 * `value` with every object found in `index` (same id, identical JSON) replaced by a reference,
 * and marker-like objects escaped. Also applied to values already shared (references stay as
 * they are), which is how a parent row picks up items its child appended. `changed.hit` tells
 * whether a reference was made.
 */
export function shareItems(value: unknown, index: ItemIndex, changed?: { hit: boolean }): unknown {
  if (Array.isArray(value)) return value.map((v) => shareItems(v, index, changed));
  if (!isPlainObject(value)) return value;
  if (isMarker(value)) {
    if (Object.hasOwn(value, REF)) return value; // already a reference
    if (Object.hasOwn(value, ESC)) return { [ESC]: shareFields(value[ESC] as Record<string, unknown>, index, changed) };
  }
  if (typeof value.id === "string" && index.size > 0) {
    const found = index.get(value.id);
    if (found && (found.item === value || jsonEqual(found.item, value))) {
      if (changed) changed.hit = true;
      return { [REF]: [found.list, found.at] };
    }
  }
  const out = shareFields(value, index, changed);
  return isMarker(out) ? { [ESC]: out } : out;
}

function shareFields(value: Record<string, unknown>, index: ItemIndex, changed?: { hit: boolean }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) if (x !== undefined) setOwn(out, k, shareItems(x, index, changed));
  return out;
}

/** The list items each list must hold for `resolveItems` (list id -> count). */
export function itemNeeds(value: unknown, needs = new Map<string, number>()): Map<string, number> {
  if (Array.isArray(value)) {
    for (const v of value) itemNeeds(v, needs);
  } else if (isPlainObject(value)) {
    const marker = isMarker(value);
    const ref = marker ? (value[REF] as [string, number] | undefined) : undefined;
    if (ref) needs.set(ref[0], Math.max(needs.get(ref[0]) ?? 0, ref[1] + 1));
    else for (const v of Object.values(marker ? (value[ESC] as object) : value)) itemNeeds(v, needs);
  }
  return needs;
}

/** Replaces item references by the items (the lists of `itemNeeds` must be loaded). */
export function resolveItems(value: unknown, lists: ListLookup): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveItems(v, lists));
  if (!isPlainObject(value)) return value;
  let obj = value;
  if (isMarker(value)) {
    const ref = value[REF] as [string, number] | undefined;
    if (ref) {
      const items = lists(ref[0]);
      if (!items || items.length <= ref[1]) {
        throw new Error(`agentdock indexeddb: item ${ref[1]} of list ${ref[0]} is missing (corrupt store)`);
      }
      return items[ref[1]];
    }
    obj = value[ESC] as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) setOwn(out, k, resolveItems(v, lists));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checkpoint rows.

/** The part of a checkpoint a row diffs against its base: everything but keys and writes. */
export type CpRecord = Record<string, unknown>;

/** A checkpoint row as stored, under the key `[thread_id, checkpoint_ns, s]`. */
export interface StoredCpRow {
  /** The checkpoint id (indexed; the record leaves it out). */
  id: string;
  /**
   * Base id (key `[thread_id, checkpoint_ns, b]` in `bases`): the row's put order `s` when the
   * base was made plus a random fraction, so ids never repeat, not even after a thread is
   * deleted and created again. The record is then a diff against the base.
   */
  b?: number;
  /** The shared record (`CpRecord` with item references), or its diff against the base. */
  r: unknown;
  /** Pending writes, shared. */
  w: unknown;
}

/** A checkpoint row with its key. */
export interface CpRow extends StoredCpRow {
  thread_id: string;
  checkpoint_ns: string;
  /** Put order within (thread, namespace). */
  s: number;
}

export const cpKey = (row: CpRow): [string, string, number] => [row.thread_id, row.checkpoint_ns, row.s];
export const storedRow = ({ thread_id: _t, checkpoint_ns: _n, s: _s, ...stored }: CpRow): StoredCpRow => stored;
export const located = (key: [string, string, number], stored: StoredCpRow): CpRow => ({
  ...stored,
  thread_id: key[0],
  checkpoint_ns: key[1],
  s: key[2],
});

/** A random 16-character id (96 bits): list log ids, which need no UUID's length. */
export function shortId(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  let out = "";
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (let i = 0; i < 12; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += abc[(n >> 18) & 63]! + abc[(n >> 12) & 63]! + abc[(n >> 6) & 63]! + abc[n & 63]!;
  }
  return out;
}

/** The row's shared record (item references still in place). */
export function rowRecord(row: CpRow, base: CpRecord | undefined): CpRecord {
  if (row.b === undefined) return row.r as CpRecord;
  if (!base) throw new Error(`agentdock indexeddb: base ${row.b} of checkpoint ${row.id} is missing (corrupt store)`);
  return patchObject(base, row.r as ObjectDiff | undefined);
}

/** What a row stores for `record` against `base` (`undefined`: no base). */
export function rowBody(record: CpRecord, base: { id: number; record: CpRecord } | undefined): Pick<CpRow, "b" | "r"> {
  if (!base) return { r: record };
  return { b: base.id, r: diffObject(record, base.record) ?? {} };
}
