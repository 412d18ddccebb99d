/**
 * Compact forms of a stored checkpoint's metadata and pending writes in the memory store
 * (./checkpoints.ts), for heap per chat turn (issue 11). Each is turned back into the JSON it
 * was given on read: the same keys in the same order, the same values (by reference), frozen.
 *
 * - Metadata: the checkpoints of one run have the same metadata but for `source`, `step` and
 *   `writes` (the engine builds each from the run's). A checkpoint whose metadata has the keys,
 *   in the same order, and the values (the same references) of an earlier checkpoint's keeps
 *   that checkpoint's metadata as its base and its own three values only: 104 bytes of an object
 *   of ten keys saved on every checkpoint of a run but its first.
 * - Pending writes: kept as one flat array `[task, channel, value, task, channel, value, ...]`
 *   instead of an array of three-item arrays: 72 bytes saved per write.
 */
import type { CheckpointMetadata, PendingWrite } from "../types.js";

/** The keys a checkpoint's metadata keeps of its own when it has a base. */
const OWN_KEYS: ReadonlySet<string> = new Set(["source", "step", "writes"]);

/**
 * True when `metadata` can be kept as `base` with its own `source`, `step` and `writes`: both
 * frozen plain objects with the same keys in the same order, every other value the same (by
 * reference), and a string `source` (what marks an entry as kept this way).
 */
export function sharesBase(metadata: CheckpointMetadata, base: CheckpointMetadata): boolean {
  if (metadata === base || !Object.isFrozen(metadata) || !Object.isFrozen(base)) return false;
  if (typeof metadata.source !== "string" || Object.getPrototypeOf(metadata) !== Object.prototype) return false;
  const keys = Object.keys(metadata);
  const baseKeys = Object.keys(base);
  if (keys.length !== baseKeys.length) return false;
  const m = metadata as unknown as Record<string, unknown>;
  const b = base as unknown as Record<string, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== baseKeys[i] || key === "__proto__") return false;
    if (!OWN_KEYS.has(key) && m[key] !== b[key]) return false;
  }
  return true;
}

/** The metadata `base` with its own `source`, `step` and `writes` (see `sharesBase`), frozen. */
export function metadataOn(base: CheckpointMetadata, source: unknown, step: unknown, writes: unknown): CheckpointMetadata {
  const b = base as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key in b) out[key] = key === "source" ? source : key === "step" ? step : key === "writes" ? writes : b[key];
  return Object.freeze(out) as unknown as CheckpointMetadata;
}

/** Pending writes in flat form: task id, channel, value, three items per write, frozen. */
export type PackedWrites = readonly unknown[];

/** No pending writes (most checkpoints: the engine puts them after), in either form. */
export const NO_WRITES: readonly never[] = Object.freeze([]);

/** The flat form of `writes`. */
export function packWrites(writes: readonly PendingWrite[]): PackedWrites {
  if (writes.length === 0) return NO_WRITES;
  const out = new Array<unknown>(writes.length * 3);
  for (let i = 0, at = 0; i < writes.length; i++) {
    const w = writes[i]!;
    out[at++] = w[0];
    out[at++] = w[1];
    out[at++] = w[2];
  }
  return Object.freeze(out);
}

/** `packed` with task `taskId`'s writes replaced by `writes` (appended after the others). */
export function replaceTaskWrites(packed: PackedWrites, taskId: string, writes: readonly PendingWrite[]): PackedWrites {
  let kept = 0;
  for (let i = 0; i < packed.length; i += 3) if (packed[i] !== taskId) kept += 3;
  if (kept === packed.length && writes.length === 0) return packed;
  if (kept === 0) return packWrites(writes);
  const out = new Array<unknown>(kept + writes.length * 3);
  let at = 0;
  for (let i = 0; i < packed.length; i += 3) {
    if (packed[i] === taskId) continue;
    out[at++] = packed[i];
    out[at++] = packed[i + 1];
    out[at++] = packed[i + 2];
  }
  for (const w of writes) {
    out[at++] = w[0];
    out[at++] = w[1];
    out[at++] = w[2];
  }
  return Object.freeze(out);
}

/** The pending writes of a flat form, as handed out: frozen triples in a frozen array. */
export function unpackWrites(packed: PackedWrites): readonly PendingWrite[] {
  if (packed.length === 0) return NO_WRITES;
  const out = new Array<PendingWrite>(packed.length / 3);
  for (let i = 0, at = 0; i < packed.length; i += 3) {
    out[at++] = Object.freeze([packed[i] as string, packed[i + 1] as string, packed[i + 2]] as const);
  }
  return Object.freeze(out);
}
