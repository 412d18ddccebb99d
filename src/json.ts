/** Small JSON helpers shared by the stores, the runtime and auth. */
import { invalidInput } from "./errors.js";

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * JSON containment, as Postgres `@>`: every key of `filter` is present in `target`
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
 * How deeply arrays and objects may nest in a stored value (a container at the top counts as
 * level 1). Stores reject deeper values with `invalid_input`, so that every later reader, writer
 * and serializer of the data stays far from the stack limit. (Request bodies are capped lower, D25.)
 */
export const MAX_DEPTH = 512;

type PathKey = string | number;

/** A problem found by `walkJson`; the levels it unwinds through add their keys (innermost first). */
class JsonProblem {
  readonly keys: PathKey[] = [];
  readonly containers: unknown[] = [];
  constructor(
    readonly message: string,
    /** Found at the depth limit (a cycle or too deep). */
    readonly deep = false,
  ) {}
}

function describe(v: unknown): string {
  return typeof v === "number" ? `is ${v}, which JSON cannot hold` : `is ${typeof v === "undefined" ? "undefined" : `a ${typeof v}`}, which JSON cannot hold`;
}

function walkJson(v: unknown, at: number, max: number): void {
  switch (typeof v) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v)) throw new JsonProblem(describe(v));
      return;
    case "object":
      if (v === null) return;
      break;
    default:
      throw new JsonProblem(describe(v));
  }
  if (at >= max) {
    const p = new JsonProblem("", true);
    p.containers.push(v);
    throw p;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === "string" || typeof x === "boolean" || x === null || (typeof x === "number" && Number.isFinite(x))) continue;
      try {
        walkJson(x, at + 1, max);
      } catch (err) {
        if (err instanceof JsonProblem) {
          err.keys.push(i);
          err.containers.push(v);
        }
        throw err;
      }
    }
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    const name = (v as { constructor?: { name?: string } }).constructor?.name;
    throw new JsonProblem(`is ${name ? `a ${name}` : "an object with a prototype"}, not a plain object`);
  }
  for (const key in v as Record<string, unknown>) {
    const x = (v as Record<string, unknown>)[key];
    if (x === undefined || typeof x === "string" || typeof x === "boolean" || x === null || (typeof x === "number" && Number.isFinite(x))) continue;
    try {
      walkJson(x, at + 1, max);
    } catch (err) {
      if (err instanceof JsonProblem) {
        err.keys.push(key);
        err.containers.push(v);
      }
      throw err;
    }
  }
}

/**
 * Throws `invalid_input` naming the path (`where` then `.key` / `[i]`) of the first part of
 * `value` that is not storable JSON: anything but plain objects, arrays, strings, finite numbers,
 * booleans and null; an `undefined` array item or top-level value (an `undefined` property is
 * fine: JSON leaves it out); a cycle; nesting deeper than `maxDepth` levels. Walks the whole
 * value: callers that store data sharing parts with data they checked before (a checkpoint's
 * unchanged channels, the items a list shares with its parent's) check only the new parts,
 * passing the depth those parts sit at as `depth` (the root of `value` is at `depth`), and the
 * key of `value` in its container as `key` (added to `where` only in the error message).
 */
export function checkJson(value: unknown, where: string, depth = 0, maxDepth: number = MAX_DEPTH, key?: PathKey): void {
  try {
    walkJson(value, depth, maxDepth);
  } catch (err) {
    if (!(err instanceof JsonProblem)) throw err;
    if (key !== undefined) err.keys.push(key);
    let path = where;
    for (let i = err.keys.length - 1; i >= 0; i--) {
      const k = err.keys[i]!;
      path += typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    }
    let message = err.message;
    if (err.deep) {
      const cyclic = new Set(err.containers).size < err.containers.length;
      message = cyclic ? "refers back to itself (a cycle)" : `nests deeper than ${maxDepth} levels`;
    }
    throw invalidInput(`${path} ${message}`, [{ path, message }]);
  }
}

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
