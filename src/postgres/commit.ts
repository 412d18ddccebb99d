/**
 * Commits of the PostgreSQL store: a commit's ops in one transaction, in order; each expectation
 * judged under a row lock (or by an `INSERT ... ON CONFLICT` whose outcome is the judgement),
 * against the state the earlier ops of the transaction left. A failed expectation rolls
 * everything back and rejects with `conflict`; deadlocks and serialization failures are retried
 * transparently (nothing was written). `notify` ops become `pg_notify` calls sent with COMMIT
 * (delivered on commit). A commit that is one statement (one simple op, a checkpoint put, the
 * engine's step commit) runs without a transaction block. A commit whose every op has a statement
 * that judges its own expectation (a run's admission, its outcome with its last step, lease
 * changes) is sent in ONE round trip (./batch.ts); when that fails, nothing was written and the
 * commit runs statement by statement, as described above.
 */
import type { PoolClient } from "pg";
import { GraphdockError, invalidInput } from "../errors.js";
import { checkOp } from "../persistence/common.js";
import type { WriteOp } from "../persistence/types.js";
import type { PgAssistants } from "./assistants.js";
import { PgBatch } from "./batch.js";
import type { PgCheckpoints, Staged } from "./checkpoints.js";
import type { PgCore } from "./core.js";
import { applyCronOp } from "./crons.js";
import type { PgDocs } from "./docs.js";
import * as items from "./items.js";
import type { PgLeases } from "./leases.js";
import type { PgRuns } from "./runs.js";
import type { PgThreads } from "./threads.js";

const RETRYABLE = new Set(["40P01", "40001"]);

const INVALID = new Set(["22P05", "22021", "22023", "54000", "22P02"]);

/** Ops that are one statement when they succeed (a failed one may read more, writing nothing). */
function SINGLE_STATEMENT(op: WriteOp): boolean {
  switch (op.op) {
    case "checkpoint.put":
    case "notify":
    case "checkpoint.delete":
      return false;
    case "thread.delete":
    case "run.delete":
    case "cron.delete":
    case "cron.put":
      return !op.expect;
    default:
      return true;
  }
}

/** The engine's step commit: one task's writes on a checkpoint, then its child checkpoint. */
function stepCommit(ops: readonly WriteOp[]): ops is [Extract<WriteOp, { op: "writes.put" }>, Extract<WriteOp, { op: "checkpoint.put" }>] {
  if (ops.length !== 2 || ops[0]!.op !== "writes.put" || ops[1]!.op !== "checkpoint.put") return false;
  const [w, cp] = [ops[0], ops[1].checkpoint];
  return w.thread_id === cp.thread_id && (w.checkpoint_ns ?? "") === (cp.checkpoint_ns ?? "") && w.checkpoint_id === cp.parent_checkpoint_id;
}

/** The store's parts a commit writes through. */
export interface PgParts {
  assistants: PgAssistants;
  threads: PgThreads;
  checkpoints: PgCheckpoints;
  runs: PgRuns;
  leases: PgLeases;
  docs: PgDocs;
}

export class PgCommits {
  private notifySeq = 0;
  /** The statements of one-round-trip commits (./batch.ts) each connection has prepared. */
  private readonly prepared = new WeakMap<PoolClient, Set<string>>();

  constructor(
    private readonly core: PgCore,
    private readonly parts: PgParts,
    /** The NOTIFY channel of the schema. */
    private readonly channel: string,
  ) {}

  async commit(ops: readonly WriteOp[]): Promise<void> {
    for (const op of ops) checkOp(op);
    if (ops.length === 0) return;
    // One op that is one statement needs no transaction block (a statement is atomic): saves two round trips.
    const single = ops.length === 1 && SINGLE_STATEMENT(ops[0]!);
    for (let attempt = 0; ; attempt++) {
      const staged: Staged = new Map();
      const client = await this.core.pool.connect();
      let broken = false;
      try {
        const only = ops.length === 1 ? ops[0]! : undefined;
        if (single) await this.apply(client, only!, staged, []);
        // A checkpoint put in one statement when it can be (the common step of a run), else in a transaction.
        else if (only?.op === "checkpoint.put" && (await this.parts.checkpoints.putCheckpoint(client, only.checkpoint, staged, true))) {
          // Stored in one statement.
        } else if (stepCommit(ops) && (await this.parts.checkpoints.putCheckpoint(client, ops[1].checkpoint, staged, true, ops[0]))) {
          // A task's writes and the next checkpoint in one statement.
        } else if (only?.op !== "checkpoint.put" && !stepCommit(ops) && (await this.oneTrip(client, ops, staged))) {
          // The whole transaction in one round trip (./batch.ts); a checkpoint put alone or a step commit tried its own above.
        } else {
          await client.query("BEGIN");
          const notes: string[] = [];
          for (const op of ops) await this.apply(client, op, staged, notes);
          // The notifications go with COMMIT in one simple query (one round trip; delivered on commit).
          const notify = notes.map((n) => `SELECT pg_notify(${client.escapeLiteral(this.channel)}, ${client.escapeLiteral(n)});`).join(" ");
          await client.query(`${notify} COMMIT`);
        }
      } catch (err) {
        try {
          if (!single) await client.query("ROLLBACK");
        } catch {
          broken = true;
        }
        const code = (err as { code?: string }).code;
        if (code && RETRYABLE.has(code) && attempt < 8) {
          client.release(broken);
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
          continue;
        }
        client.release(broken);
        if (GraphdockError.is(err)) throw err;
        if (code && INVALID.has(code)) throw invalidInput(`graphdock/postgres: a value cannot be stored: ${(err as Error).message}`);
        throw err;
      }
      client.release();
      for (const [key, put] of staged) this.parts.checkpoints.remember(key, put);
      return;
    }
  }

  private async apply(c: PoolClient, op: WriteOp, staged: Staged, notes: string[]): Promise<void> {
    const { assistants, threads, checkpoints, runs, leases, docs } = this.parts;
    switch (op.op) {
      case "assistant.put":
        return assistants.putAssistant(c, op);
      case "assistant.delete":
        return assistants.deleteAssistant(c, op);
      case "assistant_version.put":
        return assistants.putVersion(c, op);
      case "thread.put":
        return threads.putThread(c, op, staged);
      case "thread.delete":
        return threads.deleteThread(c, op, staged);
      case "checkpoint.put":
        return checkpoints.put(c, op, staged);
      case "checkpoint.delete":
        return checkpoints.delete(c, op);
      case "writes.put":
        return checkpoints.putWrites(c, op, staged);
      case "run.put":
        return runs.putRun(c, op);
      case "run.delete":
        return runs.deleteRun(c, op);
      case "cancel.put":
        return runs.putCancel(c, op);
      case "lease.put":
        return leases.putLease(c, op);
      case "lease.delete":
        return leases.deleteLease(c, op);
      case "doc.put":
        return docs.putDoc(c, op);
      case "doc.delete":
        return docs.deleteDoc(c, op);
      case "item.put":
      case "item.delete":
      case "item.touch": {
        const { text, values } = items.itemOpSql(this.core.s, op);
        await this.core.q(c, text, values);
        return;
      }
      case "cron.put":
      case "cron.delete":
        return applyCronOp((cl, text, values) => this.core.q(cl, text, values), c, this.core.s, op);
      case "notify": {
        const note = this.note(op);
        if (Buffer.byteLength(note) > 7900) {
          throw invalidInput(`notify on "${op.topic}": the topic and payload take ${Buffer.byteLength(note)} bytes; PostgreSQL carries at most 7,900`);
        }
        notes.push(note);
        return;
      }
    }
  }

  /** A `notify` op's NOTIFY payload. */
  private note(op: Extract<WriteOp, { op: "notify" }>): string {
    return `n${JSON.stringify(op.payload === undefined ? { t: op.topic, i: this.notifySeq++ } : { t: op.topic, p: op.payload, i: this.notifySeq++ })}`;
  }

  /**
   * The commit in ONE round trip when every op has a statement that judges its own expectation
   * (./batch.ts): the hot path of a run (its admission, its outcome with the last step, lease
   * changes). False, with nothing written and `staged` emptied, when an op needs the
   * statement-by-statement path or the transaction failed (an expectation not holding, a value
   * refused, a deadlock): that path then runs the commit and reports what went wrong, as it would
   * have. A lost connection is thrown (what was written is unknown, as with COMMIT).
   */
  private async oneTrip(c: PoolClient, ops: readonly WriteOp[], staged: Staged): Promise<boolean> {
    const { threads, checkpoints, runs, leases } = this.parts;
    const b = new PgBatch(this.core.s);
    const notes: string[] = [];
    const fail = () => (staged.clear(), false);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      let ok = false;
      switch (op.op) {
        case "thread.put":
          ok = threads.batchPutThread(b, op, staged);
          break;
        case "run.put":
          ok = runs.batchPutRun(b, op);
          break;
        case "lease.put":
        case "lease.delete":
          ok = leases.batchLease(b, op);
          break;
        case "checkpoint.put":
          ok = await checkpoints.putCheckpoint(c, op.checkpoint, staged, true, undefined, b);
          break;
        case "writes.put": {
          // A task's writes with the next checkpoint (the run's last step), as the engine's step commit.
          const pair = ops.slice(i, i + 2);
          if (stepCommit(pair)) ok = await checkpoints.putCheckpoint(c, pair[1].checkpoint, staged, true, pair[0], b);
          i++;
          break;
        }
        case "notify": {
          const note = this.note(op);
          ok = Buffer.byteLength(note) <= 7900;
          notes.push(note);
          break;
        }
      }
      if (!ok || !b.ok) return fail();
    }
    for (const note of notes) b.add(`SELECT pg_notify($1, $2)`, [this.channel, note]);
    if (!b.ok) return fail();
    let prepared = this.prepared.get(c);
    if (!prepared) this.prepared.set(c, (prepared = new Set()));
    const added = new Set<string>();
    try {
      await c.query(b.text(prepared, added));
    } catch (err) {
      // The server refused it (the implicit transaction rolled back): the other path says why.
      if (typeof (err as { code?: unknown }).code === "string" && (err as { severity?: unknown }).severity !== undefined) {
        // PREPARE is not undone by a rollback: which of this query's ran is asked (rare: a failed commit).
        const { rows } = await c.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE starts_with(name, 'graphdock_b_')`);
        this.prepared.set(c, new Set(rows.map((r) => r.name)));
        return fail();
      }
      throw err;
    }
    for (const name of added) prepared.add(name);
    return true;
  }
}
