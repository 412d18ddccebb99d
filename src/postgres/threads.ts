/**
 * Threads in the PostgreSQL store: conditional puts judged in one statement where they can be,
 * the values' lists stored as references to the latest checkpoint's list logs, deletion of a
 * thread with everything of it, and reads (the auth filter and containment in SQL).
 */
import type { PoolClient } from "pg";
import { conflict } from "../errors.js";
import { contains } from "../json.js";
import { describeOp } from "../persistence/common.js";
import { paged } from "../persistence/query.js";
import type { ThreadExpectation, ThreadQuery, WriteOp } from "../persistence/types.js";
import type { ThreadRecord } from "../types.js";
import type { PgBatch } from "./batch.js";
import type { PgCheckpoints, Staged } from "./checkpoints.js";
import { num, type PgCore, type Row } from "./core.js";
import { keySql } from "./cp-keys.js";
import { refChunksFrom } from "./chunks.js";
import { authWhere, dir, page, Params, where } from "./sql.js";

export class PgThreads {
  constructor(
    private readonly core: PgCore,
    private readonly checkpoints: PgCheckpoints,
  ) {}

  /** The parameters of `thread.put`'s statements ($1-$8). */
  private threadParams(t: ThreadRecord): unknown[] {
    const { metadata, values, ...rest } = t;
    return [t.thread_id, t.status, t.created_at, t.updated_at, t.state_updated_at, JSON.stringify(metadata ?? {}), JSON.stringify(values ?? {}), JSON.stringify(rest)];
  }

  private insertSql(): string {
    const s = this.core.s;
    return `INSERT INTO ${s}.threads (thread_id, status, created_at, updated_at, state_updated_at, metadata, vals, doc, revision, vals_refs)
                    VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::json, $8::json, nextval('${s}.revisions'), NULL)`;
  }

  /** The conditional UPDATE: $9 statuses, $10 revision (-1: any), $11 list references, $12 their logs. */
  private updateSql(): string {
    const s = this.core.s;
    return `UPDATE ${s}.threads SET status = $2, created_at = $3, updated_at = $4, state_updated_at = $5, metadata = $6::jsonb, vals = $7::json,
             doc = $8::json, revision = nextval('${s}.revisions'), vals_refs = $11::json
            WHERE thread_id = $1 AND ($9::text[] IS NULL OR status = ANY($9::text[])) AND ($10::bigint < 0 OR revision = $10::bigint)
              AND ($12::bigint[] IS NULL OR (SELECT count(*) FROM ${s}.cp_logs l WHERE l.log_id = ANY($12::bigint[]) AND l.thread_id = $1) = cardinality($12::bigint[]))`;
  }

  private updateParams(params: unknown[], e: ThreadExpectation, revision: number, vals: unknown, refs: Record<string, [number, number]> | null): unknown[] {
    return [...params.slice(0, 6), JSON.stringify(vals), ...params.slice(7), e.status ? [...e.status] : null, revision, refs && JSON.stringify(refs), refs && Object.values(refs).map(([log]) => log)];
  }

  private upsertSql(): string {
    return `${this.insertSql()} ON CONFLICT (thread_id) DO UPDATE SET status = EXCLUDED.status, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
         state_updated_at = EXCLUDED.state_updated_at, metadata = EXCLUDED.metadata, vals = EXCLUDED.vals, doc = EXCLUDED.doc, revision = EXCLUDED.revision,
         vals_refs = NULL`;
  }

  async putThread(c: PoolClient, op: Extract<WriteOp, { op: "thread.put" }>, staged: Staged): Promise<void> {
    const t = op.thread;
    const values = t.values;
    const e = op.expect;
    const params = this.threadParams(t);
    if (e && e.exists === false && !e.status && !e.sameAs) {
      const r = await this.core.q(c, `${this.insertSql()} ON CONFLICT (thread_id) DO NOTHING`, params);
      if (r.rowCount === 0) throw conflict(`${describeOp(op)}: expected the thread not to exist`);
      return;
    }
    if (e && e.exists !== false && (e.exists === true || e.status || e.sameAs)) {
      // One conditional UPDATE: it locks the row and judges the expectation on the latest version.
      let revision = -1;
      if (e.sameAs) {
        const read = this.core.revisions.get(e.sameAs);
        if (read === undefined) throw conflict(`${describeOp(op)}: the thread changed since it was read`);
        revision = read;
      }
      const update = (vals: unknown, refs: Record<string, [number, number]> | null) => this.core.q(c, this.updateSql(), this.updateParams(params, e, revision, vals, refs));
      // The state's lists are the latest checkpoint's: refer to its logs rather than copy them
      // (a chat's thread row stays small however long the chat).
      const shared = this.checkpoints.threadRefs(t.thread_id, values ?? {}, staged);
      let r = await update(shared?.vals ?? values ?? {}, shared?.refs ?? null);
      // A log gone (the thread was deleted and created again elsewhere): store the values themselves.
      if (r.rowCount === 0 && shared) r = await update(values ?? {}, null);
      if (r.rowCount === 0) {
        await this.checkThread(c, op, t.thread_id, e);
        throw conflict(`${describeOp(op)}: the thread changed since it was read`);
      }
      return;
    }
    if (e) await this.checkThread(c, op, t.thread_id, e);
    await this.core.q(c, this.upsertSql(), params);
  }

  /**
   * `thread.put` in a commit sent in one round trip (./batch.ts), each expectation judged by its
   * statement; false when the op needs the statement-by-statement path.
   */
  batchPutThread(b: PgBatch, op: Extract<WriteOp, { op: "thread.put" }>, staged: Staged): boolean {
    const t = op.thread;
    const e = op.expect;
    const params = this.threadParams(t);
    if (!e) {
      b.add(this.upsertSql(), params);
      return true;
    }
    if (e.exists === false && !e.status && !e.sameAs) {
      b.addOneRow(`${this.insertSql()} ON CONFLICT (thread_id) DO NOTHING`, params);
      return true;
    }
    if (e.exists !== false && (e.exists === true || e.status || e.sameAs)) {
      const revision = e.sameAs ? this.core.revisions.get(e.sameAs) : -1;
      if (revision === undefined) return false;
      // A log gone makes the statement fail too: the statement-by-statement path stores the values themselves.
      const shared = this.checkpoints.threadRefs(t.thread_id, t.values ?? {}, staged);
      b.addOneRow(this.updateSql(), this.updateParams(params, e, revision, shared?.vals ?? t.values ?? {}, shared?.refs ?? null));
      return true;
    }
    return false;
  }

  async checkThread(c: PoolClient, op: WriteOp, threadId: string, expect: ThreadExpectation): Promise<void> {
    const { rows } = await this.core.q<{ status: string; revision: string }>(c, `SELECT status, revision FROM ${this.core.s}.threads WHERE thread_id = $1 FOR UPDATE`, [
      threadId,
    ]);
    const t = rows[0];
    if (expect.exists !== undefined && expect.exists !== (t !== undefined)) {
      throw conflict(`${describeOp(op)}: expected the thread ${expect.exists ? "to exist" : "not to exist"}`);
    }
    if (expect.status && (!t || !expect.status.includes(t.status as never))) {
      throw conflict(`${describeOp(op)}: expected status ${expect.status.join(" or ")}, found ${t ? t.status : "no thread"}`);
    }
    if (expect.sameAs) {
      const read = this.core.revisions.get(expect.sameAs);
      if (!t || read === undefined || read !== num(t.revision)) throw conflict(`${describeOp(op)}: the thread changed since it was read`);
    }
  }

  /** `thread.delete`: the thread, its checkpoints, lists, runs and cancel requests. */
  async deleteThread(c: PoolClient, op: Extract<WriteOp, { op: "thread.delete" }>, staged: Staged): Promise<void> {
    const s = this.core.s;
    if (op.expect) await this.checkThread(c, op, op.thread_id, op.expect);
    await this.core.q(c, 
      `WITH t AS (DELETE FROM ${s}.threads WHERE thread_id = $1),
            cp AS (DELETE FROM ${s}.checkpoints WHERE thread_id = ${keySql("$1")}),
            l AS (DELETE FROM ${s}.cp_logs WHERE thread_id = $1 RETURNING log_id),
            ch AS (DELETE FROM ${s}.cp_chunks WHERE log_id IN (SELECT log_id FROM l)),
            mb AS (DELETE FROM ${s}.cp_meta WHERE thread_id = $1),
            r AS (DELETE FROM ${s}.runs WHERE thread_id = $1 RETURNING run_id),
            cr AS (DELETE FROM ${s}.cancels WHERE run_id IN (SELECT run_id FROM r))
       DELETE FROM ${s}.cancels WHERE thread_id = $1`,
      [op.thread_id],
    );
    this.checkpoints.forgetThread(op.thread_id, staged);
  }

  private toThread(row: Row, items?: Map<number, unknown[]>): ThreadRecord {
    const values = row.vals as Record<string, unknown>;
    const refs = row.vals_refs as Record<string, [number | string, number]> | null;
    if (refs) for (const [channel, [log, n]] of Object.entries(refs)) values[channel] = (items?.get(num(log)) ?? []).slice(0, n);
    const t = { ...(row.doc as object), metadata: row.metadata, values } as ThreadRecord;
    this.core.revisions.set(t, num(row.revision));
    return t;
  }

  /** Thread rows -> records, the lists they refer to read in one more query. */
  private async toThreads(rows: Row[]): Promise<ThreadRecord[]> {
    const logs: number[] = [];
    const ns: number[] = [];
    for (const row of rows) {
      const refs = row.vals_refs as Record<string, [number | string, number]> | null;
      if (refs) for (const [log, n] of Object.values(refs)) logs.push(num(log)), ns.push(n);
    }
    const items = new Map<number, unknown[]>();
    if (logs.length) {
      const { rows: chunks } = await this.core.pool.query<{ log_id: string; items: unknown[] }>(
        `SELECT DISTINCT ON (c.log_id, c.start) c.log_id, c.start, c.items FROM ${this.core.s}.cp_chunks c
           JOIN unnest($1::bigint[], $2::int[]) AS r(log_id, n) ON c.log_id = r.log_id AND c.start < r.n
          ORDER BY c.log_id, c.start`,
        [logs, ns],
      );
      for (const ch of chunks) {
        const log = num(ch.log_id);
        let list = items.get(log);
        if (!list) items.set(log, (list = []));
        for (const item of ch.items) list.push(item);
      }
    }
    return rows.map((row) => this.toThread(row, items));
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    // One query: the row and the chunks of the lists it refers to.
    const { rows } = await this.core.q(
      this.core.pool,
      `SELECT t.doc, t.metadata, t.vals, t.revision, t.vals_refs,
              (SELECT json_agg(json_build_array(ch.log_id, ch.items) ORDER BY ch.log_id, ch.start)
                 FROM ${refChunksFrom(this.core.s, "t.vals_refs")}) AS chunks
         FROM ${this.core.s}.threads t WHERE t.thread_id = $1`,
      [threadId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const items = new Map<number, unknown[]>();
    for (const [log, part] of (row.chunks as Array<[number | string, unknown[]]> | null) ?? []) {
      let list = items.get(num(log));
      if (!list) items.set(num(log), (list = []));
      for (const item of part) list.push(item);
    }
    return this.toThread(row, items);
  }

  private threadWhere(q: ThreadQuery, ps: Params): string {
    const parts: string[] = [];
    if (q.ids && q.ids.length) parts.push(`thread_id = ANY(${ps.p([...q.ids])}::text[])`);
    if (q.status !== undefined) parts.push(`status = ${ps.p(q.status)}`);
    if (q.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(q.metadata)}`);
    // Rows whose lists are references are judged once read (`queryThreads`).
    if (q.values !== undefined) parts.push(`(vals_refs IS NOT NULL OR vals::jsonb @> ${ps.jsonb(q.values)})`);
    parts.push(...authWhere("metadata", q.auth, ps));
    return where(parts);
  }

  async queryThreads(q: ThreadQuery): Promise<ThreadRecord[]> {
    const ps = new Params();
    const w = this.threadWhere(q, ps);
    const field = { thread_id: "thread_id", status: "status", created_at: "created_at", updated_at: "updated_at", state_updated_at: "state_updated_at" }[
      q.sortBy ?? "created_at"
    ];
    const d = dir(q.sortOrder, "desc");
    const inJs = q.values !== undefined;
    const { rows } = await this.core.pool.query(
      `SELECT thread_id, doc, metadata, vals, revision, vals_refs FROM ${this.core.s}.threads${w} ORDER BY ${field} ${d}, thread_id ${d}${inJs ? "" : page(ps, q)}`,
      ps.values,
    );
    if (!inJs) return this.toThreads(rows);
    const hit = (await this.toThreads(rows)).filter((t) => contains(t.values, q.values));
    return paged(hit, q);
  }

  async countThreads(q: ThreadQuery): Promise<number> {
    if (q.values !== undefined) return (await this.queryThreads({ ...q, limit: undefined, offset: undefined })).length;
    const ps = new Params();
    const { rows } = await this.core.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.core.s}.threads${this.threadWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }
}
