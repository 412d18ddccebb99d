/**
 * How the IndexedDB store keeps a list item (format 5): a message without the fields it holds at
 * their empty defaults. Core-safe: no Node built-ins.
 *
 * List items are mostly chat messages, and a message spells out fields that are usually empty
 * (`additional_kwargs: {}`, `response_metadata: {}`, `name: null`, `example: false`, and for AI
 * messages `tool_calls: []`, `invalid_tool_calls: []`, `usage_metadata: null`): about 130 of the
 * ~230 bytes of a short AI message. An item stored here leaves those out and names them in one
 * key, `"\u0000o"`, a string with one character per key of the item in its order: `.` for a key
 * the stored object holds (the next one, in order), a letter for a key left out at its default
 * (`DEFAULTS`). Reading puts every key back in its place, so the item reads back with the same
 * keys in the same order. The result is still plain JSON, e.g.
 * `{"content":"hi","type":"ai","id":"m1","\u0000o":".ar.n.etiu"}`.
 *
 * Any other value is stored as it is, except an object with a key that starts with `\u0000`
 * (which could be read as this encoding): it is stored as `{"\u0000e": object}`.
 */
import { isPlainObject } from "../../json.js";
import { setOwn } from "../item-refs.js";

/** The key naming the left-out fields. */
const OMITTED = "\u0000o";
/** The key of an escaped item. */
const ESCAPED = "\u0000e";

/** Letter -> [field, its default]. The letters are part of the stored format: never reuse one. */
const DEFAULTS: Record<string, readonly [string, "{}" | "[]" | "null" | "false"]> = {
  a: ["additional_kwargs", "{}"],
  r: ["response_metadata", "{}"],
  n: ["name", "null"],
  e: ["example", "false"],
  t: ["tool_calls", "[]"],
  i: ["invalid_tool_calls", "[]"],
  u: ["usage_metadata", "null"],
};
const LETTER = new Map(Object.entries(DEFAULTS).map(([letter, [field]]) => [field, letter]));

const isEmptyObject = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 0;
const isEmptyArray = (v: unknown) => Array.isArray(v) && v.length === 0;

function atDefault(v: unknown, kind: "{}" | "[]" | "null" | "false"): boolean {
  if (kind === "{}") return isEmptyObject(v);
  if (kind === "[]") return isEmptyArray(v);
  return kind === "null" ? v === null : v === false;
}

const fresh = (kind: "{}" | "[]" | "null" | "false"): unknown => (kind === "{}" ? {} : kind === "[]" ? [] : kind === "null" ? null : false);

/** An item as stored (see above); the item itself when nothing is left out or escaped. */
export function encodeItem(item: unknown): unknown {
  if (!isPlainObject(item)) return item;
  const keys = Object.keys(item);
  if (keys.some((k) => k.charCodeAt(0) === 0)) return { [ESCAPED]: item };
  let layout = "";
  let omitted = 0;
  for (const k of keys) {
    const letter = LETTER.get(k);
    if (letter !== undefined && atDefault(item[k], DEFAULTS[letter]![1])) {
      layout += letter;
      omitted++;
    } else layout += ".";
  }
  if (omitted === 0) return item;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (!(LETTER.has(k) && atDefault(item[k], DEFAULTS[LETTER.get(k)!]![1]))) setOwn(out, k, item[k]);
  out[OMITTED] = layout;
  return out;
}

/** The item an `encodeItem` result stands for (a value stored before format 5 reads as it is). */
export function decodeItem(stored: unknown): unknown {
  if (!isPlainObject(stored)) return stored;
  if (Object.hasOwn(stored, ESCAPED) && Object.keys(stored).length === 1) return stored[ESCAPED];
  const layout = stored[OMITTED];
  if (typeof layout !== "string") return stored;
  const kept = Object.keys(stored).filter((k) => k !== OMITTED);
  const out: Record<string, unknown> = {};
  let next = 0;
  for (const c of layout) {
    if (c === ".") {
      const k = kept[next++];
      if (k === undefined) throw new Error(`graphdock indexeddb: list item ${JSON.stringify(stored)} names more keys than it holds (corrupt store)`);
      setOwn(out, k, stored[k]);
      continue;
    }
    const d = DEFAULTS[c];
    if (!d) throw new Error(`graphdock indexeddb: list item ${JSON.stringify(stored)} leaves out an unknown field "${c}" (corrupt store)`);
    setOwn(out, d[0], fresh(d[1]));
  }
  if (next !== kept.length) throw new Error(`graphdock indexeddb: list item ${JSON.stringify(stored)} holds keys its layout does not name (corrupt store)`);
  return out;
}
