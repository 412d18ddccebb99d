/**
 * Leases in the PostgreSQL store: taken, renewed and released by conditional statements, judged
 * at the database's clock (or the caller's: `leaseClock`), and read with their expiry told on
 * the reader's clock.
 */
import type { PoolClient } from "pg";
import { conflict } from "../errors.js";
import { describeOp } from "../persistence/common.js";
import type { Lease, WriteOp } from "../persistence/types.js";
import type { PgBatch } from "./batch.js";
import { num, type PgCore, type Row } from "./core.js";
import { page, Params } from "./sql.js";

/** Deletes a lease, held by `$2` when given. */
const DELETE_LEASE = (s: string) => `DELETE FROM ${s}.leases WHERE key = $1 AND ($2::text IS NULL OR owner = $2)`;

export class PgLeases {
  constructor(private readonly core: PgCore) {}

  /** The statement a `lease.put` runs: an upsert, a take if free (or expired), or a renewal by its holder. */
  private leaseStatement(op: Extract<WriteOp, { op: "lease.put" }>): { sql: string; params: unknown[] } {
    const { key, owner, expires_at, data } = op.lease;
    const s = this.core.s;
    const now = op.expect ? op.expect.now : this.core.callerNow();
    if (op.expect && this.core.dbClock) this.core.callerNow(now);
    // $5: the caller's now; the expiry on the database's clock is its duration from clock_timestamp().
    const params: unknown[] = [key, owner, expires_at, JSON.stringify(data ?? {}), now];
    const insert = `INSERT INTO ${s}.leases (key, owner, expires_at, expires_db, data)
                    VALUES ($1, $2, $3, clock_timestamp() + ($3::bigint - $5::bigint) * interval '1 millisecond', $4::json)`;
    const set = `owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, expires_db = EXCLUDED.expires_db, data = EXCLUDED.data`;
    const expired = this.core.dbClock ? `expires_db < clock_timestamp()` : `expires_at < $5`;
    if (!op.expect) return { sql: `${insert} ON CONFLICT (key) DO UPDATE SET ${set}`, params };
    // Taken only if absent or expired; a concurrent taker waits for us, then sees it live.
    if (op.expect.state === "free") return { sql: `${insert} ON CONFLICT (key) DO UPDATE SET ${set} WHERE ${s}.leases.${expired}`, params };
    return {
      sql: `UPDATE ${s}.leases SET owner = $2, expires_at = $3, expires_db = clock_timestamp() + ($3::bigint - $5::bigint) * interval '1 millisecond', data = $4::json
              WHERE key = $1 AND owner = $2 AND NOT (${expired})`,
      params,
    };
  }

  async putLease(c: PoolClient, op: Extract<WriteOp, { op: "lease.put" }>): Promise<void> {
    const { sql, params } = this.leaseStatement(op);
    const res = await this.core.q(c, sql, params);
    if (!op.expect || res.rowCount !== 0) return;
    const { key, owner } = op.lease;
    const s = this.core.s;
    const { rows } = this.core.dbClock
      ? await this.core.q<{ owner: string; live: boolean }>(c, `SELECT owner, expires_db >= clock_timestamp() AS live FROM ${s}.leases WHERE key = $1`, [key])
      : await this.core.q<{ owner: string; live: boolean }>(c, `SELECT owner, expires_at >= $2 AS live FROM ${s}.leases WHERE key = $1`, [key, params[4]]);
    const cur = rows[0];
    throw conflict(`${describeOp(op)}: expected it ${op.expect.state === "free" ? "free" : `held by ${owner}`}, ` + (cur?.live ? `held by ${cur.owner}` : "it is free"));
  }

  /**
   * `lease.put` / `lease.delete` in a commit sent in one round trip (./batch.ts): a conditional
   * put must touch its row (else the statement-by-statement path says who holds the lease).
   */
  batchLease(b: PgBatch, op: Extract<WriteOp, { op: "lease.put" | "lease.delete" }>): boolean {
    if (op.op === "lease.delete") {
      b.add(DELETE_LEASE(this.core.s), [op.key, op.owner ?? null]);
      return true;
    }
    const { sql, params } = this.leaseStatement(op);
    if (op.expect) b.addOneRow(sql, params);
    else b.add(sql, params);
    return true;
  }

  /** `lease.delete`. */
  async deleteLease(c: PoolClient, op: Extract<WriteOp, { op: "lease.delete" }>): Promise<void> {
    const s = this.core.s;
    await this.core.q(c, DELETE_LEASE(s), [op.key, op.owner ?? null]);
  }

  /** Lease columns; `remaining`: ms until it expires on the database's clock. */
  private readonly leaseCols = `key, owner, expires_at, data, (extract(epoch FROM expires_db - clock_timestamp()) * 1000)::float8 AS remaining`;

  private toLease(row: Row): Lease {
    // On the database's clock, `expires_at` is told on the reader's clock (its remaining time from now).
    const expires = this.core.dbClock ? Math.round(this.core.callerNow() + num(row.remaining)) : num(row.expires_at);
    return { key: row.key as string, owner: row.owner as string, expires_at: expires, data: row.data as Record<string, unknown> };
  }

  async getLease(key: string): Promise<Lease | undefined> {
    const { rows } = await this.core.q(this.core.pool, `SELECT ${this.leaseCols} FROM ${this.core.s}.leases WHERE key = $1`, [key]);
    return rows[0] ? this.toLease(rows[0]) : undefined;
  }

  async expiredLeases(prefix: string, now: number, limit?: number): Promise<Lease[]> {
    const ps = new Params();
    if (this.core.dbClock) this.core.callerNow(now);
    const cond = this.core.dbClock ? `expires_db < clock_timestamp()` : `expires_at < ${ps.p(now)}`;
    const order = this.core.dbClock ? `expires_db, key` : `expires_at, key`;
    const { rows } = await this.core.pool.query(
      `SELECT ${this.leaseCols} FROM ${this.core.s}.leases
        WHERE ${cond} AND starts_with(key, ${ps.p(prefix)}) ORDER BY ${order}${page(ps, { limit })}`,
      ps.values,
    );
    return rows.map((r) => this.toLease(r));
  }
}
