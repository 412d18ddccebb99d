/**
 * Item references inside stored values, shared by the IndexedDB rows (./indexeddb/rows.ts) and
 * the PostgreSQL store (../postgres/share.ts). Values of a checkpoint other than its channel
 * values (pending writes, `metadata.writes`) often repeat items of the thread's list logs; such an
 * object (a plain object with a string `id`, identical JSON to the item) is stored as a one-key
 * reference `{[REF]: [list, index]}`, and an object whose only key starts with the marker
 * character is escaped as `{[ESC]: object}` so references stay unambiguous. Each store picks its
 * marker character (PostgreSQL's `jsonb` cannot hold `\u0000`) and how it names a list. Core-safe.
 *
 * A caller may name a *home* list (the IndexedDB store: the list of the checkpoint's own
 * channel values, ./indexeddb/rows.ts `homeOf`): a reference to an item of it is then the index
 * alone, `{[REF]: index}`, and reading it needs the same home.
 */
import { isPlainObject, jsonEqual } from "../json.js";

/** Sets an own key (`__proto__` included) without touching the prototype. */
export const setOwn = (obj: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
};

/** Item id -> where an object with this id sits in a list log (the item is compared before it is shared). */
export type ItemIndex<K = string> = Map<string, { list: K; at: number; item: unknown }>;

/** The sharing functions of one encoding (its marker keys and list names). */
export interface ItemRefs<K extends string | number> {
  /** Key of a reference `{[REF]: [list, index]}`. */
  readonly REF: string;
  /** Key of an escaped marker-like object `{[ESC]: object}`. */
  readonly ESC: string;
  /** A one-key object whose key starts with the marker character. */
  isMarker(v: Record<string, unknown>): boolean;
  /** Indexes the items `[from, to)` of `list` that have a string `id`. */
  indexItems(index: ItemIndex<K>, list: K, items: readonly unknown[], from: number, to?: number): void;
  /**
   * `value` (plain JSON) with objects found in `index` as references and marker-like objects
   * escaped; references to items of `home` are the index alone.
   */
  share(value: unknown, index: ItemIndex<K>, home?: K): unknown;
  /**
   * A value already shared, shared again against more items: references and escapes stay,
   * objects found in `index` become references. `changed.hit` tells whether one was made.
   */
  reshare(value: unknown, index: ItemIndex<K>, changed: { hit: boolean }, home?: K): unknown;
  /** How many items of each list `resolve` needs for the references in `value` (list -> count). */
  needs(value: unknown, out?: Map<K, number>, home?: K): Map<K, number>;
  /** The plain value of a shared one; `lists` gives the loaded items of a list. */
  resolve(value: unknown, lists: (list: K) => readonly unknown[] | undefined, home?: K): unknown;
  /** A shared value with its references to items of `home` naming their list, as any other. */
  qualify(value: unknown, home: K | undefined): unknown;
}

export interface ItemRefsOptions<K> {
  /** The reference and escape keys; both start with the same marker character. */
  ref: string;
  esc: string;
  /** A list name as read back from a stored reference. */
  listOf: (raw: unknown) => K;
  /** Names the store in the error for a reference to a missing item. */
  store: string;
}

export function itemRefs<K extends string | number>({ ref: REF, esc: ESC, listOf, store }: ItemRefsOptions<K>): ItemRefs<K> {
  const markerCode = REF.charCodeAt(0);
  const isMarker = (v: Record<string, unknown>) => {
    const keys = Object.keys(v);
    return keys.length === 1 && keys[0]!.charCodeAt(0) === markerCode;
  };
  const hasMarker = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(hasMarker);
    if (!isPlainObject(value)) return false;
    return isMarker(value) || Object.values(value).some(hasMarker);
  };
  const lookup = (value: Record<string, unknown>, index: ItemIndex<K>, home: K | undefined): Record<string, unknown> | undefined => {
    if (index.size === 0 || typeof value.id !== "string") return undefined;
    const found = index.get(value.id);
    if (!found || !(found.item === value || jsonEqual(found.item, value))) return undefined;
    return { [REF]: home !== undefined && found.list === home ? found.at : [found.list, found.at] };
  };
  /** The list and index a reference names (a bare index names an item of `home`). */
  const target = (ref: unknown, home: K | undefined): [K, number] => {
    if (typeof ref === "number") {
      if (home === undefined) throw new Error(`${store}: item reference ${ref} without a list (corrupt store)`);
      return [home, ref];
    }
    const [list, at] = ref as [unknown, number];
    return [listOf(list), at];
  };

  function share(value: unknown, index: ItemIndex<K>, home?: K): unknown {
    if (Array.isArray(value)) return value.map((v) => share(v, index, home));
    if (!isPlainObject(value)) return value;
    const hit = lookup(value, index, home);
    if (hit) return hit;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) if (x !== undefined) setOwn(out, k, share(x, index, home));
    return isMarker(out) ? { [ESC]: out } : out;
  }

  function qualify(value: unknown, home: K | undefined): unknown {
    if (home === undefined) return value;
    if (Array.isArray(value)) return value.map((v) => qualify(v, home));
    if (!isPlainObject(value)) return value;
    if (isMarker(value)) {
      if (Object.hasOwn(value, REF)) return typeof value[REF] === "number" ? { [REF]: [home, value[REF]] } : value;
      const inner: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(value[ESC] as Record<string, unknown>)) setOwn(inner, k, qualify(x, home));
      return { [ESC]: inner };
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) setOwn(out, k, qualify(x, home));
    return out;
  }

  function reshare(value: unknown, index: ItemIndex<K>, changed: { hit: boolean }, home?: K): unknown {
    if (Array.isArray(value)) return value.map((v) => reshare(v, index, changed, home));
    if (!isPlainObject(value)) return value;
    if (isMarker(value)) {
      if (Object.hasOwn(value, REF)) return value;
      const inner: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(value[ESC] as Record<string, unknown>)) setOwn(inner, k, reshare(x, index, changed, home));
      return { [ESC]: inner };
    }
    if (typeof value.id === "string" && !hasMarker(value)) {
      // Without markers inside, the shared form is the value itself.
      const hit = lookup(value, index, home);
      if (hit) {
        changed.hit = true;
        return hit;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) setOwn(out, k, reshare(x, index, changed, home));
    return out;
  }

  function needs(value: unknown, out = new Map<K, number>(), home?: K): Map<K, number> {
    if (Array.isArray(value)) {
      for (const v of value) needs(v, out, home);
    } else if (isPlainObject(value)) {
      const marker = isMarker(value);
      const ref = marker ? value[REF] : undefined;
      if (ref !== undefined) {
        const [list, at] = target(ref, home);
        out.set(list, Math.max(out.get(list) ?? 0, at + 1));
      } else {
        // An escaped object's values (not the object itself: it looks like a marker).
        const inner = marker ? value[ESC] : value;
        if (isPlainObject(inner)) for (const v of Object.values(inner)) needs(v, out, home);
      }
    }
    return out;
  }

  function resolve(value: unknown, lists: (list: K) => readonly unknown[] | undefined, home?: K): unknown {
    if (Array.isArray(value)) return value.map((v) => resolve(v, lists, home));
    if (!isPlainObject(value)) return value;
    let obj = value;
    if (isMarker(value)) {
      const ref = value[REF];
      if (ref !== undefined) {
        const [list, at] = target(ref, home);
        const items = lists(list);
        if (!items || items.length <= at) throw new Error(`${store}: item ${at} of list ${String(list)} is missing (corrupt store)`);
        return items[at];
      }
      // An escaped object; a one-key object of another encoding is kept as it is.
      if (isPlainObject(value[ESC])) obj = value[ESC];
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) setOwn(out, k, resolve(v, lists, home));
    return out;
  }

  return {
    REF,
    ESC,
    isMarker,
    indexItems(index, list, items, from, to = items.length) {
      for (let at = Math.max(0, from); at < to; at++) {
        const item = items[at];
        if (isPlainObject(item) && typeof item.id === "string" && !index.has(item.id)) index.set(item.id, { list, at, item });
      }
    },
    share,
    reshare,
    needs,
    resolve,
    qualify,
  };
}
