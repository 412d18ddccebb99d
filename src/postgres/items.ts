/**
 * Long-term memory items on PostgreSQL (table `store_items`, schema version 2): the item ops as
 * single statements, and `ItemQuery` / `ItemNamespaceQuery` as SQL with the meaning of
 * src/persistence/items.ts. A namespace is kept both as `text[]` (label conditions) and as its
 * key `ns` (labels joined with `.`, `COLLATE "C"`), so a namespace prefix is a range of the
 * primary key: `ns = p OR p. <= ns < p/` (`/` follows `.`). Filters go to the `value` jsonb (GIN
 * index for equality); the exact value is returned from `doc` (json, as written). Semantic
 * ranking is done in memory over the rows the query selects (no `vector` extension needed).
 */
import type { Pool, PoolClient } from "pg";
import { isPlainObject } from "../json.js";
import { namespaceKey, rankItems } from "../persistence/items.js";
import type { ExpiredItem, ItemNamespaceQuery, ItemQuery, ScoredItem, StoredItem, WriteOp } from "../persistence/types.js";
import { authWhere, page, Params, where } from "./sql.js";

type ItemOp = Extract<WriteOp, { op: "item.put" | "item.delete" | "item.touch" }>;
type Queryable = Pick<Pool | PoolClient, "query">;

const num = (v: unknown) => (v === null || v === undefined ? null : typeof v === "number" ? v : Number(v));

/** The statements creating the table (migration 2 of src/postgres/schema.ts). */
export function itemsSchema(s: string): string[] {
  return [
    `CREATE TABLE ${s}.store_items (
      ns text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      namespace text[] NOT NULL,
      value jsonb NOT NULL,
      doc json NOT NULL,
      created_at text NOT NULL,
      updated_at text COLLATE "C" NOT NULL,
      expires_at bigint,
      ttl double precision,
      vectors json,
      PRIMARY KEY (ns, key))`,
    `CREATE INDEX ON ${s}.store_items USING gin (value jsonb_path_ops)`,
    `CREATE INDEX ON ${s}.store_items (expires_at) WHERE expires_at IS NOT NULL`,
    `CREATE INDEX ON ${s}.store_items (updated_at)`,
  ];
}

/** One item op as one statement. */
export function itemOpSql(s: string, op: ItemOp): { text: string; values: unknown[] } {
  switch (op.op) {
    case "item.put": {
      const i = op.item;
      const value = JSON.stringify(i.value);
      return {
        text: `INSERT INTO ${s}.store_items (ns, key, namespace, value, doc, created_at, updated_at, expires_at, ttl, vectors)
               VALUES ($1, $2, $3::text[], $4::jsonb, $5::json, $6, $7, $8, $9, $10::json)
               ON CONFLICT (ns, key) DO UPDATE SET namespace = EXCLUDED.namespace, value = EXCLUDED.value, doc = EXCLUDED.doc,
                 created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at,
                 ttl = EXCLUDED.ttl, vectors = EXCLUDED.vectors`,
        values: [namespaceKey(i.namespace), i.key, [...i.namespace], value, value, i.created_at, i.updated_at, i.expires_at, i.ttl, i.vectors ? JSON.stringify(i.vectors) : null],
      };
    }
    case "item.delete":
      return {
        text: `DELETE FROM ${s}.store_items WHERE ns = $1 AND key = $2 AND ($3::bigint IS NULL OR expires_at <= $3::bigint)`,
        values: [namespaceKey(op.namespace), op.key, op.expiredAt ?? null],
      };
    case "item.touch":
      return {
        text: `UPDATE ${s}.store_items SET expires_at = $3 WHERE ns = $1 AND key = $2 AND ttl IS NOT NULL`,
        values: [namespaceKey(op.namespace), op.key, op.expires_at],
      };
  }
}

const COLUMNS = "namespace, key, doc, created_at, updated_at, expires_at, ttl";

function toItem(row: Record<string, unknown>): StoredItem {
  const item: StoredItem = {
    namespace: row.namespace as string[],
    key: row.key as string,
    value: row.doc as Record<string, unknown>,
    created_at: row.created_at as string,
    updated_at: row.updated_at as string,
    expires_at: num(row.expires_at),
    ttl: num(row.ttl),
  };
  if (row.vectors !== undefined && row.vectors !== null) item.vectors = row.vectors as number[][];
  return item;
}

/** `ns` within the namespaces starting with `labels` (a key range). */
function prefixWhere(labels: readonly string[], ps: Params): string[] {
  if (labels.length === 0) return [];
  const p = namespaceKey(labels);
  return [`(ns = ${ps.p(p)} OR (ns >= ${ps.p(`${p}.`)} AND ns < ${ps.p(`${p}/`)}))`];
}

/** An item filter (checked by `checkItemFilter`) on the `value` column. */
function filterWhere(filter: Record<string, unknown> | undefined, ps: Params): string[] {
  if (!filter) return [];
  const parts: string[] = [];
  const eq: Record<string, unknown> = {};
  const equal = (field: string, v: unknown) => {
    if (v === null || typeof v !== "object") eq[field] = v; // scalars: also one `@>` the GIN index answers
    parts.push(`value -> ${ps.p(field)} = ${ps.jsonb(v)}`);
  };
  for (const [field, cond] of Object.entries(filter)) {
    if (cond === undefined) continue;
    const ops = isPlainObject(cond) ? Object.keys(cond) : [];
    if (ops.length === 0 || !ops.every((k) => k.startsWith("$"))) {
      equal(field, cond);
      continue;
    }
    for (const [op, operand] of Object.entries(cond as Record<string, unknown>)) {
      if (op === "$eq") equal(field, operand);
      else if (op === "$ne") parts.push(`(value -> ${ps.p(field)}) IS DISTINCT FROM ${ps.jsonb(operand)}`);
      else {
        const sqlOp = op === "$gt" ? ">" : op === "$gte" ? ">=" : op === "$lt" ? "<" : "<=";
        const k = ps.p(field);
        parts.push(
          typeof operand === "number"
            ? `(CASE WHEN jsonb_typeof(value -> ${k}) = 'number' THEN (value ->> ${k})::numeric ${sqlOp} ${ps.p(operand)}::numeric ELSE false END)`
            : `(CASE WHEN jsonb_typeof(value -> ${k}) = 'string' THEN (value ->> ${k}) COLLATE "C" ${sqlOp} ${ps.p(operand)} ELSE false END)`,
        );
      }
    }
  }
  if (Object.keys(eq).length > 0) parts.unshift(`value @> ${ps.jsonb(eq)}`);
  return parts;
}

/** What an authorization filter is matched against: the value plus `namespace` and `key`. */
const AUTH_DOC = `(value || jsonb_build_object('namespace', to_jsonb(namespace), 'key', to_jsonb(key)))`;

const live = (now: number, ps: Params) => `(expires_at IS NULL OR expires_at > ${ps.p(now)})`;

export async function getItem(db: Queryable, s: string, namespace: readonly string[], key: string): Promise<StoredItem | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS}, vectors FROM ${s}.store_items WHERE ns = $1 AND key = $2`, [namespaceKey(namespace), key]);
  return rows[0] ? toItem(rows[0]) : undefined;
}

export async function searchItems(db: Queryable, s: string, q: ItemQuery): Promise<ScoredItem[]> {
  const ps = new Params();
  const conds = [...prefixWhere(q.prefix, ps), live(q.now, ps), ...filterWhere(q.filter, ps), ...authWhere(AUTH_DOC, q.auth, ps)];
  if (q.vector) {
    // Ranked in memory: every matching row with its vectors, then ordered and paged.
    const { rows } = await db.query(`SELECT ${COLUMNS}, vectors FROM ${s}.store_items${where(conds)}`, ps.values);
    return rankItems(rows.map(toItem), q);
  }
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM ${s}.store_items${where(conds)} ORDER BY updated_at DESC, ns, key${page(ps, q)}`, ps.values);
  return rows.map(toItem);
}

export async function listItemNamespaces(db: Queryable, s: string, q: ItemNamespaceQuery): Promise<string[][]> {
  const ps = new Params();
  const prefix = q.prefix ?? [];
  const suffix = q.suffix ?? [];
  const fixed: string[] = [];
  for (const label of prefix) {
    if (label === "*") break;
    fixed.push(label);
  }
  const conds = [...prefixWhere(fixed, ps), live(q.now, ps), ...authWhere(AUTH_DOC, q.auth, ps)];
  if (prefix.length > 0 || suffix.length > 0) conds.push(`cardinality(namespace) >= ${ps.p(Math.max(prefix.length, suffix.length))}`);
  prefix.forEach((label, i) => {
    if (label !== "*") conds.push(`namespace[${i + 1}] = ${ps.p(label)}`);
  });
  suffix.forEach((label, i) => {
    if (label !== "*") conds.push(`namespace[cardinality(namespace) - ${suffix.length - 1 - i}] = ${ps.p(label)}`);
  });
  const cut = q.maxDepth === undefined ? "namespace" : `namespace[1:${ps.p(q.maxDepth)}::int]`;
  const { rows } = await db.query(
    `SELECT cut FROM (SELECT DISTINCT ${cut} AS cut FROM ${s}.store_items${where(conds)}) d
      ORDER BY array_to_string(cut, '.') COLLATE "C"${page(ps, q)}`,
    ps.values,
  );
  return rows.map((r) => r.cut as string[]);
}

export async function expiredItems(db: Queryable, s: string, now: number, limit?: number): Promise<ExpiredItem[]> {
  const ps = new Params();
  const { rows } = await db.query(
    `SELECT namespace, key, expires_at FROM ${s}.store_items WHERE expires_at <= ${ps.p(now)} ORDER BY expires_at, ns, key${page(ps, { limit })}`,
    ps.values,
  );
  return rows.map((r) => ({ namespace: r.namespace as string[], key: r.key as string, expires_at: Number(r.expires_at) }));
}
