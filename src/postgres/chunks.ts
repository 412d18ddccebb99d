/**
 * Appending to a list log (schema 6): the new items extend the log's last chunk while it is small,
 * instead of each append being a chunk of its own.
 *
 * Why: a chat step appends one or two messages, so one chunk per append made a row (and its
 * 24-byte header, its key) per message, each too small for PostgreSQL to compress. A chunk of
 * up to {@link CHUNK_ITEMS} items (and {@link CHUNK_BYTES} bytes of JSON) passes the size at which
 * PostgreSQL compresses a row's values (about 2 kB, TOAST), and the messages of a chat repeat
 * most of their keys and text: a 500-turn chat's messages take about a quarter of their JSON
 * size (bench/postgres.bench.ts, storage).
 *
 * What stays true: a log is append-only, every item keeps its position, and a chunk holds the
 * items `start, start + 1, ...` of its log. A reader of the first `n` items reads the chunks with
 * `start < n` and keeps `n` items (every reader slices: a chunk may now hold items past the `n`
 * of an older checkpoint). The extended chunk is the log's last one, `len - start` items long, so
 * the check that the log is `from` items long (the `cp_logs` row, locked by the UPDATE) also
 * tells which chunk ends at `from`. Rewriting it costs at most {@link CHUNK_BYTES} per append.
 */

/** A log's last chunk is extended while it holds fewer items than this. */
export const CHUNK_ITEMS = 32;

/** ... and while it, with the new items, stays within this many bytes of JSON text. */
export const CHUNK_BYTES = 8192;

/**
 * CTEs that append `items` (the JSON text of an array, non-empty) to log `log` when it is `from`
 * items long, making it `to` long: `l<k>` returns the log's id when the log was as expected (and
 * nothing was written otherwise). `p$` adds a parameter and answers its placeholder.
 */
export function appendCtes(s: string, k: string, p$: (v: unknown) => string, log: number, from: number, to: number, items: string): string[] {
  const [lg, fr, it] = [p$(log), p$(from), p$(items)];
  return [
    `l${k} AS (UPDATE ${s}.cp_logs SET len = ${p$(to)}::int WHERE log_id = ${lg}::bigint AND len = ${fr}::int RETURNING log_id)`,
    // The log's last chunk (it ends at `from`), when it may take the items.
    `t${k} AS (SELECT c.start FROM (SELECT start, items FROM ${s}.cp_chunks WHERE log_id = ${lg}::bigint ORDER BY start DESC LIMIT 1) c
                WHERE EXISTS (SELECT 1 FROM l${k}) AND ${fr}::int - c.start < ${CHUNK_ITEMS}
                  AND octet_length(c.items::text) + ${p$(Buffer.byteLength(items))}::int <= ${CHUNK_BYTES})`,
    // `[a,b]` + `[c]` -> `[a,b,c]`: json keeps the text written, so the items read back as written.
    `u${k} AS (UPDATE ${s}.cp_chunks ch SET items = (left(rtrim(ch.items::text), -1) || ',' || substr(${it}::text, 2))::json
                 FROM t${k} WHERE ch.log_id = ${lg}::bigint AND ch.start = t${k}.start)`,
    `c${k} AS (INSERT INTO ${s}.cp_chunks (log_id, start, items) SELECT log_id, ${fr}::int, ${it}::text::json FROM l${k} WHERE NOT EXISTS (SELECT 1 FROM t${k}))`,
  ];
}

/**
 * SQL: a FROM clause of the chunks `ch` (`log_id`, `start`, `items`) that the list references in
 * the json `refs` (`{channel: [log, n]}`) need. Each reference's chunks are read by the primary
 * key (`OFFSET 0` keeps the subquery a per-reference index scan): as a plain join, PostgreSQL may
 * hash it against a scan of every chunk of the schema.
 */
export const refChunksFrom = (s: string, refs: string) =>
  `json_each(${refs}) r CROSS JOIN LATERAL (SELECT x.log_id, x.start, x.items FROM ${s}.cp_chunks x
     WHERE x.log_id = (r.value ->> 0)::bigint AND x.start < (r.value ->> 1)::int OFFSET 0) ch`;
