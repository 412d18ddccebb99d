/**
 * A fast path for `GraphdockSaver`'s default serializer: a value made only of plain JSON (plain
 * objects, arrays, strings, finite numbers, booleans, null) comes out of LangGraph's JSON
 * serializer (`JsonPlusSerializer`: a circular-safe `JSON.stringify` with a replacer) and
 * `JSON.parse` as a deep copy of itself. `plainJsonCopy` makes that copy in one walk, or says
 * the value is not plain JSON, in which case the saver takes the serializer's own path.
 */

/** Returned by `plainJsonCopy` for a value that is not plain JSON. */
export const NOT_PLAIN: unique symbol = Symbol("graphdock.notPlainJson");

/** Deeper than this (or a cycle) goes the serializer's own way, which handles cycles. */
const MAX_DEPTH = 200;

/**
 * A deep copy of `value` equal to what the default serializer's JSON form parses back to, or
 * `NOT_PLAIN` when the value holds anything that serializer would change or drop: `undefined`
 * (it writes an `{lc: 2, type: "undefined"}` record), functions, symbols, bigints, non-finite
 * numbers, class instances (Dates, Maps, Sets, messages, ...: their `toJSON` or a constructor
 * record), objects with a `toJSON` or `lg_name` (a `Send`), `__proto__` keys, cycles.
 */
export function plainJsonCopy(value: unknown, depth = 0): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) return NOT_PLAIN;
      return value === 0 ? 0 : value; // -0 is written as 0
    case "object": {
      if (value === null) return null;
      if (depth >= MAX_DEPTH) return NOT_PLAIN;
      if (Array.isArray(value)) {
        const out: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const v = plainJsonCopy(value[i], depth + 1); // a hole reads as undefined: not plain
          if (v === NOT_PLAIN) return NOT_PLAIN;
          out[i] = v;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
      const record = value as Record<string, unknown>;
      if ("toJSON" in record || "lg_name" in record) return NOT_PLAIN;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(record)) {
        if (key === "__proto__") return NOT_PLAIN;
        const v = plainJsonCopy(record[key], depth + 1);
        if (v === NOT_PLAIN) return NOT_PLAIN;
        out[key] = v;
      }
      return out;
    }
    default:
      return NOT_PLAIN;
  }
}

const isSerializedConstructor = (o: Record<string, unknown>) => o.lc === 1 && o.type === "constructor" && Array.isArray(o.id);

/** Whether stored JSON holds an object with an `lc` key (a record the serializer revives) or a `__proto__` key. */
function hasRecords(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (depth >= MAX_DEPTH) return true;
  if (Array.isArray(value)) return value.some((v) => hasRecords(v, depth + 1));
  const record = value as Record<string, unknown>;
  if ("lc" in record) return true;
  for (const key of Object.keys(record)) if (key === "__proto__" || hasRecords(record[key], depth + 1)) return true;
  return false;
}

/**
 * Stored JSON revived as the default serializer's `loadsTyped("json", JSON.stringify(value))`
 * would, without its per-node async walk: plain JSON is deep-copied, and each LangChain
 * serialized object (`{lc: 1, type: "constructor", ...}`, e.g. a message) whose own fields are
 * plain is revived by `loadSerialized` (LangChain's `load`, as that serializer calls it). Returns
 * `NOT_PLAIN` for anything else (other `lc` records, `__proto__` keys, very deep values): the
 * caller then takes the serializer's own path.
 */
export function revivePlainJson(value: unknown, loadSerialized: (text: string) => Promise<unknown>): Promise<unknown> | typeof NOT_PLAIN {
  const pending: Promise<void>[] = [];
  const copy = (v: unknown, depth: number, place: (revived: unknown) => void): unknown => {
    if (typeof v !== "object" || v === null) return v;
    if (depth >= MAX_DEPTH) return NOT_PLAIN;
    if (Array.isArray(v)) {
      const out: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const c = copy(v[i], depth + 1, (r) => (out[i] = r));
        if (c === NOT_PLAIN) return NOT_PLAIN;
        out[i] = c;
      }
      return out;
    }
    const record = v as Record<string, unknown>;
    if ("lc" in record) {
      if (!isSerializedConstructor(record) || Object.keys(record).some((k) => k !== "lc" && hasRecords(record[k], depth + 1))) return NOT_PLAIN;
      pending.push(loadSerialized(JSON.stringify(record)).then(place));
      return undefined;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      if (key === "__proto__") return NOT_PLAIN;
      const c = copy(record[key], depth + 1, (r) => (out[key] = r));
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out[key] = c;
    }
    return out;
  };
  let result = copy(value, 0, (r) => (result = r));
  if (result === NOT_PLAIN) return NOT_PLAIN;
  return pending.length === 0 ? Promise.resolve(result) : Promise.all(pending).then(() => result);
}
