/**
 * Compact forms of a stored checkpoint's metadata and pending writes in the memory store
 * (./checkpoints.ts), for heap per chat turn. Each is turned back into the JSON it
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

const HEX_CODES = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
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

/** Where the 4 digits of each code unit of a compact id go in its UUID. */
const UNIT_AT = [0, 4, 9, 14, 19, 24, 28, 32];

/** The UUID of a compact id (`compactUuid`). */
export function expandUuid(compact: string): string {
  for (let u = 0; u < 8; u++) {
    const unit = compact.charCodeAt(u);
    const at = UNIT_AT[u]!;
    uuidCodes[at] = HEX_CODES[unit >> 12]!;
    uuidCodes[at + 1] = HEX_CODES[(unit >> 8) & 15]!;
    uuidCodes[at + 2] = HEX_CODES[(unit >> 4) & 15]!;
    uuidCodes[at + 3] = HEX_CODES[unit & 15]!;
  }
  return String.fromCharCode.apply(null, uuidCodes);
}

// -------------------------------------------------------------------------------------------
// Times in `Date.toISOString` form (`YYYY-MM-DDTHH:mm:ss.sssZ`, years 0000-9999) as epoch ms,
// read and written by hand: `Date.parse` and `toISOString` took ~0.35 and ~0.75 µs each.

const MS_PER_DAY = 86_400_000;
/** The char codes of a time being formatted (filled, then read at once: no rope). */
const isoCodes: number[] = Array.from("0000-00-00T00:00:00.000Z", (c) => c.charCodeAt(0));

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (month 1-12). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number of `n` digits at `at` of `s`, or -1 if one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * The epoch ms of `ts` when it is a time exactly as `toISOString` writes it (so that
 * `isoTime(ms) === ts`), else undefined.
 */
export function isoMs(ts: string): number | undefined {
  if (ts.length !== 24) return undefined;
  for (const [at, c] of SEPARATORS) if (ts.charCodeAt(at) !== c) return undefined;
  const y = digits(ts, 0, 4);
  const mo = digits(ts, 5, 2);
  const d = digits(ts, 8, 2);
  const h = digits(ts, 11, 2);
  const mi = digits(ts, 14, 2);
  const s = digits(ts, 17, 2);
  const ms = digits(ts, 20, 3);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0) return undefined;
  if (d > (mo === 2 && isLeap(y) ? 29 : MONTH_DAYS[mo - 1]!)) return undefined;
  return daysFromCivil(y, mo, d) * MS_PER_DAY + ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

/** The separators of the form, by position. */
const SEPARATORS: ReadonlyArray<readonly [number, number]> = [
  [4, 45],
  [7, 45],
  [10, 84],
  [13, 58],
  [16, 58],
  [19, 46],
  [23, 90],
];

/** Writes `v` (0-99) in 2 digits at `at` of `isoCodes`. */
function put2(v: number, at: number): void {
  const tens = (v / 10) | 0;
  isoCodes[at] = 48 + tens;
  isoCodes[at + 1] = 48 + v - tens * 10;
}

/** `new Date(ms).toISOString()` for a time `isoMs` read (years 0000-9999). */
export function isoTime(ms: number): string {
  const days = Math.floor(ms / MS_PER_DAY);
  let rest = ms - days * MS_PER_DAY;
  // The civil date of a day number (the inverse of `daysFromCivil`).
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const century = (y / 100) | 0;
  put2(century, 0);
  put2(y - century * 100, 2);
  put2(m, 5);
  put2(d, 8);
  const h = (rest / 3_600_000) | 0;
  rest -= h * 3_600_000;
  const mi = (rest / 60_000) | 0;
  rest -= mi * 60_000;
  const sec = (rest / 1000) | 0;
  rest -= sec * 1000;
  put2(h, 11);
  put2(mi, 14);
  put2(sec, 17);
  const hundreds = (rest / 100) | 0;
  isoCodes[20] = 48 + hundreds;
  put2(rest - hundreds * 100, 21);
  return String.fromCharCode.apply(null, isoCodes);
}
