/**
 * A checkpoint's run id in a `uuid` column (schema 6, the checkpoints' `run_id` column).
 *
 * Every checkpoint of a run repeats its run's id in its metadata (`run_id`), and a row's metadata
 * is stored as the keys that differ from its base's (./meta.ts): the run id, 36 characters of
 * text, differed in all rows but those of the run that made the base, 47 bytes of JSON a row.
 * When the row's own metadata holds `run_id` as a canonical (lower-case) UUID and its base has
 * the key too, the row stores it as 16 bytes in the column instead; reading puts it back in the
 * base's place of the key, so the metadata reads back as written, key order included. A metadata
 * filter in SQL lays the column over the metadata (`jsonb_build_object('run_id', ...)`).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The row's own metadata without its run id, and the id for the column; as it is when the column cannot hold it. */
export function takeRunId(own: Record<string, unknown>, base: Record<string, unknown>): { own: Record<string, unknown>; runId: string | null } {
  const id = own.run_id;
  if (!Object.hasOwn(own, "run_id") || typeof id !== "string" || !UUID.test(id) || !Object.hasOwn(base, "run_id")) return { own, runId: null };
  const { run_id: _r, ...rest } = own;
  return { own: rest, runId: id };
}

/** The metadata (unfactored) with the column's run id put back. */
export function putRunId(metadata: Record<string, unknown>, runId: unknown): Record<string, unknown> {
  if (typeof runId !== "string") return metadata;
  if (!Object.hasOwn(metadata, "run_id")) throw new Error("graphdock/postgres: a checkpoint row's run id is in its column, but its base has no run_id (corrupt store)");
  metadata.run_id = runId;
  return metadata;
}

/** SQL: checkpoint row `c`'s run id column as metadata to lay over the rest (jsonb). */
export const RUN_ID_JSONB = `CASE WHEN c.run_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('run_id', c.run_id::text) END`;
