/**
 * The storage contract. The engine and the runtime read and write persistent state only through
 * `Store`; every store (memory, JSON file, IndexedDB) implements it and passes the same contract
 * suite. Reads are plain methods. Writes are lists of operations committed atomically by
 * `commit`: when it resolves everything in the list is persisted (no acknowledged write is
 * lost), and after a crash either all of a commit is there or none of it.
 */
import type {
  AssistantRecord,
  AssistantVersionRecord,
  RunRecord,
  ThreadRecord,
} from "../types.js";

// Each persistent store versions its own on-disk format (JSON_FILE_FORMAT, INDEXEDDB_FORMAT),
// refusing newer data and migrating older data when it opens.

// ---------------------------------------------------------------------------------------------
// Checkpoints (engine.md 1.1 and 7.2). All of these are frozen when they come from the engine.

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
  /** Node name -> what it wrote in this step (D7; legacy LangGraph meaning, engine.md 1.6). */
  writes?: Record<string, unknown> | null;
  /** Run metadata merged in by the runtime (run_id, graph_id, assistant_id, ...). */
  [key: string]: unknown;
}

/** `[task_id, channel, value]`; special channels `__error__`, `__interrupt__`, `__resume__`, `__no_writes__`. */
export type PendingWrite = readonly [taskId: string, channel: string, value: unknown];

export interface StoredCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  parent_checkpoint_id: string | null;
  /** Writes recorded against this checkpoint, in the order they were recorded. */
  pending_writes: readonly PendingWrite[];
}

export interface ListCheckpointsOptions {
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
// Writes.

export type WriteOp =
  | { op: "assistant.put"; assistant: AssistantRecord }
  /** Removes the assistant and all its versions. */
  | { op: "assistant.delete"; assistant_id: string }
  | { op: "assistant_version.put"; version: AssistantVersionRecord }
  | { op: "thread.put"; thread: ThreadRecord }
  /** Removes the thread, its checkpoints and writes, and its runs. */
  | { op: "thread.delete"; thread_id: string }
  /** Adds a checkpoint (becoming the thread's latest) or replaces one with the same id. */
  | { op: "checkpoint.put"; checkpoint: StoredCheckpoint }
  | { op: "checkpoint.delete"; thread_id: string; checkpoint_ids: readonly string[] }
  /** Replaces the writes of `task_id` on that checkpoint (engine.md 7.2 `putWrites`). */
  | {
      op: "writes.put";
      thread_id: string;
      checkpoint_id: string;
      task_id: string;
      writes: readonly PendingWrite[];
    }
  | { op: "run.put"; run: RunRecord }
  | { op: "run.delete"; run_id: string }
  | { op: "doc.put"; collection: DocCollection; id: string; parent: string | null; doc: unknown }
  | { op: "doc.delete"; collection: DocCollection; id: string };

export interface StoreCapabilities {
  /** Data survives the process (or the tab). */
  persistent: boolean;
  /**
   * Other runtimes (tabs) may change the data. The runtime keeps no cache of store data, so it
   * always acts on what is stored; it holds `withLock` around each run and each thread's writes.
   */
  shared: boolean;
}

/** A change made by another runtime on the same data (another tab). */
export interface ExternalChange {
  /** Threads whose records, checkpoints or runs changed; undefined when unknown (reload all). */
  threadIds?: string[];
}

export interface Store {
  /** `"memory"`, `"json-file"`, `"indexeddb"`, ... */
  readonly kind: string;
  readonly capabilities: StoreCapabilities;

  /** Opens (creating, migrating, recovering as needed). Called once by `createRuntime`. */
  open(): Promise<void>;
  /** Flushes and releases files, handles and locks. Idempotent. */
  close(): Promise<void>;

  /** Applies every operation, in order, all or nothing; resolves once persisted. */
  commit(ops: readonly WriteOp[]): Promise<void>;

  getAssistant(assistantId: string): Promise<AssistantRecord | undefined>;
  /** Every assistant, in no particular order (the runtime sorts and pages). */
  listAssistants(): Promise<AssistantRecord[]>;
  /** The assistant's versions, ascending by version. */
  listAssistantVersions(assistantId: string): Promise<AssistantVersionRecord[]>;

  getThread(threadId: string): Promise<ThreadRecord | undefined>;
  /** Every thread, in no particular order. */
  listThreads(): Promise<ThreadRecord[]>;

  /** A checkpoint with its pending writes; the latest (last put) when no id is given. */
  getCheckpoint(threadId: string, checkpointId?: string): Promise<StoredCheckpoint | undefined>;
  /**
   * Newest first (reverse order of `checkpoint.put`). Must not read the whole history when a
   * small `limit` is given and no filter is used.
   */
  listCheckpoints(threadId: string, options?: ListCheckpointsOptions): Promise<StoredCheckpoint[]>;

  getRun(runId: string): Promise<RunRecord | undefined>;
  /** A thread's runs, or every run when no thread id is given, in no particular order. */
  listRuns(threadId?: string): Promise<RunRecord[]>;

  getDoc<T = unknown>(collection: DocCollection, id: string): Promise<StoredDoc<T> | undefined>;
  /** Documents of a collection (of one parent when given), in insertion order. */
  listDocs<T = unknown>(collection: DocCollection, parent?: string): Promise<StoredDoc<T>[]>;

  /**
   * For shared stores: called when another runtime changed the data, for apps that show it (the
   * runtime itself reads through to the store). Returns unsubscribe.
   */
  onExternalChange?(listener: (change: ExternalChange) => void): () => void;
  /**
   * For shared stores: runs `fn` holding an exclusive lock named `key` across every runtime on
   * the same data (Web Locks in browsers). Stores without it are single-writer.
   */
  withLock?<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

/** The part of `Store` the graph engine uses. */
export type CheckpointStore = Pick<Store, "getCheckpoint" | "listCheckpoints" | "commit">;
