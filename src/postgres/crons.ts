/**
 * Cron records in PostgreSQL: the `crons` table of schema version 2 (./schema.ts),
 * the `cron.put` / `cron.delete` ops with their compare-and-set, and the cron reads. Due crons
 * come from a partial index on (next_run_date, cron_id) over the scheduled crons only.
 */
import type pg from "pg";
import type { PoolClient } from "pg";
import { conflict } from "../errors.js";
import type { CronQuery, CronRecord } from "../persistence/crons.js";
import type { WriteOp } from "../persistence/types.js";
import { authWhere, dir, page, Params, where } from "./sql.js";

type Row = Record<string, unknown>;
/** The store's prepared-statement runner. */
export type RunSql = <R extends Row = Row>(c: Pick<PoolClient, "query">, text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** Statements of schema version 2. */
export function cronMigration(s: string): string[] {
  return [
    `CREATE TABLE ${s}.crons (
      cron_id text COLLATE "C" PRIMARY KEY,
      assistant_id text COLLATE "C" NOT NULL,
      thread_id text COLLATE "C",
      enabled boolean NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      updated_at text COLLATE "C" NOT NULL,
      next_run_date text COLLATE "C",
      revision bigint NOT NULL,
      metadata jsonb NOT NULL,
      doc json NOT NULL)`,
    `CREATE INDEX ON ${s}.crons (next_run_date, cron_id) WHERE enabled AND next_run_date IS NOT NULL`,
    `CREATE INDEX ON ${s}.crons USING gin (metadata jsonb_path_ops)`,
    `CREATE INDEX ON ${s}.crons (created_at, cron_id)`,
    `CREATE INDEX ON ${s}.crons (thread_id)`,
    `CREATE INDEX ON ${s}.crons (assistant_id)`,
  ];
}

const COLUMNS = "cron_id, assistant_id, thread_id, enabled, created_at, updated_at, next_run_date, revision, metadata, doc";
const VALUES = "$1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::json";

function params(cron: CronRecord): unknown[] {
  const { metadata, ...rest } = cron;
  return [
    cron.cron_id,
    cron.assistant_id,
    cron.thread_id,
    cron.enabled,
    cron.created_at,
    cron.updated_at,
    cron.next_run_date,
    cron.revision,
    JSON.stringify(metadata ?? {}),
    JSON.stringify(rest),
  ];
}

const toCron = (row: Row): CronRecord => ({ ...(row.doc as object), metadata: row.metadata }) as CronRecord;

/** `cron.put` / `cron.delete` inside a commit's transaction; a failed expectation is `conflict`. */
export async function applyCronOp(q: RunSql, c: PoolClient, s: string, op: Extract<WriteOp, { op: "cron.put" | "cron.delete" }>): Promise<void> {
  const e = op.expect;
  const id = op.op === "cron.put" ? op.cron.cron_id : op.cron_id;
  const fail = async () => {
    const { rows } = await q<{ revision: string }>(c, `SELECT revision FROM ${s}.crons WHERE cron_id = $1`, [id]);
    const found = rows[0] ? `revision ${rows[0].revision}` : "no cron";
    return conflict(`${op.op} of cron ${id}: expected ${e?.exists === false ? "no cron" : e?.revision !== undefined ? `revision ${e.revision}` : "the cron"}, found ${found}`);
  };
  if (op.op === "cron.delete") {
    if (e?.exists === false) {
      const { rowCount } = await q(c, `SELECT 1 FROM ${s}.crons WHERE cron_id = $1`, [id]);
      if (rowCount) throw await fail();
      return;
    }
    const res = await q(c, `DELETE FROM ${s}.crons WHERE cron_id = $1 AND ($2::bigint IS NULL OR revision = $2)`, [id, e?.revision ?? null]);
    if (res.rowCount === 0 && (e?.exists === true || e?.revision !== undefined)) throw await fail();
    return;
  }
  const values = params(op.cron);
  let res;
  if (e?.exists === false) {
    res = await q(c, `INSERT INTO ${s}.crons (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (cron_id) DO NOTHING`, values);
  } else if (e?.revision !== undefined || e?.exists === true) {
    res = await q(
      c,
      `UPDATE ${s}.crons SET assistant_id = $2, thread_id = $3, enabled = $4, created_at = $5, updated_at = $6, next_run_date = $7,
         revision = $8, metadata = $9::jsonb, doc = $10::json WHERE cron_id = $1 AND ($11::bigint IS NULL OR revision = $11)`,
      [...values, e.revision ?? null],
    );
  } else {
    res = await q(
      c,
      `INSERT INTO ${s}.crons (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (cron_id) DO UPDATE SET assistant_id = EXCLUDED.assistant_id,
         thread_id = EXCLUDED.thread_id, enabled = EXCLUDED.enabled, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
         next_run_date = EXCLUDED.next_run_date, revision = EXCLUDED.revision, metadata = EXCLUDED.metadata, doc = EXCLUDED.doc`,
      values,
    );
  }
  if (res.rowCount === 0) throw await fail();
}

function cronWhere(query: CronQuery, ps: Params): string {
  const parts: string[] = [];
  if (query.ids && query.ids.length) parts.push(`cron_id = ANY(${ps.p([...query.ids])}::text[])`);
  if (query.assistant_id !== undefined) parts.push(`assistant_id = ${ps.p(query.assistant_id)}`);
  if (query.thread_id !== undefined) parts.push(`thread_id = ${ps.p(query.thread_id)}`);
  if (query.enabled !== undefined) parts.push(`enabled = ${ps.p(query.enabled)}`);
  if (query.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(query.metadata)}`);
  parts.push(...authWhere("metadata", query.auth, ps));
  return where(parts);
}

/** Cron reads over the store's pool (`pools()`: the pool of the moment; a store reopened gets a new one). */
export function cronReads(q: RunSql, pools: () => pg.Pool, s: string) {
  return {
    async getCron(cronId: string): Promise<CronRecord | undefined> {
      const { rows } = await q(pools(), `SELECT doc, metadata FROM ${s}.crons WHERE cron_id = $1`, [cronId]);
      return rows[0] ? toCron(rows[0]) : undefined;
    },
    async queryCrons(query: CronQuery): Promise<CronRecord[]> {
      const ps = new Params();
      const w = cronWhere(query, ps);
      const field = query.sortBy ?? "created_at";
      // A missing thread or next run compares as "" (first ascending), as the in-memory evaluator.
      const key = field === "thread_id" || field === "next_run_date" ? `COALESCE(${field}, '')` : field;
      const d = dir(query.sortOrder, "desc");
      const { rows } = await pools().query(`SELECT doc, metadata FROM ${s}.crons${w} ORDER BY ${key} ${d}, cron_id ${d}${page(ps, query)}`, ps.values);
      return rows.map(toCron);
    },
    async countCrons(query: CronQuery): Promise<number> {
      const ps = new Params();
      const { rows } = await pools().query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.crons${cronWhere(query, ps)}`, ps.values);
      return rows[0]!.n;
    },
    async dueCrons(asOf?: string, limit = 100): Promise<CronRecord[]> {
      const { rows } = await q(
        pools(),
        `SELECT doc, metadata FROM ${s}.crons WHERE enabled AND next_run_date IS NOT NULL AND ($1::text IS NULL OR next_run_date <= $1)
          ORDER BY next_run_date, cron_id LIMIT $2`,
        [asOf ?? null, limit],
      );
      return rows.map(toCron);
    },
  };
}
