/**
 * JSON text that keeps shared references, as structured clone does. A run step puts the same
 * message object in a task's pending writes, in the checkpoint's `metadata.writes` and in the
 * thread's message list; plain JSON would store it three times. Here an object or array reached
 * more than once is written once as `{"$s": n, "$v": ...}` and then as `{"$r": n}`. A user object
 * whose keys are exactly those of a marker is escaped as `{"$e": [[key, value], ...]}`.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isMarkerShape = (keys: string[]) =>
  (keys.length === 1 && (keys[0] === "$r" || keys[0] === "$e")) ||
  (keys.length === 2 && keys.includes("$s") && keys.includes("$v"));

export function stringifyShared(value: unknown): string {
  const count = new Map<object, number>();
  const visit = (v: unknown) => {
    if (typeof v !== "object" || v === null) return;
    const c = count.get(v);
    count.set(v, (c ?? 0) + 1);
    if (c !== undefined) return;
    for (const child of Array.isArray(v) ? v : Object.values(v)) visit(child);
  };
  visit(value);

  const ids = new Map<object, number>();
  const out = (v: unknown): Json | undefined => {
    if (typeof v !== "object" || v === null) return v as Json | undefined;
    const id = ids.get(v);
    if (id !== undefined) return { $r: id };
    let body: Json;
    if (Array.isArray(v)) {
      body = v.map((x) => out(x) ?? null);
    } else {
      const obj: Record<string, Json> = {};
      for (const [k, x] of Object.entries(v)) {
        const enc = out(x);
        if (enc !== undefined) obj[k] = enc;
      }
      body = isMarkerShape(Object.keys(obj)) ? { $e: Object.entries(obj) } : obj;
    }
    if ((count.get(v) ?? 0) < 2) return body;
    const n = ids.size;
    ids.set(v, n);
    return { $s: n, $v: body };
  };
  return JSON.stringify(out(value));
}

/**
 * Parses what `stringifyShared` wrote; shared values come back as one object. JSON.parse revives
 * depth first in document order, so a `$s` is always revived before any `$r` to it.
 */
export function parseShared<T = unknown>(text: string): T {
  const shared: unknown[] = [];
  return JSON.parse(text, (_key, v: unknown) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
    const keys = Object.keys(v);
    if (!isMarkerShape(keys)) return v;
    const m = v as { $r?: number; $e?: Array<[string, unknown]>; $s?: number; $v?: unknown };
    if (keys[0] === "$r" && keys.length === 1) return shared[m.$r!];
    if (keys[0] === "$e" && keys.length === 1) return Object.fromEntries(m.$e!);
    shared[m.$s!] = m.$v;
    return m.$v;
  }) as T;
}
