/**
 * How the IndexedDB store keeps records (schema 3 and later). Core-safe: no Node built-ins.
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
 *
 * Format 4 (schema 5): a row put after the row of its parent (the usual case: each checkpoint
 * extends the latest one) leaves `parent_checkpoint_id` out of its record; a reader takes it
 * from the row before it in the namespace. Deleting that row first writes the id into the next
 * row, so the rule holds whatever is deleted. Rows that keep it (forks, rewrites, format 3) read
 * as before.
 *
 * Format 5 (schema 6): a diff moves integer and time leaves by *shifts* (`diffLeaves`); a new
 * base keeps the leaf paths of the previous one as *absent* leaves (`unionBase`), a base is made
 * every 64 rows, and its id has 9 decimals (`baseId`); a leaf the base lacks is named by a base
 * leaf's path; a row's references to items of its own list (`homeOf`) are the index alone, and
 * bases hold references that name their list (`qualifyItems`). List items are kept by
 * ./item-codec.ts, run rows by ./run-row.ts. Format-4 rows read as they are.
 */
import { isPlainObject, jsonEqual } from "../../json.js";
import type { ListLookup } from "../delta.js";
import { itemRefs, setOwn, type ItemIndex as ItemIndexOf } from "../item-refs.js";

export { setOwn };

/** Item references of this store: markers start with `\u0000`, lists are named by their id. */
const refs = itemRefs<string>({ ref: "\u0000i", esc: "\u0000e", listOf: String, store: "graphdock indexeddb" });

/** Keys of the one-key marker objects: an item reference, and an escaped marker-like object. */
export const { REF, ESC, isMarker, indexItems } = refs;

/** Where an object with this id sits in a list log (the item is compared before it is shared). */
export type ItemIndex = ItemIndexOf<string>;

/**
 * `value` (plain JSON) with every object found in `index` (same id, identical JSON) replaced by
 * a reference, and marker-like objects escaped. Format 5: a reference to an item of `home` (the
 * row's own list, `homeOf`) is the item's index alone, `{"\u0000i": n}`.
 */
export const shareItems = refs.share;

/**
 * The *home* list of a checkpoint row (format 5): of the lists its channel values refer to, the
 * one with the smallest id (whatever the key order a record is rebuilt in), or undefined when
 * there is none. A row's references to its home list name only the item's index.
 */
export function homeOf(record: CpRecord): string | undefined {
  const values = (record.checkpoint as { channel_values?: unknown } | undefined)?.channel_values;
  if (!isPlainObject(values)) return undefined;
  let home: string | undefined;
  for (const v of Object.values(values)) {
    const l = isPlainObject(v) && typeof v.l === "string" ? v.l : undefined;
    if (l !== undefined && (home === undefined || l < home)) home = l;
  }
  return home;
}

/**
 * A shared value with references to items of `home` naming their list again: what a base holds
 * (a base may serve rows of another home list, a fork's).
 */
export const qualifyItems = refs.qualify;

/**
 * A value already shared (`shareItems`) shared again against more items: references and
 * escapes stay, objects found in `index` become references (how a parent row picks up the
 * items its child appended). `changed.hit` tells whether a reference was made.
 */
export const reshareItems = refs.reshare;

/** The list items each list must hold for `resolveItems` (list id -> count). */
export const itemNeeds = (value: unknown, needs?: Map<string, number>, home?: string): Map<string, number> => refs.needs(value, needs, home);

/** Replaces item references by the items (the lists of `itemNeeds` must be loaded). */
export const resolveItems = (value: unknown, lists: ListLookup, home?: string): unknown => refs.resolve(value, lists, home);

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
  /**
   * Pending writes, shared, as stored (`packWrites`): left out when there are none; consecutive
   * writes of one task as one entry `[task, channel, value, channel, value, ...]`.
   */
  w?: unknown;
}

/** A checkpoint row with its key, its pending writes unpacked (shared `[task, channel, value]` triples). */
export interface CpRow extends StoredCpRow {
  thread_id: string;
  checkpoint_ns: string;
  /** Put order within (thread, namespace). */
  s: number;
  w: unknown[];
}

export const cpKey = (row: CpRow): [string, string, number] => [row.thread_id, row.checkpoint_ns, row.s];
export const storedRow = ({ thread_id: _t, checkpoint_ns: _n, s: _s, w, ...stored }: CpRow): StoredCpRow => {
  const packed = packWrites(w);
  return packed.length > 0 ? { ...stored, w: packed } : stored;
};
export const located = (key: [string, string, number], stored: StoredCpRow): CpRow => ({
  ...stored,
  thread_id: key[0],
  checkpoint_ns: key[1],
  s: key[2],
  w: unpackWrites(stored.w),
});

/**
 * Pending writes as stored (format 4): consecutive writes of one task as one entry, the task id
 * once. An entry of one write is the write itself, so format-3 rows (one entry per write) read
 * the same.
 */
export function packWrites(writes: readonly unknown[]): unknown[] {
  const out: unknown[][] = [];
  let last: unknown[] | undefined;
  for (const write of writes) {
    const [task, channel, value] = write as [unknown, unknown, unknown];
    if (last && last[0] === task) last.push(channel, value);
    else out.push((last = [task, channel, value]));
  }
  return out;
}

/** The writes of `packWrites` (or of a format-3 row, or none). */
export function unpackWrites(stored: unknown): unknown[] {
  if (stored === undefined) return [];
  const out: unknown[] = [];
  for (const entry of stored as unknown[][]) {
    for (let i = 1; i < entry.length; i += 2) out.push([entry[0], entry[i], entry[i + 1]]);
  }
  return out;
}

/**
 * A random 8-character id (48 bits): list log ids. A list id needs to be unique within its
 * thread only (items are keyed `[thread, list, index]`, the item cache by thread and list), and
 * a thread holds a few lists (one per list channel and fork), so 48 bits leave collisions out of
 * reach; every reference to an item repeats it (format 3 used 16 characters).
 */
export function shortId(): string {
  const bytes = new Uint8Array(6);
  globalThis.crypto.getRandomValues(bytes);
  let out = "";
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (let i = 0; i < 6; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += abc[(n >> 18) & 63]! + abc[(n >> 12) & 63]! + abc[(n >> 6) & 63]! + abc[n & 63]!;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Leaf diffs. A record is seen as its leaves: every value that is not a plain object with keys
// (arrays, strings, numbers, ..., and `{}`), each at a path of keys. A base's leaves are listed
// in a fixed order (`leavesOf`), so a diff names a changed leaf by its position in that list:
// `[i, value]` sets leaf i, `[i]` removes it, `[[...path], value]` adds a leaf the base lacks.
// Consecutive checkpoints change the same few leaves (id, time, versions, step, list lengths),
// so a row costs about the size of the values that changed.
//
// Format 5: a diff may end with one object, its *shifts* `{"<d>": [i, j, ...]}`: leaves i, j, ...
// are the base's moved by d: an integer base leaf plus d (channel versions, steps, list lengths:
// the leaves of a checkpoint usually move together by the same amount), a time base leaf
// (`toISOString` form) plus d milliseconds (`ts`, `updated_at`). A set `[i, value]` never holds
// a plain object with keys (that is not a leaf), so the shifts object is unambiguous. An added
// leaf's path may start with the first k keys of the path of base leaf i: `[[i, k, ...rest], x]`
// (`metadata.writes` set to null where the base has writes: `[[20, 2], null]`).

/** Shifts of a format-5 diff: delta (as a key) -> positions of the base leaves it moves. */
export type LeafShifts = Record<string, number[]>;
export type LeafDiff = Array<[number] | [number, unknown] | [Array<string | number>, unknown] | LeafShifts>;
type Leaves = Array<[string[], unknown]>;

/** An ISO time as `Date.prototype.toISOString` writes it (the only times a shift applies to). */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** How far `value` moved from `base` (a shift), or undefined when it cannot be told as one. */
function shiftOf(base: unknown, value: unknown): number | undefined {
  if (typeof value === "number") {
    if (typeof base !== "number" || !Number.isSafeInteger(base) || !Number.isSafeInteger(value)) return undefined;
    const d = value - base;
    return Number.isSafeInteger(d) ? d : undefined;
  }
  if (typeof value !== "string" || typeof base !== "string" || !ISO_TIME.test(value) || !ISO_TIME.test(base)) return undefined;
  const d = Date.parse(value) - Date.parse(base);
  return Number.isSafeInteger(d) && shifted(base, d) === value ? d : undefined;
}

/** A base leaf moved by `d` (see `shiftOf`). */
function shifted(base: unknown, d: number): unknown {
  if (typeof base === "number") return base + d;
  if (typeof base === "string" && ISO_TIME.test(base)) {
    const t = Date.parse(base) + d;
    const out = new Date(t);
    if (!Number.isNaN(t) && Math.abs(t) <= 8.64e15) return out.toISOString();
  }
  throw new Error(`graphdock indexeddb: a diff shifts leaf ${JSON.stringify(base)}, which is no integer or time (corrupt store)`);
}

/**
 * Format 5, checkpoint bases only: a leaf a new base keeps from the previous base (`unionBase`)
 * holds `{"\u0000u": 0}`, *absent*: a row that lacks the leaf needs no `[i]` for it, a row that
 * has it sets it. A record's own objects never look like this (a one-key object whose key starts
 * with `\u0000` is stored escaped, `{"\u0000e": object}`, ../item-refs.ts), except right under
 * an escape, where it is the caller's and read as it is. Run records are not shared that way, so
 * run diffs do not take part (`absent` false).
 */
const ABSENT = "\u0000u";
const isAbsentLeaf = (x: unknown, key: string): boolean =>
  key !== ESC && isPlainObject(x) && Object.hasOwn(x, ABSENT) && Object.keys(x).length === 1;

const leafCache = new WeakMap<object, Leaves>();
const absentLeafCache = new WeakMap<object, Leaves>();

/**
 * The leaves of a record, in a fixed order (cached per record object: bases are immutable).
 * With `absent`, an absent marker is a leaf (checkpoint bases of format 5; a record is always
 * read with the same flag).
 */
export function leavesOf(record: Record<string, unknown>, absent = false): Leaves {
  const cache = absent ? absentLeafCache : leafCache;
  let leaves = cache.get(record);
  if (!leaves) {
    leaves = [];
    collect(record, [], leaves, absent);
    cache.set(record, leaves);
  }
  return leaves;
}

function collect(v: Record<string, unknown>, path: string[], out: Leaves, absent: boolean) {
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    const p = [...path, k];
    if (isPlainObject(x) && Object.keys(x).length > 0 && !(absent && isAbsentLeaf(x, k))) collect(x, p, out, absent);
    else out.push([p, x]);
  }
}

const pathKey = (path: string[]) => JSON.stringify(path);

/** Path key -> position of each leaf of a base (cached per base object, like its leaves). */
const leafPositions = new WeakMap<object, Map<string, number>>();
/** Path prefix key -> position of the first leaf under it (cached per base object). */
const prefixPositions = new WeakMap<object, Map<string, number>>();

/** How a diff names the path of a leaf its base lacks: the shortest of the keys and `[i, k, ...rest]`. */
function addedPath(path: string[], base: Record<string, unknown>, baseLeaves: Leaves): Array<string | number> {
  let under = prefixPositions.get(base);
  if (!under) {
    under = new Map();
    baseLeaves.forEach(([p], i) => {
      for (let k = 1; k <= p.length; k++) {
        const key = pathKey(p.slice(0, k));
        if (!under!.has(key)) under!.set(key, i);
      }
    });
    prefixPositions.set(base, under);
  }
  for (let k = path.length; k > 0; k--) {
    const i = under.get(pathKey(path.slice(0, k)));
    if (i === undefined) continue;
    const short = [i, k, ...path.slice(k)];
    return JSON.stringify(short).length < JSON.stringify(path).length ? short : path;
  }
  return path;
}

export function diffLeaves(record: Record<string, unknown>, base: Record<string, unknown>, absent = false): LeafDiff {
  const baseLeaves = leavesOf(base, absent);
  let at = leafPositions.get(base);
  if (!at) {
    const positions = new Map<string, number>();
    baseLeaves.forEach(([p], i) => positions.set(pathKey(p), i));
    leafPositions.set(base, (at = positions));
  }
  const mine: Leaves = [];
  collect(record, [], mine, false);
  const diff: LeafDiff = [];
  const seen = new Set<number>();
  const shifts = new Map<number, number[]>();
  for (const [p, x] of mine) {
    const i = at.get(pathKey(p));
    if (i === undefined) diff.push([addedPath(p, base, baseLeaves), x]);
    else {
      seen.add(i);
      const b = baseLeaves[i]![1];
      if (b === x || jsonEqual(b, x)) continue;
      const d = shiftOf(b, x);
      if (d === undefined) diff.push([i, x]);
      else {
        const group = shifts.get(d);
        if (group) group.push(i);
        else shifts.set(d, [i]);
      }
    }
  }
  for (let i = 0; i < baseLeaves.length; i++) {
    if (!seen.has(i) && !(absent && isAbsentLeaf(baseLeaves[i]![1], baseLeaves[i]![0].at(-1)!))) diff.push([i]);
  }
  if (shifts.size > 0) {
    const out: LeafShifts = {};
    for (const [d, positions] of shifts) out[String(d)] = positions;
    diff.push(out);
  }
  return diff;
}

export function patchLeaves(base: Record<string, unknown>, diff: LeafDiff, absent = false): Record<string, unknown> {
  const baseLeaves = leavesOf(base, absent);
  const values: unknown[] = baseLeaves.map(([, x]) => x);
  const removed = new Set<number>();
  const added: Leaves = [];
  for (const d of diff) {
    if (!Array.isArray(d)) {
      for (const [delta, positions] of Object.entries(d)) {
        for (const i of positions) {
          if (!(i in values)) throw new Error(`graphdock indexeddb: a diff shifts leaf ${i} of a base with ${values.length} (corrupt store)`);
          values[i] = shifted(baseLeaves[i]![1], Number(delta));
        }
      }
    } else if (typeof d[0] === "number") {
      if (d.length === 1) removed.add(d[0]);
      else values[d[0]] = d[1];
    } else if (typeof d[0][0] === "number") {
      const [i, k, ...rest] = d[0] as [number, number, ...string[]];
      const from = baseLeaves[i];
      if (!from || !(k >= 1 && k <= from[0].length)) throw new Error(`graphdock indexeddb: a diff adds a leaf under leaf ${i} of a base with ${baseLeaves.length} (corrupt store)`);
      added.push([[...from[0].slice(0, k), ...rest], d[1]]);
    } else added.push([d[0] as string[], d[1]]);
  }
  const out: Record<string, unknown> = {};
  const put = (path: string[], x: unknown) => {
    let node = out;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i]!;
      if (!Object.hasOwn(node, k) || !isPlainObject(node[k])) setOwn(node, k, {});
      node = node[k] as Record<string, unknown>;
    }
    setOwn(node, path[path.length - 1]!, x);
  };
  baseLeaves.forEach(([p, x], i) => {
    if (removed.has(i)) return;
    // An absent leaf the row does not set (format 5) is not there.
    if (absent && values[i] === x && isAbsentLeaf(x, p.at(-1)!)) return;
    put(p, values[i]);
  });
  for (const [p, x] of added) put(p, x);
  return out;
}

/**
 * A new base: `record` with the leaf paths of the `previous` base that it lacks, as `null`
 * leaves (format 5). Checkpoints of a thread take turns in a few shapes (an input checkpoint
 * holds `__start__` and its writes, the next one a branch channel, ...); a base that has every
 * path lets each row name a leaf by its position (`[i, value]`) or drop it (`[i]`) instead of
 * spelling its path. Where `record` holds `null` and `previous` an object (`metadata.writes` is
 * null in some checkpoints), the object's paths are kept; any other collision (a value where
 * `previous` has an object, or the reverse) keeps `record`'s. The parent id is not carried over
 * (most rows leave it out).
 */
export function unionBase(record: CpRecord, previous: CpRecord | undefined): CpRecord {
  if (!previous) return record;
  let out: CpRecord | undefined;
  for (const [path] of leavesOf(previous, true)) {
    if (path[0] === "parent_checkpoint_id") continue;
    let node: unknown = out ?? record;
    let parent: Record<string, unknown> | undefined;
    let i = 0;
    for (; i < path.length - 1; i++) {
      if (!isPlainObject(node) || !Object.hasOwn(node, path[i]!)) break;
      parent = node;
      node = node[path[i]!];
    }
    if (node === null && parent) {
      // `null` where the previous base has an object: made an object (below).
      i--;
      node = parent;
    } else if (!isPlainObject(node) || (i > 0 && Object.keys(node).length === 0)) continue; // a value or `{}` of `record`
    if (i === path.length - 1 && Object.hasOwn(node as object, path[i]!)) continue; // present (or a collision)
    out ??= structuredClone(record);
    let at = out as Record<string, unknown>;
    for (let k = 0; k < path.length - 1; k++) {
      if (!Object.hasOwn(at, path[k]!) || at[path[k]!] === null) setOwn(at, path[k]!, {});
      at = at[path[k]!] as Record<string, unknown>;
    }
    setOwn(at, path[path.length - 1]!, { [ABSENT]: 0 });
  }
  return out ?? record;
}

/**
 * A new base id for a row put at `s`: `s` plus a random fraction of 9 digits (format 5; format
 * 4 used a full double), so ids do not repeat, not even after a thread is deleted and made again
 * (a cached base is only ever right for its id).
 */
export const baseId = (s: number): number => Number((s + (Math.floor(Math.random() * 999_999_999) + 1) / 1e9).toFixed(9));

/** The row's shared record (item references still in place). */
export function rowRecord(row: CpRow, base: CpRecord | undefined): CpRecord {
  if (row.b === undefined) return row.r as CpRecord;
  if (!base) throw new Error(`graphdock indexeddb: base ${row.b} of checkpoint ${row.id} is missing (corrupt store)`);
  return patchLeaves(base, row.r as LeafDiff, true);
}

/** What a row stores for `record` against `base` (`undefined`: no base). */
export function rowBody(record: CpRecord, base: { id: number; record: CpRecord } | undefined): Pick<CpRow, "b" | "r"> {
  if (!base) return { r: record };
  return { b: base.id, r: diffLeaves(record, base.record, true) };
}
