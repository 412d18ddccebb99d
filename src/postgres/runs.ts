/**
 * Runs in the PostgreSQL store: conditional puts (the queue position kept), claims of a thread's
 * next run in one round trip (`claim_run`, ./schema.ts), cancel requests, and reads.
 */
import type pg from "pg";
import type { PoolClient } from "pg";
import { conflict, invalidInput } from "../errors.js";
import { describeOp } from "../persistence/common.js";
import type { CancelRequest, RunClaim, RunClaimResult, RunQuery, WriteOp } from "../persistence/types.js";
import type { RunRecord } from "../types.js";
import type { PgBatch } from "./batch.js";
import { num, type PgCore, type Row } from "./core.js";
import { runDoc, runFromRow } from "./run-doc.js";
import { dir, page, Params, where } from "./sql.js";

export class PgRuns {
  constructor(private readonly core: PgCore) {}

  /** The statements a `run.put` runs, one by its expectation: create, conditional update, or upsert. */
  private runStatements(op: Extract<WriteOp, { op: "run.put" }>) {
    const r = op.run;
    const s = this.core.s;
    // The document leaves out what the columns hold, and the kwargs at their defaults (./run-doc.ts).
    const params: unknown[] = [r.run_id, r.thread_id, r.assistant_id, r.status, r.created_at, JSON.stringify(runDoc(r)), r.updated_at];
    const insert = `INSERT INTO ${s}.runs (run_id, thread_id, assistant_id, status, created_at, queue_seq, doc, updated_at)
                    VALUES ($1, $2, $3, $4, $5, nextval('${s}.run_queue'), $6::json, $7)`;
    return {
      params,
      create: `${insert} ON CONFLICT (run_id) DO NOTHING`,
      // One conditional UPDATE (the queue position is kept); $8: the statuses expected, if any.
      update: `UPDATE ${s}.runs SET assistant_id = $3, status = $4, created_at = $5, doc = $6::json, updated_at = $7
                WHERE run_id = $1 AND thread_id = $2 AND ($8::text[] IS NULL OR status = ANY($8::text[]))`,
      updateParams: [...params, op.expect?.status ? [...op.expect.status] : null],
      upsert: `${insert} ON CONFLICT (run_id) DO UPDATE SET assistant_id = EXCLUDED.assistant_id, status = EXCLUDED.status,
                 created_at = EXCLUDED.created_at, doc = EXCLUDED.doc, updated_at = EXCLUDED.updated_at WHERE ${s}.runs.thread_id = EXCLUDED.thread_id`,
    };
  }

  async putRun(c: PoolClient, op: Extract<WriteOp, { op: "run.put" }>): Promise<void> {
    const r = op.run;
    const e = op.expect;
    const sql = this.runStatements(op);
    if (e && e.exists === false && !e.status) {
      const res = await this.core.q(c, sql.create, sql.params);
      if (res.rowCount === 0) throw conflict(`${describeOp(op)}: expected the run not to exist`);
      return;
    }
    let res: pg.QueryResult<Row>;
    if (e && e.exists !== false && (e.exists === true || e.status)) {
      res = await this.core.q(c, sql.update, sql.updateParams);
      if (res.rowCount === 0) await this.checkRun(c, op, r.run_id, e);
    } else {
      if (e) await this.checkRun(c, op, r.run_id, e);
      res = await this.core.q(c, sql.upsert, sql.params);
    }
    if (res.rowCount === 0) {
      const { rows } = await this.core.q<{ thread_id: string }>(c, `SELECT thread_id FROM ${this.core.s}.runs WHERE run_id = $1`, [r.run_id]);
      throw invalidInput(`${describeOp(op)}: a run cannot move from thread ${rows[0]?.thread_id} to ${r.thread_id}`);
    }
  }

  /**
   * `run.put` in a commit sent in one round trip (./batch.ts): each statement must touch its row
   * (else the statement-by-statement path judges why); false when the op needs that path.
   */
  batchPutRun(b: PgBatch, op: Extract<WriteOp, { op: "run.put" }>): boolean {
    const e = op.expect;
    const sql = this.runStatements(op);
    if (e && e.exists === false && !e.status) b.addOneRow(sql.create, sql.params);
    else if (e && e.exists !== false && (e.exists === true || e.status)) b.addOneRow(sql.update, sql.updateParams);
    else if (!e) b.addOneRow(sql.upsert, sql.params);
    else return false;
    return true;
  }

  private async checkRun(c: PoolClient, op: WriteOp, runId: string, expect: { exists?: boolean; status?: readonly string[] }): Promise<void> {
    const { rows } = await this.core.q<{ status: string }>(c, `SELECT status FROM ${this.core.s}.runs WHERE run_id = $1 FOR UPDATE`, [runId]);
    const had = rows[0];
    if (expect.exists !== undefined && expect.exists !== (had !== undefined)) {
      throw conflict(`${describeOp(op)}: expected the run ${expect.exists ? "to exist" : "not to exist"}`);
    }
    if (expect.status && (!had || !expect.status.includes(had.status))) {
      throw conflict(`${describeOp(op)}: expected status ${expect.status.join(" or ")}, found ${had ? had.status : "no run"}`);
    }
  }

  /** `run.delete`: the run and its cancel request. */
  async deleteRun(c: PoolClient, op: Extract<WriteOp, { op: "run.delete" }>): Promise<void> {
    const s = this.core.s;
    if (op.expect) await this.checkRun(c, op, op.run_id, op.expect);
    await this.core.q(c, `WITH c AS (DELETE FROM ${s}.cancels WHERE run_id = $1) DELETE FROM ${s}.runs WHERE run_id = $1`, [op.run_id]);
  }

  /** `cancel.put`. */
  async putCancel(c: PoolClient, op: Extract<WriteOp, { op: "cancel.put" }>): Promise<void> {
    const s = this.core.s;
    await this.core.q(c, 
      `INSERT INTO ${s}.cancels (run_id, thread_id, doc) VALUES ($1, $2, $3::json)
       ON CONFLICT (run_id) DO UPDATE SET thread_id = EXCLUDED.thread_id, doc = EXCLUDED.doc`,
      [op.request.run_id, op.request.thread_id, JSON.stringify(op.request)],
    );
  }

  /**
   * Deletes the cancel requests of runs that have ended or are gone (a request is read only while
   * its run is in flight; an ended run's stays otherwise, as does one recorded as its run ended).
   */
  async pruneCancels(): Promise<number> {
    const s = this.core.s;
    const res = await this.core.pool.query(
      `DELETE FROM ${s}.cancels c WHERE NOT EXISTS (SELECT 1 FROM ${s}.runs r WHERE r.run_id = c.run_id AND r.status IN ('pending', 'running'))`,
    );
    return res.rowCount ?? 0;
  }

  async claimRun(claim: RunClaim): Promise<RunClaimResult> {
    if (this.core.dbClock) this.core.callerNow(claim.now);
    const { rows } = await this.core.q<{ outcome: RunClaimResult["outcome"]; doc: Row | null; not_before: number | null }>(
      this.core.pool,
      `SELECT outcome, doc, not_before FROM ${this.core.s}.claim_run($1, $2, $3, $4, $5, $6, $7, $8)`,
      [claim.thread_id, claim.key, claim.owner, claim.now, claim.expires_at, this.core.dbClock, [...claim.graph_ids], claim.updated_at],
    );
    const row = rows[0]!;
    switch (row.outcome) {
      case "claimed":
        return { outcome: "claimed", run: this.toRun(row.doc!) };
      case "stopped":
        return { outcome: "stopped", run: this.toRun(row.doc!) };
      case "later":
        return { outcome: "later", not_before: num(row.not_before) };
      default:
        return { outcome: "none" };
    }
  }

  /** The columns a run is read from ({@link toRun}). */
  private readonly runCols = `run_id, thread_id, assistant_id, created_at, status, updated_at, doc`;

  /** A run row: its columns and its document (./run-doc.ts). */
  private toRun(row: Row): RunRecord {
    return runFromRow(row);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const { rows } = await this.core.q(this.core.pool, `SELECT ${this.runCols} FROM ${this.core.s}.runs WHERE run_id = $1`, [runId]);
    return rows[0] ? this.toRun(rows[0]) : undefined;
  }

  private runWhere(q: RunQuery, ps: Params): string {
    const parts: string[] = [];
    if (q.thread_id !== undefined) parts.push(`thread_id = ${ps.p(q.thread_id)}`);
    if (q.assistant_id !== undefined) parts.push(`assistant_id = ${ps.p(q.assistant_id)}`);
    if (q.status !== undefined) {
      const list = typeof q.status === "string" ? [q.status] : [...q.status];
      // Spelled out for the planner: the partial index covers exactly pending and running.
      if (list.length === 2 && list.includes("pending") && list.includes("running")) parts.push(`status IN ('pending', 'running')`);
      else parts.push(`status = ANY(${ps.p(list)}::text[])`);
    }
    return where(parts);
  }

  async queryRuns(q: RunQuery): Promise<RunRecord[]> {
    const ps = new Params();
    const w = this.runWhere(q, ps);
    const order =
      (q.sortBy ?? "created_at") === "queue"
        ? `queue_seq ${dir(q.sortOrder, "asc")}`
        : `created_at ${dir(q.sortOrder, "desc")}, run_id ${dir(q.sortOrder, "desc")}`;
    const { rows } = await this.core.pool.query(`SELECT ${this.runCols} FROM ${this.core.s}.runs${w} ORDER BY ${order}${page(ps, q)}`, ps.values);
    return rows.map((r) => this.toRun(r));
  }

  async countRuns(q: RunQuery): Promise<number> {
    const ps = new Params();
    // Prepared (a run's outcome counts its thread's runs in flight): one statement per shape of query.
    const { rows } = await this.core.q<{ n: number }>(this.core.pool, `SELECT count(*)::int AS n FROM ${this.core.s}.runs${this.runWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }

  async getCancelRequest(runId: string): Promise<CancelRequest | undefined> {
    const { rows } = await this.core.q(this.core.pool, `SELECT doc FROM ${this.core.s}.cancels WHERE run_id = $1`, [runId]);
    return rows[0]?.doc as CancelRequest | undefined;
  }
}
