/**
 * Schema version 7 of `graphdock/postgres`: an index of each thread's runs in flight.
 *
 * A run's outcome counts its thread's pending and running runs, and `claim_run` takes its
 * thread's first one. Without this index PostgreSQL answers them by combining the thread's index
 * of runs (every run the thread ever had) with the `queue_seq` index of runs in flight (every
 * one in the schema), a bitmap scan whose cost grows with both and with the index entries of
 * ended runs that vacuum has not removed yet (a bitmap scan never marks them dead; an index scan
 * does, at its first visit). Measured: the outcome's count was the costliest statement of a
 * one-node run (bench/pg-cpu-probe.ts).
 */
export function v7Migration(s: string): string[] {
  return [`CREATE INDEX runs_in_flight_idx ON ${s}.runs (thread_id, queue_seq) WHERE status IN ('pending', 'running')`];
}
