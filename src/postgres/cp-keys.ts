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

/** The regular expression of a canonical lower-case UUID, as an SQL literal. */
const UUID_RE = `'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'`;

/** SQL: the key (bytea) of the id `id` (text): the body of `cp_key`. */
const keyExpr = (id: string) => `CASE WHEN ${id} ~ ${UUID_RE} THEN decode(replace(${id}, '-', ''), 'hex')
                  WHEN octet_length(${id}) = 16 THEN convert_to(${id}, 'UTF8') || '\\x00'::bytea
                  ELSE convert_to(${id}, 'UTF8') END`;

/** SQL: the id (text) of the key `k` (bytea): the body of `cp_key_text`. */
const textExpr = (k: string) => `CASE WHEN length(${k}) = 16 THEN encode(${k}, 'hex')::uuid::text
                  WHEN length(${k}) = 17 AND get_byte(${k}, 16) = 0 THEN convert_from(substring(${k} FROM 1 FOR 16), 'UTF8')
                  ELSE convert_from(${k}, 'UTF8') END`;

/**
 * SQL: the key of the id `expr` (text, a parameter). The encoding is written out in the statement
 * rather than called as `cp_key`: PostgreSQL does not inline that function (STRICT, and
 * `convert_to` is only stable), and a call of an SQL function that is not inlined parses and
 * plans its body again in every statement that calls it, a sixth of the database's CPU per run
 * (bench/pg-cpu-probe.ts). In a subquery, so that it is computed once per statement (an
 * InitPlan): a plan that filters a thread's rows by it (the planner may read a thread's rows by
 * the (thread_id, ns, seq) index and filter them by id) must not compute it for every row.
 */
export const keySql = (expr: string) => `(SELECT ${keyExpr(`(${expr})::text`)})`;

/** SQL: the keys of the ids of `expr` (a text[] parameter), as a bytea[]. */
export const keysSql = (expr: string) => `ARRAY(SELECT ${keyExpr("x")} FROM unnest(${expr}::text[]) AS x)`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The key of the id `id` (a `Buffer`, passed as a `bytea` parameter): the encoding of `cp_key`, computed here. */
export function cpKey(id: string): Buffer {
  if (UUID.test(id)) return Buffer.from(id.replace(/-/g, ""), "hex");
  const b = Buffer.from(id, "utf8");
  return b.length === 16 ? Buffer.concat([b, Buffer.from([0])]) : b;
}

/**
 * The id (text) of a key column as read (a `Buffer`; null stays null): statements read the key
 * columns as they are and decode them here, the database's work (and `cp_key_text`'s calls) saved.
 */
export function keyText(k: unknown): string | null {
  if (k === null || k === undefined) return null;
  const b = k as Buffer;
  if (b.length === 16) {
    const h = b.toString("hex");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  if (b.length === 17 && b[16] === 0) return b.subarray(0, 16).toString("utf8");
  return b.toString("utf8");
}

/** Migration to schema 6: the functions, and the key columns converted. */
export function keyMigration(s: string): string[] {
  return [
    `CREATE FUNCTION ${s}.cp_key(id text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT ${keyExpr("id")} $$`,
    `CREATE FUNCTION ${s}.cp_key_text(k bytea) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT ${textExpr("k")} $$`,
    `ALTER TABLE ${s}.checkpoints
       ALTER COLUMN thread_id TYPE bytea USING ${s}.cp_key(thread_id),
       ALTER COLUMN checkpoint_id TYPE bytea USING ${s}.cp_key(checkpoint_id),
       ALTER COLUMN parent_id TYPE bytea USING ${s}.cp_key(parent_id)`,
  ];
}
