/** Record helpers of the memory store (./data.ts): checks, frozen copies, undoable map writes. */
import { invalidInput } from "../../errors.js";
import { MAX_DEPTH, checkJson } from "../../json.js";

/**
 * Checks that the fields of `record` are JSON, skipping those identical to the stored record's
 * (`prev`): they were checked when it was stored.
 */
export function checkRecord(record: unknown, prev: object | undefined, where: string, skip?: (key: string, value: unknown) => boolean): void {
  const proto = typeof record === "object" && record !== null ? Object.getPrototypeOf(record) : undefined;
  if (Array.isArray(record) || (proto !== Object.prototype && proto !== null)) {
    checkJson(record, where);
    throw invalidInput(`${where} must be a plain object`);
  }
  const before = prev as Record<string, unknown> | undefined;
  for (const key in record as Record<string, unknown>) {
    const v = (record as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "string" || (before !== undefined && before[key] === v) || skip?.(key, v)) continue;
    checkJson(v, where, 1, MAX_DEPTH, key);
  }
}

/**
 * A frozen shallow copy of `record` (with `changes` over it). Assigned onto a fresh object: a
 * frozen spread copy gets a hidden class of its own, which every stored record would keep
 * (about 1 KB each); assigned copies share theirs.
 */
export function frozenCopy<T extends object>(record: T, changes?: Partial<T>): T {
  return Object.freeze(changes ? Object.assign({}, record, changes) : Object.assign({}, record));
}

/** Sets (or with `undefined` deletes) `key` of `map`, pushing the undo of that change. */
export function setIn<K, V>(map: Map<K, V>, key: K, value: V | undefined, undo: Array<() => void>): void {
  const prev = map.get(key);
  const had = prev !== undefined || map.has(key);
  if (value === undefined) {
    if (!had) return;
    map.delete(key);
  } else map.set(key, value);
  undo.push(() => (had ? map.set(key, prev as V) : map.delete(key)));
}

export function* mapIter<T, U>(items: Iterable<T>, f: (t: T) => U): Iterable<U> {
  for (const t of items) yield f(t);
}
