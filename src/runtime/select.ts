/**
 * `select` (D28): exactly the fields asked for, on `threads.search`, `threads.getState` and
 * `threads.getHistory`, with the SDK's field names. A state field `values.<key>` keeps one state
 * key (`values` then holds only the selected keys). A name outside the lists is `invalid_input`.
 */
import { invalidInput } from "../errors.js";
import type { ThreadState } from "./types.js";

/** Fields `threads.search` can select (the SDK's `ThreadSelectField`, plus `error`). */
export const THREAD_SELECT_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "state_updated_at",
  "metadata",
  "config",
  "context",
  "status",
  "values",
  "interrupts",
  "error",
] as const;

/** Fields `getState` / `getHistory` can select (the SDK's `ThreadStateSelectField`, plus the id fields). */
export const STATE_SELECT_FIELDS = [
  "values",
  "next",
  "tasks",
  "checkpoint",
  "metadata",
  "created_at",
  "parent_checkpoint",
  "interrupts",
  "checkpoint_id",
  "parent_checkpoint_id",
] as const;

/** Refuses names outside `allowed` (state selects also take `values.<key>`). */
export function checkSelect(select: readonly string[] | undefined, allowed: readonly string[], what: string, stateKeys = false): void {
  if (!select) return;
  const bad = select.filter((f) => !allowed.includes(f) && !(stateKeys && f.startsWith("values.") && f.length > 7));
  if (bad.length) {
    throw invalidInput(
      `graphdock: invalid input to ${what}: select names unknown fields ${bad.map((f) => `"${f}"`).join(", ")}; choose from ${allowed.join(", ")}${stateKeys ? ", values.<key>" : ""}`,
      bad.map((f) => ({ path: "select", message: `unknown field "${f}"` })),
    );
  }
}

/**
 * The fields of `record` that `select` names, as a partial record (the methods' signatures type
 * the result by the names written in the call).
 */
export function selectFields<T extends object>(record: T, select: readonly string[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key in record) if (select.includes(key)) out[key] = record[key];
  return out;
}

/** A state snapshot with only the selected fields; `values.<key>` selects single state keys. */
export function selectState(state: ThreadState, select: readonly string[]): Partial<ThreadState> {
  const out = selectFields(state, select);
  const keys = select.filter((f) => f.startsWith("values.")).map((f) => f.slice(7));
  if (keys.length && !select.includes("values")) {
    const values: Record<string, unknown> = {};
    for (const key of keys) if (key in state.values) values[key] = state.values[key];
    out.values = values;
  }
  return out;
}
