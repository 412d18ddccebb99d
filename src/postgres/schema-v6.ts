/**
 * Schema version 6 of `graphdock/postgres`: smaller checkpoint rows and list logs (a 500-turn
 * chat's rows went from 4.6x to 2.7x its final state's JSON, bench/postgres.bench.ts).
 * Rows written before read back as before; the migration adds columns and converts the key
 * columns of the checkpoints.
 *
 * - A list log's appends extend its last chunk while it is small (./chunks.ts), and PostgreSQL
 *   compresses the chunks: no schema change, every reader already keeps only the items it refers to.
 * - `checkpoints.vrel`: the row's channel versions are stored less its metadata's step
 *   (./cp-versions.ts); NULL (rows written before) or false: as they are.
 * - `checkpoints.run_id`: the metadata's run id, when a UUID its base's metadata also has
 *   (./cp-run-id.ts); NULL: in the metadata as before.
 * - Bases (./meta.ts, `cp_meta`): each has the metadata record of the row that made it, `source`
 *   included, and `writes` when it is null (before, one record for all the bases a thread used,
 *   and `source` in every row); on a chain of more than 24 checkpoints, a base is made for each
 *   kind of row (an input step's, ...) that the others do not fit, up to six (./checkpoints.ts).
 *   A base made within a step's single statement has a negative id chosen by the writer (the
 *   sequence gives positive ones).
 * - `checkpoints.thread_id`, `checkpoint_id`, `parent_id`: `bytea`, 17 bytes for a UUID instead of
 *   37 (./cp-keys.ts); statements pass and read them as text through two SQL functions. The
 *   migration rewrites the checkpoints table and its indexes (once, under the migration lock).
 */
import { keyMigration } from "./cp-keys.js";

export function v6Migration(s: string): string[] {
  return [`ALTER TABLE ${s}.checkpoints ADD COLUMN vrel boolean`, `ALTER TABLE ${s}.checkpoints ADD COLUMN run_id uuid`, ...keyMigration(s)];
}
