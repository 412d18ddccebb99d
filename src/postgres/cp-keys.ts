/**
 * The keys of checkpoint rows as bytes (schema 6): a checkpoint's thread id, id and parent id are
 * `bytea` columns, 17 bytes for the canonical (lower-case) UUID they almost always are instead of
 * 37 bytes of text; together about a seventh of a chat's checkpoint row.
 *
 * The encoding, in SQL functions of the schema (`cp_key(text)`, `cp_key_text(bytea)`), so that
 * every statement passes and reads ids as text as before:
 * - a canonical lower-case UUID: its 16 bytes;
 * - any other id: its UTF-8 bytes, with a zero byte after them when they are exactly 16 long
 *   (so they never read as a UUID). Text cannot hold a zero byte, so no other id ends in one.
 * The checkpoint rows are never sorted by these columns (by `seq`), only compared for equality,
 * which the encoding keeps (it is one to one).
 */

/**
 * SQL: the key of the id `expr` (text, a parameter). In a subquery, so that it is computed once
 * per statement (an InitPlan): a plan that filters a thread's rows by it (the planner may read a
 * thread's rows by the (thread_id, ns, seq) index and filter them by id) must not call the
 * function for every row.
 */
export const keySql = (s: string, expr: string) => `(SELECT ${s}.cp_key(${expr}))`;

/** SQL: the keys of the ids of `expr` (a text[] parameter), as a bytea[]. */
export const keysSql = (s: string, expr: string) => `ARRAY(SELECT ${s}.cp_key(x) FROM unnest(${expr}::text[]) AS x)`;

/** SQL: the id (text) of the key `expr` (bytea). */
export const textSql = (s: string, expr: string) => `${s}.cp_key_text(${expr})`;

/** Migration to schema 6: the functions, and the key columns converted. */
export function keyMigration(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.cp_key(id text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT CASE WHEN id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN decode(replace(id, '-', ''), 'hex')
                  WHEN octet_length(id) = 16 THEN convert_to(id, 'UTF8') || '\\x00'::bytea
                  ELSE convert_to(id, 'UTF8') END $$`,
    `CREATE FUNCTION ${s}.cp_key_text(k bytea) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT CASE WHEN length(k) = 16 THEN encode(k, 'hex')::uuid::text
                  WHEN length(k) = 17 AND get_byte(k, 16) = 0 THEN convert_from(substring(k FROM 1 FOR 16), 'UTF8')
                  ELSE convert_from(k, 'UTF8') END $$`,
    `ALTER TABLE ${s}.checkpoints
       ALTER COLUMN thread_id TYPE bytea USING ${s}.cp_key(thread_id),
       ALTER COLUMN checkpoint_id TYPE bytea USING ${s}.cp_key(checkpoint_id),
       ALTER COLUMN parent_id TYPE bytea USING ${s}.cp_key(parent_id)`,
  ];
}
