/**
 * How the IndexedDB store packs records (schema 2). Core-safe: no Node built-ins.
 *
 * - A *page* holds up to `PAGE` consecutive records of one thread (checkpoints in put order, or
 *   runs in order of their first put) as one IndexedDB value. The first record is whole; each
 *   next one is a flat diff against the one before it (see `FlatDiff`), and a checkpoint whose
 *   parent is the record before it stores `0` as its parent id. The page is written as compact
 *   JSON (../json-file/shared-json.ts), so the key lists of the diffs, which repeat from one step
 *   to the next, and the ids and times that recur (a run id in every checkpoint of the run) are
 *   written once per page, UUIDs take 24 characters and ISO times about 12.
 * - A message that is also an item of one of the thread's list logs (same id, identical JSON) is
 *   stored in a page as a reference to that item, `{"\u0000i": [list, index]}`: a step's
 *   messages appear in the list log, the task's pending writes, `metadata.writes` and the
 *   `__start__` channel, and only the list log keeps the text. An object whose only key starts
 *   with `\u0000` is escaped as `{"\u0000e": object}`.
 * - List logs are stored in *chunks* of `CHUNK` items, compact JSON as well.
 *
 * Reading one record reads its page (one value, at most `PAGE - 1` diffs to apply) plus the list
 * items it refers to (the item cache of the store holds them after the first read).
 */
import { isPlainObject, jsonEqual } from "../../json.js";
import { decodeShared, stringifyShared } from "../json-file/shared-json.js";
import { ESC, isMarker, REF, setOwn, type ItemIndex } from "./rows.js";

/** A record as kept in a page (a checkpoint or run without its `thread_id`). */
export type Entry = Record<string, unknown>;

/** Records per page. */
export const PAGE = 32;
/** List items per chunk. */
export const CHUNK = 16;

// Schema 2 used the same markers, item index and item references as schema 3's rows.
export { indexItems, itemNeeds, resolveItems, type ItemIndex } from "./rows.js";

/**
 * Compact JSON of `records` (nulls mark deleted slots) with messages shared with the list logs.
 * A record that follows another is stored as the diff against it (`diffObject`), and a checkpoint
 * whose parent is the record before it stores `0` as its parent id.
 */
export function encodePage(records: ReadonlyArray<Entry | null>, index: ItemIndex): unknown {
  const share = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(share);
    if (!isPlainObject(v)) return v;
    if (typeof v.id === "string") {
      const found = index.get(v.id);
      if (found && (found.item === v || jsonEqual(found.item, v))) return { [REF]: [found.list, found.at] };
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) setOwn(out, k, share(x));
    return isMarker(out) ? { [ESC]: out } : out;
  };
  const linked = records.map((r, i) => {
    const prev = records[i - 1];
    const id = (prev?.checkpoint as { id?: unknown } | undefined)?.id;
    return r && prev && id !== undefined && r.parent_checkpoint_id === id ? { ...r, parent_checkpoint_id: 0 } : r;
  });
  const flat = linked.map((r) => r && leaves(r));
  const stored = linked.map((r, i) => {
    const [now, before] = [flat[i], flat[i - 1]];
    return now && before ? diffLeaves(now, before) : r;
  });
  return JSON.parse(stringifyShared(stored.map(share)));
}

/**
 * A page as stored, after `decodeShared` (in place: pass a value read from IndexedDB, a fresh
 * copy): diffs and item references still in place (see `itemNeeds`, `resolveItems`, `unchain`).
 */
export function decodePage(stored: unknown): unknown[] {
  return decodeShared<unknown[]>(stored);
}

/** The records of a decoded page whose item references are resolved: applies the diffs. */
export function unchain(stored: ReadonlyArray<unknown>): Array<Entry | null> {
  const out: Array<Entry | null> = [];
  let prev: Map<string, unknown> | undefined;
  for (const s of stored) {
    if (s === null) {
      prev = undefined;
      out.push(null);
      continue;
    }
    if (prev) {
      prev = patchLeaves(prev, s as FlatDiff);
      out.push(unflatten(prev));
    } else {
      prev = leaves(s as Entry);
      out.push(s as Entry);
    }
  }
  // Parent ids last: a diff is taken against the previous record as stored (with its own 0).
  return out.map((r, i) => {
    if (r?.parent_checkpoint_id !== 0) return r;
    return { ...r, parent_checkpoint_id: (out[i - 1]!.checkpoint as { id: string }).id };
  });
}


export const encodeChunk = (items: readonly unknown[]): unknown => JSON.parse(stringifyShared(items));
export const decodeChunk = (stored: unknown): unknown[] => decodeShared<unknown[]>(stored);

// ---------------------------------------------------------------------------------------------
// Flat diffs. A record is seen as its leaves (values that are not objects with keys), each under
// a path: "/" and its keys joined by "/" ("~" written "~0", "/" written "~1"). A diff maps the
// paths whose leaves changed to the new leaf, and lists the removed paths under "d". In a page,
// consecutive records share the key lists of their diffs (checkpoints of a run change the same
// few leaves: id, time, versions, step), which compact JSON writes once.

/** Leaves set (path -> value) and paths removed (`d`). */
export type FlatDiff = Record<string, unknown> & { d?: string[] };

const segment = (k: string) => (k.includes("~") || k.includes("/") ? k.replaceAll("~", "~0").replaceAll("/", "~1") : k);
const unsegment = (s: string) => (s.includes("~") ? s.replaceAll("~1", "/").replaceAll("~0", "~") : s);

function leaves(v: Record<string, unknown>, prefix = "", out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    const path = `${prefix}/${segment(k)}`;
    if (isPlainObject(x) && Object.keys(x).length > 0) leaves(x, path, out);
    else out.set(path, x);
  }
  return out;
}

function diffLeaves(now: Map<string, unknown>, before: Map<string, unknown>): FlatDiff {
  const diff: FlatDiff = {};
  for (const [path, x] of now) if (!before.has(path) || !jsonEqual(x, before.get(path))) setOwn(diff, path, x);
  const removed = [...before.keys()].filter((path) => !now.has(path));
  if (removed.length > 0) diff.d = removed;
  return diff;
}

/** A copy of `all` with `diff` applied. */
function patchLeaves(all: Map<string, unknown>, diff: FlatDiff): Map<string, unknown> {
  const out = new Map(all);
  for (const path of diff.d ?? []) out.delete(path);
  for (const [path, x] of Object.entries(diff)) if (path !== "d") out.set(path, x);
  return out;
}

function unflatten(all: Map<string, unknown>): Entry {
  const out: Entry = {};
  for (const [path, x] of all) {
    const keys = path.slice(1).split("/").map(unsegment);
    let node = out;
    for (let i = 0; i < keys.length - 1; i++) {
      const k = keys[i]!;
      if (!Object.hasOwn(node, k)) setOwn(node, k, {});
      node = node[k] as Entry;
    }
    setOwn(node, keys[keys.length - 1]!, x);
  }
  return out;
}
