/**
 * Channel versions stored relative to the step (schema 6, the checkpoints' `vrel` column).
 *
 * A checkpoint row stores its record as the leaves that differ from a base record (./meta.ts,
 * `diffLeaves`). Channel versions count up by one with every step that writes the channel, so
 * `channel_versions` and `versions_seen` differed from the base in nearly every leaf of every
 * row: about 85 bytes a row of a chat, a fifth of it. Less the step they were made at
 * (`metadata.step`), the versions of two checkpoints of the same shape (an input step's, the
 * step after it, ...) are the same numbers, and the row stores no leaf of them at all.
 *
 * Only when it reads back exactly: the metadata's `step` is a safe integer and so is every number
 * in the two maps, and every difference (versions of other kinds, strings as the LangGraph
 * checkpointers write them, stay as they are: only numbers move). Otherwise the row stores its
 * versions as they are (`vrel` false).
 */
import { isPlainObject } from "../json.js";
import { setOwn } from "../persistence/item-refs.js";

const MAPS = ["channel_versions", "versions_seen"] as const;

/** Every number leaf of `v` moved by `by`, or undefined when one would not read back exactly. */
function shift(v: unknown, by: number): unknown {
  if (typeof v === "number") {
    const out = v + by;
    return Number.isSafeInteger(v) && Number.isSafeInteger(out) ? out : undefined;
  }
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const y = shift(x, by);
    if (y === undefined && x !== undefined) return undefined;
    setOwn(out, k, y);
  }
  return out;
}

/** The step a row's versions are relative to: its metadata's `step`, when a safe integer. */
export function stepOf(metadata: unknown): number | undefined {
  const step = isPlainObject(metadata) ? metadata.step : undefined;
  return typeof step === "number" && Number.isSafeInteger(step) ? step : undefined;
}

/** The record with its versions less `step`; undefined when they would not read back exactly. */
export function relativeVersions(record: Record<string, unknown>, step: number | undefined): Record<string, unknown> | undefined {
  if (step === undefined) return undefined;
  const out: Record<string, unknown> = { ...record };
  for (const key of MAPS) {
    if (!Object.hasOwn(record, key)) continue;
    const moved = shift(record[key], -step);
    // Back again, exactly (a number whose difference is safe but its sum is not cannot occur; checked anyway).
    if (moved === undefined || shift(moved, step) === undefined) return undefined;
    out[key] = moved;
  }
  return out;
}

/** The record as put, from its stored form (see {@link relativeVersions}). */
export function absoluteVersions(record: Record<string, unknown>, step: number | undefined): Record<string, unknown> {
  if (step === undefined) throw new Error("graphdock/postgres: a checkpoint's versions are stored relative to its step, but its metadata has no step (corrupt store)");
  const out: Record<string, unknown> = { ...record };
  for (const key of MAPS) if (Object.hasOwn(record, key)) out[key] = shift(record[key], step);
  return out;
}
