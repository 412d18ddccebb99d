/**
 * A checkpoint's `ts` stored against its id (schema 5). LangGraph makes a checkpoint's id with
 * `uuid6` from `Date.now()` and its `ts` with `new Date().toISOString()` right after, so `ts` is
 * almost always the id's millisecond or one after: a row stores the offset (a number, usually 0,
 * which a base row's record then shares) instead of the 24-character text.
 *
 * In a stored record (shared form, `cp_shared` rows only): a number is that offset from the id's
 * time; `[value]` is a `ts` that is not a string (kept as it was); a string is the `ts` itself
 * (not the canonical `toISOString()` of a time, or an id that is not a version-6 UUID). Reading
 * back gives the exact value put.
 */

/** 100-ns ticks between the Gregorian epoch (1582-10-15) and the Unix epoch. */
const GREGORIAN_OFFSET = 0x01b21dd213814000n;
const UUID6 = /^([0-9a-f]{8})-([0-9a-f]{4})-6([0-9a-f]{3})-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Unix millisecond a version-6 UUID was made at; undefined for any other id. */
export function uuid6Millis(id: string): number | undefined {
  const m = UUID6.exec(id);
  if (!m) return undefined;
  const ticks = BigInt(`0x${m[1]}${m[2]}${m[3]}`) - GREGORIAN_OFFSET;
  return ticks < 0n ? undefined : Number(ticks / 10000n);
}

/** The stored form of `ts` for a checkpoint of id `id`. */
export function storeTs(ts: unknown, id: string): unknown {
  if (typeof ts !== "string") return [ts];
  const at = uuid6Millis(id);
  if (at === undefined) return ts;
  const t = Date.parse(ts);
  return Number.isFinite(t) && Math.abs(t) <= 8.64e15 && new Date(t).toISOString() === ts ? t - at : ts;
}

/** The `ts` a stored form stands for (see {@link storeTs}). */
export function readTs(stored: unknown, id: string): unknown {
  if (typeof stored === "number") {
    const at = uuid6Millis(id);
    if (at === undefined) throw new Error(`graphdock/postgres: a checkpoint's ts is stored against its id, but ${id} is not a version-6 UUID (corrupt store)`);
    return new Date(at + stored).toISOString();
  }
  if (Array.isArray(stored) && stored.length === 1) return stored[0];
  return stored;
}
