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
