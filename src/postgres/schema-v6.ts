/**
 * Schema version 6 of `agentdock/postgres`: smaller checkpoint rows (a 500-turn chat's storage,
 * bench/postgres.bench.ts). Rows written before read back as before; the migration only adds
 * columns.
 * - A list log's appends extend its last chunk while it is small (./chunks.ts): no schema change,
 *   every reader already keeps only the items it refers to.
 * - `checkpoints.vrel`: the row's channel versions are stored less its metadata's step
 *   (./cp-versions.ts); NULL (rows written before) or false: as they are.
 * - `checkpoints.run_id`: the metadata's run id, when a UUID its base's metadata also has
 *   (./cp-run-id.ts); NULL: in the metadata as before.
 */
export function v6Migration(s: string): string[] {
  return [`ALTER TABLE ${s}.checkpoints ADD COLUMN vrel boolean`, `ALTER TABLE ${s}.checkpoints ADD COLUMN run_id uuid`];
}
