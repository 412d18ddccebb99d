/**
 * Checkpoint metadata bases for the PostgreSQL store (schema 2). Consecutive checkpoints of a
 * thread repeat most of their metadata (run id, graph, assistant, thread, user metadata of the
 * run); only the step, source and writes change. A row stores the top-level keys that differ
 * from a base record (`cp_meta`, immutable, one per thread most of the time) and the base's id;
 * a key of the base the row lacks is stored as {@link GONE}. Every value is compared in shared
 * form (./share.ts), so a marker-like user object never equals GONE (it is escaped).
 *
 * Containment queries stay in SQL: the row's metadata is `base || own` (jsonb, top level).
 */
import { isPlainObject, jsonEqual } from "../json.js";

/** A base key the row does not have. */
export const GONE = { "\u0001g": 1 } as const;

/**
 * Keys that change from one checkpoint to the next: never put in a base. (Schema 6: `source` is
 * in a base, which checkpoints of its shape share; written before, it was in no base.)
 */
const VOLATILE = new Set(["step", "writes"]);

/** More keys than this differing from the base: the row starts a new base. */
const MAX_OWN_KEYS = 3;

const isGone = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 1 && Object.hasOwn(v, "\u0001g");

/** What a row stores against `base`; `undefined` when it should start a base of its own. */
export function factor(metadata: Record<string, unknown>, base: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!base) return undefined;
  const own: Record<string, unknown> = {};
  let differing = 0;
  for (const [k, v] of Object.entries(metadata)) {
    if (v === undefined) continue;
    if (Object.hasOwn(base, k) && jsonEqual(base[k], v)) continue;
    own[k] = v;
    if (!VOLATILE.has(k)) differing++;
  }
  for (const k of Object.keys(base)) {
    if (Object.hasOwn(metadata, k) && metadata[k] !== undefined) continue;
    own[k] = GONE;
    differing++;
  }
  return differing > MAX_OWN_KEYS ? undefined : own;
}

/** The base a row starts: its metadata without the keys that change every step. */
export function baseOf(metadata: Record<string, unknown>): Record<string, unknown> {
  const base: Record<string, unknown> = {};
  // Schema 6: `writes: null` (a step that ran no task's writes yet) too, which rows of its kind then share.
  for (const [k, v] of Object.entries(metadata)) if ((!VOLATILE.has(k) || (k === "writes" && v === null)) && v !== undefined) base[k] = v;
  return base;
}

/** The row's metadata (still in shared form) from its base and what it stores. */
export function unfactor(base: Record<string, unknown> | null | undefined, own: Record<string, unknown>): Record<string, unknown> {
  if (!base) return own;
  const out: Record<string, unknown> = {};
  const set = (k: string, value: unknown) => Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
  for (const [k, v] of Object.entries(base)) if (!Object.hasOwn(own, k)) set(k, v);
  for (const [k, v] of Object.entries(own)) if (!isGone(v)) set(k, v);
  return out;
}

/**
 * Whether a row's own metadata (against its base) holds keys other than those that change every
 * step and the run id (stored apart, ./cp-run-id.ts): rows of another kind than the base's.
 */
export function lastingDiffers(own: Record<string, unknown>): boolean {
  return Object.keys(own).some((k) => !VOLATILE.has(k) && k !== "run_id");
}
