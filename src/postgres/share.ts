/**
 * Item sharing for the PostgreSQL store (schema 2): values of a checkpoint row other than its
 * channel values (`metadata.writes`, pending writes) often repeat items of the checkpoint's list
 * logs (a chat's new messages are written by a task, recorded in the step's metadata, and appended
 * to the `messages` log). Such an object (a plain object with a string `id`, identical JSON) is
 * stored as a reference `{"\u0001r": [log, index]}`; an object whose only key starts with
 * `\u0001` is escaped as `{"\u0001e": object}` so references stay unambiguous. (`\u0000`, which
 * the IndexedDB rows use, cannot be stored in `jsonb`.)
 *
 * Values are shared when stored (against the items the checkpoint appended) and pending writes
 * are shared again when the next checkpoint appends what they wrote (`reshare`).
 */
import { isPlainObject, jsonEqual } from "../json.js";

export const REF = "\u0001r";
export const ESC = "\u0001e";

/** Item id -> where it sits in a log. */
export type ItemIndex = Map<string, { log: number; at: number; item: unknown }>;

const setOwn = (obj: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
};

const isMarker = (v: Record<string, unknown>) => {
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0]!.charCodeAt(0) === 1;
};

/** Indexes the items `[from, items.length)` of log `log` that have a string `id`. */
export function indexItems(index: ItemIndex, log: number, items: readonly unknown[], from: number): void {
  for (let at = Math.max(0, from); at < items.length; at++) {
    const item = items[at];
    if (isPlainObject(item) && typeof item.id === "string" && !index.has(item.id)) index.set(item.id, { log, at, item });
  }
}

/** A plain JSON value in shared form: objects found in `index` become references, marker-like objects are escaped. */
export function share(value: unknown, index: ItemIndex): unknown {
  if (Array.isArray(value)) return value.map((v) => share(v, index));
  if (!isPlainObject(value)) return value;
  const hit = lookup(value, index);
  if (hit) return hit;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) if (x !== undefined) setOwn(out, k, share(x, index));
  return isMarker(out) ? { [ESC]: out } : out;
}

/** A value already in shared form, shared against more items; `changed.hit` tells whether anything was. */
export function reshare(value: unknown, index: ItemIndex, changed: { hit: boolean }): unknown {
  if (Array.isArray(value)) return value.map((v) => reshare(v, index, changed));
  if (!isPlainObject(value)) return value;
  if (isMarker(value)) {
    if (Object.hasOwn(value, REF)) return value;
    const inner: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value[ESC] as Record<string, unknown>)) setOwn(inner, k, reshare(x, index, changed));
    return { [ESC]: inner };
  }
  if (!hasMarker(value)) {
    // Without markers inside, the shared form is the value itself.
    const hit = lookup(value, index);
    if (hit) {
      changed.hit = true;
      return hit;
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) setOwn(out, k, reshare(x, index, changed));
  return out;
}

function lookup(value: Record<string, unknown>, index: ItemIndex): Record<string, unknown> | undefined {
  if (index.size === 0 || typeof value.id !== "string") return undefined;
  const found = index.get(value.id);
  return found && (found.item === value || jsonEqual(found.item, value)) ? { [REF]: [found.log, found.at] } : undefined;
}

function hasMarker(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasMarker);
  if (!isPlainObject(value)) return false;
  return isMarker(value) || Object.values(value).some(hasMarker);
}

/** How many items of each log `resolve` needs for the references in `value` (log -> count). */
export function needs(value: unknown, out: Map<number, number>): Map<number, number> {
  if (Array.isArray(value)) {
    for (const v of value) needs(v, out);
  } else if (isPlainObject(value)) {
    if (isMarker(value)) {
      const ref = value[REF] as [number | string, number] | undefined;
      if (ref) {
        const log = Number(ref[0]);
        out.set(log, Math.max(out.get(log) ?? 0, ref[1] + 1));
      } else needs(value[ESC], out);
    } else for (const v of Object.values(value)) needs(v, out);
  }
  return out;
}

/** The plain value of a shared one (the items of `needs` loaded); without `items`, a plain value as is. */
export function resolve(value: unknown, items: ReadonlyMap<number, readonly unknown[]> | undefined): unknown {
  if (items === undefined) return value;
  if (Array.isArray(value)) return value.map((v) => resolve(v, items));
  if (!isPlainObject(value)) return value;
  let obj = value;
  if (isMarker(value)) {
    const ref = value[REF] as [number | string, number] | undefined;
    if (ref) {
      const list = items.get(Number(ref[0]));
      if (!list || list.length <= ref[1]) throw new Error(`agentdock/postgres: item ${ref[1]} of log ${ref[0]} is missing (corrupt store)`);
      return list[ref[1]];
    }
    obj = value[ESC] as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) setOwn(out, k, resolve(v, items));
  return out;
}
