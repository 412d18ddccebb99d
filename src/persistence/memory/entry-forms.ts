/**
 * Compact forms of a stored checkpoint's metadata and pending writes in the memory store
 * (./checkpoints.ts), for heap per chat turn (issue 11). Each is turned back into the JSON it
 * was given on read: the same keys in the same order, the same values (by reference), frozen.
 *
 * - Metadata: the checkpoints of a thread have the same metadata but for `source`, `step`,
 *   `writes` and `run_id` (the engine builds each from its run's). A checkpoint whose metadata
 *   has the keys, in the same order, and the other values (the same, objects by reference) of an
 *   earlier checkpoint's keeps that checkpoint's metadata as its base and its own values only
 *   (`source` and `step` in one number): an object of ten keys (104 bytes) saved on every
 *   checkpoint of a thread but its first (and the first after a change of graph, assistant or
 *   run metadata).
 * - Pending writes: kept as one flat array `[task, channel, value, task, channel, value, ...]`
 *   instead of an array of three-item arrays: 72 bytes saved per write; a task id (a UUID of 56
 *   bytes) in 8 code units (32 bytes), one string for the writes of a task.
 */
import type { CheckpointMetadata, PendingWrite } from "../types.js";

/** The keys a checkpoint's metadata keeps of its own when it has a base. */
const OWN_KEYS: ReadonlySet<string> = new Set(["source", "step", "writes", "run_id"]);

/** The engine's sources of a checkpoint (`CheckpointMetadata["source"]`), by their number in `sourceStep`. */
const SOURCES: readonly string[] = ["input", "loop", "update", "fork"];
/** Steps `sourceStep` holds (a small integer: no heap number). */
const MAX_STEP = 2 ** 26;

/**
 * `metadata`'s `source` and `step` as one integer (`step * 4 + source`), or undefined when the
 * source is not one of the engine's or the step not an integer of at most 2^26.
 */
function sourceStep(metadata: Readonly<Record<string, unknown>>): number | undefined {
  const source = SOURCES.indexOf(metadata.source as string);
  const step = metadata.step;
  if (source < 0 || typeof step !== "number" || !Number.isInteger(step) || Math.abs(step) > MAX_STEP || Object.is(step, -0)) return undefined;
  return step * 4 + source;
}

/**
 * `metadata` kept on `base`: its `source` and `step` in one number (see `sourceStep`), when both
 * are frozen plain objects with the same keys in the same order, `source` and `step` among them
 * and every value but the own keys' the same (`Object.is`: objects by reference); else undefined.
 */
export function onBase(metadata: CheckpointMetadata, base: CheckpointMetadata): number | undefined {
  if (!Object.isFrozen(metadata) || !Object.isFrozen(base) || Object.getPrototypeOf(metadata) !== Object.prototype) return undefined;
  const m = metadata as unknown as Record<string, unknown>;
  const b = base as unknown as Record<string, unknown>;
  if (!Object.hasOwn(m, "source") || !Object.hasOwn(m, "step")) return undefined;
  const packed = sourceStep(m);
  if (packed === undefined) return undefined;
  const keys = Object.keys(m);
  const baseKeys = Object.keys(b);
  if (keys.length !== baseKeys.length) return undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== baseKeys[i] || key === "__proto__") return undefined;
    if (!OWN_KEYS.has(key) && !Object.is(m[key], b[key])) return undefined;
  }
  return packed;
}

/** The metadata kept on `base` (see `onBase`), frozen. */
export function metadataOn(base: CheckpointMetadata, packed: number, writes: unknown, runId: unknown): CheckpointMetadata {
  const source = packed & 3;
  // A copy of the base (its keys in order: a spread copies its shape at once), own values set.
  const out: Record<string, unknown> = { ...(base as unknown as Record<string, unknown>) };
  out.source = SOURCES[source];
  out.step = (packed - source) / 4;
  if (Object.hasOwn(out, "writes")) out.writes = writes;
  if (Object.hasOwn(out, "run_id")) out.run_id = runId;
  return Object.freeze(out) as unknown as CheckpointMetadata;
}

/**
 * Pending writes in flat form: task, channel, value, three items per write, frozen. A task id
 * that is a canonical UUID (the engine's) is kept compact (`compactUuid`), any other in an
 * array of one: a compact id cannot be mistaken for another task's id.
 */
export type PackedWrites = readonly unknown[];

/** No pending writes (most checkpoints: the engine puts them after), in either form. */
export const NO_WRITES: readonly never[] = Object.freeze([]);

/** The stored form of a task id. */
const taskKey = (taskId: string): unknown => compactUuid(taskId) ?? Object.freeze([taskId]);

/** True when `stored` (a stored task id) is `taskId` (`key`: its `taskKey` when compact). */
const isTask = (stored: unknown, taskId: string, key: string | undefined) =>
  typeof stored === "string" ? stored === key : (stored as readonly string[])[0] === taskId;

/** Copies `writes` into `out` from `at`, task ids in stored form (one form per task, reused). */
function copyWrites(writes: readonly PendingWrite[], out: unknown[], at: number): void {
  let lastId: string | undefined;
  let lastKey: unknown;
  for (const w of writes) {
    if (w[0] !== lastId) {
      lastId = w[0];
      lastKey = taskKey(w[0]);
    }
    out[at++] = lastKey;
    out[at++] = w[1];
    out[at++] = w[2];
  }
}

/** The flat form of `writes`. */
export function packWrites(writes: readonly PendingWrite[]): PackedWrites {
  if (writes.length === 0) return NO_WRITES;
  const out = new Array<unknown>(writes.length * 3);
  copyWrites(writes, out, 0);
  return Object.freeze(out);
}

/** `packed` with task `taskId`'s writes replaced by `writes` (appended after the others). */
export function replaceTaskWrites(packed: PackedWrites, taskId: string, writes: readonly PendingWrite[]): PackedWrites {
  const key = compactUuid(taskId);
  let kept = 0;
  for (let i = 0; i < packed.length; i += 3) if (!isTask(packed[i], taskId, key)) kept += 3;
  if (kept === packed.length && writes.length === 0) return packed;
  if (kept === 0) return packWrites(writes);
  const out = new Array<unknown>(kept + writes.length * 3);
  let at = 0;
  for (let i = 0; i < packed.length; i += 3) {
    if (isTask(packed[i], taskId, key)) continue;
    out[at++] = packed[i];
    out[at++] = packed[i + 1];
    out[at++] = packed[i + 2];
  }
  copyWrites(writes, out, at);
  return Object.freeze(out);
}

/** The pending writes of a flat form, as handed out: frozen triples in a frozen array. */
export function unpackWrites(packed: PackedWrites): readonly PendingWrite[] {
  if (packed.length === 0) return NO_WRITES;
  const out = new Array<PendingWrite>(packed.length / 3);
  let lastKey: unknown;
  let lastId = "";
  for (let i = 0, at = 0; i < packed.length; i += 3) {
    const key = packed[i];
    if (key !== lastKey) {
      lastKey = key;
      lastId = typeof key === "string" ? expandUuid(key) : (key as readonly string[])[0]!;
    }
    out[at++] = Object.freeze([lastId, packed[i + 1] as string, packed[i + 2]] as const);
  }
  return Object.freeze(out);
}

// -------------------------------------------------------------------------------------------
// UUIDs in 8 UTF-16 code units (32 bytes in V8 instead of 56): the task ids of pending writes.

const HEX = "0123456789abcdef";
/** The char codes of a UUID being formatted (filled, then read at once: no rope). */
const uuidCodes: number[] = new Array<number>(36).fill(45);

/** The value of a lowercase hex digit's char code, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * `id` in 8 code units when it is a UUID in canonical form (lowercase, dashed), else undefined.
 * Code units compare as the hex digits do, so compact ids sort as their UUIDs.
 */
export function compactUuid(id: string): string | undefined {
  if (id.length !== 36) return undefined;
  const units = new Array<number>(8);
  let unit = 0;
  let digits = 0;
  let at = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return undefined;
      continue;
    }
    const v = hexDigit(c);
    if (v < 0) return undefined;
    unit = (unit << 4) | v;
    if (++digits === 4) {
      units[at++] = unit;
      unit = 0;
      digits = 0;
    }
  }
  return String.fromCharCode.apply(null, units);
}

/** The UUID of a compact id (`compactUuid`). */
export function expandUuid(compact: string): string {
  let at = 0;
  for (let u = 0; u < 8; u++) {
    const unit = compact.charCodeAt(u);
    for (let shift = 12; shift >= 0; shift -= 4) {
      if (at === 8 || at === 13 || at === 18 || at === 23) at++;
      uuidCodes[at++] = HEX.charCodeAt((unit >> shift) & 15);
    }
  }
  return String.fromCharCode.apply(null, uuidCodes);
}
