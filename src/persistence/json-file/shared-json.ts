/**
 * Compact JSON for the JSON-file store: plain JSON plus three kinds of markers.
 *
 * - Shared values, as structured clone keeps them. A run step puts the same message object in a
 *   task's pending writes, in the checkpoint's `metadata.writes` and in the thread's message
 *   list. An object or array reached more than once, or a string of at least `LONG` characters
 *   that occurs more than once (ids, a message's text in a run's input), is written once as
 *   `{"$s": n, "$v": ...}` and then as `{"$r": n}`.
 * - Shapes. Records repeat the same keys (every checkpoint, run and message): an object whose key
 *   list occurs more than once is written as its values, `{"$t": n, "$o": [...]}`, after the
 *   first one has defined the shape with `{"$k": [keys], "$i": n, "$o": [...]}`.
 * - Escapes. A user object written with its keys, whose keys are exactly those of a marker, is
 *   written as `{"$e": [[key, value], ...]}`.
 * Markers are read depth first in document order, the order they were written in.
 */

/** Strings shorter than this are always written in place (a reference costs about 10 bytes). */
const LONG = 25;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MARKERS = ["$r", "$e", "$s|$v", "$i|$k|$o", "$o|$t"];
const isMarkerShape = (keys: string[]) => keys.length <= 3 && MARKERS.includes([...keys].sort().join("|"));

/** Keys written for an object (JSON drops undefined values). */
const keysOf = (v: object) => Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);

export function stringifyShared(value: unknown): string {
  const count = new Map<object | string, number>();
  const shapeCount = new Map<string, number>();
  const visit = (v: unknown) => {
    if (typeof v === "string" && v.length >= LONG) count.set(v, (count.get(v) ?? 0) + 1);
    if (typeof v !== "object" || v === null) return;
    const c = count.get(v);
    count.set(v, (c ?? 0) + 1);
    if (c !== undefined) return;
    if (Array.isArray(v)) {
      for (const child of v) visit(child);
      return;
    }
    const keys = keysOf(v);
    if (keys.length > 1) {
      const shape = keys.join("\u0000");
      shapeCount.set(shape, (shapeCount.get(shape) ?? 0) + 1);
    }
    for (const k of keys) visit((v as Record<string, unknown>)[k]);
  };
  visit(value);

  const ids = new Map<object | string, number>();
  const shapes = new Map<string, number>();
  const out = (v: unknown): Json | undefined => {
    const long = typeof v === "string" && v.length >= LONG;
    if (!long && (typeof v !== "object" || v === null)) return v as Json | undefined;
    const id = ids.get(v as object | string);
    if (id !== undefined) return { $r: id };
    let body: Json;
    if (long) {
      body = v as string;
    } else if (Array.isArray(v)) {
      body = v.map((x) => out(x) ?? null);
    } else {
      const obj = v as Record<string, unknown>;
      const keys = keysOf(obj);
      const shape = keys.join("\u0000");
      if (keys.length > 1 && (shapeCount.get(shape) ?? 0) > 1) {
        let n = shapes.get(shape);
        const defining = n === undefined;
        if (defining) shapes.set(shape, (n = shapes.size));
        const values = keys.map((k) => out(obj[k]) as Json);
        body = defining ? { $k: keys, $i: n!, $o: values } : { $t: n!, $o: values };
      } else {
        const plain: Record<string, Json> = {};
        for (const k of keys) plain[k] = out(obj[k]) as Json;
        body = isMarkerShape(keys) ? { $e: Object.entries(plain) } : plain;
      }
    }
    if ((count.get(v as object | string) ?? 0) < 2) return body;
    const n = ids.size;
    ids.set(v as object | string, n);
    return { $s: n, $v: body };
  };
  return JSON.stringify(out(value));
}

/** Parses what `stringifyShared` wrote (or plain JSON); shared values come back as one object. */
export function parseShared<T = unknown>(text: string): T {
  const root: unknown = JSON.parse(text);
  if (!text.includes('"$')) return root as T;
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
