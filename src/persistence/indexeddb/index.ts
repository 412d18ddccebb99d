/**
 * `agentdock/indexeddb`: a durable store in an IndexedDB database, for browser apps and workers
 * (no Node built-ins; under Node it runs on `fake-indexeddb`).
 *
 * One object store per record kind (typed `AgentdockDB` schema, one versioned upgrade ladder).
 * Every `commit` is one readwrite transaction over all of them and resolves on `tx.done`, so a
 * run step (checkpoint + writes + run + thread) is all or nothing. Reads go to IndexedDB every
 * time, so a runtime sees what another tab committed (a commit locks only the object stores its
 * ops touch, so reads of other records are not held up); the only cache holds list-log items (see
 * ../delta.ts), which are append-only and keyed by random ids, so a cached prefix is never stale.
 * Two tabs coordinate with `withLock` (Web Locks, else an in-process lock) and learn of each
 * other's commits through `onExternalChange` (BroadcastChannel).
 */
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from "idb";
import { conflict } from "../../errors.js";
import { uuid4 } from "../../ids.js";
import { contains } from "../../json.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord } from "../../types.js";
import {
  decodeCheckpoint,
  decodeThread,
  encodeCheckpoint,
  encodedValuesOf,
  encodeThread,
  listRefs,
  type EncodedCheckpoint,
  type EncodedThread,
  type EncodedValues,
} from "../delta.js";
import {
  STORAGE_FORMAT_VERSION,
  type DocCollection,
  type ExternalChange,
  type ListCheckpointsOptions,
  type Store,
  type StoredCheckpoint,
  type StoredDoc,
  type WriteOp,
} from "../types.js";

/** IndexedDB schema version; each step of `upgrade` brings the database one version further. */
const DB_VERSION = 1;

interface CheckpointRow {
  thread_id: string;
  /** Put order within the thread (the key's second part); newest is highest. */
  seq: number;
  id: string;
  cp: EncodedCheckpoint;
}

interface ItemRow {
  /** thread id, list id, index: the key. */
  t: string;
  l: string;
  i: number;
  v: unknown;
}

interface DocRow {
  collection: DocCollection;
  id: string;
  parent: string | null;
  doc: unknown;
  /** Insertion order within the collection. */
  seq: number;
}

/** The database schema. */
export interface AgentdockDB extends DBSchema {
  meta: { key: string; value: { key: string; value: unknown } };
  assistants: { key: string; value: AssistantRecord };
  versions: { key: [string, number]; value: AssistantVersionRecord };
  threads: { key: string; value: EncodedThread };
  checkpoints: { key: [string, number]; value: CheckpointRow; indexes: { by_id: [string, string] } };
  items: { key: [string, string, number]; value: ItemRow };
  runs: { key: string; value: RunRecord; indexes: { by_thread: string } };
  docs: { key: [string, string]; value: DocRow; indexes: { by_seq: [string, number] } };
}

type Names = StoreNames<AgentdockDB>;
/** Helpers shared by commits and reads take the readwrite type; reads only call read methods. */
type Tx = IDBPTransaction<AgentdockDB, Names[], "readwrite">;
/** The object stores each op reads or writes: a commit locks only the union of its ops' stores. */
const SCOPE: Record<WriteOp["op"], Names[]> = {
  "assistant.put": ["assistants"],
  "assistant.delete": ["assistants", "versions"],
  "assistant_version.put": ["versions"],
  "thread.put": ["threads", "checkpoints", "items"],
  "thread.delete": ["threads", "checkpoints", "items", "runs"],
  "checkpoint.put": ["checkpoints", "items"],
  "checkpoint.delete": ["checkpoints"],
  "writes.put": ["checkpoints"],
  "run.put": ["runs"],
  "run.delete": ["runs"],
  "doc.put": ["docs"],
  "doc.delete": ["docs"],
};

export interface IndexedDbStoreOptions {
  /** Called when opening waits for another tab that still has an older version open. */
  onBlocked?: () => void;
  /** Most list logs kept in the item cache. Default 256. */
  cacheLists?: number;
}

/** Keys `[a]` < `[a, anything]` < `[a, []]`: every key of a thread (or collection, assistant). */
const under = (...prefix: Array<string | number>) => IDBKeyRange.bound(prefix, [...prefix, []]);

/** In-process fallback for Web Locks: promise chains per lock name. */
const localLocks = new Map<string, Promise<unknown>>();

class IndexedDbStore implements Store {
  readonly kind = "indexeddb";
  readonly capabilities = { persistent: true, shared: true };
  private db: Promise<IDBPDatabase<AgentdockDB>> | undefined;
  private closed = false;
  /** list id -> known prefix of its items. */
  private cache = new Map<string, unknown[]>();
  private channel: BroadcastChannel | undefined;
  private listeners = new Set<(change: ExternalChange) => void>();

  constructor(
    private name: string,
    private options: IndexedDbStoreOptions,
  ) {}

  async open(): Promise<void> {
    this.closed = false;
    await this.database();
  }

  async close(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.channel?.close();
    this.channel = undefined;
    if (db) (await db.catch(() => undefined))?.close();
  }

  /** The open connection; reopened after another tab's upgrade or a browser termination closed it. */
  private database(): Promise<IDBPDatabase<AgentdockDB>> {
    if (this.closed) return Promise.reject(new Error(`agentdock indexeddb: store "${this.name}" is closed`));
    if (!this.db) {
      const opening = this.connect();
      this.db = opening;
      opening.catch(() => {
        if (this.db === opening) this.db = undefined;
      });
    }
    return this.db;
  }

  private async connect(): Promise<IDBPDatabase<AgentdockDB>> {
    let db: IDBPDatabase<AgentdockDB>;
    try {
      db = await openDB<AgentdockDB>(this.name, DB_VERSION, {
        upgrade(db, oldVersion, _newVersion, tx) {
          if (oldVersion < 1) {
            db.createObjectStore("meta", { keyPath: "key" });
            db.createObjectStore("assistants", { keyPath: "assistant_id" });
            db.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
            db.createObjectStore("threads", { keyPath: "thread_id" });
            db.createObjectStore("checkpoints", { keyPath: ["thread_id", "seq"] })
              .createIndex("by_id", ["thread_id", "id"], { unique: true });
            db.createObjectStore("items", { keyPath: ["t", "l", "i"] });
            db.createObjectStore("runs", { keyPath: "run_id" }).createIndex("by_thread", "thread_id");
            db.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
            void tx.objectStore("meta").put({ key: "format", value: STORAGE_FORMAT_VERSION });
          }
          // Later versions add `if (oldVersion < 2) { ... }` here, migrating data in `tx`.
        },
        blocked: () => this.options.onBlocked?.(),
        // Another tab wants to upgrade: step aside; the next call reopens (and then refuses the
        // newer format with a clear error instead of corrupting it).
        blocking: () => this.dropConnection(),
        terminated: () => this.dropConnection(),
      });
    } catch (err) {
      if ((err as { name?: string }).name === "VersionError") throw this.newerFormat("a newer schema");
      throw err;
    }
    const format = (await db.get("meta", "format"))?.value;
    if (typeof format === "number" && format > STORAGE_FORMAT_VERSION) {
      db.close();
      throw this.newerFormat(`storage format ${format}`);
    }
    return db;
  }

  private dropConnection() {
    const db = this.db;
    this.db = undefined;
    void db?.then((d) => d.close(), () => undefined);
  }

  private newerFormat(what: string) {
    return conflict(
      `agentdock indexeddb: database "${this.name}" has ${what} than this agentdock understands ` +
        `(storage format ${STORAGE_FORMAT_VERSION}); load a newer agentdock or use another database name`,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // List items.

  private remember(list: string, items: unknown[]) {
    this.cache.delete(list);
    this.cache.set(list, items);
    const max = this.options.cacheLists ?? 256;
    for (const key of this.cache.keys()) {
      if (this.cache.size <= max) break;
      this.cache.delete(key);
    }
  }

  /** Loads into the cache the first `n` items of each list (all of it when `n` is undefined). */
  private async loadLists(tx: Tx, thread: string, refs: Array<{ l: string; n?: number }>): Promise<void> {
    await Promise.all(
      refs.map(async ({ l, n }) => {
        const known = this.cache.get(l) ?? [];
        if (n !== undefined && known.length >= n) return;
        const upper = n === undefined ? [thread, l, []] : [thread, l, n - 1];
        const rows = await tx.objectStore("items").getAll(IDBKeyRange.bound([thread, l, known.length], upper));
        const items = this.cache.get(l) ?? [];
        for (const row of rows) if (row.i === items.length) items.push(row.v);
        this.remember(l, items);
      }),
    );
  }

  private lookup = (list: string) => this.cache.get(list);

  private async decodeThread(tx: Tx, t: EncodedThread) {
    await this.loadLists(tx, t.thread_id, listRefs(t.values as EncodedValues));
    return decodeThread(t, this.lookup);
  }

  private async decodeCheckpoints(tx: Tx, thread: string, cps: EncodedCheckpoint[]): Promise<StoredCheckpoint[]> {
    const need = new Map<string, number>();
    for (const cp of cps) for (const { l, n } of listRefs(encodedValuesOf(cp))) need.set(l, Math.max(n, need.get(l) ?? 0));
    await this.loadLists(tx, thread, [...need].map(([l, n]) => ({ l, n })));
    return cps.map((cp) => decodeCheckpoint(cp, this.lookup));
  }

  private async latestRow(tx: Tx, thread: string): Promise<CheckpointRow | undefined> {
    return (await tx.objectStore("checkpoints").openCursor(under(thread), "prev"))?.value;
  }

  private async rowById(tx: Tx, thread: string, id: string): Promise<CheckpointRow | undefined> {
    return tx.objectStore("checkpoints").index("by_id").get([thread, id]);
  }

  // ---------------------------------------------------------------------------------------------
  // Writes.

  async commit(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    const db = await this.database();
    const scope = new Set<Names>();
    for (const op of ops) {
      const names = SCOPE[op.op] as Names[] | undefined;
      if (!names) throw new Error(`agentdock store: unknown write op ${JSON.stringify(op)}`);
      for (const name of names) scope.add(name);
    }
    const tx = db.transaction([...scope], "readwrite") as unknown as Tx;
    const touched = new Set<string>();
    const threads = new Set<string>();
    try {
      for (const op of ops) await this.applyOne(tx, op, touched, threads);
      await tx.done;
    } catch (err) {
      // Aborting undoes every op of the commit; items it added to the cache go too.
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      await tx.done.catch(() => undefined);
      for (const list of touched) this.cache.delete(list);
      throw err;
    }
    this.port()?.postMessage({ threadIds: [...threads] } satisfies ExternalChange);
  }

  private async applyOne(tx: Tx, op: WriteOp, touched: Set<string>, threads: Set<string>): Promise<void> {
    switch (op.op) {
      case "assistant.put":
        await tx.objectStore("assistants").put(op.assistant);
        return;
      case "assistant.delete":
        await tx.objectStore("assistants").delete(op.assistant_id);
        await tx.objectStore("versions").delete(under(op.assistant_id));
        return;
      case "assistant_version.put":
        await tx.objectStore("versions").put(op.version);
        return;
      case "thread.put": {
        const id = op.thread.thread_id;
        threads.add(id);
        const latest = (await this.latestRow(tx, id))?.cp;
        if (latest) await this.loadLists(tx, id, listRefs(encodedValuesOf(latest)));
        await tx.objectStore("threads").put(encodeThread(op.thread, latest, this.lookup));
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        threads.add(id);
        await tx.objectStore("threads").delete(id);
        await tx.objectStore("checkpoints").delete(under(id));
        await tx.objectStore("items").delete(under(id));
        const runs = tx.objectStore("runs");
        for (const key of await runs.index("by_thread").getAllKeys(id)) await runs.delete(key);
        return;
      }
      case "checkpoint.put": {
        const { thread_id, parent_checkpoint_id } = op.checkpoint;
        threads.add(thread_id);
        const existing = await this.rowById(tx, thread_id, op.checkpoint.checkpoint.id);
        const seq = existing?.seq ?? ((await this.latestRow(tx, thread_id))?.seq ?? -1) + 1;
        const parent =
          parent_checkpoint_id === null ? undefined : (await this.rowById(tx, thread_id, parent_checkpoint_id))?.cp;
        if (parent) await this.loadLists(tx, thread_id, listRefs(encodedValuesOf(parent)).map(({ l }) => ({ l })));
        const { checkpoint, appends } = encodeCheckpoint(op.checkpoint, parent, this.lookup, uuid4);
        const items = tx.objectStore("items");
        for (const { list, at, items: added } of appends) {
          touched.add(list);
          const cached = this.cache.get(list) ?? [];
          cached.push(...added);
          this.remember(list, cached);
          await Promise.all(added.map((v, k) => items.put({ t: thread_id, l: list, i: at + k, v })));
        }
        await tx.objectStore("checkpoints").put({ thread_id, seq, id: checkpoint.checkpoint.id, cp: checkpoint });
        return;
      }
      case "checkpoint.delete": {
        threads.add(op.thread_id);
        const store = tx.objectStore("checkpoints");
        for (const id of op.checkpoint_ids) {
          const key = await store.index("by_id").getKey([op.thread_id, id]);
          if (key) await store.delete(key);
        }
        return;
      }
      case "writes.put": {
        threads.add(op.thread_id);
        const row = await this.rowById(tx, op.thread_id, op.checkpoint_id);
        if (!row) {
          throw new Error(`agentdock store: writes for unknown checkpoint ${op.checkpoint_id} of thread ${op.thread_id}`);
        }
        const kept = row.cp.pending_writes.filter((w) => w[0] !== op.task_id);
        await tx.objectStore("checkpoints").put({ ...row, cp: { ...row.cp, pending_writes: [...kept, ...op.writes] } });
        return;
      }
      case "run.put":
        threads.add(op.run.thread_id);
        await tx.objectStore("runs").put(op.run);
        return;
      case "run.delete": {
        const run = await tx.objectStore("runs").get(op.run_id);
        if (!run) return;
        threads.add(run.thread_id);
        await tx.objectStore("runs").delete(op.run_id);
        return;
      }
      case "doc.put": {
        const docs = tx.objectStore("docs");
        const existing = await docs.get([op.collection, op.id]);
        const last = await docs.index("by_seq").openKeyCursor(under(op.collection), "prev");
        const seq = existing?.seq ?? (last ? (last.key[1] as number) + 1 : 0);
        await docs.put({ collection: op.collection, id: op.id, parent: op.parent, doc: op.doc, seq });
        return;
      }
      case "doc.delete":
        await tx.objectStore("docs").delete([op.collection, op.id]);
        return;
      default: {
        const never: never = op;
        throw new Error(`agentdock store: unknown write op ${JSON.stringify(never)}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reads.

  private async read<T>(names: Names[], fn: (tx: Tx) => Promise<T>): Promise<T> {
    const db = await this.database();
    return fn(db.transaction(names, "readonly") as unknown as Tx);
  }

  getAssistant(id: string) {
    return this.read(["assistants"], (tx) => tx.objectStore("assistants").get(id));
  }
  listAssistants() {
    return this.read(["assistants"], (tx) => tx.objectStore("assistants").getAll());
  }
  listAssistantVersions(id: string) {
    return this.read(["versions"], (tx) => tx.objectStore("versions").getAll(under(id)));
  }

  getThread(id: string) {
    return this.read(["threads", "items"], async (tx) => {
      const t = await tx.objectStore("threads").get(id);
      return t && this.decodeThread(tx, t);
    });
  }
  listThreads() {
    return this.read(["threads", "items"], async (tx) => {
      const all = await tx.objectStore("threads").getAll();
      return Promise.all(all.map((t) => this.decodeThread(tx, t)));
    });
  }

  getCheckpoint(threadId: string, checkpointId?: string) {
    return this.read(["checkpoints", "items"], async (tx) => {
      const row =
        checkpointId === undefined ? await this.latestRow(tx, threadId) : await this.rowById(tx, threadId, checkpointId);
      return row && (await this.decodeCheckpoints(tx, threadId, [row.cp]))[0];
    });
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}) {
    return this.read(["checkpoints", "items"], async (tx) => {
      let range = under(threadId);
      if (options.before !== undefined) {
        const before = await this.rowById(tx, threadId, options.before);
        if (!before) return [];
        range = IDBKeyRange.bound([threadId], [threadId, before.seq], false, true);
      }
      const limit = options.limit ?? Infinity;
      const found: EncodedCheckpoint[] = [];
      let cursor = limit > 0 ? await tx.objectStore("checkpoints").openCursor(range, "prev") : null;
      while (cursor && found.length < limit) {
        const cp = cursor.value.cp;
        if (!options.filter || contains(cp.metadata, options.filter)) found.push(cp);
        cursor = found.length < limit ? await cursor.continue() : null;
      }
      return this.decodeCheckpoints(tx, threadId, found);
    });
  }

  getRun(id: string) {
    return this.read(["runs"], (tx) => tx.objectStore("runs").get(id));
  }
  listRuns(threadId?: string) {
    return this.read(["runs"], (tx) =>
      threadId === undefined ? tx.objectStore("runs").getAll() : tx.objectStore("runs").index("by_thread").getAll(threadId),
    );
  }

  getDoc<T>(collection: DocCollection, id: string) {
    return this.read(["docs"], async (tx) => {
      const row = await tx.objectStore("docs").get([collection, id]);
      return row && ({ id: row.id, parent: row.parent, doc: row.doc } as StoredDoc<T>);
    });
  }
  listDocs<T>(collection: DocCollection, parent?: string) {
    return this.read(["docs"], async (tx) => {
      const rows = await tx.objectStore("docs").index("by_seq").getAll(under(collection));
      return rows
        .filter((r) => parent === undefined || r.parent === parent)
        .map((r) => ({ id: r.id, parent: r.parent, doc: r.doc }) as StoredDoc<T>);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Two tabs.

  /** The channel to the other runtimes on this database, where BroadcastChannel exists. */
  private port(): BroadcastChannel | undefined {
    if (!this.channel && !this.closed && typeof BroadcastChannel !== "undefined") {
      this.channel = new BroadcastChannel(`agentdock:${this.name}`);
      // Node keeps the process alive for an open channel; browsers have no unref.
      (this.channel as { unref?: () => void }).unref?.();
      this.channel.onmessage = (event: MessageEvent<ExternalChange>) => {
        for (const l of this.listeners) l(event.data);
      };
    }
    return this.channel;
  }

  onExternalChange(listener: (change: ExternalChange) => void): () => void {
    this.port();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const name = `agentdock:${this.name}:${key}`;
    const locks = (globalThis.navigator as Navigator | undefined)?.locks;
    if (locks) return locks.request(name, fn) as Promise<T>;
    const run = (localLocks.get(name) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    localLocks.set(name, tail);
    void tail.then(() => {
      if (localLocks.get(name) === tail) localLocks.delete(name);
    });
    return run;
  }
}

/**
 * A store in the IndexedDB database `name` (created on first open). Safe for several tabs on the
 * same database: commits are transactions, reads always see other tabs' commits, and
 * `withLock` / `onExternalChange` let runtimes coordinate.
 */
export function indexedDbStore(name: string, options: IndexedDbStoreOptions = {}): Store {
  return new IndexedDbStore(name, options);
}
