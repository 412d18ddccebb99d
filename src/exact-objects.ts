/**
 * Objects at their exact size (heap per chat turn). Every checkpoint keeps a few small
 * objects of its own: its channel values object, `channel_versions`, the `versions_seen` maps
 * that changed, its metadata and the `writes` in it. V8 gives an object built key by key (what
 * `produce` or a spread hands back) room for four properties inside it and puts any more in a
 * separate array: 56 bytes for a map of one or two versions, 120 for a checkpoint's metadata.
 * An object that `JSON.parse` builds has room for its keys only (32 bytes for one key, 40 for
 * two, 104 for metadata's ten), so these are rebuilt from a `JSON.parse` of their keys: the same
 * keys in the same order, the same values (by reference). Saves ~200 bytes per chat turn.
 */

/** Keys and values of `map` as JSON text, or undefined when a value is not a plain number or string. */
function jsonOf(map: Readonly<Record<string, unknown>>, placeholder: boolean): string | undefined {
  let text = "{";
  let first = true;
  for (const key in map) {
    if (!Object.hasOwn(map, key)) continue;
    const value = map[key];
    let shown: string;
    if (placeholder) shown = "0";
    else if (typeof value === "number" && Number.isFinite(value)) shown = String(value);
    else if (typeof value === "string") shown = JSON.stringify(value);
    else return undefined;
    text += `${first ? "" : ","}${JSON.stringify(key)}:${shown}`;
    first = false;
  }
  return `${text}}`;
}

/** Only plain objects (the engine's maps) are rebuilt; anything else is kept as it is. */
const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** `map` (of numbers or strings) as a frozen object of its exact size, or `map` itself if it cannot be. */
export function exactVersions<T extends Readonly<Record<string, unknown>>>(map: T): T {
  if (!isPlain(map) || Object.hasOwn(map, "__proto__")) return map;
  const text = jsonOf(map, false);
  return text === undefined ? map : (Object.freeze(JSON.parse(text)) as T);
}

/**
 * `versions_seen` with the maps that differ from `before`'s rebuilt at their exact size (and
 * itself, when it differs), the others kept by reference.
 */
export function exactVersionsSeen<T extends Readonly<Record<string, Readonly<Record<string, unknown>>>>>(seen: T, before: T | undefined): T {
  if (!isPlain(seen) || Object.hasOwn(seen, "__proto__")) return seen;
  const text = jsonOf(seen, true);
  if (text === undefined) return seen;
  const out = JSON.parse(text) as Record<string, unknown>;
  for (const key in out) {
    const inner = seen[key];
    out[key] = inner === before?.[key] ? inner : exactVersions(inner as Readonly<Record<string, unknown>>);
  }
  return Object.freeze(out) as T;
}

/**
 * A copy of a plain object at its exact size: the same keys in the same order, the same values
 * (by reference), not frozen. For the objects every checkpoint keeps (its channel values, its
 * metadata and the `writes` in it). Kept as it is when it is not a plain object, or has a key
 * `__proto__`.
 */
export function exactObject<T extends Record<string, unknown>>(obj: T): T {
  if (!isPlain(obj) || Object.hasOwn(obj, "__proto__")) return obj;
  const text = jsonOf(obj, true);
  if (text === undefined) return obj;
  const out = JSON.parse(text) as Record<string, unknown>;
  for (const key in out) out[key] = obj[key];
  return out as T;
}
