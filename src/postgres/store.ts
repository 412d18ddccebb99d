/**
 * The PostgreSQL store (D22): several processes on one database act as one service (D20).
 *
 * This file holds its life cycle (pool, schema migration on open, the LISTEN connection, event
 * pruning) and the `Store` surface; each concern lives in its own file:
 * - ./commit.ts: commits (one transaction, expectations under row locks, retries, notify);
 * - ./threads.ts, ./runs.ts (claims), ./leases.ts, ./assistants.ts, ./docs.ts: each record kind's
 *   writes and reads; ./checkpoints.ts: checkpoints, pending writes and list logs;
 * - ./sql.ts: query translation (containment with `@>` on jsonb, GIN indexed; the auth filter in
 *   the WHERE clause; sort, paging and counts in the database);
 * - ./events.ts: run events; ./items.ts, ./crons.ts: the key-value store and crons;
 * - ./core.ts: what they share (prepared statements, `sameAs` revisions, the lease clock);
 * - ./schema.ts: the schema and its migrations.
 */
import { SILENT, type DiagnosticsLogger } from "../diagnostics.js";
import pg from "pg";
import type { Pool, PoolClient, Notification } from "pg";
import { GraphdockError, invalidInput, unavailable } from "../errors.js";
import type { CronQuery } from "../persistence/crons.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CancelRequest,
  CheckpointKey,
  DocCollection,
  ExpiredItem,
  ItemNamespaceQuery,
  ItemQuery,
  Lease,
  ListCheckpointsOptions,
  RunClaim,
  RunClaimResult,
  RunEventPort,
  RunQuery,
  ScoredItem,
  Store,
  StoreCapabilities,
  StoredCheckpoint,
  StoredDoc,
  StoredItem,
  ThreadQuery,
  WriteOp,
} from "../persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../types.js";
import { TopicListeners } from "../persistence/common.js";
import { RUN_EVENT_DEFAULTS } from "../persistence/memory-events.js";
import { PgAssistants } from "./assistants.js";
import { PgCheckpoints } from "./checkpoints.js";
import { PgCommits } from "./commit.js";
import { PgCore } from "./core.js";
import { cronReads } from "./crons.js";
import { PgDocs } from "./docs.js";
import { PgRunEvents } from "./events.js";
import { guardPool, PgHealth, UNAVAILABLE_MESSAGE } from "./health.js";
import { callerPool, type PostgresPool } from "./pool.js";
import * as items from "./items.js";
import { PgLeases } from "./leases.js";
import { PgRuns } from "./runs.js";
import { migrate, quoteIdent } from "./schema.js";
import { PgThreads } from "./threads.js";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`; or give `pool`. */
  connectionString?: string;
  /** A `pg` Pool to use (not ended by `close`). LISTEN uses one more connection with the pool's settings. */
  pool?: PostgresPool;
  /** The schema holding graphdock's tables (or `?schema=` in the URL). Default `graphdock`. */
  schema?: string;
  /** Size of the pool created from `connectionString`. Default 10. */
  max?: number;
  /**
   * How often a reader of another process's run events polls without a notification, and how
   * often waiting calls check again while the LISTEN connection is down. Default 1000 ms.
   */
  eventPollMs?: number;
  /**
   * Events of a run held in memory by the process publishing them, for its own readers (D74). A
   * reader of that process further behind reads the table when the events are written there
   * (resumable runs, runs read elsewhere), and fails otherwise, as a slow reader of the memory
   * store does. Default 10,000.
   */
  maxEventBacklog?: number;
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

/** The PostgreSQL `Store`. Create it with {@link postgresStore}. */
export class PostgresStore implements Store {
  readonly kind = "postgres";
  readonly capabilities: StoreCapabilities;
  /** The schema holding the store's tables (settled by `open()` when none was named). */
  schema: string;
  /** The NOTIFY channel of this schema. */
  channel!: string;
  /** Run events, in the schema's tables (`pgEvents`). */
  get events(): RunEventPort {
    return this.pgEvents;
  }
  private pgEvents!: PgRunEvents;

  private poolInstance: Pool | undefined;
  /** `poolInstance` with failures to reach the database reported as `unavailable` (./health.ts). */
  private guarded: Pool | undefined;
  private unwatch: (() => void) | undefined;
  /** Whether the database can be reached; logs the start and end of an outage. */
  private readonly health = new PgHealth();
  private readonly ownPool: boolean;
  private opening: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;
  private listener: pg.Client | undefined;
  private reconnecting: ReturnType<typeof setTimeout> | undefined;
  /** While the LISTEN connection is down: wakes every listener now and then (notifications are missed). */
  private polling: ReturnType<typeof setInterval> | undefined;
  private pruner: ReturnType<typeof setInterval> | undefined;
  private readonly listeners = new TopicListeners();
  /** The runtime's diagnostics (useDiagnostics): silent until one is given. */
  private log: DiagnosticsLogger = SILENT;
  private core!: PgCore;
  private commits!: PgCommits;
  private assistants!: PgAssistants;
  private threads!: PgThreads;
  private checkpoints!: PgCheckpoints;
  private runs!: PgRuns;
  private leases!: PgLeases;
  private docs!: PgDocs;
  private crons!: ReturnType<typeof cronReads>;

  constructor(private readonly options: PostgresStoreOptions) {
    if (!options.pool && !options.connectionString) throw invalidInput("postgresStore: give `connectionString` or `pool`");
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(this.schema)) throw invalidInput(`postgresStore: schema "${this.schema}" must be an identifier of at most 41 characters`);
    if (/^pg_/i.test(this.schema)) throw invalidInput(`postgresStore: schema "${this.schema}": names starting with pg_ are reserved by PostgreSQL`);
    const backlog = options.maxEventBacklog;
    if (backlog !== undefined && !(Number.isSafeInteger(backlog) && backlog > 0)) {
      throw invalidInput(`postgresStore: maxEventBacklog must be a positive integer, got ${String(backlog)}`);
    }
    this.ownPool = !options.pool;
    const dbClock = (options.leaseClock ?? "database") === "database";
    this.capabilities = { persistent: true, shared: true, leaseClock: dbClock ? "store" : "caller" };
    this.poolInstance = options.pool && callerPool(options.pool);
    this.wire(this.schema);
  }

  /** Builds the store's parts over `schema` (again at open, when the default schema is settled). */
  private wire(schema: string): void {
    const options = this.options;
    this.schema = schema;
    this.channel = `graphdock_${schema}`;
    this.core = new PgCore(quoteIdent(schema), this.capabilities.leaseClock === "store", () => this.pool);
    const checkpoints = new PgCheckpoints(this.core);
    this.checkpoints = checkpoints;
    this.threads = new PgThreads(this.core, checkpoints);
    this.runs = new PgRuns(this.core);
    this.leases = new PgLeases(this.core);
    this.assistants = new PgAssistants(this.core);
    this.docs = new PgDocs(this.core);
    const { threads, runs, leases, assistants, docs } = this;
    this.commits = new PgCommits(this.core, { assistants, threads, checkpoints, runs, leases, docs }, this.channel);
    this.crons = cronReads((c, text, values) => this.core.q(c, text, values), () => this.pool, this.core.s);
    this.pgEvents = new PgRunEvents(() => this.pool, this.core.s, this.channel, {
      pollMs: options.eventPollMs ?? 1000,
      maxBacklog: options.maxEventBacklog ?? RUN_EVENT_DEFAULTS.maxBacklog,
      resumableRetentionMs: options.resumableRetentionMs ?? 15 * 60_000,
      retentionMs: options.eventRetentionMs ?? 60_000,
    });
  }

  private get pool(): Pool {
    if (!this.guarded) throw new Error("graphdock/postgres: the store is not open (call open())");
    return this.guarded;
  }

  /** Opens the store; a closed store opens again (a runtime closed and created again on it). */
  open(): Promise<void> {
    if (this.opening && !this.closing) return this.opening;
    const after = this.closing ?? Promise.resolve();
    this.opening = after.then(() => {
      this.closing = undefined;
      this.closed = false;
      this.pgEvents.reopen();
      if (this.ownPool) this.poolInstance = undefined;
      this.guarded = undefined;
      return this.doOpen();
    });
    return this.opening;
  }

  useDiagnostics(log: DiagnosticsLogger): void {
    this.log = log;
    this.listeners.log = log;
    this.pgEvents.log = log;
    this.health.log = log;
  }

  private async doOpen(): Promise<void> {
    if (!this.poolInstance) {
      const pool = new pg.Pool({ connectionString: this.options.connectionString, max: this.options.max ?? 10 });
      // An idle client losing its connection must not crash the process; the next query reconnects.
      // Losing it to an outage is part of that outage (logged once).
      pool.on("error", (err) => {
        if (this.health.fail(err) === err) this.log.error({ err }, "graphdock/postgres: an idle connection failed");
      });
      this.poolInstance = pool;
    }
    ({ pool: this.guarded, unwatch: this.unwatch } = guardPool(this.poolInstance, this.health));
    const client = await this.pool.connect();
    try {
      if (this.options.schema === undefined) {
        const legacy = await openedSchema(client);
        if (legacy !== this.schema) this.wire(legacy);
      }
      await migrate(client, this.schema);
    } finally {
      client.release();
    }
    this.listener = await this.listen().catch((err: unknown) => {
      throw this.health.fail(err);
    });
    const every = this.options.pruneEveryMs ?? 60_000;
    this.pruner = setInterval(() => {
      Promise.all([this.pgEvents.prune(), this.runs.pruneCancels()]).catch((err) => {
        if (!this.closed && !GraphdockError.is(err, "unavailable")) this.log.error({ err }, "graphdock/postgres: pruning ended run events and cancel requests failed");
      });
    }, every);
    (this.pruner as { unref?: () => void }).unref?.();
  }

  /**
   * Opens one connection that LISTENs on the schema's channel (its own, outside the pool: a
   * caller's pool keeps all its connections; configured as the pool's are). When it drops, the
   * store reconnects with backoff and polls meanwhile (D72).
   */
  private async listen(): Promise<pg.Client> {
    const config: pg.ClientConfig = this.ownPool
      ? { connectionString: this.options.connectionString }
      : { ...((this.poolInstance as unknown as { options?: pg.ClientConfig }).options ?? {}) };
    const client = new pg.Client(config);
    let ended = false;
    const lost = (err?: Error) => {
      if (ended) return;
      ended = true;
      void client.end().catch(() => undefined);
      if (this.listener === client) this.listenerLost(err);
    };
    // Before connecting: a connection that fails emits `error`, which must not go unhandled.
    client.on("error", (err: Error) => lost(err));
    client.on("end", () => lost());
    client.on("notification", (msg: Notification) => this.dispatch(msg));
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch (err) {
      ended = true;
      void client.end().catch(() => undefined);
      throw err;
    }
    if (ended) throw new Error("Connection terminated while it was set up");
    this.health.up();
    return client;
  }

  /**
   * The LISTEN connection dropped: notifications are missed until it is back, so every listener
   * is woken every `eventPollMs` meanwhile (waiting calls check the store again), and the
   * connection is opened again after 0.25 s, 0.5 s, 1 s, ... at most 5 s apart. Its loss to an
   * outage starts the outage's log; the failed attempts are silent (the statements that fail
   * meanwhile tell whether the database can be reached).
   */
  private listenerLost(err: Error | undefined): void {
    this.listener = undefined;
    if (this.closed) return;
    const cause = err ?? new Error("Connection terminated");
    if (this.health.fail(cause) === cause) this.log.error({ err: cause }, "graphdock/postgres: the LISTEN connection failed; reconnecting");
    const pollMs = this.options.eventPollMs ?? 1000;
    this.polling ??= setInterval(() => this.wakeAll(), pollMs);
    (this.polling as { unref?: () => void }).unref?.();
    const attempt = (n: number) => {
      this.reconnecting = setTimeout(() => {
        this.reconnecting = undefined;
        this.listen().then(
          (client) => {
            if (this.closed) return void client.end().catch(() => undefined);
            this.listener = client;
            clearInterval(this.polling);
            this.polling = undefined;
            // What was notified while it was down is lost: everyone checks once more.
            this.wakeAll();
          },
          () => {
            if (!this.closed) attempt(n + 1);
          },
        );
      }, Math.min(250 * 2 ** n, 5000));
      (this.reconnecting as { unref?: () => void }).unref?.();
    };
    attempt(0);
  }

  /** Wakes every `subscribe` listener and every reader of run events (notifications may have been missed). */
  private wakeAll(): void {
    this.listeners.deliverAll();
    this.pgEvents.wakeAll();
  }

  /**
   * Resolves when the database answers a trivial statement within 2 s; rejects with `unavailable`
   * otherwise (a slow answer is not logged as an outage: the pool may only be busy).
   */
  async ping(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(UNAVAILABLE_MESSAGE)), 2000);
    });
    try {
      await Promise.race([this.pool.query("SELECT 1"), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private dispatch(msg: Notification): void {
    const payload = msg.payload ?? "";
    if (payload.startsWith("e")) {
      this.pgEvents.wake(payload.slice(1));
      return;
    }
    if (payload.startsWith("r")) {
      this.pgEvents.share(payload.slice(1));
      return;
    }
    if (payload.startsWith("s")) {
      this.pgEvents.answered(payload.slice(1));
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
    if (this.poolInstance) await this.pgEvents.close().catch(() => undefined);
    this.closed = true;
    if (this.pruner) clearInterval(this.pruner);
    if (this.reconnecting) clearTimeout(this.reconnecting);
    clearInterval(this.polling);
    this.polling = undefined;
    const listener = this.listener;
    this.listener = undefined;
    if (listener) await listener.end().catch(() => undefined);
    this.unwatch?.();
    if (this.ownPool && this.poolInstance) await this.poolInstance.end();
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    return this.listeners.subscribe(topic, listener);
  }

  async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`graphdock:${this.schema}:${key}`]);
      try {
        return await fn();
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`graphdock:${this.schema}:${key}`]);
      }
    } finally {
      client.release();
    }
  }

  commit(ops: readonly WriteOp[]): Promise<void> {
    return this.commits.commit(ops);
  }

  claimRun(claim: RunClaim): Promise<RunClaimResult> {
    return this.runs.claimRun(claim);
  }

  getCheckpoint(key: CheckpointKey): Promise<StoredCheckpoint | undefined> {
    return this.checkpoints.getCheckpoint(key);
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): Promise<StoredCheckpoint[]> {
    return this.checkpoints.listCheckpoints(threadId, options);
  }

  listCheckpointNamespaces(threadId: string): Promise<string[]> {
    return this.checkpoints.listCheckpointNamespaces(threadId);
  }

  getAssistant(assistantId: string): Promise<AssistantRecord | undefined> {
    return this.assistants.getAssistant(assistantId);
  }

  queryAssistants(q: AssistantQuery): Promise<AssistantRecord[]> {
    return this.assistants.queryAssistants(q);
  }

  countAssistants(q: AssistantQuery): Promise<number> {
    return this.assistants.countAssistants(q);
  }

  queryAssistantVersions(q: AssistantVersionQuery): Promise<AssistantVersionRecord[]> {
    return this.assistants.queryAssistantVersions(q);
  }

  getThread(threadId: string): Promise<ThreadRecord | undefined> {
    return this.threads.getThread(threadId);
  }

  queryThreads(q: ThreadQuery): Promise<ThreadRecord[]> {
    return this.threads.queryThreads(q);
  }

  countThreads(q: ThreadQuery): Promise<number> {
    return this.threads.countThreads(q);
  }

  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.runs.getRun(runId);
  }

  queryRuns(q: RunQuery): Promise<RunRecord[]> {
    return this.runs.queryRuns(q);
  }

  countRuns(q: RunQuery): Promise<number> {
    return this.runs.countRuns(q);
  }

  getCancelRequest(runId: string): Promise<CancelRequest | undefined> {
    return this.runs.getCancelRequest(runId);
  }

  getLease(key: string): Promise<Lease | undefined> {
    return this.leases.getLease(key);
  }

  expiredLeases(prefix: string, now: number, limit?: number): Promise<Lease[]> {
    return this.leases.expiredLeases(prefix, now, limit);
  }

  getItem(namespace: readonly string[], key: string): Promise<StoredItem | undefined> {
    return items.getItem(this.pool, this.core.s, namespace, key);
  }

  searchItems(query: ItemQuery): Promise<ScoredItem[]> {
    return items.searchItems(this.pool, this.core.s, query);
  }

  listItemNamespaces(query: ItemNamespaceQuery): Promise<string[][]> {
    return items.listItemNamespaces(this.pool, this.core.s, query);
  }

  expiredItems(now: number, limit?: number): Promise<ExpiredItem[]> {
    return items.expiredItems(this.pool, this.core.s, now, limit);
  }

  getCron(cronId: string) {
    return this.crons.getCron(cronId);
  }
  queryCrons(query: CronQuery) {
    return this.crons.queryCrons(query);
  }
  countCrons(query: CronQuery) {
    return this.crons.countCrons(query);
  }
  dueCrons(asOf?: string, limit?: number) {
    return this.crons.dueCrons(asOf, limit);
  }

  getDoc<T = unknown>(collection: DocCollection, id: string): Promise<StoredDoc<T> | undefined> {
    return this.docs.getDoc<T>(collection, id);
  }

  listDocs<T = unknown>(collection: DocCollection, parent?: string): Promise<StoredDoc<T>[]> {
    return this.docs.listDocs<T>(collection, parent);
  }
}

/** The schema used when none is named. */
const DEFAULT_SCHEMA = "graphdock";
/** The default schema of the package's former name, agentdock: opened when it is all there is. */
const LEGACY_SCHEMA = "agentdock";

/**
 * The schema a store given no schema opens: `graphdock`, unless the database holds only a schema
 * written under the package's former name (`agentdock`), which then opens unchanged.
 */
async function openedSchema(client: PoolClient): Promise<string> {
  const { rows } = await client.query<{ nspname: string }>(
    `SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = 'meta' WHERE n.nspname = ANY($1)`,
    [[DEFAULT_SCHEMA, LEGACY_SCHEMA]],
  );
  const names = new Set(rows.map((r) => r.nspname));
  return names.has(LEGACY_SCHEMA) && !names.has(DEFAULT_SCHEMA) ? LEGACY_SCHEMA : DEFAULT_SCHEMA;
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
