/** Small JSON helpers shared by the stores, the runtime and auth. */

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * JSON containment, as Postgres `@>` (api.md 8): every key of `filter` is present in `target`
 * and contains the filter's value; objects compare recursively as subsets; an array contains
 * another when every element of the latter is contained in some element of the former; other
 * values compare with `===`.
 */
export function contains(target: unknown, filter: unknown): boolean {
  if (filter === target) return true;
  if (isPlainObject(filter)) {
    if (!isPlainObject(target)) return false;
    for (const key of Object.keys(filter)) {
      if (!(key in target)) return false;
      if (!contains(target[key], filter[key])) return false;
    }
    return true;
  }
  if (Array.isArray(filter)) {
    if (!Array.isArray(target)) return false;
    return filter.every((f) => target.some((t) => contains(t, f)));
  }
  return false;
}

/** Deep structural equality for JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

export { isPlainObject };

/**
 * The default cap on JSON nesting (D25): objects and arrays nested deeper than this are refused
 * (`invalid_input`, 422 over HTTP). Deep enough for any real payload, shallow enough that the
 * recursive code behind the stores, filters and serializers never runs out of stack.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Nesting depth of a value: 0 for a scalar, 1 for `{}` or `[]`, one more per level of objects or
 * arrays inside. Iterative (no recursion, so a 100,000-level value cannot overflow the stack),
 * and stops as soon as the depth exceeds `limit`, returning `limit + 1`: the cost is bounded by
 * the size of the value, and a cyclic value reads as "too deep" instead of looping. Functions and
 * other non-plain leaves count as scalars; only own enumerable properties are followed.
 */
export function jsonDepth(value: unknown, limit = Infinity): number {
  if (typeof value !== "object" || value === null) return 0;
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > max) {
      max = depth;
      if (max > limit) return limit + 1;
    }
    const children = Array.isArray(v) ? v : Object.values(v as object);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return max;
}

/**
 * Nesting depth of JSON *text*, by a linear scan of the brackets outside strings, without parsing
 * it: the check that lets a server refuse a 5,000-level body before `JSON.parse` builds it. Stops
 * at the first bracket past `limit` (returning `limit + 1`). Malformed text is measured as far as
 * it goes; `JSON.parse` reports it afterwards.
 */
export function jsonTextDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/** True when `value` nests no deeper than `limit` (default {@link MAX_JSON_DEPTH}). */
export const withinDepth = (value: unknown, limit = MAX_JSON_DEPTH): boolean => jsonDepth(value, limit) <= limit;
