/** Small JSON helpers shared by the stores, the runtime and auth. */
import { invalidInput } from "./errors.js";

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
 * How deeply arrays and objects may nest in a stored value (a container at the top counts as
 * level 1). Stores reject deeper values with `invalid_input`, so that every later reader, writer
 * and serializer of the data stays far from the stack limit. (Request bodies are capped lower, D25.)
 */
export const MAX_DEPTH = 512;

/**
 * Frozen containers already found to hold only JSON, with their height (1 for a container of
 * primitives). Only containers whose whole tree is frozen are remembered, since they cannot
 * change; a value that shares them with data stored earlier (a checkpoint's unchanged channels,
 * the messages a new list shares with the last one) is checked in time proportional to what is new.
 */
const knownJson = new WeakMap<object, number>();

type PathKey = string | number;

/**
 * Throws `invalid_input` naming the path (`where` then `.key` / `[i]`) of the first part of
 * `value` that is not storable JSON: anything but plain objects, arrays, strings, finite numbers,
 * booleans and null; an `undefined` array item or top-level value (an `undefined` property is
 * fine: JSON leaves it out); a cycle; nesting deeper than `maxDepth`.
 */
export function checkJson(value: unknown, where: string, maxDepth: number = MAX_DEPTH): void {
  const keys: PathKey[] = [];
  const stack: object[] = [];

  const fail = (depth: number, message: string): never => {
    let path = where;
    for (let i = 0; i < depth; i++) {
      const k = keys[i]!;
      path += typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    }
    throw invalidInput(`${path} ${message}`, [{ path, message }]);
  };

  // Returns the value's height * 2, plus 1 when its whole tree is frozen.
  const walk = (v: unknown, depth: number): number => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return 1;
      case "number":
        return Number.isFinite(v) ? 1 : fail(depth, `is ${v}, which JSON cannot hold`);
      case "object":
        if (v === null) return 1;
        break;
      case "undefined":
        return fail(depth, "is undefined, which JSON cannot hold");
      default:
        return fail(depth, `is a ${typeof v}, which JSON cannot hold`);
    }
    const obj = v as object;
    const known = knownJson.get(obj);
    if (known !== undefined) {
      if (depth + known > maxDepth) fail(depth, `nests deeper than ${maxDepth} levels`);
      return known * 2 + 1;
    }
    if (depth >= maxDepth) {
      const cyclic = new Set(stack.slice(0, depth)).size < depth || stack.slice(0, depth).includes(obj);
      fail(depth, cyclic ? "refers back to itself (a cycle)" : `nests deeper than ${maxDepth} levels`);
    }
    stack[depth] = obj;
    let height = 0;
    let frozen = Object.isFrozen(obj);
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        keys[depth] = i;
        const r = walk(obj[i], depth + 1);
        if ((r & 1) === 0) frozen = false;
        if (r >> 1 > height) height = r >> 1;
      }
    } else {
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) {
        const name = (obj as { constructor?: { name?: string } }).constructor?.name;
        fail(depth, `is ${name ? `a ${name}` : "an object with a prototype"}, not a plain object`);
      }
      for (const key of Object.keys(obj)) {
        const x = (obj as Record<string, unknown>)[key];
        if (x === undefined) continue;
        keys[depth] = key;
        const r = walk(x, depth + 1);
        if ((r & 1) === 0) frozen = false;
        if (r >> 1 > height) height = r >> 1;
      }
    }
    height += 1;
    if (frozen) knownJson.set(obj, height);
    return height * 2 + (frozen ? 1 : 0);
  };

  walk(value, 0);
}
