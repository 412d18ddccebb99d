/**
 * The stored form of a run (schema 5): the row's columns (run_id, thread_id, assistant_id,
 * created_at, status, updated_at) are not repeated in its document, and its `kwargs` are stored
 * as the keys that differ from {@link KWARGS_DEFAULTS} under the key `kw` (in the place of
 * `kwargs`). Most runs are created with most options at their defaults, so a run document is a
 * few dozen bytes plus its input.
 *
 * - A default the run's kwargs lack is stored as {@link GONE}; a value that looks like a marker (a
 *   one-key object whose key starts with `\u0001`) is escaped as `{"\u0001e": value}`.
 * - Reading puts `kwargs` back in the defaults' key order, then the keys they do not have: the
 *   order the runtime writes them in (src/runtime/admission.ts), so a record reads back as it was
 *   written, key order included.
 * - `metadata` ({}) and `multitask_strategy` ("reject") are left out at their defaults when
 *   they sit right before and right after the kwargs, as the runtime writes them.
 * - A document written before schema 5 (with `kwargs` and the columns' fields) reads as it is.
 * - `execution` stays as it is: `claim_run` reads it in SQL.
 */
import { isPlainObject } from "../json.js";
import { setOwn } from "../persistence/item-refs.js";
import type { RunRecord } from "../types.js";

/**
 * The kwargs of a run created with no options, in the runtime's key order. Fixed for schema 5:
 * stored rows are relative to it, so it never changes (another set of defaults would be a new key).
 */
const KWARGS_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({
  input: null,
  command: null,
  config: { configurable: {} },
  context: {},
  stream_mode: ["values"],
  interrupt_before: null,
  interrupt_after: null,
  checkpoint_id: null,
  webhook: null,
  feedback_keys: null,
  subgraphs: false,
  resumable: false,
  on_disconnect: "continue",
  after_seconds: 0,
  temporary: false,
});

const GONE = { "\u0001g": 1 };
const ESC = "\u0001e";

const isMarker = (v: unknown): v is Record<string, unknown> => {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0]!.charCodeAt(0) === 1;
};

/** Deep equality of JSON values, key order included (a default matches only as it would read back). */
const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** The columns of a run row; the document holds the rest. */
const COLUMNS = new Set(["run_id", "thread_id", "assistant_id", "created_at", "status", "updated_at"]);

/** What a run's `doc` column stores. */
export function runDoc(run: RunRecord): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  const compact = isPlainObject(run.kwargs) && !Object.hasOwn(run, "kw");
  const keys = Object.keys(run).filter((k) => !COLUMNS.has(k) && (run as unknown as Record<string, unknown>)[k] !== undefined);
  const at = keys.indexOf("kwargs");
  for (const [i, k] of keys.entries()) {
    const v = (run as unknown as Record<string, unknown>)[k];
    if (k === "kwargs" && compact) setOwn(doc, "kw", ownKwargs(v as Record<string, unknown>));
    // Left out at its default in its place next to the kwargs: read back there (`runFromRow`).
    else if (compact && Object.hasOwn(BESIDE_KWARGS, k) && i - at === BESIDE_KWARGS[k]!.offset && same(BESIDE_KWARGS[k]!.value, v)) continue;
    else setOwn(doc, k, v);
  }
  // A compact document lacking one of them stands for its default: one the run lacks is marked gone.
  if (compact) for (const k of Object.keys(BESIDE_KWARGS)) if (!keys.includes(k)) setOwn(doc, k, GONE);
  return doc;
}

/**
 * Run fields a compact document (one with `kw`) leaves out at their defaults when they sit where
 * the runtime writes them: `metadata` right before the kwargs, `multitask_strategy` right after.
 * Fixed for schema 5, like {@link KWARGS_DEFAULTS}.
 */
const BESIDE_KWARGS: Readonly<Record<string, { offset: number; value: unknown }>> = Object.freeze({
  metadata: { offset: -1, value: {} },
  multitask_strategy: { offset: 1, value: "reject" },
});

function ownKwargs(kwargs: Record<string, unknown>): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(kwargs)) {
    if (v === undefined) continue;
    if (Object.hasOwn(KWARGS_DEFAULTS, k) && same(KWARGS_DEFAULTS[k], v)) continue;
    setOwn(own, k, isMarker(v) ? { [ESC]: v } : v);
  }
  for (const k of Object.keys(KWARGS_DEFAULTS)) if (!Object.hasOwn(kwargs, k) || kwargs[k] === undefined) setOwn(own, k, GONE);
  return own;
}

function fullKwargs(own: Record<string, unknown>): Record<string, unknown> {
  const kwargs: Record<string, unknown> = {};
  const value = (v: unknown) => (isMarker(v) && Object.hasOwn(v, ESC) ? v[ESC] : v);
  for (const [k, d] of Object.entries(KWARGS_DEFAULTS)) {
    if (!Object.hasOwn(own, k)) setOwn(kwargs, k, structuredClone(d));
    else if (!(isMarker(own[k]) && Object.hasOwn(own[k] as object, "\u0001g"))) setOwn(kwargs, k, value(own[k]));
  }
  for (const [k, v] of Object.entries(own)) if (!Object.hasOwn(KWARGS_DEFAULTS, k)) setOwn(kwargs, k, value(v));
  return kwargs;
}

/**
 * A run from its row: the columns, then the document's fields (a document written before schema
 * 5 repeats the columns' fields: the columns win, a claim sets `status` and `updated_at` on the
 * row only).
 */
export function runFromRow(row: Record<string, unknown>): RunRecord {
  const doc = row.doc as Record<string, unknown>;
  const run: Record<string, unknown> = {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    created_at: row.created_at,
    updated_at: doc.updated_at,
    status: row.status,
  };
  const gone = (v: unknown) => isMarker(v) && Object.hasOwn(v, "\u0001g");
  const compact = isPlainObject(doc.kw);
  for (const [k, v] of Object.entries(doc)) {
    if (k === "kw" && compact) {
      if (!Object.hasOwn(doc, "metadata")) setOwn(run, "metadata", structuredClone(BESIDE_KWARGS.metadata!.value));
      setOwn(run, "kwargs", fullKwargs(v as Record<string, unknown>));
      if (!Object.hasOwn(doc, "multitask_strategy")) setOwn(run, "multitask_strategy", BESIDE_KWARGS.multitask_strategy!.value);
    } else if (!(compact && Object.hasOwn(BESIDE_KWARGS, k) && gone(v))) setOwn(run, k, v);
  }
  run.status = row.status;
  if (row.updated_at !== null && row.updated_at !== undefined) run.updated_at = row.updated_at;
  return run as Partial<RunRecord> as RunRecord;
}
