/**
 * `select` (D28): exactly the fields asked for, on `threads.search`, `threads.getState` and
 * `threads.getHistory`, with the SDK's field names. A state field `values.<key>` keeps one state
 * key (`values` then holds only the selected keys). A name outside the lists is `invalid_input`
 * (the option schemas of src/runtime/schemas.ts take only these names).
 */
import type { ThreadState } from "./types.js";

/** Fields `assistants.search` can select (the SDK's). */
export const ASSISTANT_SELECT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
] as const;

/** Fields `runs.list` can select (the SDK's). */
export const RUN_SELECT_FIELDS = [
  "run_id",
  "thread_id",
  "assistant_id",
  "created_at",
  "updated_at",
  "status",
  "metadata",
  "kwargs",
  "multitask_strategy",
  "cancel_reason",
] as const;

/** Fields `crons.search` can select (the SDK's; `now` selects nothing). */
export const CRON_SELECT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "on_run_completed",
  "end_time",
  "schedule",
  "timezone",
  "created_at",
  "updated_at",
  "payload",
  "user_id",
  "next_run_date",
  "metadata",
  "enabled",
  "now",
] as const;

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
