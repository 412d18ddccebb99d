/**
 * The PostgreSQL store (D22): several processes on one database act as one service (D20).
 *
 * - `commit` runs its ops in one transaction, in order; each expectation is judged under a row
 *   lock (or by an `INSERT ... ON CONFLICT` whose outcome is the judgement), against the state
 *   the earlier ops of the transaction left. A failed expectation rolls everything back and
 *   rejects with `conflict`; deadlocks and serialization failures are retried transparently
 *   (nothing was written).
 * - `notify` ops become `pg_notify` calls inside the transaction (delivered on commit) on one
 *   channel per schema that every store instance LISTENs on with one dedicated connection.
 * - Queries are SQL: containment with `@>` on jsonb (GIN indexed), the auth filter in the WHERE
 *   clause, sort, paging and counts in the database.
 * - Checkpoints are keyed by (thread, namespace, id); top-level array channel values are stored
 *   as prefixes of append-only logs, so a growing chat costs one chunk of new items per
 *   checkpoint, and any checkpoint reads back in two queries.
 * - `sameAs`: thread rows carry a revision (from a sequence); records this store returns are
 *   mapped to their revision in a WeakMap.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import type { Pool, PoolClient, Notification } from "pg";
import { AgentdockError, conflict, invalidInput, notFound } from "../errors.js";
import { contains, jsonEqual } from "../json.js";
import type { CronQuery } from "../persistence/crons.js";
import { applyCronOp, cronReads } from "./crons.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CancelRequest,
  CheckpointKey,
  DocCollection,
  Lease,
  ListCheckpointsOptions,
  PendingWrite,
  RunQuery,
  Store,
  RunClaim,
  RunClaimResult,
  StoreCapabilities,
  StoredCheckpoint,
  StoredDoc,
  ThreadExpectation,
  ThreadQuery,
  WriteOp,
} from "../persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../types.js";
import { PgRunEvents } from "./events.js";
import { runDoc, runFromRow } from "./run-doc.js";
import { migrate, quoteIdent } from "./schema.js";
import { authWhere, dir, page, Params, where } from "./sql.js";
import { checkOp, TopicListeners, describeOp } from "../persistence/common.js";
import type { ExpiredItem, ItemNamespaceQuery, ItemQuery, ScoredItem, StoredItem } from "../persistence/types.js";
import * as items from "./items.js";
import { indexItems, needs, reshare, resolve, share, type ItemIndex } from "./share.js";
import { baseOf, factor, unfactor } from "./meta.js";
import { diffLeaves, leavesOf, patchLeaves, type LeafDiff } from "../persistence/indexeddb/rows.js";
import { paged } from "../persistence/query.js";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; or give `pool`. */
  connectionString?: string;
  /** A `pg` Pool to use (not ended by `close`). LISTEN uses one more connection with the pool's settings. */
  pool?: Pool;
  /** The schema holding agentdock's tables (or `?schema=` in the URL). Default `agentdock`. */
  schema?: string;
  /** Size of the pool created from `connectionString`. Default 10. */
  max?: number;
  /** How often a reader of another process's run events polls without a notification. Default 1000 ms. */
  eventPollMs?: number;
  /** How long the events of an ended resumable run stay replayable. Default 15 minutes. */
  resumableRetentionMs?: number;
  /** How long the events of an ended non-resumable run stay for readers draining them. Default 60 s. */
  eventRetentionMs?: number;
  /** How often ended run event logs are pruned. Default 60 s. */
  pruneEveryMs?: number;
  /**
   * Whose clock judges lease expiry. `database` (default): PostgreSQL's `clock_timestamp()`, so
   * processes with skewed clocks cannot take each other's live leases; a lease's duration is
   * `expires_at - now` of the op that wrote it, and leases read back carry `expires_at` on the
   * reader's clock (estimated from the `now` it last passed). `caller`: the `now` of each
   * expectation and query, as in the other stores (tests that drive lease expiry with an injected
   * clock, D19). Every process on one database should use the same setting.
   */
  leaseClock?: "database" | "caller";
}

type Row = Record<string, unknown>;

/** A base (./meta.ts): its metadata, and its checkpoint record as read back from its text (leaf order). */
interface Base {
  id: number;
  record: Record<string, unknown>;
  cp: Record<string, unknown>;
}

/** How many bases of different checkpoint shapes (an input step's, a loop step's, ...) a thread's rows choose from. */
const BASES = 4;

/** A channel value stored as the first `n` items of log `log`. */
interface ArrayRef {
  log: number;
  n: number;
}

/** What a recent checkpoint put stored for its array channels, with the items (immutable facts). */
interface PutArrays {
  id: string;
  arrays: Map<string, { log: number; n: number; items: readonly unknown[] }>;
  /** The row's pending writes as this store last wrote them (schema 5: the `writes` column); absent when unknown. */
  writes?: RowWrites;
  /** The bases rows of this thread may use (./meta.ts), the one the row used first: one metadata record, checkpoint records of several shapes. */
  bases?: Base[];
  /** What the row stores (schema 5), to share it again against what its child appends. */
  row?: StoredRow;
}

/**
 * A checkpoint row's pending writes (schema 5): entries `[task, channel, value]` in shared form,
 * in the order written (a task's writes replace its earlier ones and go last); `text` is the
 * column's text as written (null: no writes).
 */
interface RowWrites {
  entries: readonly PendingWrite[];
  text: string | null;
}

/** A task's writes replacing its earlier ones. */
const mergeWrites = (entries: readonly PendingWrite[], task: string, mine: readonly PendingWrite[]) => [...entries.filter((e) => e[0] !== task), ...mine];
const writesText = (entries: readonly PendingWrite[]) => (entries.length ? JSON.stringify(entries) : null);

/** A checkpoint row as this store wrote it: its metadata and checkpoint in shared form, and the texts stored. */
interface StoredRow {
  meta: Record<string, unknown>;
  metaText: string;
  cp: Record<string, unknown>;
  cpText: string;
  base: Base;
}

const sameItem = (a: unknown, b: unknown) => a === b || jsonEqual(a, b);
const RETRYABLE = new Set(["40P01", "40001"]);
const INVALID = new Set(["22P05", "22021", "22023", "54000", "22P02"]);
const PUT_CACHE = 512;

/** Ops that are one statement when they succeed (a failed one may read more, writing nothing). */
function SINGLE_STATEMENT(op: WriteOp): boolean {
  switch (op.op) {
    case "checkpoint.put":
    case "notify":
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

const num = (v: unknown) => (typeof v === "number" ? v : Number(v));

/** The engine's step commit: one task's writes on a checkpoint, then its child checkpoint. */
function stepCommit(ops: readonly WriteOp[]): ops is [Extract<WriteOp, { op: "writes.put" }>, Extract<WriteOp, { op: "checkpoint.put" }>] {
  if (ops.length !== 2 || ops[0]!.op !== "writes.put" || ops[1]!.op !== "checkpoint.put") return false;
  const [w, cp] = [ops[0], ops[1].checkpoint];
  return w.thread_id === cp.thread_id && (w.checkpoint_ns ?? "") === (cp.checkpoint_ns ?? "") && w.checkpoint_id === cp.parent_checkpoint_id;
}

/** The PostgreSQL `Store`. Create it with {@link postgresStore}. */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly capabilities: StoreCapabilities;
  readonly events: PgRunEvents;
  readonly schema: string;
  /** The NOTIFY channel of this schema. */
  readonly channel: string;

  private readonly s: string;
  private poolInstance: Pool | undefined;
  private readonly ownPool: boolean;
  private opening: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;
  private listener: PoolClient | pg.Client | undefined;
  private reconnecting: ReturnType<typeof setTimeout> | undefined;
  private pruner: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new TopicListeners();
  /** Thread records this store returned -> their revision (for `sameAs`). */
  private readonly revisions = new WeakMap<object, number>();
  /** (thread, ns) -> the arrays of the last checkpoint put there (only committed puts). */
  private readonly lastPut = new Map<string, PutArrays>();
  private notifySeq = 0;
  /** Judge leases at the database's clock (see `leaseClock`). */
  private readonly dbClock: boolean;
  /** The caller's clock minus `Date.now()`, learned from the last `now` passed (database lease clock). */
  private callerOffset = 0;
  /** Statement text -> prepared statement name (the fixed statements of commits and point reads). */
  private readonly names = new Map<string, string>();

  /** Runs a fixed statement as a named prepared statement (parsed once per connection). */
  private q<R extends Row = Row>(c: Pick<PoolClient, "query">, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    let name = this.names.get(text);
    // Named by the text's hash: stores sharing a pool (other schemas, or the same one) never clash.
    if (!name) this.names.set(text, (name = `agentdock_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`));
    return c.query<R>({ name, text, values });
  }

  constructor(private readonly options: PostgresStoreOptions) {
    if (!options.pool && !options.connectionString) throw invalidInput("postgresStore: give `connectionString` or `pool`");
    this.schema = options.schema ?? "agentdock";
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(this.schema)) throw invalidInput(`postgresStore: schema "${this.schema}" must be an identifier of at most 41 characters`);
    if (/^pg_/i.test(this.schema)) throw invalidInput(`postgresStore: schema "${this.schema}": names starting with pg_ are reserved by PostgreSQL`);
    this.s = quoteIdent(this.schema);
    this.channel = `agentdock_${this.schema}`;
    this.ownPool = !options.pool;
    this.dbClock = (options.leaseClock ?? "database") === "database";
    this.capabilities = { persistent: true, shared: true, leaseClock: this.dbClock ? "store" : "caller" };
    this.poolInstance = options.pool;
    this.events = new PgRunEvents(() => this.pool, this.s, this.channel, {
      pollMs: options.eventPollMs ?? 1000,
      resumableRetentionMs: options.resumableRetentionMs ?? 15 * 60_000,
      retentionMs: options.eventRetentionMs ?? 60_000,
    });
  }

  private get pool(): Pool {
    if (!this.poolInstance) throw new Error("agentdock/postgres: the store is not open (call open())");
    return this.poolInstance;
  }

  /** Opens the store; a closed store opens again (a runtime closed and created again on it). */
  open(): Promise<void> {
    if (this.opening && !this.closing) return this.opening;
    const after = this.closing ?? Promise.resolve();
    this.opening = after.then(() => {
      this.closing = undefined;
      this.closed = false;
      this.events.reopen();
      if (this.ownPool) this.poolInstance = undefined;
      return this.doOpen();
    });
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    if (!this.poolInstance) {
      const pool = new pg.Pool({ connectionString: this.options.connectionString, max: this.options.max ?? 10 });
      // An idle client losing its connection must not crash the process; the next query reconnects.
      pool.on("error", (err) => console.error("agentdock/postgres: an idle connection failed", err.message));
      this.poolInstance = pool;
    }
    const client = await this.pool.connect();
    try {
      await migrate(client, this.schema);
    } finally {
      client.release();
    }
    await this.listen();
    const every = this.options.pruneEveryMs ?? 60_000;
    this.pruner = setInterval(() => {
      this.events.prune().catch((err) => {
        if (!this.closed) console.error("agentdock/postgres: pruning run events failed", err);
      });
    }, every);
    (this.pruner as { unref?: () => void }).unref?.();
  }

  /** Holds one connection that LISTENs on the schema's channel; reconnects when it drops. */
  private async listen(): Promise<void> {
    // Its own connection, outside the pool (a caller's pool keeps all its connections), configured
    // as the pool's are.
    const config: pg.ClientConfig = this.ownPool
      ? { connectionString: this.options.connectionString }
      : { ...((this.pool as unknown as { options?: pg.ClientConfig }).options ?? {}) };
    const client: PoolClient | pg.Client = new pg.Client(config);
    await client.connect();
    const lost = (err?: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      if (this.closed) return;
      console.error("agentdock/postgres: the LISTEN connection was lost; reconnecting", err?.message ?? "");
      try {
        if ("release" in client) (client as PoolClient).release(true);
        else void (client as pg.Client).end().catch(() => undefined);
      } catch {
        // already gone
      }
      this.reconnecting = setTimeout(() => {
        this.reconnecting = undefined;
        this.listen()
          .then(() => this.events.wakeAll())
          .catch(() => lost());
      }, 250);
    };
    client.on("notification", (msg: Notification) => this.dispatch(msg));
    client.on("error", (err: Error) => lost(err));
    client.on("end", () => lost());
    this.listener = client;
    await client.query(`LISTEN ${quoteIdent(this.channel)}`);
  }

  private dispatch(msg: Notification): void {
    const payload = msg.payload ?? "";
    if (payload.startsWith("e")) {
      this.events.wake(payload.slice(1));
      return;
    }
    if (payload.startsWith("r")) {
      this.events.share(payload.slice(1));
      return;
    }
    if (!payload.startsWith("n")) return;
    let parsed: { t: string; p?: string };
    try {
      parsed = JSON.parse(payload.slice(1)) as { t: string; p?: string };
    } catch {
      return;
    }
    this.listeners.deliver(parsed.t, parsed.p);
  }

  close(): Promise<void> {
    if (!this.opening) return Promise.resolve();
    return (this.closing ??= this.doClose());
  }

  private async doClose(): Promise<void> {
    if (this.opening) await this.opening.catch(() => undefined);
    if (this.poolInstance) await this.events.close().catch(() => undefined);
    this.closed = true;
    if (this.pruner) clearInterval(this.pruner);
    if (this.reconnecting) clearTimeout(this.reconnecting);
    const listener = this.listener;
    this.listener = undefined;
    if (listener) {
      if ("release" in listener) {
        await listener.query(`UNLISTEN *`).catch(() => undefined);
        (listener as PoolClient).release();
      } else await (listener as pg.Client).end().catch(() => undefined);
    }
    if (this.ownPool && this.poolInstance) await this.poolInstance.end();
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    return this.listeners.subscribe(topic, listener);
  }


  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`agentdock:${this.schema}:${key}`]);
      try {
        return await fn();
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`agentdock:${this.schema}:${key}`]);
      }
    } finally {
      client.release();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Commits.

  async commit(ops: readonly WriteOp[]): Promise<void> {
    for (const op of ops) checkOp(op);
    if (ops.length === 0) return;
    // One op that is one statement needs no transaction block (a statement is atomic): saves two round trips.
    const single = ops.length === 1 && SINGLE_STATEMENT(ops[0]!);
    for (let attempt = 0; ; attempt++) {
      const staged = new Map<string, PutArrays>();
      const client = await this.pool.connect();
      let broken = false;
      try {
        const only = ops.length === 1 ? ops[0]! : undefined;
        if (single) await this.apply(client, only!, staged, []);
        // A checkpoint put in one statement when it can be (the common step of a run), else in a transaction.
        else if (only?.op === "checkpoint.put" && (await this.putCheckpoint(client, only.checkpoint, staged, true))) {
          // Stored in one statement.
        } else if (stepCommit(ops) && (await this.putCheckpoint(client, ops[1].checkpoint, staged, true, ops[0]))) {
          // A task's writes and the next checkpoint in one statement.
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
        if (AgentdockError.is(err)) throw err;
        if (code && INVALID.has(code)) throw invalidInput(`agentdock/postgres: a value cannot be stored: ${(err as Error).message}`);
        throw err;
      }
      client.release();
      for (const [key, put] of staged) this.remember(key, put);
      return;
    }
  }

  private remember(key: string, put: PutArrays): void {
    this.lastPut.delete(key);
    this.lastPut.set(key, put);
    if (this.lastPut.size > PUT_CACHE) this.lastPut.delete(this.lastPut.keys().next().value as string);
  }

  private async apply(c: PoolClient, op: WriteOp, staged: Map<string, PutArrays>, notes: string[]): Promise<void> {
    const s = this.s;
    switch (op.op) {
      case "assistant.put": {
        const { metadata, ...rest } = op.assistant;
        const a = op.assistant;
        await this.q(c, 
          `INSERT INTO ${s}.assistants (assistant_id, graph_id, name, created_at, updated_at, metadata, doc)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::json)
           ON CONFLICT (assistant_id) DO UPDATE SET graph_id = EXCLUDED.graph_id, name = EXCLUDED.name, created_at = EXCLUDED.created_at,
             updated_at = EXCLUDED.updated_at, metadata = EXCLUDED.metadata, doc = EXCLUDED.doc`,
          [a.assistant_id, a.graph_id, a.name, a.created_at, a.updated_at, JSON.stringify(metadata ?? {}), JSON.stringify(rest)],
        );
        return;
      }
      case "assistant.delete":
        await this.q(c, 
          `WITH v AS (DELETE FROM ${s}.assistant_versions WHERE assistant_id = $1) DELETE FROM ${s}.assistants WHERE assistant_id = $1`,
          [op.assistant_id],
        );
        return;
      case "assistant_version.put": {
        const { metadata, ...rest } = op.version;
        await this.q(c, 
          `INSERT INTO ${s}.assistant_versions (assistant_id, version, metadata, doc) VALUES ($1, $2, $3::jsonb, $4::json)
           ON CONFLICT (assistant_id, version) DO UPDATE SET metadata = EXCLUDED.metadata, doc = EXCLUDED.doc`,
          [op.version.assistant_id, op.version.version, JSON.stringify(metadata ?? {}), JSON.stringify(rest)],
        );
        return;
      }
      case "thread.put":
        return this.putThread(c, op);
      case "thread.delete": {
        if (op.expect) await this.checkThread(c, op, op.thread_id, op.expect);
        await this.q(c, 
          `WITH t AS (DELETE FROM ${s}.threads WHERE thread_id = $1),
                cp AS (DELETE FROM ${s}.checkpoints WHERE thread_id = $1),
                l AS (DELETE FROM ${s}.cp_logs WHERE thread_id = $1 RETURNING log_id),
                ch AS (DELETE FROM ${s}.cp_chunks WHERE log_id IN (SELECT log_id FROM l)),
                mb AS (DELETE FROM ${s}.cp_meta WHERE thread_id = $1),
                r AS (DELETE FROM ${s}.runs WHERE thread_id = $1 RETURNING run_id),
                cr AS (DELETE FROM ${s}.cancels WHERE run_id IN (SELECT run_id FROM r))
           DELETE FROM ${s}.cancels WHERE thread_id = $1`,
          [op.thread_id],
        );
        for (const key of [...this.lastPut.keys()]) if (key.startsWith(`${op.thread_id}\u0000`)) this.lastPut.delete(key);
        for (const key of [...staged.keys()]) if (key.startsWith(`${op.thread_id}\u0000`)) staged.delete(key);
        return;
      }
      case "checkpoint.put":
        if (!(await this.putCheckpoint(c, op.checkpoint, staged, true))) await this.putCheckpoint(c, op.checkpoint, staged);
        return;
      case "checkpoint.delete": {
        if (op.checkpoint_ids.length === 0) return;
        const ns = op.checkpoint_ns ?? "";
        await this.q(c, 
          `DELETE FROM ${s}.checkpoints WHERE thread_id = $1 AND ns = $2 AND checkpoint_id = ANY($3::text[])`,
          [op.thread_id, ns, [...op.checkpoint_ids]],
        );
        return;
      }
      case "writes.put": {
        const ns = op.checkpoint_ns ?? "";
        const key = `${op.thread_id}\u0000${ns}`;
        const last = staged.get(key) ?? this.lastPut.get(key);
        const known = last && last.id === op.checkpoint_id ? last.writes : undefined;
        // Stored shared (escaped only: what they wrote is in no log yet; the next checkpoint shares them again).
        const mine = share(op.writes, new Map()) as PendingWrite[];
        const next = known && mergeWrites(known.entries, op.task_id, mine);
        // One statement; on the row as this store last wrote it, the writes as computed here (so the
        // next checkpoint can share them again), else merged in SQL.
        const r = await this.q<{ mine: boolean }>(
          c,
          `UPDATE ${s}.checkpoints SET writes = CASE WHEN $6::boolean AND writes::text IS NOT DISTINCT FROM $7::text THEN $8::text::json ELSE ${this.mergeWritesSql("$4", "$5")} END
            WHERE thread_id = $1 AND ns = $2 AND checkpoint_id = $3 RETURNING $6::boolean AND writes::text IS NOT DISTINCT FROM $8::text AS mine`,
          [op.thread_id, ns, op.checkpoint_id, op.task_id, JSON.stringify(mine), next !== undefined, known?.text ?? null, next ? writesText(next) : null],
        );
        if (r.rowCount === 0) {
          throw notFound(`writes for checkpoint ${op.checkpoint_id} (namespace "${ns}") of thread ${op.thread_id}: no such checkpoint`);
        }
        if (last && last.id === op.checkpoint_id) {
          staged.set(key, { ...last, writes: next && r.rows[0]!.mine ? { entries: next, text: writesText(next) } : undefined });
        }
        return;
      }
      case "run.put":
        return this.putRun(c, op);
      case "run.delete": {
        if (op.expect) await this.checkRun(c, op, op.run_id, op.expect);
        await this.q(c, `WITH c AS (DELETE FROM ${s}.cancels WHERE run_id = $1) DELETE FROM ${s}.runs WHERE run_id = $1`, [op.run_id]);
        return;
      }
      case "cancel.put":
        await this.q(c, 
          `INSERT INTO ${s}.cancels (run_id, thread_id, doc) VALUES ($1, $2, $3::json)
           ON CONFLICT (run_id) DO UPDATE SET thread_id = EXCLUDED.thread_id, doc = EXCLUDED.doc`,
          [op.request.run_id, op.request.thread_id, JSON.stringify(op.request)],
        );
        return;
      case "lease.put":
        return this.putLease(c, op);
      case "lease.delete":
        await this.q(c, `DELETE FROM ${s}.leases WHERE key = $1 AND ($2::text IS NULL OR owner = $2)`, [op.key, op.owner ?? null]);
        return;
      case "doc.put":
        await this.q(c, 
          `INSERT INTO ${s}.docs (collection, id, parent, seq, doc) VALUES ($1, $2, $3, nextval('${s}.doc_seq'), $4::json)
           ON CONFLICT (collection, id) DO UPDATE SET parent = EXCLUDED.parent, doc = EXCLUDED.doc`,
          [op.collection, op.id, op.parent, JSON.stringify(op.doc) ?? "null"],
        );
        return;
      case "doc.delete":
        await this.q(c, `DELETE FROM ${s}.docs WHERE collection = $1 AND id = $2`, [op.collection, op.id]);
        return;
      case "item.put":
      case "item.delete":
      case "item.touch": {
        const { text, values } = items.itemOpSql(s, op);
        await this.q(c, text, values);
        return;
      }
      case "cron.put":
      case "cron.delete":
        return applyCronOp((cl, text, values) => this.q(cl, text, values), c, s, op);
      case "notify": {
        const note = `n${JSON.stringify(op.payload === undefined ? { t: op.topic, i: this.notifySeq++ } : { t: op.topic, p: op.payload, i: this.notifySeq++ })}`;
        if (Buffer.byteLength(note) > 7900) {
          throw invalidInput(`notify on "${op.topic}": the topic and payload take ${Buffer.byteLength(note)} bytes; PostgreSQL carries at most 7,900`);
        }
        notes.push(note);
        return;
      }
    }
  }

  /** The `writes` column with the writes of task `task` replaced by the entries of the JSON array `mine` (put last). */
  private mergeWritesSql(task: string, mine: string): string {
    return `(SELECT json_agg(e ORDER BY k, i) FROM (
              SELECT e, 0 AS k, i FROM json_array_elements(writes) WITH ORDINALITY AS a(e, i) WHERE e ->> 0 IS DISTINCT FROM ${task}::text
              UNION ALL SELECT e, 1 AS k, i FROM json_array_elements(${mine}::text::json) WITH ORDINALITY AS b(e, i)) x)`;
  }

  private async checkThread(c: PoolClient, op: WriteOp, threadId: string, expect: ThreadExpectation): Promise<void> {
    const { rows } = await this.q<{ status: string; revision: string }>(c, `SELECT status, revision FROM ${this.s}.threads WHERE thread_id = $1 FOR UPDATE`, [
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
      const read = this.revisions.get(expect.sameAs);
      if (!t || read === undefined || read !== num(t.revision)) throw conflict(`${describeOp(op)}: the thread changed since it was read`);
    }
  }

  private async putThread(c: PoolClient, op: Extract<WriteOp, { op: "thread.put" }>): Promise<void> {
    const t = op.thread;
    const { metadata, values, ...rest } = t;
    const e = op.expect;
    const params: unknown[] = [
      t.thread_id,
      t.status,
      t.created_at,
      t.updated_at,
      t.state_updated_at,
      JSON.stringify(metadata ?? {}),
      JSON.stringify(values ?? {}),
      JSON.stringify(rest),
    ];
    const s = this.s;
    const insert = `INSERT INTO ${s}.threads (thread_id, status, created_at, updated_at, state_updated_at, metadata, vals, doc, revision, vals_refs)
                    VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::json, $8::json, nextval('${s}.revisions'), NULL)`;
    if (e && e.exists === false && !e.status && !e.sameAs) {
      const r = await this.q(c, `${insert} ON CONFLICT (thread_id) DO NOTHING`, params);
      if (r.rowCount === 0) throw conflict(`${describeOp(op)}: expected the thread not to exist`);
      return;
    }
    if (e && e.exists !== false && (e.exists === true || e.status || e.sameAs)) {
      // One conditional UPDATE: it locks the row and judges the expectation on the latest version.
      let revision = -1;
      if (e.sameAs) {
        const read = this.revisions.get(e.sameAs);
        if (read === undefined) throw conflict(`${describeOp(op)}: the thread changed since it was read`);
        revision = read;
      }
      const update = (vals: unknown, refs: Record<string, [number, number]> | null) =>
        this.q(
          c,
          `UPDATE ${s}.threads SET status = $2, created_at = $3, updated_at = $4, state_updated_at = $5, metadata = $6::jsonb, vals = $7::json,
             doc = $8::json, revision = nextval('${s}.revisions'), vals_refs = $11::json
            WHERE thread_id = $1 AND ($9::text[] IS NULL OR status = ANY($9::text[])) AND ($10::bigint < 0 OR revision = $10::bigint)
              AND ($12::bigint[] IS NULL OR (SELECT count(*) FROM ${s}.cp_logs l WHERE l.log_id = ANY($12::bigint[]) AND l.thread_id = $1) = cardinality($12::bigint[]))`,
          [...params.slice(0, 6), JSON.stringify(vals), ...params.slice(7), e.status ? [...e.status] : null, revision, refs && JSON.stringify(refs), refs && Object.values(refs).map(([log]) => log)],
        );
      // The state's lists are the latest checkpoint's: refer to its logs rather than copy them
      // (a chat's thread row stays small however long the chat).
      const shared = this.threadRefs(t.thread_id, values ?? {});
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
    await this.q(
      c,
      `${insert} ON CONFLICT (thread_id) DO UPDATE SET status = EXCLUDED.status, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
         state_updated_at = EXCLUDED.state_updated_at, metadata = EXCLUDED.metadata, vals = EXCLUDED.vals, doc = EXCLUDED.doc, revision = EXCLUDED.revision,
         vals_refs = NULL`,
      params,
    );
  }

  /** Thread values with the lists that are prefixes of the latest root checkpoint's logs (this store's put) as references. */
  private threadRefs(threadId: string, values: Record<string, unknown>): { vals: Record<string, unknown>; refs: Record<string, [number, number]> } | undefined {
    const last = this.lastPut.get(`${threadId}\u0000`);
    if (!last) return undefined;
    const vals: Record<string, unknown> = {};
    const refs: Record<string, [number, number]> = {};
    let any = false;
    for (const [channel, v] of Object.entries(values)) {
      const a = last.arrays.get(channel);
      if (Array.isArray(v) && v.length > 0 && a && v.length <= a.n && v.every((item, i) => sameItem(item, a.items[i]))) {
        vals[channel] = null;
        refs[channel] = [a.log, v.length];
        any = true;
      } else vals[channel] = v;
    }
    return any ? { vals, refs } : undefined;
  }

  private async checkRun(c: PoolClient, op: WriteOp, runId: string, expect: { exists?: boolean; status?: readonly string[] }): Promise<void> {
    const { rows } = await this.q<{ status: string }>(c, `SELECT status FROM ${this.s}.runs WHERE run_id = $1 FOR UPDATE`, [runId]);
    const had = rows[0];
    if (expect.exists !== undefined && expect.exists !== (had !== undefined)) {
      throw conflict(`${describeOp(op)}: expected the run ${expect.exists ? "to exist" : "not to exist"}`);
    }
    if (expect.status && (!had || !expect.status.includes(had.status))) {
      throw conflict(`${describeOp(op)}: expected status ${expect.status.join(" or ")}, found ${had ? had.status : "no run"}`);
    }
  }

  private async putRun(c: PoolClient, op: Extract<WriteOp, { op: "run.put" }>): Promise<void> {
    const r = op.run;
    const e = op.expect;
    const s = this.s;
    // The document leaves out what the columns hold, and the kwargs at their defaults (./run-doc.ts).
    const params: unknown[] = [r.run_id, r.thread_id, r.assistant_id, r.status, r.created_at, JSON.stringify(runDoc(r)), r.updated_at];
    const insert = `INSERT INTO ${s}.runs (run_id, thread_id, assistant_id, status, created_at, queue_seq, doc, updated_at)
                    VALUES ($1, $2, $3, $4, $5, nextval('${s}.run_queue'), $6::json, $7)`;
    if (e && e.exists === false && !e.status) {
      const res = await this.q(c, `${insert} ON CONFLICT (run_id) DO NOTHING`, params);
      if (res.rowCount === 0) throw conflict(`${describeOp(op)}: expected the run not to exist`);
      return;
    }
    let res: pg.QueryResult<Row>;
    if (e && e.exists !== false && (e.exists === true || e.status)) {
      // One conditional UPDATE (the queue position is kept).
      res = await this.q(
        c,
        `UPDATE ${s}.runs SET assistant_id = $3, status = $4, created_at = $5, doc = $6::json, updated_at = $7
          WHERE run_id = $1 AND thread_id = $2 AND ($8::text[] IS NULL OR status = ANY($8::text[]))`,
        [...params, e.status ? [...e.status] : null],
      );
      if (res.rowCount === 0) await this.checkRun(c, op, r.run_id, e);
    } else {
      if (e) await this.checkRun(c, op, r.run_id, e);
      res = await this.q(
        c,
        `${insert} ON CONFLICT (run_id) DO UPDATE SET assistant_id = EXCLUDED.assistant_id, status = EXCLUDED.status,
           created_at = EXCLUDED.created_at, doc = EXCLUDED.doc, updated_at = EXCLUDED.updated_at WHERE ${s}.runs.thread_id = EXCLUDED.thread_id`,
        params,
      );
    }
    if (res.rowCount === 0) {
      const { rows } = await this.q<{ thread_id: string }>(c, `SELECT thread_id FROM ${s}.runs WHERE run_id = $1`, [r.run_id]);
      throw invalidInput(`${describeOp(op)}: a run cannot move from thread ${rows[0]?.thread_id} to ${r.thread_id}`);
    }
  }

  /** The caller's clock now, as last learned (database lease clock). */
  private callerNow(learned?: number): number {
    if (learned !== undefined) this.callerOffset = learned - Date.now();
    return Date.now() + this.callerOffset;
  }

  private async putLease(c: PoolClient, op: Extract<WriteOp, { op: "lease.put" }>): Promise<void> {
    const { key, owner, expires_at, data } = op.lease;
    const s = this.s;
    const now = op.expect ? op.expect.now : this.callerNow();
    if (op.expect && this.dbClock) this.callerNow(now);
    // $5: the caller's now; the expiry on the database's clock is its duration from clock_timestamp().
    const params: unknown[] = [key, owner, expires_at, JSON.stringify(data ?? {}), now];
    const insert = `INSERT INTO ${s}.leases (key, owner, expires_at, expires_db, data)
                    VALUES ($1, $2, $3, clock_timestamp() + ($3::bigint - $5::bigint) * interval '1 millisecond', $4::json)`;
    const set = `owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, expires_db = EXCLUDED.expires_db, data = EXCLUDED.data`;
    if (!op.expect) {
      await this.q(c, `${insert} ON CONFLICT (key) DO UPDATE SET ${set}`, params);
      return;
    }
    const expired = this.dbClock ? `expires_db < clock_timestamp()` : `expires_at < $5`;
    let res;
    if (op.expect.state === "free") {
      // Taken only if absent or expired; a concurrent taker waits for us, then sees it live.
      res = await this.q(c, `${insert} ON CONFLICT (key) DO UPDATE SET ${set} WHERE ${s}.leases.${expired}`, params);
    } else {
      res = await this.q(
        c,
        `UPDATE ${s}.leases SET owner = $2, expires_at = $3, expires_db = clock_timestamp() + ($3::bigint - $5::bigint) * interval '1 millisecond', data = $4::json
          WHERE key = $1 AND owner = $2 AND NOT (${expired})`,
        params,
      );
    }
    if (res.rowCount === 0) {
      const { rows } = this.dbClock
        ? await this.q<{ owner: string; live: boolean }>(c, `SELECT owner, expires_db >= clock_timestamp() AS live FROM ${s}.leases WHERE key = $1`, [key])
        : await this.q<{ owner: string; live: boolean }>(c, `SELECT owner, expires_at >= $2 AS live FROM ${s}.leases WHERE key = $1`, [key, now]);
      const cur = rows[0];
      throw conflict(
        `${describeOp(op)}: expected it ${op.expect.state === "free" ? "free" : `held by ${owner}`}, ` + (cur?.live ? `held by ${cur.owner}` : "it is free"),
      );
    }
  }

  async claimRun(claim: RunClaim): Promise<RunClaimResult> {
    if (this.dbClock) this.callerNow(claim.now);
    const { rows } = await this.q<{ outcome: RunClaimResult["outcome"]; doc: Row | null; not_before: number | null }>(
      this.pool,
      `SELECT outcome, doc, not_before FROM ${this.s}.claim_run($1, $2, $3, $4, $5, $6, $7, $8)`,
      [claim.thread_id, claim.key, claim.owner, claim.now, claim.expires_at, this.dbClock, [...claim.graph_ids], claim.updated_at],
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

  // -------------------------------------------------------------------------------------------
  // Checkpoints.

  /** The arrays the parent checkpoint stored (from this transaction, the cache, or the database). */
  private async parentArrays(c: PoolClient, threadId: string, ns: string, parentId: string, staged: Map<string, PutArrays>): Promise<PutArrays | undefined> {
    const key = `${threadId}\u0000${ns}`;
    const hit = staged.get(key) ?? this.lastPut.get(key);
    if (hit && hit.id === parentId) return hit;
    const { rows } = await c.query<{ refs: Record<string, [number | string, number]> | null }>(
      `SELECT refs FROM ${this.s}.checkpoints WHERE thread_id = $1 AND ns = $2 AND checkpoint_id = $3`,
      [threadId, ns, parentId],
    );
    const refs = rows[0]?.refs;
    if (!refs) return undefined;
    const items = await this.loadRefs(c, Object.values(refs).map(([log, n]) => ({ log: num(log), n })));
    const arrays = new Map<string, { log: number; n: number; items: readonly unknown[] }>();
    for (const [channel, [log, n]] of Object.entries(refs)) arrays.set(channel, { log: num(log), n, items: items.get(num(log))!.slice(0, n) });
    return { id: parentId, arrays };
  }

  /** Items of logs: for each log, at least its first `n` (max over the refs) items. */
  private async loadRefs(q: Pick<PoolClient, "query">, refs: ArrayRef[]): Promise<Map<number, unknown[]>> {
    const need = new Map<number, number>();
    for (const r of refs) need.set(r.log, Math.max(need.get(r.log) ?? 0, r.n));
    const out = new Map<number, unknown[]>();
    if (need.size === 0) return out;
    const { rows } = await this.q<{ log_id: string; items: unknown[] }>(q, 
      `SELECT c.log_id, c.items FROM ${this.s}.cp_chunks c
         JOIN unnest($1::bigint[], $2::int[]) AS r(log_id, n) ON c.log_id = r.log_id AND c.start < r.n
        ORDER BY c.log_id, c.start`,
      [[...need.keys()], [...need.values()]],
    );
    for (const row of rows) {
      const log = num(row.log_id);
      let list = out.get(log);
      if (!list) out.set(log, (list = []));
      for (const item of row.items) list.push(item);
    }
    for (const log of need.keys()) if (!out.has(log)) out.set(log, []);
    return out;
  }

  /**
   * Stores a checkpoint. `fast`: only when everything it needs is cached here (the parent's
   * arrays and bases) and every list extends or repeats its parent's, in ONE statement whose
   * writes all depend on its check that the logs it appends to are as cached; answers false when
   * it cannot (or the check failed: a log changed meanwhile, which only a writer racing on the
   * same thread does; an append that went through then stays unreferenced). Otherwise one
   * statement per list, then the row.
   */
  private async putCheckpoint(
    c: PoolClient,
    input: StoredCheckpoint,
    staged: Map<string, PutArrays>,
    fast = false,
    /** Fast only: one task's writes on the parent, committed with it (the engine's step commit). */
    parentWrites?: Extract<WriteOp, { op: "writes.put" }>,
  ): Promise<boolean> {
    const s = this.s;
    const threadId = input.thread_id;
    const ns = input.checkpoint_ns ?? "";
    const values = input.checkpoint.channel_values;
    const cacheKey = `${threadId}\u0000${ns}`;
    const parentId = input.parent_checkpoint_id;
    const last = parentId === null ? undefined : (staged.get(cacheKey) ?? this.lastPut.get(cacheKey));
    if (fast && parentId !== null && last?.id !== parentId) return false;
    const parent = parentId === null ? undefined : last?.id === parentId ? last : await this.parentArrays(c, threadId, ns, parentId, staged);
    const params: unknown[] = [threadId, ns, input.checkpoint.id, parentId];
    const p$ = (v: unknown) => `$${params.push(v)}`;
    /** Fast: CTEs that check and append the lists, and how many rows they must see. */
    const ctes: string[] = [];
    const checks: string[] = [];
    const index: ItemIndex = new Map();
    const stored: Record<string, unknown> = {};
    const refs: Record<string, [number, number]> = {};
    const arrays = new Map<string, { log: number; n: number; items: readonly unknown[] }>();
    let anyRef = false;
    for (const channel of Object.keys(values)) {
      const v = values[channel];
      if (!Array.isArray(v) || v.length === 0) {
        stored[channel] = v;
        continue;
      }
      const p = parent?.arrays.get(channel);
      let ref: ArrayRef | undefined;
      if (p) {
        const common = Math.min(p.n, v.length);
        let i = 0;
        while (i < common && sameItem(v[i], p.items[i])) i++;
        if (i === common) {
          const k = ctes.length;
          if (v.length <= p.n) {
            // A prefix of the parent's items: share them, if the log still exists (a thread deleted elsewhere drops its logs).
            if (fast) {
              ctes.push(`l${k} AS (SELECT 1 FROM ${s}.cp_logs WHERE log_id = ${p$(p.log)}::bigint FOR SHARE)`);
              checks.push(`(SELECT count(*) FROM l${k})`);
              ref = { log: p.log, n: v.length };
            } else {
              const r = await this.q(c, `SELECT 1 FROM ${s}.cp_logs WHERE log_id = $1 FOR SHARE`, [p.log]);
              if (r.rowCount === 1) ref = { log: p.log, n: v.length };
            }
          } else if (fast) {
            const [log, from] = [p$(p.log), p$(p.n)];
            ctes.push(
              `l${k} AS (UPDATE ${s}.cp_logs SET len = ${p$(v.length)}::int WHERE log_id = ${log}::bigint AND len = ${from}::int RETURNING log_id)`,
              `c${k} AS (INSERT INTO ${s}.cp_chunks (log_id, start, items) SELECT log_id, ${from}::int, ${p$(JSON.stringify(v.slice(p.n)))}::json FROM l${k})`,
            );
            checks.push(`(SELECT count(*) FROM l${k})`);
            ref = { log: p.log, n: v.length };
          } else {
            // Append the new items when nobody appended to the log after the parent's prefix.
            const r = await this.q(c, 
              `WITH l AS (UPDATE ${s}.cp_logs SET len = $3 WHERE log_id = $1 AND len = $2 RETURNING log_id)
               INSERT INTO ${s}.cp_chunks (log_id, start, items) SELECT log_id, $2, $4::json FROM l`,
              [p.log, p.n, v.length, JSON.stringify(v.slice(p.n))],
            );
            if (r.rowCount === 1) ref = { log: p.log, n: v.length };
          }
        }
      }
      if (!ref) {
        if (fast) return false;
        const r = await this.q<{ log_id: string }>(c, 
          `WITH l AS (INSERT INTO ${s}.cp_logs (log_id, thread_id, len) VALUES (nextval('${s}.cp_log_ids'), $1, $2) RETURNING log_id)
           INSERT INTO ${s}.cp_chunks (log_id, start, items) SELECT log_id, 0, $3::json FROM l RETURNING log_id`,
          [threadId, v.length, JSON.stringify(v)],
        );
        ref = { log: num(r.rows[0]!.log_id), n: v.length };
      }
      stored[channel] = null;
      refs[channel] = [ref.log, ref.n];
      arrays.set(channel, { log: ref.log, n: ref.n, items: v });
      anyRef = true;
      // The items this checkpoint appended (a new log's are all new): what its step wrote.
      indexItems(index, ref.log, v, p && p.log === ref.log ? p.n : 0);
    }
    // The id is the row's key; metadata and pending writes refer to the items appended here.
    const { id: _id, ...rest } = input.checkpoint;
    // Shared form (schema 5, `cp_shared`): items this checkpoint appended are references, marker-like objects escaped.
    const checkpoint = share({ ...rest, channel_values: stored }, index) as Record<string, unknown>;
    const shared = share(input.metadata ?? {}, index) as Record<string, unknown>;
    let bases = (last?.id === parentId ? last?.bases : undefined) ?? [];
    let metadata = bases.length ? factor(shared, bases[0]!.record) : undefined;
    if (!metadata) bases = [];
    // The base whose checkpoint record differs least; a new one when even that one differs in most leaves.
    let base: Base | undefined;
    let cpStored: LeafDiff = [];
    let best = Infinity;
    for (const b of bases) {
      const diff = diffLeaves(checkpoint, b.cp);
      const size = JSON.stringify(diff).length;
      if (size < best) (base = b), (cpStored = diff), (best = size);
    }
    if (!base || cpStored.length > 0.8 * leavesOf(checkpoint).length) {
      if (fast) return false;
      const record = metadata ? bases[0]!.record : baseOf(shared);
      const cpText = JSON.stringify(checkpoint);
      const r = await this.q<{ base_id: string }>(
        c,
        `INSERT INTO ${s}.cp_meta (thread_id, base_id, record, cp) VALUES ($1, nextval('${s}.cp_meta_ids'), $2::jsonb, $3::json) RETURNING base_id`,
        [threadId, JSON.stringify(record), cpText],
      );
      // Leaf positions follow key order: diff against the record as it reads back (json keeps the text).
      base = { id: num(r.rows[0]!.base_id), record, cp: JSON.parse(cpText) as Record<string, unknown> };
      metadata ??= factor(shared, record)!;
      cpStored = [];
    }
    bases = [base, ...bases.filter((b) => b !== base)].slice(0, BASES);
    const pending = share(input.pending_writes, index) as PendingWrite[];
    const pendingText = writesText(pending);
    // The base (cached here) still exists: a thread deleted elsewhere takes its bases along.
    ctes.push(`bs AS (SELECT 1 FROM ${s}.cp_meta WHERE thread_id = $1 AND base_id = ${p$(base.id)}::bigint FOR SHARE)`);
    checks.push(`(SELECT count(*) FROM bs)`);
    if (parentWrites) {
      // The parent must exist (locked against a concurrent delete), as `writes.put` requires.
      ctes.push(`pe AS (SELECT 1 FROM ${s}.checkpoints WHERE thread_id = $1 AND ns = $2 AND checkpoint_id = $4 FOR SHARE)`);
      checks.push(`(SELECT count(*) FROM pe)`);
    }
    // Every list checked or appended saw its row, or nothing else is written.
    ctes.push(`ok AS (SELECT ${checks.length ? `${checks.join(" + ")} = ${checks.length}` : "true"} AS ok)`);
    const ok = `(SELECT ok FROM ok)`;
    // Metadata is stored as json text (schema 5) but must read as jsonb (a metadata filter casts it): what jsonb refuses (\u0000) is refused here.
    const metaText = JSON.stringify(metadata);
    const cpText = JSON.stringify(cpStored);
    const meta = p$(metaText);
    ctes.push(
      `cp AS (INSERT INTO ${s}.checkpoints (thread_id, ns, checkpoint_id, seq, parent_id, metadata, checkpoint, refs, shared, meta_base, cp_shared, writes)
              SELECT $1, $2, $3, nextval('${s}.cp_seq'), $4, ${meta}::text::json, ${p$(cpText)}::json,
                ${p$(anyRef ? JSON.stringify(refs) : null)}::json, true, ${p$(base.id)}::bigint, true, ${p$(pendingText)}::text::json
               WHERE ${ok} AND ${meta}::text::jsonb IS NOT NULL
              ON CONFLICT (thread_id, ns, checkpoint_id) DO UPDATE SET parent_id = EXCLUDED.parent_id, metadata = EXCLUDED.metadata,
                checkpoint = EXCLUDED.checkpoint, refs = EXCLUDED.refs, shared = true, meta_base = EXCLUDED.meta_base, cp_shared = true, writes = EXCLUDED.writes)`,
    );
    // The parent, in one UPDATE: the task's writes (the engine's step commit), and what it repeats
    // of what this checkpoint appended stored as references (an input step's message is in its
    // metadata's writes, its __start__ channel and its pending writes, then appended to the list
    // by the next step), each only where the row still holds what this store wrote.
    const up = last?.id === parentId ? last : undefined;
    const sets: string[] = [];
    if (up?.row && index.size) {
      const changed = { hit: false };
      const meta2 = reshare(up.row.meta, index, changed) as Record<string, unknown>;
      const cp2 = reshare(up.row.cp, index, changed) as Record<string, unknown>;
      if (changed.hit) {
        const same = `(cp_shared AND meta_base = ${p$(up.row.base.id)}::bigint AND metadata::text = ${p$(up.row.metaText)}::text AND checkpoint::text = ${p$(up.row.cpText)}::text)`;
        sets.push(
          `metadata = CASE WHEN ${same} THEN ${p$(JSON.stringify(meta2))}::text::json ELSE metadata END`,
          `checkpoint = CASE WHEN ${same} THEN ${p$(JSON.stringify(diffLeaves(cp2, up.row.base.cp)))}::text::json ELSE checkpoint END`,
        );
      }
    }
    const changed = { hit: false };
    const others = up?.writes && index.size ? (up.writes.entries.map((e) => (parentWrites && e[0] === parentWrites.task_id ? e : reshare(e, index, changed))) as PendingWrite[]) : undefined;
    const old = () => p$(up!.writes!.text);
    if (parentWrites) {
      // Shared at once against what this checkpoint appended (what the task wrote).
      const mine = share(parentWrites.writes, index) as PendingWrite[];
      const merged = `${this.mergeWritesSql(p$(parentWrites.task_id), p$(JSON.stringify(mine)))}`;
      if (up?.writes) {
        const next = writesText(mergeWrites(others ?? up.writes.entries, parentWrites.task_id, mine));
        sets.push(`writes = CASE WHEN writes::text IS NOT DISTINCT FROM ${old()}::text THEN ${p$(next)}::text::json ELSE ${merged} END`);
      } else sets.push(`writes = ${merged}`);
    } else if (others && changed.hit) {
      sets.push(`writes = CASE WHEN writes::text IS NOT DISTINCT FROM ${old()}::text THEN ${p$(writesText(others))}::text::json ELSE writes END`);
    }
    if (sets.length) ctes.push(`pr AS (UPDATE ${s}.checkpoints SET ${sets.join(", ")} WHERE thread_id = $1 AND ns = $2 AND checkpoint_id = $4 AND ${ok})`);
    const { rows } = await this.q<{ ok: boolean }>(c, `WITH ${ctes.join(",\n")}\nSELECT ok FROM ok`, params);
    if (!rows[0]?.ok) {
      if (fast) return false;
      throw new Error("agentdock/postgres: a checkpoint's list log or base changed while it was written (its thread was deleted meanwhile)");
    }
    staged.set(cacheKey, { id: input.checkpoint.id, arrays, bases, row: { meta: metadata!, metaText, cp: checkpoint, cpText, base }, writes: { entries: pending, text: pendingText } });
    return true;
  }

  private checkpointSelect(): string {
    const s = this.s;
    return `SELECT c.thread_id, c.ns, c.checkpoint_id, c.parent_id, c.metadata, c.checkpoint, c.refs, c.shared, c.cp_shared, ${this.metaBase()} AS base,
              ${this.metaBase("cp")} AS base_cp, c.writes
              FROM ${s}.checkpoints c`;
  }

  /** The metadata base of checkpoint row `c` (jsonb; NULL without one). */
  private metaBase(column: "record" | "cp" = "record"): string {
    return `(SELECT b.${column} FROM ${this.s}.cp_meta b WHERE b.thread_id = c.thread_id AND b.base_id = c.meta_base)`;
  }

  /** The log items a checkpoint row needs: its array channels' and those its shared values refer to. */
  private rowNeeds(row: Row, out: Map<number, number>): Map<number, number> {
    const r = row.refs as Record<string, [number | string, number]> | null;
    if (r) for (const [log, n] of Object.values(r)) out.set(num(log), Math.max(out.get(num(log)) ?? 0, n));
    if (row.shared) needs([row.metadata, row.base], out);
    if (row.cp_shared) needs(this.storedCheckpoint(row), out);
    // Entries `[task, channel, value]` are shared; `[task, channel, value, 0]` (written before schema 2) plain.
    for (const w of (row.writes as unknown[][] | null) ?? []) if (w.length === 3) needs(w[2], out);
    return out;
  }

  /** Rows of `checkpointSelect` -> checkpoints, their arrays read in one more query. */
  private async toCheckpoints(rows: Row[]): Promise<StoredCheckpoint[]> {
    const want = new Map<number, number>();
    for (const row of rows) this.rowNeeds(row, want);
    const items = want.size ? await this.loadRefs(this.pool, [...want].map(([log, n]) => ({ log, n }))) : new Map<number, unknown[]>();
    return rows.map((row) => this.assemble(row, items));
  }

  /** The checkpoint record a row stores (its leaves patched onto its base's), as stored (shared form from schema 5 on). */
  private storedCheckpoint(row: Row): Record<string, unknown> {
    return (row.patched ??= Array.isArray(row.checkpoint) ? patchLeaves(row.base_cp as Record<string, unknown>, row.checkpoint as LeafDiff) : row.checkpoint) as Record<
      string,
      unknown
    >;
  }

  /** A checkpoint row with its arrays put back from the items of their logs, and its shared values resolved. */
  private assemble(row: Row, items: Map<number, unknown[]>): StoredCheckpoint {
    let stored = this.storedCheckpoint(row);
    if (row.cp_shared) stored = resolve(stored, items) as Record<string, unknown>;
    // Schema 2 leaves the id (the row's key) out of the stored checkpoint.
    const cp = ("id" in stored ? stored : { v: stored.v, id: row.checkpoint_id, ...stored }) as unknown as StoredCheckpoint["checkpoint"];
    const r = row.refs as Record<string, [number | string, number]> | null;
    if (r) {
      const values = cp.channel_values;
      for (const [channel, [log, n]] of Object.entries(r)) values[channel] = (items.get(num(log)) ?? []).slice(0, n);
    }
    const writes = ((row.writes as unknown[][] | null) ?? []).map((w): PendingWrite => [w[0] as string, w[1] as string, w.length === 3 ? resolve(w[2], items) : w[2]]);
    return {
      thread_id: row.thread_id as string,
      checkpoint_ns: row.ns as string,
      checkpoint: cp,
      metadata: resolve(unfactor(row.base as Record<string, unknown> | null, row.metadata as Record<string, unknown>), row.shared ? items : undefined) as StoredCheckpoint["metadata"],
      parent_checkpoint_id: (row.parent_id as string | null) ?? null,
      pending_writes: writes,
    };
  }

  async getCheckpoint(key: CheckpointKey): Promise<StoredCheckpoint | undefined> {
    const ns = key.checkpoint_ns ?? "";
    // One query: the row, its pending writes and the chunks of its arrays.
    const chunks = `(SELECT json_agg(json_build_array(ch.log_id, ch.start, ch.items) ORDER BY ch.log_id, ch.start)
                       FROM json_each(c.refs) r, ${this.s}.cp_chunks ch
                      WHERE ch.log_id = (r.value ->> 0)::bigint AND ch.start < (r.value ->> 1)::int) AS chunks`;
    const select = this.checkpointSelect().replace("c.writes", `c.writes, ${chunks}`);
    const { rows } =
      key.checkpoint_id === undefined
        ? await this.q(this.pool, `${select} WHERE c.thread_id = $1 AND c.ns = $2 ORDER BY c.seq DESC LIMIT 1`, [key.thread_id, ns])
        : await this.q(this.pool, `${select} WHERE c.thread_id = $1 AND c.ns = $2 AND c.checkpoint_id = $3`, [key.thread_id, ns, key.checkpoint_id]);
    const row = rows[0];
    if (!row) return undefined;
    let items = new Map<number, unknown[]>();
    for (const [log, , part] of (row.chunks as Array<[number | string, number, unknown[]]> | null) ?? []) {
      const id = num(log);
      let list = items.get(id);
      if (!list) items.set(id, (list = []));
      for (const item of part) list.push(item);
    }
    // Pending writes shared with what a child checkpoint appended refer past this row's items.
    const want = this.rowNeeds(row, new Map());
    if ([...want].some(([log, n]) => (items.get(log)?.length ?? 0) < n)) {
      items = await this.loadRefs(this.pool, [...want].map(([log, n]) => ({ log, n })));
    }
    return this.assemble(row, items);
  }

  async listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): Promise<StoredCheckpoint[]> {
    const ps = new Params();
    const t = ps.p(threadId);
    const ns = ps.p(options.checkpoint_ns ?? "");
    const parts = [`c.thread_id = ${t}`, `c.ns = ${ns}`];
    if (options.before !== undefined) {
      parts.push(`c.seq < (SELECT b.seq FROM ${this.s}.checkpoints b WHERE b.thread_id = ${t} AND b.ns = ${ns} AND b.checkpoint_id = ${ps.p(options.before)})`);
    }
    // `writes` of shared metadata hold references: a filter on it is judged on the read checkpoints.
    const { writes: _w, ...sqlFilter } = options.filter ?? {};
    // So is a filter holding objects that look like the store's markers (stored escaped).
    const lookalike = options.filter !== undefined && JSON.stringify(options.filter).includes("\\u0001");
    const inJs = options.filter !== undefined && (Object.hasOwn(options.filter, "writes") || lookalike);
    if (options.filter && !lookalike) parts.push(`(COALESCE(${this.metaBase()}, '{}'::jsonb) || c.metadata::jsonb) @> ${ps.jsonb(sqlFilter)}`);
    const { rows } = await this.pool.query(
      `${this.checkpointSelect()}${where(parts)} ORDER BY c.seq DESC${inJs ? "" : page(ps, { limit: options.limit })}`,
      ps.values,
    );
    const out = await this.toCheckpoints(rows);
    if (!inJs) return out;
    const hit = out.filter((cp) => contains(cp.metadata, options.filter));
    return options.limit === undefined ? hit : hit.slice(0, Math.max(0, Math.floor(options.limit)));
  }

  async listCheckpointNamespaces(threadId: string): Promise<string[]> {
    const { rows } = await this.q<{ ns: string }>(this.pool, `SELECT DISTINCT ns FROM ${this.s}.checkpoints WHERE thread_id = $1 ORDER BY ns`, [threadId]);
    return rows.map((r) => r.ns);
  }

  // -------------------------------------------------------------------------------------------
  // Records.

  private toThread(row: Row, items?: Map<number, unknown[]>): ThreadRecord {
    const values = row.vals as Record<string, unknown>;
    const refs = row.vals_refs as Record<string, [number | string, number]> | null;
    if (refs) for (const [channel, [log, n]] of Object.entries(refs)) values[channel] = (items?.get(num(log)) ?? []).slice(0, n);
    const t = { ...(row.doc as object), metadata: row.metadata, values } as ThreadRecord;
    this.revisions.set(t, num(row.revision));
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
      const { rows: chunks } = await this.pool.query<{ log_id: string; items: unknown[] }>(
        `SELECT DISTINCT ON (c.log_id, c.start) c.log_id, c.start, c.items FROM ${this.s}.cp_chunks c
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

  private toAssistant(row: Row): AssistantRecord {
    return { ...(row.doc as object), metadata: row.metadata } as AssistantRecord;
  }

  async getAssistant(assistantId: string): Promise<AssistantRecord | undefined> {
    const { rows } = await this.q(this.pool, `SELECT doc, metadata FROM ${this.s}.assistants WHERE assistant_id = $1`, [assistantId]);
    return rows[0] ? this.toAssistant(rows[0]) : undefined;
  }

  private assistantWhere(q: AssistantQuery, ps: Params): string {
    const parts: string[] = [];
    if (q.ids && q.ids.length) parts.push(`assistant_id = ANY(${ps.p([...q.ids])}::text[])`);
    if (q.graph_id !== undefined) parts.push(`graph_id = ${ps.p(q.graph_id)}`);
    if (q.name !== undefined) parts.push(`strpos(lower(name), lower(${ps.p(q.name)})) > 0`);
    if (q.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(q.metadata)}`);
    parts.push(...authWhere("metadata", q.auth, ps));
    return where(parts);
  }

  async queryAssistants(q: AssistantQuery): Promise<AssistantRecord[]> {
    const ps = new Params();
    const w = this.assistantWhere(q, ps);
    const field = { assistant_id: "assistant_id", graph_id: "graph_id", name: "name", created_at: "created_at", updated_at: "updated_at" }[q.sortBy ?? "created_at"];
    const d = dir(q.sortOrder, "desc");
    const { rows } = await this.pool.query(`SELECT doc, metadata FROM ${this.s}.assistants${w} ORDER BY ${field} ${d}, assistant_id ${d}${page(ps, q)}`, ps.values);
    return rows.map((r) => this.toAssistant(r));
  }

  async countAssistants(q: AssistantQuery): Promise<number> {
    const ps = new Params();
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.s}.assistants${this.assistantWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }

  async queryAssistantVersions(q: AssistantVersionQuery): Promise<AssistantVersionRecord[]> {
    const ps = new Params();
    const parts = [`assistant_id = ${ps.p(q.assistant_id)}`];
    if (q.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(q.metadata)}`);
    parts.push(...authWhere("metadata", q.auth, ps));
    const { rows } = await this.pool.query(
      `SELECT doc, metadata FROM ${this.s}.assistant_versions${where(parts)} ORDER BY version ${dir(q.sortOrder, "desc")}${page(ps, q)}`,
      ps.values,
    );
    return rows.map((r) => ({ ...(r.doc as object), metadata: r.metadata }) as AssistantVersionRecord);
  }

  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    // One query: the row and the chunks of the lists it refers to.
    const { rows } = await this.q(
      this.pool,
      `SELECT t.doc, t.metadata, t.vals, t.revision, t.vals_refs,
              (SELECT json_agg(json_build_array(ch.log_id, ch.items) ORDER BY ch.log_id, ch.start)
                 FROM json_each(t.vals_refs) r, ${this.s}.cp_chunks ch
                WHERE ch.log_id = (r.value ->> 0)::bigint AND ch.start < (r.value ->> 1)::int) AS chunks
         FROM ${this.s}.threads t WHERE t.thread_id = $1`,
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
    const { rows } = await this.pool.query(
      `SELECT thread_id, doc, metadata, vals, revision, vals_refs FROM ${this.s}.threads${w} ORDER BY ${field} ${d}, thread_id ${d}${inJs ? "" : page(ps, q)}`,
      ps.values,
    );
    if (!inJs) return this.toThreads(rows);
    const hit = (await this.toThreads(rows)).filter((t) => contains(t.values, q.values));
    return paged(hit, q);
  }

  async countThreads(q: ThreadQuery): Promise<number> {
    if (q.values !== undefined) return (await this.queryThreads({ ...q, limit: undefined, offset: undefined })).length;
    const ps = new Params();
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.s}.threads${this.threadWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }

  /** The columns a run is read from ({@link toRun}). */
  private readonly runCols = `run_id, thread_id, assistant_id, created_at, status, updated_at, doc`;

  /** A run row: its columns and its document (./run-doc.ts). */
  private toRun(row: Row): RunRecord {
    return runFromRow(row);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const { rows } = await this.q(this.pool, `SELECT ${this.runCols} FROM ${this.s}.runs WHERE run_id = $1`, [runId]);
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
    const { rows } = await this.pool.query(`SELECT ${this.runCols} FROM ${this.s}.runs${w} ORDER BY ${order}${page(ps, q)}`, ps.values);
    return rows.map((r) => this.toRun(r));
  }

  async countRuns(q: RunQuery): Promise<number> {
    const ps = new Params();
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.s}.runs${this.runWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }

  async getCancelRequest(runId: string): Promise<CancelRequest | undefined> {
    const { rows } = await this.q(this.pool, `SELECT doc FROM ${this.s}.cancels WHERE run_id = $1`, [runId]);
    return rows[0]?.doc as CancelRequest | undefined;
  }

  /** Lease columns; `remaining`: ms until it expires on the database's clock. */
  private readonly leaseCols = `key, owner, expires_at, data, (extract(epoch FROM expires_db - clock_timestamp()) * 1000)::float8 AS remaining`;

  private toLease(row: Row): Lease {
    // On the database's clock, `expires_at` is told on the reader's clock (its remaining time from now).
    const expires = this.dbClock ? Math.round(this.callerNow() + num(row.remaining)) : num(row.expires_at);
    return { key: row.key as string, owner: row.owner as string, expires_at: expires, data: row.data as Record<string, unknown> };
  }

  async getLease(key: string): Promise<Lease | undefined> {
    const { rows } = await this.q(this.pool, `SELECT ${this.leaseCols} FROM ${this.s}.leases WHERE key = $1`, [key]);
    return rows[0] ? this.toLease(rows[0]) : undefined;
  }

  async expiredLeases(prefix: string, now: number, limit?: number): Promise<Lease[]> {
    const ps = new Params();
    if (this.dbClock) this.callerNow(now);
    const cond = this.dbClock ? `expires_db < clock_timestamp()` : `expires_at < ${ps.p(now)}`;
    const order = this.dbClock ? `expires_db, key` : `expires_at, key`;
    const { rows } = await this.pool.query(
      `SELECT ${this.leaseCols} FROM ${this.s}.leases
        WHERE ${cond} AND starts_with(key, ${ps.p(prefix)}) ORDER BY ${order}${page(ps, { limit })}`,
      ps.values,
    );
    return rows.map((r) => this.toLease(r));
  }

  getItem(namespace: readonly string[], key: string): Promise<StoredItem | undefined> {
    return items.getItem(this.pool, this.s, namespace, key);
  }

  searchItems(query: ItemQuery): Promise<ScoredItem[]> {
    return items.searchItems(this.pool, this.s, query);
  }

  listItemNamespaces(query: ItemNamespaceQuery): Promise<string[][]> {
    return items.listItemNamespaces(this.pool, this.s, query);
  }

  expiredItems(now: number, limit?: number): Promise<ExpiredItem[]> {
    return items.expiredItems(this.pool, this.s, now, limit);
  }

  private cronReads() {
    return (this.crons ??= cronReads((c, text, values) => this.q(c, text, values), () => this.pool, this.s));
  }
  private crons: ReturnType<typeof cronReads> | undefined;
  getCron(cronId: string) {
    return this.cronReads().getCron(cronId);
  }
  queryCrons(query: CronQuery) {
    return this.cronReads().queryCrons(query);
  }
  countCrons(query: CronQuery) {
    return this.cronReads().countCrons(query);
  }
  dueCrons(asOf?: string, limit?: number) {
    return this.cronReads().dueCrons(asOf, limit);
  }

  async getDoc<T = unknown>(collection: DocCollection, id: string): Promise<StoredDoc<T> | undefined> {
    const { rows } = await this.q(this.pool, `SELECT id, parent, doc FROM ${this.s}.docs WHERE collection = $1 AND id = $2`, [collection, id]);
    return rows[0] ? ({ id: rows[0].id, parent: rows[0].parent ?? null, doc: rows[0].doc } as StoredDoc<T>) : undefined;
  }

  async listDocs<T = unknown>(collection: DocCollection, parent?: string): Promise<StoredDoc<T>[]> {
    const { rows } =
      parent === undefined
        ? await this.pool.query(`SELECT id, parent, doc FROM ${this.s}.docs WHERE collection = $1 ORDER BY seq`, [collection])
        : await this.pool.query(`SELECT id, parent, doc FROM ${this.s}.docs WHERE collection = $1 AND parent = $2 ORDER BY seq`, [collection, parent]);
    return rows.map((r) => ({ id: r.id, parent: r.parent ?? null, doc: r.doc }) as StoredDoc<T>);
  }
}

/**
 * A store on PostgreSQL with the `pg` driver (D22): `postgresStore({ connectionString })` or
 * `postgresStore({ pool })`. Several processes on one database act as one service.
 */
export function postgresStore(options: PostgresStoreOptions | string): PostgresStore {
  const opts = typeof options === "string" ? { connectionString: options } : { ...options };
  // `?schema=name` in the URL chooses the schema (the driver would ignore it).
  if (opts.connectionString && /[?&]schema=/.test(opts.connectionString)) {
    const url = new URL(opts.connectionString);
    opts.schema ??= url.searchParams.get("schema") ?? undefined;
    url.searchParams.delete("schema");
    opts.connectionString = url.toString();
  }
  return new PostgresStore(opts);
}
