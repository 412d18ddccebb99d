/**
 * How the IndexedDB store keeps a run row (format 5): the fields of `RunRow` (./migrate.ts) under
 * one-letter names, so the names every run repeats take 8 bytes instead of 40. The one place that
 * knows the stored names: the store reads and writes `RunRow` and converts at the object store
 * (`packRun`, `unpackRun`); the `runs` object store's key path and indexes (`RUN_KEY`,
 * `RUN_INDEXES`) name the same fields. Core-safe: no Node built-ins.
 *
 * | stored | field        |
 * | ------ | ------------ |
 * | `i`    | `run_id` (key) |
 * | `t`    | `thread_id`  |
 * | `a`    | `assistant_id`, where a row keeps it (format 4 rows did; format 5 keeps it in `r`) |
 * | `s`    | `status`     |
 * | `c`    | `created_at` |
 * | `q`    | queue position |
 * | `b`    | base id      |
 * | `r`    | the rest, or its diff against the base |
 */
import type { RunRecord } from "../../types.js";
import type { RunRow } from "./migrate.js";

/** A run row as stored (format 5). */
export interface StoredRunRow {
  i: string;
  t: string;
  a?: string;
  s: RunRecord["status"];
  c: string;
  q: number;
  b?: number;
  r: Record<string, unknown>;
}

/** The `runs` object store's key path. */
export const RUN_KEY = "i";
/** The `runs` indexes' key paths: a thread's runs, the queue, runs by status, a thread's runs by status (each in queue order). */
export const RUN_INDEXES = {
  by_thread: ["t", "q"],
  by_q: "q",
  by_status: ["s", "q"],
  by_thread_status: ["t", "s", "q"],
} as const;

export function packRun(row: RunRow): StoredRunRow {
  const out: StoredRunRow = { i: row.run_id, t: row.thread_id, s: row.status, c: row.created_at, q: row.q, r: row.r };
  if (row.assistant_id !== undefined) out.a = row.assistant_id;
  if (row.b !== undefined) out.b = row.b;
  return out;
}

export function unpackRun(stored: StoredRunRow): RunRow;
export function unpackRun(stored: StoredRunRow | undefined): RunRow | undefined;
export function unpackRun(stored: StoredRunRow | undefined): RunRow | undefined {
  if (!stored) return undefined;
  const row: RunRow = { run_id: stored.i, thread_id: stored.t, status: stored.s, created_at: stored.c, q: stored.q, r: stored.r };
  if (stored.a !== undefined) row.assistant_id = stored.a;
  if (stored.b !== undefined) row.b = stored.b;
  return row;
}
