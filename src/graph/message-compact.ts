/**
 * Messages as the engine records them, compact (heap per chat turn). A message is
 * kept by every checkpoint (and the thread) that holds it for the life of the thread, so what
 * it costs beyond its JSON matters. Most messages have empty `additional_kwargs` and
 * `response_metadata`, and most AI messages empty `tool_calls` and `invalid_tool_calls`: four
 * objects of 32-56 bytes each per message. The engine freezes every message it records in a
 * state (deeply), so a recorded message's empty fields can be one shared frozen `{}` / `[]`
 * instead: the same JSON, and no message can change another's.
 *
 * Only the engine's recording path does this (`addMessages.prepare`); `coerceMessage`,
 * `prepareMessages` and `addMessages` called by user code still hand out messages with fields of
 * their own.
 */
import type { Message } from "./messages.js";

const EMPTY_OBJECT: Readonly<Record<string, never>> = Object.freeze({});
const EMPTY_ARRAY: readonly never[] = Object.freeze([]);

const OBJECT_FIELDS = ["additional_kwargs", "response_metadata"] as const;
const ARRAY_FIELDS = ["tool_calls", "invalid_tool_calls"] as const;

/** A plain object without own keys (not an array, not a class instance). */
function isEmptyPlainObject(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const _ in v) return false;
  return Object.getOwnPropertySymbols(v).length === 0 && Object.getOwnPropertyNames(v).length === 0;
}

/** A plain array without items or extra properties. */
const isEmptyArray = (v: unknown): boolean => Array.isArray(v) && v.length === 0 && Object.getPrototypeOf(v) === Array.prototype && Object.keys(v).length === 0;

/**
 * `messages` compacted for the engine to record (see above), in place: the messages are about
 * to be frozen into a state by the engine. A message already frozen keeps its fields (it is a
 * stored message, or the caller's own frozen object).
 */
export function compactMessages(messages: Message[]): Message[] {
  for (const m of messages) {
    if (Object.isFrozen(m)) continue;
    const rec = m as unknown as Record<string, unknown>;
    for (const key of OBJECT_FIELDS) {
      const v = rec[key];
      if (v !== EMPTY_OBJECT && isEmptyPlainObject(v)) rec[key] = EMPTY_OBJECT;
    }
    for (const key of ARRAY_FIELDS) {
      const v = rec[key];
      if (v !== EMPTY_ARRAY && isEmptyArray(v)) rec[key] = EMPTY_ARRAY;
    }
  }
  return messages;
}
