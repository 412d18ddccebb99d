/**
 * The storage contract. The engine and the runtime read and write persistent state only through
 * `Store`; every store (memory, JSON file, IndexedDB) implements it and passes the same contract
 * suite. The store is the one source of truth for the run lifecycle (queue, leases, cancel
 * requests, run events), so several runtimes over one store act as one service.
 *
 * - Reads are plain methods; searches are query objects (`ThreadQuery`, ...) answered by the
 *   store, so a SQL store can use indexes and the in-memory stores share one evaluator
 *   (./query.ts). No method hands back a whole table.
 * - Writes are lists of operations committed atomically by `commit`: when it resolves everything
 *   in the list is persisted (no acknowledged write is lost), and after a crash or a failed op
 *   either all of a commit is there or none of it. An op may carry what it expects of the stored
 *   state (`expect`); when an expectation does not hold the commit writes nothing and rejects with
 *   `conflict`.
 * - `notify` ops are delivered to `subscribe` listeners of every runtime on the same data once
 *   their commit has succeeded (as a SQL NOTIFY inside a transaction).
 * - Run events go through `events` (a `RunEventPort`), keyed by run id with sequence numbers.
 */
import type { DiagnosticsLogger } from "../diagnostics.js";
import type { AuthFilter } from "../auth/types.js";
import type {
  AssistantRecord,
  AssistantVersionRecord,
  RunRecord,
  RunStatus,
  ThreadRecord,
  ThreadStatus,
} from "../types.js";
import type { CronExpectation, CronQuery, CronRecord } from "./crons.js";

export type { CronExpectation, CronQuery, CronRecord, CronSortBy } from "./crons.js";

// Each persistent store versions its own on-disk format (JSON_FILE_FORMAT, INDEXEDDB_FORMAT),
// refusing newer data and migrating older data when it opens.

// ---------------------------------------------------------------------------------------------
// Checkpoints, keyed by (thread_id, checkpoint_ns, checkpoint id). Their
// values are opaque JSON to the store: a store may compress them (for example by sharing the
// common prefix of arrays between a checkpoint and its parent) but never interprets them. All of
// these are frozen when they come from the engine.

/** A snapshot of a thread's channels after a superstep. JSON-safe. */
export interface Checkpoint {
  v: 1;
  id: string;
  /** ISO time; the snapshot's `created_at`. */
  ts: string;
  channel_values: Record<string, unknown>;
  channel_versions: Record<string, number>;
  versions_seen: Record<string, Record<string, number>>;
}

export interface CheckpointMetadata {
  source: "input" | "loop" | "update" | "fork";
  step: number;
  parents: Record<string, string>;
  /** Node name -> what it wrote in this step (D7, legacy LangGraph meaning). */
  writes?: Record<string, unknown> | null;
  /** Run metadata merged in by the runtime (run_id, graph_id, assistant_id, ...). */
  [key: string]: unknown;
}

/** `[task_id, channel, value]`; special channels `__error__`, `__interrupt__`, `__resume__`, `__no_writes__`. */
export type PendingWrite = readonly [taskId: string, channel: string, value: unknown];

export interface StoredCheckpoint {
  thread_id: string;
  /** `""` for the root graph; `node:task_id` (joined with `|`) for a subgraph. */
  checkpoint_ns: string;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  parent_checkpoint_id: string | null;
  /** Writes recorded against this checkpoint, in the order they were recorded. */
  pending_writes: readonly PendingWrite[];
}

/** Names one checkpoint; without `checkpoint_id`, the latest of the namespace. */
export interface CheckpointKey {
  thread_id: string;
  /** Default `""` (the root graph). */
  checkpoint_ns?: string;
  checkpoint_id?: string;
}

export interface ListCheckpointsOptions {
  /** The namespace to list; default `""`. */
  checkpoint_ns?: string;
  /** At most this many, newest first. */
  limit?: number;
  /** Only checkpoints created before this checkpoint id (exclusive). */
  before?: string;
  /** Metadata containment filter (every key present and equal, recursively). */
  filter?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Documents: experiment data of the upload issue, stored as opaque JSON documents in named
// collections, each optionally grouped under a parent id (examples under a dataset, runs and
// feedback under an experiment). Stores do not interpret them.

export type DocCollection = "datasets" | "examples" | "experiments" | "experiment_runs" | "feedback";

export interface StoredDoc<T = unknown> {
  id: string;
  parent: string | null;
  doc: T;
}

// ---------------------------------------------------------------------------------------------
// Items: long-term memory, JSON objects under a namespace (labels) and a key. The
// runtime validates namespaces (non-empty labels without `.`), so a namespace is identified by
// its labels joined with `.` (`namespaceKey`). Times of expiry are epoch ms of the caller's clock.

/** An item as stored. */
export interface StoredItem {
  namespace: readonly string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  /** Epoch ms from which the item is expired (never returned, removed by a sweep); null: never. */
  expires_at: number | null;
  /** Time to live in minutes (to refresh `expires_at` on reads); null: none. */
  ttl: number | null;
  /** Embeddings of the item's indexed texts, for semantic search; absent when not indexed. */
  vectors?: readonly (readonly number[])[];
}

/** An item found by `searchItems`, with its similarity when the query ranked by a vector. */
export type ScoredItem = StoredItem & { score?: number };

/**
 * Items whose namespace starts with `prefix` (label by label; `[]`: all), not expired at `now`,
 * matching `filter` (validated by `checkItemFilter`, ./items.ts) and `auth` (matched against the
 * item's value with `namespace` and `key` added, see docs/auth.md). Ordered by `updated_at` descending
 * (ties: namespace, then key, ascending), or with `vector` by cosine similarity descending (items
 * without vectors last, unscored), then paged.
 */
export interface ItemQuery extends Page {
  prefix: readonly string[];
  filter?: Record<string, unknown>;
  auth?: AuthFilter;
  now: number;
  vector?: readonly number[];
}

/**
 * Namespaces holding items not expired at `now` (and matching `auth`, as in `ItemQuery`): those
 * starting with `prefix` and ending with `suffix` (a label `"*"` matches any label), cut to
 * `maxDepth` labels, without duplicates, ordered by their labels joined with `.`, then paged.
 */
export interface ItemNamespaceQuery extends Page {
  prefix?: readonly string[];
  suffix?: readonly string[];
  maxDepth?: number;
  auth?: AuthFilter;
  now: number;
}

/** Names an item whose time to live ran out. */
export interface ExpiredItem {
  namespace: readonly string[];
  key: string;
  expires_at: number;
}

// ---------------------------------------------------------------------------------------------
// Queries (D21). Every filter present must hold; absent filters match everything. Sorting is by
// the named field (ISO times and ids compare as strings) with ties broken by the record's id in
// the same direction. `auth` is the authorization filter of docs/auth.md (matched against the
// record's metadata, see `matchesAuthFilter`).

export type SortOrder = "asc" | "desc";

export interface Page {
  /** Default: no limit. */
  limit?: number;
  /** Default 0. */
  offset?: number;
}

export interface ThreadQuery extends Page {
  ids?: readonly string[];
  status?: ThreadStatus;
  /** JSON containment on `metadata`. */
  metadata?: Record<string, unknown>;
  /** JSON containment on `values`. */
  values?: Record<string, unknown>;
  auth?: AuthFilter;
  /** Default `created_at`. */
  sortBy?: "thread_id" | "status" | "created_at" | "updated_at" | "state_updated_at";
  /** Default `desc`. */
  sortOrder?: SortOrder;
}

export interface AssistantQuery extends Page {
  ids?: readonly string[];
  graph_id?: string;
  /** Case-insensitive substring of `name`. */
  name?: string;
  metadata?: Record<string, unknown>;
  auth?: AuthFilter;
  /** Default `created_at`. */
  sortBy?: "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
  sortOrder?: SortOrder;
}

export interface AssistantVersionQuery extends Page {
  assistant_id: string;
  metadata?: Record<string, unknown>;
  auth?: AuthFilter;
  /** Default `desc` (newest version first). */
  sortOrder?: SortOrder;
}

export interface RunQuery extends Page {
  thread_id?: string;
  assistant_id?: string;
  status?: RunStatus | readonly RunStatus[];
  /**
   * `created_at` (ties: run id), or `queue`: the order in which the store accepted the runs (its
   * commit order), which is the order runs of one thread execute in. Default `created_at`.
   */
  sortBy?: "created_at" | "queue";
  /** Default `desc` for `created_at`, `asc` for `queue`. */
  sortOrder?: SortOrder;
}

// ---------------------------------------------------------------------------------------------
// Leases: named, expiring claims (`thread:<id>` while a run of the thread executes; crons later).
// Times are epoch milliseconds of the caller's clock.

export interface Lease {
  key: string;
  /** Who holds it (a runtime's id). */
  owner: string;
  /** Epoch ms after which the lease is expired and may be taken over. */
  expires_at: number;
  /** What the holder is doing under it (for example `{ run_id }`). */
  data: Record<string, unknown>;
}

/** A persisted request to cancel a run, observed by the runtime executing it. */
export interface CancelRequest {
  run_id: string;
  thread_id: string;
  action: "interrupt" | "rollback";
  requested_at: string;
}

// ---------------------------------------------------------------------------------------------
// Writes.

/** What a thread op expects of the stored thread; every field given must hold. */
export interface ThreadExpectation {
  /** The thread exists (true) or does not (false). */
  exists?: boolean;
  /** The stored status is one of these. */
  status?: readonly ThreadStatus[];
  /**
   * The stored thread is unchanged since this record was read from this store (compare-and-set:
   * stores track a revision per record; `sameAs` must be an object this store returned).
   */
  sameAs?: ThreadRecord;
}

export interface RunExpectation {
  exists?: boolean;
  status?: readonly RunStatus[];
}

export interface LeaseExpectation {
  /**
   * `free`: no lease, or an expired one (as of `now`); `held`: held by the op's owner and not
   * expired (as of `now`).
   */
  state: "free" | "held";
  /**
   * Epoch ms the expectation is judged at. A store with a clock of its own
   * (`StoreCapabilities.leaseClock === "store"`, PostgreSQL by default) judges expiry at its own
   * clock instead and reads `lease.expires_at - now` as the lease's duration, so callers whose
   * clocks are skewed cannot take each other's live leases.
   */
  now: number;
}

export type WriteOp =
  | { op: "assistant.put"; assistant: AssistantRecord }
  /** Removes the assistant and all its versions. */
  | { op: "assistant.delete"; assistant_id: string }
  | { op: "assistant_version.put"; version: AssistantVersionRecord }
  | { op: "thread.put"; thread: ThreadRecord; expect?: ThreadExpectation }
  /** Removes the thread, its checkpoints (every namespace) and writes, its runs and cancel requests. */
  | { op: "thread.delete"; thread_id: string; expect?: ThreadExpectation }
  /** Adds a checkpoint (becoming the latest of its namespace) or replaces one with the same key. */
  | { op: "checkpoint.put"; checkpoint: StoredCheckpoint }
  | { op: "checkpoint.delete"; thread_id: string; checkpoint_ns?: string; checkpoint_ids: readonly string[] }
  /** Replaces the writes of `task_id` on that checkpoint. */
  | {
      op: "writes.put";
      thread_id: string;
      checkpoint_ns?: string;
      checkpoint_id: string;
      task_id: string;
      writes: readonly PendingWrite[];
    }
  | { op: "run.put"; run: RunRecord; expect?: RunExpectation }
  /** Removes the run and its cancel request. */
  | { op: "run.delete"; run_id: string; expect?: RunExpectation }
  /** Records (or replaces) a cancel request for a run. */
  | { op: "cancel.put"; request: CancelRequest }
  /** Takes or renews a lease; with `expect` only when it holds. */
  | { op: "lease.put"; lease: Lease; expect?: LeaseExpectation }
  /** Drops a lease; with `owner`, only if that owner holds it (else the op does nothing). */
  | { op: "lease.delete"; key: string; owner?: string }
  | { op: "doc.put"; collection: DocCollection; id: string; parent: string | null; doc: unknown }
  | { op: "doc.delete"; collection: DocCollection; id: string }
  /** Adds or replaces a cron; with `expect` only when it holds. */
  | { op: "cron.put"; cron: CronRecord; expect?: CronExpectation }
  /** Removes a cron; with `expect` only when it holds. */
  | { op: "cron.delete"; cron_id: string; expect?: CronExpectation }
  /** Delivered to `subscribe(topic)` listeners of every runtime on the data after the commit. */
  | { op: "notify"; topic: string; payload?: string }
  /** Stores (or replaces) an item. */
  | { op: "item.put"; item: StoredItem }
  /**
   * Removes an item (nothing when missing). With `expiredAt` (epoch ms), only when the stored
   * item has expired by then (a sweep racing a refresh never removes a refreshed item).
   */
  | { op: "item.delete"; namespace: readonly string[]; key: string; expiredAt?: number }
  /** Sets the `expires_at` of a stored item that has a ttl (a refresh); nothing otherwise. */
  | { op: "item.touch"; namespace: readonly string[]; key: string; expires_at: number };

export interface StoreCapabilities {
  /** Data survives the process (or the tab). */
  persistent: boolean;
  /** Other runtimes outside this process (tabs, processes) may share the data. */
  shared: boolean;
  /**
   * Whose clock judges lease expiry: `caller` (default: the `now` of each expectation and query)
   * or `store` (the database's clock; expectations' `now` only turns `expires_at` into a duration,
   * and leases read back carry `expires_at` on the reader's clock, estimated from its last `now`).
   */
  leaseClock?: "caller" | "store";
}

/** A change made by another runtime on the same data (another tab). */
export interface ExternalChange {
  /** Threads whose records, checkpoints or runs changed; undefined when unknown (reload all). */
  threadIds?: string[];
}

// ---------------------------------------------------------------------------------------------
// Run events (D20): one ordered log per run, numbered from 0 by the publisher (only the runtime
// executing a run publishes its events). Readers on any runtime over the same data read from a
// sequence number and wait for more.

export interface RunEventRecord {
  seq: number;
  event: string;
  data: unknown;
}

export interface RunEventReadOptions {
  /** Events with `seq > after`; -1 for every retained event. Default: only events published from now on. */
  after?: number;
  signal?: AbortSignal;
  /**
   * What to do when the log is not open: `wait` for it (default; its run has not started yet),
   * or `end` at once (its run ended and the log was dropped or never kept).
   */
  ifAbsent?: "wait" | "end";
  /**
   * The reader was made before its run was created (a create-and-stream call): it reads the log
   * from its first event even when the run has ended by the time the store attaches it (a store
   * whose readers attach asynchronously, such as PostgreSQL's; the others attach at once).
   */
  fromStart?: boolean;
}

/** How a run's log is opened (`RunEventPort.open`). */
export interface RunEventOpenOptions {
  /** Every event is retained until the log is dropped; otherwise only what attached readers have not read yet. */
  resumable: boolean;
  /**
   * The first sequence number when the port does not know where the log got to: a run resumed
   * as a later attempt (D62) whose earlier attempts published in a runtime that is gone. A log
   * still open (or ended) in the port continues after its last event instead. Default 0.
   */
  from?: number;
}

export interface RunEventPort {
  /**
   * Opens the run's log before its first event. Opening a log that is open continues it (a run
   * resumed as its next attempt publishes after the earlier attempts' events: D62).
   */
  open(runId: string, options: RunEventOpenOptions): void | Promise<void>;
  /** Appends one event; the port numbers a log's events on from where it opened (0, or `from`). Never awaits a reader. */
  publish(runId: string, event: string, data: unknown): void;
  /** No more events for the run; readers drain and end. Resumable logs stay replayable. */
  end(runId: string): void | Promise<void>;
  /**
   * The run's events in order, live until the log ends or `signal` aborts. A log that is not
   * open (yet) is waited for; one that ended yields what is retained and ends.
   */
  read(runId: string, options?: RunEventReadOptions): AsyncIterable<RunEventRecord>;
  /** Forgets the run's events (run deleted, rolled back, or its thread deleted). */
  drop(runId: string): void | Promise<void>;
  /**
   * Optional: false when an event published now for the run reaches no one (no reader is
   * attached and the log retains nothing), so its producer may leave its data out. A port that
   * cannot tell (its readers are in other processes) omits it: always listened to.
   */
  listening?(runId: string): boolean;
}

// ---------------------------------------------------------------------------------------------

export interface Store {
  /** `"memory"`, `"json-file"`, `"indexeddb"`, ... */
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  /** Run events; shared by every runtime on the same data. */
  readonly events: RunEventPort;

  /** Opens (creating, migrating, recovering as needed) in time independent of the data's size. Idempotent. */
  open(): Promise<void>;
  /** Flushes and releases files, handles and locks. Idempotent. */
  close(): Promise<void>;

  /**
   * Applies every operation, in order, all or nothing; resolves once persisted. Rejects with
   * `conflict` (and writes nothing) when an expectation does not hold, and with the op's error
   * (writing nothing) when an op cannot be stored (for example a value that is not JSON).
   */
  commit(ops: readonly WriteOp[]): Promise<void>;
  /**
   * Listens to `notify` ops of committed commits on this data (every runtime's). Returns
   * unsubscribe. A store that can miss notifications (PostgreSQL while its LISTEN connection is
   * down) also calls every listener with no payload now and then meanwhile: a listener then
   * checks again what it waits for (D72).
   */
  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void;
  /**
   * Hands the store the diagnostics logger of the runtime opening it (`createRuntime({ diagnostics
   * })`): where it reports its own faults (a lost connection, a listener that threw). Optional.
   */
  useDiagnostics?(log: DiagnosticsLogger): void;
  /**
   * Optional: resolves when the store's data can be reached now, rejects with `unavailable` when
   * it cannot (a database store; `GET /ok` asks it). Stores in this process's memory or files
   * have none.
   */
  ping?(): Promise<void>;

  getAssistant(assistantId: string): Promise<AssistantRecord | undefined>;
  queryAssistants(query: AssistantQuery): Promise<AssistantRecord[]>;
  countAssistants(query: AssistantQuery): Promise<number>;
  queryAssistantVersions(query: AssistantVersionQuery): Promise<AssistantVersionRecord[]>;

  getThread(threadId: string): Promise<ThreadRecord | undefined>;
  queryThreads(query: ThreadQuery): Promise<ThreadRecord[]>;
  countThreads(query: ThreadQuery): Promise<number>;

  /** A checkpoint with its pending writes; the latest of the namespace when no id is given. */
  getCheckpoint(key: CheckpointKey): Promise<StoredCheckpoint | undefined>;
  /**
   * Newest first (reverse order of `checkpoint.put`). Must not read the whole history when a
   * small `limit` is given and no filter is used.
   */
  listCheckpoints(threadId: string, options?: ListCheckpointsOptions): Promise<StoredCheckpoint[]>;
  /** The thread's checkpoint namespaces that hold checkpoints (`""` first when it has any). */
  listCheckpointNamespaces(threadId: string): Promise<string[]>;

  getRun(runId: string): Promise<RunRecord | undefined>;
  queryRuns(query: RunQuery): Promise<RunRecord[]>;
  countRuns(query: RunQuery): Promise<number>;
  getCancelRequest(runId: string): Promise<CancelRequest | undefined>;

  getLease(key: string): Promise<Lease | undefined>;
  /** Leases whose key starts with `prefix` and that expired before `now` (epoch ms). */
  expiredLeases(prefix: string, now: number, limit?: number): Promise<Lease[]>;

  getDoc<T = unknown>(collection: DocCollection, id: string): Promise<StoredDoc<T> | undefined>;
  /** Documents of a collection (of one parent when given), in insertion order. */
  listDocs<T = unknown>(collection: DocCollection, parent?: string): Promise<StoredDoc<T>[]>;

  /** The item (expired or not: the caller judges `expires_at`). */
  getItem(namespace: readonly string[], key: string): Promise<StoredItem | undefined>;
  searchItems(query: ItemQuery): Promise<ScoredItem[]>;
  listItemNamespaces(query: ItemNamespaceQuery): Promise<string[][]>;
  /** Items expired at `now` (`expires_at <= now`), soonest first, from an index on expiry (no scan). */
  expiredItems(now: number, limit?: number): Promise<ExpiredItem[]>;
  getCron(cronId: string): Promise<CronRecord | undefined>;
  queryCrons(query: CronQuery): Promise<CronRecord[]>;
  countCrons(query: CronQuery): Promise<number>;
  /**
   * Enabled crons with a next tick, earliest `next_run_date` first (ties: `cron_id`); with
   * `asOf` (ISO time) only those due at or before it. Answered from an ordered index on
   * `next_run_date`: it reads the due crons, not every cron. Default limit 100.
   */
  dueCrons(asOf?: string, limit?: number): Promise<CronRecord[]>;

  /** For shared stores: called when another runtime changed the data, for apps that show it. Returns unsubscribe. */
  onExternalChange?(listener: (change: ExternalChange) => void): () => void;
  /**
   * For shared stores: runs `fn` holding an exclusive lock named `key` across every runtime on
   * the same data (Web Locks in browsers). Used only where no conditional commit can express
   * the rule (an upload's id checks); the run lifecycle never needs it.
   */
  withLock?<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Optional, for stores that can tell at once that a runtime on the data stopped (IndexedDB:
   * Web Locks, released by the browser when a tab closes): marks `owner` (a runtime's lease
   * owner id) alive until the returned function is called, and calls `onGone` with the owner id
   * of every other runtime on the data when it stops, gracefully or not. The runtime then voids
   * the leases that owner still holds, so its runs are resumed at once rather than after their
   * lease (D64).
   */
  watchOwners?(owner: string, onGone: (owner: string) => void): () => void;
  /**
   * Optional: claims the thread's next run in one step (`claimRun` in ./claim.ts falls back to a
   * conditional commit for stores without it). A SQL store locks the rows with `FOR UPDATE SKIP
   * LOCKED`, so concurrent claimers never wait for or retry against each other: one claims, the
   * others answer `none`.
   */
  claimRun?(claim: RunClaim): Promise<RunClaimResult>;
}

// ---------------------------------------------------------------------------------------------
// Claiming (D20). Semantics shared by `Store.claimRun` and its generic fallback (./claim.ts).

/** What a runtime asks for when it claims the next run of a thread. */
export interface RunClaim {
  thread_id: string;
  /** The lease to take (`thread:<id>`); its data becomes `{ run_id }` of the claimed run. */
  key: string;
  owner: string;
  /** The caller's clock (epoch ms): what the lease is judged at (see `LeaseExpectation`). */
  now: number;
  /** Epoch ms (caller's clock) the lease runs until; `expires_at - now` is its duration. */
  expires_at: number;
  /** The claimed run's new `updated_at`. */
  updated_at: string;
  /** Graphs the caller executes: the head run of another graph is left for another runtime. */
  graph_ids: readonly string[];
}

/**
 * - `claimed`: the lease is taken and the head run (oldest pending or running) is marked
 *   `running`, atomically; `run` is it as stored.
 * - `stopped`: the lease is free but the head run is `running` (its runtime stopped, D10) or
 *   has no execution part: the caller ends it and claims again.
 * - `later`: the head run may not start before `not_before` (epoch ms, caller's clock).
 * - `none`: nothing to claim here and now: no run in flight, the lease is live, the head run's
 *   graph is not the caller's, or another runtime is claiming or changing it right now (that
 *   runtime starts the run, or notifies `runs` when it is done).
 */
export type RunClaimResult =
  | { outcome: "claimed"; run: RunRecord }
  | { outcome: "stopped"; run: RunRecord }
  | { outcome: "later"; not_before: number }
  | { outcome: "none" };

/** The part of `Store` the graph engine uses. */
export type CheckpointStore = Pick<Store, "getCheckpoint" | "listCheckpoints" | "listCheckpointNamespaces" | "commit">;
