/**
 * Compact JSON: the encoding of JSON-file format 2 (which the JSON-file store now only reads, to
 * migrate directories written by earlier releases; see ./legacy.ts) and of the IndexedDB store's
 * pages. Plain JSON in which
 *
 * - a value shared by several records, as structured clone keeps them (a run step puts the same
 *   message object in a task's pending writes, in `metadata.writes` and in the message list), or
 *   a string that occurs more than once (ids, a message's text in a run's input, op names; see
 *   `worthSharing`), is written once as `["$=", value]` and then as the string `"$<n>"` (n counts
 *   the `$=` values in the order they end, depth first);
 * - an object whose key list occurs more than once (every checkpoint, run and message; a single
 *   key only when it has 5 characters or more) is written as an array of its values:
 *   `["$k", [keys], ...values]` the first time (defining the next shape number),
 *   `["$t<n>", ...values]` after that;
 * - a canonical lowercase UUID is written as `"$u"` and its 16 bytes in base64url, an ISO time
 *   as `"$d"` and its epoch milliseconds in base 36 (only when they read back to the same string);
 * - a user string that starts with `$` is written with one more `$` in front.
 * So a string starting with `$` is always a marker, an array is one when it starts with `"$="`,
 * `"$k"` or `"$t<n>"` (a user string there would have been escaped), and object keys are never
 * touched. `decodeLegacy` reads format 1, whose markers were objects.
 */
/** A string this long is shared when it occurs twice; a shorter one from `SHORT` when it occurs three times. */
const LONG = 25;
const SHORT = 8;
/** Whether writing a string once and referring to it (a reference costs 4 to 8 bytes) pays off. */
const worthSharing = (v: string, count: number) => (v.length >= LONG ? count > 1 : v.length >= SHORT && count > 2);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A string as written in place: packed when it is a UUID or an ISO time, escaped when it starts with `$`. */
function packString(v: string): string {
  if (v.length === 36 && UUID.test(v)) {
    const hex = v.replaceAll("-", "");
    let out = "$u";
    // 32 hex digits = 128 bits: 21 groups of 6 bits (126) and a last group of 2.
    let bits = 0;
    let acc = 0;
    for (let i = 0; i < 32; i++) {
      acc = (acc << 4) | parseInt(hex[i]!, 16);
      bits += 4;
      while (bits >= 6) {
        bits -= 6;
        out += B64[(acc >> bits) & 63];
      }
    }
    return out + B64[acc & ((1 << bits) - 1)];
  }
  if (v.length === 24 && ISO_TIME.test(v)) {
    const ms = Date.parse(v);
    if (ms >= 0 && new Date(ms).toISOString() === v) return `$d${ms.toString(36)}`;
  }
  return v.charCodeAt(0) === 36 /* $ */ ? `$${v}` : v;
}

function unpackUuid(packed: string): string {
  let hex = "";
  let acc = 0;
  let bits = 0;
  for (let i = 2; i < packed.length; i++) {
    const last = i === packed.length - 1;
    const size = last ? 2 : 6;
    acc = (acc << size) | B64.indexOf(packed[i]!);
    bits += size;
    while (bits >= 4) {
      bits -= 4;
      hex += ((acc >> bits) & 15).toString(16);
    }
    acc &= (1 << bits) - 1;
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether an object with these keys may be written by shape: a single short key is cheaper in place. */
const shaped = (keys: string[]) => keys.length > 1 || (keys.length === 1 && keys[0]!.length >= 5);

/** Keys written for an object (JSON drops undefined values). */
const keysOf = (v: object) => Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);

export function stringifyShared(value: unknown): string {
  const count = new Map<object | string, number>();
  const shapeCount = new Map<string, number>();
  const visit = (v: unknown) => {
    if (typeof v === "string" && v.length >= SHORT) count.set(v, (count.get(v) ?? 0) + 1);
    if (typeof v !== "object" || v === null) return;
    const c = count.get(v);
    count.set(v, (c ?? 0) + 1);
    if (c !== undefined) return;
    if (Array.isArray(v)) {
      for (const child of v) visit(child);
      return;
    }
    const keys = keysOf(v);
    if (shaped(keys)) {
      const shape = keys.join("\u0000");
      shapeCount.set(shape, (shapeCount.get(shape) ?? 0) + 1);
    }
    for (const k of keys) visit((v as Record<string, unknown>)[k]);
  };
  visit(value);

  const ids = new Map<object | string, number>();
  const shapes = new Map<string, number>();
  const out = (v: unknown): Json | undefined => {
    if (typeof v === "string") {
      const id = ids.get(v);
      if (id !== undefined) return `$${id}`;
      const body = packString(v);
      return worthSharing(v, count.get(v) ?? 0) ? define(v, body) : body;
    }
    if (typeof v !== "object" || v === null) return v as Json | undefined;
    const id = ids.get(v);
    if (id !== undefined) return `$${id}`;
    let body: Json;
    if (Array.isArray(v)) {
      body = v.map((x) => out(x) ?? null);
    } else {
      const obj = v as Record<string, unknown>;
      const keys = keysOf(obj);
      const shape = keys.join("\u0000");
      if (shaped(keys) && (shapeCount.get(shape) ?? 0) > 1) {
        const n = shapes.get(shape);
        if (n === undefined) shapes.set(shape, shapes.size);
        const values = keys.map((k) => out(obj[k]) as Json);
        body = n === undefined ? ["$k", keys, ...values] : [`$t${n}`, ...values];
      } else {
        body = {};
        for (const k of keys) setOwn(body, k, out(obj[k]));
      }
    }
    return (count.get(v) ?? 0) > 1 ? define(v, body) : body;
  };
  const define = (v: object | string, body: Json): Json => {
    ids.set(v, ids.size);
    return ["$=", body];
  };
  return JSON.stringify(out(value));
}

/** Parses what `stringifyShared` wrote; shared values come back as one object. */
export function parseShared<T = unknown>(text: string): T {
  return decodeShared<T>(JSON.parse(text));
}

/** Resolves the markers of parsed format-2 JSON (see the top of this file), in place. */
export function decodeShared<T = unknown>(root: unknown): T {
  const shared: unknown[] = [];
  const shapes: string[][] = [];
  const object = (keys: string[], values: unknown[], from: number) => {
    const obj: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) setOwn(obj, keys[i]!, resolve(values[from + i]));
    return obj;
  };
  const resolve = (v: unknown): unknown => {
    if (typeof v === "string") {
      if (v.charCodeAt(0) !== 36 /* $ */) return v;
      const kind = v.charCodeAt(1);
      if (kind === 36) return v.slice(1);
      if (kind === 117 /* u */) return unpackUuid(v);
      if (kind === 100 /* d */) return new Date(parseInt(v.slice(2), 36)).toISOString();
      const found = shared[Number(v.slice(1))];
      if (found === undefined) throw new Error(`graphdock json-file: reference ${v} to a value not yet defined (corrupt file)`);
      return found;
    }
    if (typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) {
      const head = v[0];
      if (head === "$=" || head === "$k" || (typeof head === "string" && /^\$t\d+$/.test(head))) {
        if (head === "$=") {
          const body = resolve(v[1]);
          shared.push(body);
          return body;
        }
        if (head === "$k") {
          const keys = v[1] as string[];
          shapes.push(keys);
          return object(keys, v, 2);
        }
        const keys = shapes[Number((head as string).slice(2))];
        if (!keys) throw new Error(`graphdock json-file: unknown shape ${head} (corrupt file)`);
        return object(keys, v, 1);
      }
      for (let i = 0; i < v.length; i++) v[i] = resolve(v[i]);
      return v;
    }
    const m = v as Record<string, unknown>;
    for (const k of Object.keys(m)) {
      const r = resolve(m[k]);
      if (r !== m[k]) setOwn(m, k, r);
    }
    return m;
  };
  return resolve(root) as T;
}

/** Sets an own key (`__proto__` included) without touching the prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Key sets of the format-1 markers. */
const MARKERS = ["$r", "$e", "$s|$v", "$i|$k|$o", "$o|$t"];
const isMarkerShape = (keys: string[]) => keys.length <= 3 && MARKERS.includes([...keys].sort().join("|"));

/** Resolves the markers of parsed format-1 JSON (objects `$r`, `$s`/`$v`, `$k`/`$i`/`$o`, `$t`/`$o`, `$e`), in place. */
export function decodeLegacy<T = unknown>(root: unknown): T {
  const shared: unknown[] = [];
  const shapes: string[][] = [];
  const resolve = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = resolve(v[i]);
      return v;
    }
    const m = v as Record<string, unknown>;
    const marked = m.$r !== undefined || m.$s !== undefined || m.$e !== undefined || m.$o !== undefined;
    if (marked && isMarkerShape(Object.keys(m))) {
      if (m.$r !== undefined) return shared[m.$r as number];
      if (m.$e !== undefined) return Object.fromEntries((m.$e as Array<[string, unknown]>).map(([k, x]) => [k, resolve(x)]));
      if (m.$o !== undefined) {
        if (m.$k !== undefined) shapes[m.$i as number] = m.$k as string[];
        const keys = shapes[(m.$k !== undefined ? m.$i : m.$t) as number]!;
        const values = m.$o as unknown[];
        const obj: Record<string, unknown> = {};
        for (let i = 0; i < keys.length; i++) obj[keys[i]!] = resolve(values[i]);
        return obj;
      }
      const body = resolve(m.$v);
      shared[m.$s as number] = body;
      return body;
    }
    for (const k in m) m[k] = resolve(m[k]);
    return m;
  };
  return resolve(root) as T;
}
