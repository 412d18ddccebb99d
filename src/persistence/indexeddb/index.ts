/**
 * `agentdock/indexeddb`: a durable store in an IndexedDB database, for browser apps and workers
 * (no Node built-ins; under Node it runs on `fake-indexeddb`). Several tabs on one database act
 * as one service (D20): the database is the only source of truth, tabs learn of each other's
 * commits, notifications and run events through a BroadcastChannel named after the database.
 *
 * Schema 3 (./rows.ts): one record per thread, checkpoint, run, list item, lease, cancel request
 * and persisted run event, so a commit writes only what it changes. Every `commit` is one
 * readwrite transaction: expectations are checked inside it before anything is written, so of
 * two tabs racing on the same expectation exactly one wins; a failed expectation or op aborts
 * it (nothing written). Values are checked before the transaction opens (`invalid_input`).
 * Reads go to IndexedDB every time; the only caches are of immutable data (a prefix of an
 * append-only list log, checkpoint bases), which cannot disagree with the database.
 *
 * Schema 1 (one record per checkpoint, item, run) and schema 2 (pages and chunks) are migrated
 * inside the upgrade transaction on first open (./migrate.ts); a newer schema or format is
 * refused with `conflict`. Opening otherwise reads one record.
 */
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from "idb";
import { AgentdockError, conflict, invalidInput } from "../../errors.js";
import { contains } from "../../json.js";
import { checkOp, TopicListeners } from "../common.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../../types.js";
import {
  decodeValues,
  encodeCheckpoint,
  encodeThread,
  LIST_MIN,
  listRefs,
  type EncodedValues,
  type ListLookup,
} from "../delta.js";
import {
  queryAssistants as evalAssistants,
  queryAssistantVersions as evalVersions,
  queryRuns as evalRuns,
  matchesThread,
  matchesRun,
  matchesAssistant,
  sortAndPage,
} from "../query.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CancelRequest,
  CheckpointKey,
  DocCollection,
  ExternalChange,
  Lease,
  ListCheckpointsOptions,
  PendingWrite,
  RunQuery,
  Store,
  StoredCheckpoint,
  StoredDoc,
  ThreadQuery,
  WriteOp,
} from "../types.js";
import { IdbRunEvents, type EventMessage } from "./events.js";
import { GroupCommit } from "./group-commit.js";
import { listNamespacesOf, matchesItemQuery, namespaceKey, rankItems } from "../items.js";
import type { ExpiredItem, ItemNamespaceQuery, ItemQuery, StoredItem } from "../types.js";
import { cronExpectationFails, isScheduled, queryCrons as evalCrons, countCrons as evalCountCrons, type CronQuery, type CronRecord } from "../crons.js";
import { upgradeDatabase, type CronRow, type DocRow, type ItemRow, type LogRow, type RunRow, type ThreadRow } from "./migrate.js";
import {
  cpKey,
  diffLeaves,
  indexItems,
  itemNeeds,
  located,
  patchLeaves,
  reshareItems,
  resolveItems,
  rowBody,
  rowRecord,
  shareItems,
  shortId,
  storedRow,
  type CpRecord,
  type CpRow,
  type ItemIndex,
  type LeafDiff,
  type StoredCpRow,
} from "./rows.js";

/** IndexedDB schema version; `upgradeDatabase` brings older databases to it. 4 added `store_items` and `crons`; 5 is format 4. */
export const DB_VERSION = 5;
/**
 * Storage format of this store's data (`meta.format`): 1 = one record per checkpoint, list item
 * and run; 2 = pages and chunks; 3 = one record per checkpoint, run and list item with shared
 * items and checkpoint bases (./rows.ts); 4 = format 3 where a checkpoint row leaves out its
 * parent id when its parent is the row put just before it in its namespace (read from that row),
 * and packs pending writes by task (./rows.ts `packWrites`). Newer is refused.
 */
export const INDEXEDDB_FORMAT = 4;

/** The database schema (version 5). */
export interface AgentdockDB extends DBSchema {
  meta: { key: string; value: { key: string; value: unknown } };
  assistants: { key: string; value: AssistantRecord; indexes: { by_graph: string } };
  versions: { key: [string, number]; value: AssistantVersionRecord };
  threads: { key: string; value: ThreadRow; indexes: { by_status: string } };
  /** [thread, namespace, put order] -> checkpoint row (./rows.ts). */
  cps: { key: [string, string, number]; value: StoredCpRow; indexes: { by_id: string } };
  /** [thread, namespace, base id] -> an immutable record rows diff against (runs: namespace `RUNS`). */
  bases: { key: [string, string, number]; value: CpRecord };
  /** [thread, list id, index] -> one item of a list log. */
  items: { key: [string, string, number]; value: unknown };
  runs: {
    key: string;
    value: RunRow;
    indexes: { by_thread: [string, number]; by_q: number; by_status: [string, number]; by_thread_status: [string, string, number] };
  };
  cancels: { key: string; value: CancelRequest; indexes: { by_thread: string } };
  leases: { key: string; value: Lease };
  /** Run event logs (./events.ts). */
  logs: { key: string; value: LogRow };
  /** [run id, seq] -> a persisted event of a resumable log. */
  events: { key: [string, number]; value: { event: string; data: unknown } };
  docs: { key: [string, string]; value: DocRow; indexes: { by_seq: [string, number] } };
  /** Long-term memory: [namespace key, key] -> item (schema 4). */
  store_items: { key: [string, string]; value: ItemRow; indexes: { by_expiry: number } };
  /** Crons (issue 16); `by_due` holds the scheduled ones only, by (next_run_date, cron_id). */
  crons: { key: string; value: CronRow; indexes: { by_due: [string, string] } };
}

type Names = StoreNames<AgentdockDB>;
type Tx = IDBPTransaction<AgentdockDB, Names[], "readwrite" | "readonly">;
type WTx = IDBPTransaction<AgentdockDB, Names[], "readwrite">;

const CHECKPOINTS: Names[] = ["cps", "bases", "items"];
const SCOPE: Record<WriteOp["op"], Names[]> = {
  "assistant.put": ["assistants"],
  "assistant.delete": ["assistants", "versions"],
  "assistant_version.put": ["versions"],
  "thread.put": ["threads", ...CHECKPOINTS],
  "thread.delete": ["threads", "runs", "cancels", ...CHECKPOINTS],
  "checkpoint.put": CHECKPOINTS,
  "checkpoint.delete": CHECKPOINTS,
  "writes.put": CHECKPOINTS,
  "run.put": ["runs", "bases"],
  "run.delete": ["runs", "cancels", "bases"],
  "cancel.put": ["cancels"],
  "lease.put": ["leases"],
  "lease.delete": ["leases"],
  "doc.put": ["docs"],
  "doc.delete": ["docs"],
  "cron.put": ["crons"],
  "cron.delete": ["crons"],
  notify: [],
  "item.put": ["store_items"],
  "item.delete": ["store_items"],
  "item.touch": ["store_items"],
};

/** A commit waiting for (or in) a group commit's transaction: its ops and the object stores they touch. */
interface Batched {
  ops: readonly WriteOp[];
  scope: ReadonlySet<Names>;
}

/** Every checkpoint row after this many in a (thread, namespace) starts a new base. */
const BASE_EVERY = 16;

export interface IndexedDbStoreOptions {
  /** Called when opening waits for another tab that still has an older version open. */
  onBlocked?: () => void;
  /** Most list logs kept in the item cache. Default 256. */
  cacheLists?: number;
  /**
   * The durability hint of commit transactions (`IDBTransaction.durability`). Unset: the
   * browser's default (Chromium since 121 and Firefox: `"relaxed"`, a commit is acknowledged
   * once the browser wrote it, which survives a tab or browser crash but not necessarily a power
   * loss or OS crash). `"strict"` waits for the data to be flushed to the disk (about twice as slow
   * per commit in Chromium). See docs/persistence.md.
   */
  durability?: "strict" | "relaxed" | "default";
}

/** The stored item of a row (without its namespace key). */
function itemOf(row: ItemRow): StoredItem;
function itemOf(row: ItemRow | undefined): StoredItem | undefined;
function itemOf(row: ItemRow | undefined): StoredItem | undefined {
  if (!row) return undefined;
  const { ns: _, ...item } = row;
  return item;
}

/** A cron as stored: with its due key when it is scheduled (so only those are in `by_due`). */
function cronRow(cron: CronRecord): CronRow {
  return isScheduled(cron) ? { ...cron, $due: [cron.next_run_date, cron.cron_id] } : { ...cron };
}
function cronOut(row: CronRow | undefined): CronRecord | undefined {
  if (!row) return undefined;
  const { $due: _due, ...cron } = row;
  return cron;
}

/** Keys `[a]` < `[a, anything]` < `[a, []]`: every key under a prefix. */
const under = (...prefix: Array<string | number>) => IDBKeyRange.bound(prefix, [...prefix, []]);

/** In-process fallback for Web Locks: promise chains per lock name. */
const localLocks = new Map<string, Promise<unknown>>();

/** A transaction with the writes it issued (awaited together) and what it changed. */
interface Ctx {
  tx: Tx;
  pending: Array<Promise<unknown>>;
  threads: Set<string>;
  notes: Array<{ topic: string; payload?: string }>;
  /** Checkpoint rows read or written by this commit, by `rowKey`; `dirty` ones are put at its end. */
  rows: Map<string, CpRow>;
  dirty: Set<string>;
  /** What this commit knows of the stored state (read up front, kept current by its ops). */
  missing: Set<string>;
  /** `thread\0ns` -> the latest row (null: none). */
  latest: Map<string, CpRow | null>;
  threadRows: Map<string, ThreadRow | undefined>;
  runRows: Map<string, RunRow | undefined>;
  /** The highest queue position in use. */
  lastQ?: number;
  /** Leases read up front (kept current by this commit's lease ops): key -> lease or undefined. */
  leases?: Map<string, Lease | undefined>;
  /** Run bases named by this instance's hints, read up front: `thread\0b` -> base or undefined. */
  runBaseRows?: Map<string, Record<string, unknown> | undefined>;
  /** `listKey(thread, list id)` -> its length in the database, as this commit left it. */
  listLen: Map<string, number>;
}

/** A list log's key in the item cache (list ids are unique within their thread). */
const listKey = (thread: string, list: string) => `${thread}\u0000${list}`;
const rowKey = (thread: string, ns: string, id: string) => `${thread}\u0000${ns}\u0000${id}`;
/** The pseudo-namespace of run bases in `bases` (checkpoint namespaces are `""` or `node:task`). */
const RUNS = "\u0001runs";

class IndexedDbStore implements Store {
  readonly kind = "indexeddb";
  readonly capabilities = { persistent: true, shared: true };
  readonly events: IdbRunEvents;
  private db: Promise<IDBPDatabase<AgentdockDB>> | undefined;
  private closed = false;
  /** `listKey(thread, list id)` -> known prefix of its items (the objects a caller appended, or as read). */
  private lists = new Map<string, unknown[]>();
  /** [thread, ns, base id] joined -> base record (immutable). */
  private bases = new Map<string, CpRecord>();
  /** thread id -> a run base of the thread this instance made (checked before use). */
  private runBases = new Map<string, number>();
  /** Thread record returned by this store -> the revision of the row it was read from. */
  private revisions = new WeakMap<object, number>();
  private channel: BroadcastChannel | undefined;
  private changeListeners = new Set<(change: ExternalChange) => void>();
  // A listener's failure is its own (not reported: a page's console is the user's).
  private topics = new TopicListeners(() => undefined);
  private eventListeners = new Set<(m: EventMessage) => void>();

  constructor(
    private name: string,
    private options: IndexedDbStoreOptions,
  ) {
    this.events = new IdbRunEvents({
      putLog: async (run, log) => {
        const db = await this.database();
        await db.put("logs", { run_id: run, ...log });
      },
      getLog: async (run) => {
        const db = await this.database();
        const row = await db.get("logs", run);
        return row && { resumable: row.resumable, ended: row.ended, last: row.last };
      },
      putEvents: async (batch) => {
        const db = await this.database();
        const tx = db.transaction("events", "readwrite");
        for (const { run, rec } of batch) void tx.store.put({ event: rec.event, data: rec.data }, [run, rec.seq]).catch(() => undefined);
        await tx.done;
      },
      readEvents: async (run, after) => {
        const db = await this.database();
        const range = IDBKeyRange.bound([run, after], [run, Infinity], true, false);
        const tx = db.transaction("events", "readonly");
        const [keys, values] = await Promise.all([tx.store.getAllKeys(range), tx.store.getAll(range)]);
        return values.map((v, i) => ({ seq: keys[i]![1], event: v.event, data: v.data }));
      },
      dropLog: async (run) => {
        const db = await this.database();
        const tx = db.transaction(["logs", "events"], "readwrite");
        void tx.objectStore("logs").delete(run);
        void tx.objectStore("events").delete(under(run));
        await tx.done;
      },
      post: (m) => this.post({ k: "event", m }),
      listen: (fn) => {
        this.eventListeners.add(fn);
        return () => this.eventListeners.delete(fn);
      },
    });
  }

  async open(): Promise<void> {
    this.closed = false;
    await this.database();
    this.port();
    this.events.attach();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.events.detach().catch(() => undefined);
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
    let migration: Promise<void> | undefined;
    try {
      db = await openDB<AgentdockDB>(this.name, DB_VERSION, {
        upgrade(db, oldVersion, _newVersion, tx) {
          migration = upgradeDatabase(db as unknown as IDBPDatabase, oldVersion, tx as unknown as IDBPTransaction<unknown, string[], "versionchange">);
          // A failed migration aborts the upgrade: the database stays as it was.
          migration.catch(() => {
            try {
              tx.abort();
            } catch {
              // already finished
            }
          });
        },
        blocked: () => this.options.onBlocked?.(),
        // Another tab wants to upgrade: step aside; the next call reopens (and then refuses the
        // newer format with a clear error instead of corrupting it).
        blocking: () => this.dropConnection(),
        terminated: () => this.dropConnection(),
      });
    } catch (err) {
      await migration; // rethrows the migration's own error
      if ((err as { name?: string }).name === "VersionError") throw this.newerFormat("a newer schema");
      throw err;
    }
    const format = (await db.get("meta", "format"))?.value;
    if (typeof format === "number" && format > INDEXEDDB_FORMAT) {
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
        `(storage format ${INDEXEDDB_FORMAT}); load a newer agentdock or use another database name`,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // List logs and bases.

  private remember(list: string, items: unknown[]) {
    this.lists.delete(list);
    this.lists.set(list, items);
    const max = this.options.cacheLists ?? 256;
    for (const key of this.lists.keys()) {
      if (this.lists.size <= max) break;
      this.lists.delete(key);
    }
  }

  /**
   * Loads lists and returns a lookup over them: for each list, its first `n` items, or with
   * `n` undefined all of it (its length read from the database, as another tab may have
   * appended). The cache only saves reading items; the lookup holds what this call loaded.
   */
  private async loadLists(tx: Tx, thread: string, needs: Map<string, number | undefined>, ctx?: Ctx): Promise<ListLookup> {
    const loaded = new Map<string, unknown[]>();
    const store = tx.objectStore("items");
    await Promise.all(
      [...needs].map(async ([l, n]) => {
        let want = n ?? ctx?.listLen.get(listKey(thread, l));
        if (want === undefined) {
          want = await this.listLength(tx, thread, l);
          ctx?.listLen.set(listKey(thread, l), want);
        }
        let items = this.lists.get(listKey(thread, l)) ?? [];
        if (items.length < want) {
          const from = items.length;
          const rows = await store.getAll(IDBKeyRange.bound([thread, l, from], [thread, l, want - 1]));
          items = this.lists.get(listKey(thread, l)) ?? items; // a parallel load may have extended it
          for (let k = 0; k < rows.length; k++) if (from + k === items.length) items.push(deepFreeze(rows[k]));
          this.remember(listKey(thread, l), items);
        }
        loaded.set(l, n === undefined && items.length > want ? items.slice(0, want) : items);
      }),
    );
    return (list) => loaded.get(list);
  }

  /** How many items the list log holds in the database. */
  private async listLength(tx: Tx, thread: string, list: string): Promise<number> {
    const lastKey = await tx.objectStore("items").openKeyCursor(under(thread, list), "prev");
    return lastKey ? lastKey.key[2] + 1 : 0;
  }

  private base(tx: Tx, row: CpRow): Promise<CpRecord | undefined> {
    return row.b === undefined ? Promise.resolve(undefined) : this.baseById(tx, row.thread_id, row.checkpoint_ns, row.b);
  }

  /** A base record (immutable, with an id never used twice: cached). */
  private async baseById(tx: Tx, thread: string, ns: string, b: number): Promise<CpRecord | undefined> {
    const key = `${thread}\u0000${ns}\u0000${b}`;
    let base = this.bases.get(key);
    if (!base) {
      base = await tx.objectStore("bases").get([thread, ns, b]);
      if (base) {
        this.bases.set(key, base);
        for (const k of this.bases.keys()) {
          if (this.bases.size <= 256) break;
          this.bases.delete(k);
        }
      }
    }
    return base;
  }

  /**
   * The records with the parent id in place where a row left it out (format 4: its parent is
   * the row before it in its namespace): taken from the next row of `rows` when they are
   * `consecutive` (newest first, no row between them), else read.
   */
  private async withParents(tx: Tx, rows: CpRow[], records: CpRecord[], consecutive: boolean): Promise<CpRecord[]> {
    return Promise.all(
      records.map(async (rec, i) => {
        if (Object.hasOwn(rec, "parent_checkpoint_id")) return rec;
        const row = rows[i]!;
        const next = consecutive ? rows[i + 1] : undefined;
        const parent = next ?? (await this.previousRow(tx, row));
        if (!parent) throw new Error(`agentdock indexeddb: the parent of checkpoint ${row.id} is missing (corrupt store)`);
        return { ...rec, parent_checkpoint_id: parent.id };
      }),
    );
  }

  /** The row put just before `row` in its namespace. */
  private async previousRow(tx: Tx, row: CpRow): Promise<CpRow | undefined> {
    const c = await tx.objectStore("cps").openCursor(IDBKeyRange.bound([row.thread_id, row.checkpoint_ns], [row.thread_id, row.checkpoint_ns, row.s], false, true), "prev");
    return c ? located(c.primaryKey, c.value) : undefined;
  }

  /** A row's record with item references still in place (lists refs are in its channel values). */
  private async recordOf(tx: Tx, row: CpRow): Promise<CpRecord> {
    return rowRecord(row, await this.base(tx, row));
  }

  private async decodeRows(tx: Tx, rows: CpRow[], consecutive = false): Promise<StoredCheckpoint[]> {
    const records = await this.withParents(tx, rows, await Promise.all(rows.map((row) => this.recordOf(tx, row))), consecutive);
    const byThread = new Map<string, Map<string, number>>();
    records.forEach((rec, i) => {
      const needs = byThread.get(rows[i]!.thread_id) ?? new Map<string, number>();
      byThread.set(rows[i]!.thread_id, needs);
      itemNeeds(rec, needs);
      itemNeeds(rows[i]!.w, needs);
      const values = (rec.checkpoint as { channel_values: EncodedValues }).channel_values;
      for (const { l, n } of listRefs(values)) needs.set(l, Math.max(n, needs.get(l) ?? 0));
    });
    const lookups = new Map<string, ListLookup>();
    for (const [thread, needs] of byThread) lookups.set(thread, await this.loadLists(tx, thread, needs));
    return records.map((rec, i) => {
      const row = rows[i]!;
      const lookup = lookups.get(row.thread_id)!;
      const plain = resolveItems(rec, lookup) as CpRecord & { checkpoint: StoredCheckpoint["checkpoint"] };
      const channel_values = decodeValues(plain.checkpoint.channel_values as EncodedValues, lookup);
      return {
        thread_id: row.thread_id,
        checkpoint_ns: row.checkpoint_ns,
        checkpoint: { ...plain.checkpoint, id: row.id, channel_values },
        metadata: plain.metadata as StoredCheckpoint["metadata"],
        parent_checkpoint_id: plain.parent_checkpoint_id as string | null,
        pending_writes: resolveItems(row.w, lookup) as PendingWrite[],
      };
    });
  }

  /** The latest row of a namespace (as this commit left it, with `ctx`). */
  private async latestRow(tx: Tx, thread: string, ns: string, ctx?: Ctx): Promise<CpRow | undefined> {
    const k = `${thread}\u0000${ns}`;
    let found: CpRow | null | undefined = ctx?.latest.get(k);
    if (found === undefined) {
      const c = await tx.objectStore("cps").openCursor(under(thread, ns), "prev");
      found = c ? located(c.primaryKey, c.value) : null;
      ctx?.latest.set(k, found);
    }
    if (!found) return undefined;
    return ctx?.rows.get(rowKey(thread, ns, found.id)) ?? found;
  }

  /** A row by checkpoint id (as this commit left it, with `ctx`). */
  private async rowById(tx: Tx, thread: string, ns: string, id: string, ctx?: Ctx): Promise<CpRow | undefined> {
    const known = ctx?.rows.get(rowKey(thread, ns, id));
    if (known || ctx?.missing.has(rowKey(thread, ns, id))) return known;
    // Checkpoint ids are unique in practice; the index holds the id alone (keys are not stored twice).
    for (let c = await tx.objectStore("cps").index("by_id").openCursor(IDBKeyRange.only(id)); c; c = await c.continue()) {
      const key = c.primaryKey;
      if (key[0] === thread && key[1] === ns) {
        const row = located(key, c.value);
        ctx?.rows.set(rowKey(thread, ns, id), row);
        return row;
      }
    }
    ctx?.missing.add(rowKey(thread, ns, id));
    return undefined;
  }

  /** Reads what the commit's ops will look at, all at once (one round trip instead of one per op). */
  private async prefetch(ctx: Ctx, ops: readonly WriteOp[]): Promise<void> {
    const { tx } = ctx;
    const reads: Array<Promise<unknown>> = [];
    const threadIds = new Set<string>();
    const runIds = new Set<string>();
    const cps = new Map<string, [string, string, string]>();
    const latest = new Map<string, [string, string]>();
    for (const op of ops) {
      if (op.op === "thread.put") threadIds.add(op.thread.thread_id);
      else if (op.op === "thread.delete") threadIds.add(op.thread_id);
      else if (op.op === "run.put") runIds.add(op.run.run_id);
      else if (op.op === "run.delete") runIds.add(op.run_id);
      else if (op.op === "writes.put") cps.set(rowKey(op.thread_id, op.checkpoint_ns ?? "", op.checkpoint_id), [op.thread_id, op.checkpoint_ns ?? "", op.checkpoint_id]);
      else if (op.op === "checkpoint.put") {
        const { thread_id, checkpoint_ns, checkpoint, parent_checkpoint_id } = op.checkpoint;
        const ns = checkpoint_ns ?? "";
        cps.set(rowKey(thread_id, ns, checkpoint.id), [thread_id, ns, checkpoint.id]);
        if (parent_checkpoint_id !== null) {
          // The parent, then the lengths of its lists (an append needs them), in the same batch.
          reads.push(
            this.rowById(tx, thread_id, ns, parent_checkpoint_id, ctx).then(async (row) => {
              if (!row) return;
              const values = ((await this.recordOf(tx, row)).checkpoint as { channel_values: EncodedValues }).channel_values;
              await Promise.all(
                listRefs(values).map(async ({ l }) => {
                  const len = await this.listLength(tx, thread_id, l);
                  if (!ctx.listLen.has(listKey(thread_id, l))) ctx.listLen.set(listKey(thread_id, l), len);
                }),
              );
            }),
          );
        }
        latest.set(`${thread_id}\u0000${ns}`, [thread_id, ns]);
      }
    }
    for (const id of threadIds) reads.push(tx.objectStore("threads").get(id).then((row) => ctx.threadRows.set(id, row)));
    for (const id of runIds) {
      reads.push(
        tx
          .objectStore("runs")
          .get(id)
          .then(async (row) => {
            ctx.runRows.set(id, row);
            // A new run needs the last queue position: read in this wave, not after it.
            if (!row && ctx.lastQ === undefined) {
              const last = await tx.objectStore("runs").index("by_q").openKeyCursor(null, "prev");
              ctx.lastQ ??= last ? (last.key as number) : -1;
            }
          }),
      );
    }
    // Leases a lease op checks, and the run bases this instance's hints name, in the same wave.
    for (const op of ops) {
      const key = op.op === "lease.put" && op.expect ? op.lease.key : op.op === "lease.delete" && op.owner !== undefined ? op.key : undefined;
      if (key !== undefined && !(ctx.leases ??= new Map()).has(key)) {
        ctx.leases.set(key, undefined);
        reads.push(tx.objectStore("leases").get(key).then((lease) => ctx.leases!.set(key, lease)));
      }
      const hint = op.op === "run.put" ? this.runBases.get(op.run.thread_id) : undefined;
      if (hint !== undefined && op.op === "run.put") {
        const at = `${op.run.thread_id}\u0000${hint}`;
        if (!(ctx.runBaseRows ??= new Map()).has(at)) {
          ctx.runBaseRows.set(at, undefined);
          reads.push(tx.objectStore("bases").get([op.run.thread_id, RUNS, hint]).then((base) => ctx.runBaseRows!.set(at, base)));
        }
      }
    }
    for (const [t, ns, id] of cps.values()) reads.push(this.rowById(tx, t, ns, id, ctx));
    for (const [t, ns] of latest.values()) reads.push(this.latestRow(tx, t, ns, ctx));
    await Promise.all(reads);
  }

  // ---------------------------------------------------------------------------------------------
  // Writes.

  async commit(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    const scope = new Set<Names>();
    for (const op of ops) {
      const names = SCOPE[op.op] as Names[] | undefined;
      if (!names) throw invalidInput(`agentdock store: unknown write op ${JSON.stringify(op)}`);
      for (const name of names) scope.add(name);
      checkOp(op);
    }
    if (scope.size > 0) return this.group.submit({ ops, scope });
    for (const op of ops) if (op.op === "notify") this.announce(new Set(), [{ topic: op.topic, payload: op.payload }]);
  }

  /** Commits waiting for the transaction in flight are written together in the next one (./group-commit.ts). */
  private readonly group = new GroupCommit<Batched>((batch) => this.transact(batch));

  /** Tells this instance's listeners and the other tabs what a commit changed. */
  private announce(threads: Set<string>, notes: Ctx["notes"]) {
    if (threads.size > 0) this.post({ k: "change", change: { threadIds: [...threads] } });
    for (const note of notes) {
      this.topics.deliver(note.topic, note.payload);
      this.post({ k: "notify", topic: note.topic, payload: note.payload });
    }
  }

  /**
   * Applies commits in one readwrite transaction, in order (each sees the ones before it), and
   * announces each once the transaction completed; any failure aborts the transaction (nothing
   * written) and rethrows.
   */
  private async transact(batch: readonly Batched[]): Promise<void> {
    const scope = new Set<Names>();
    for (const { scope: s } of batch) for (const name of s) scope.add(name);
    const db = await this.database();
    const tx = db.transaction([...scope], "readwrite", this.options.durability ? { durability: this.options.durability } : undefined);
    const effects = batch.map(() => ({ threads: new Set<string>(), notes: [] as Ctx["notes"] }));
    const ctx: Ctx = {
      tx,
      pending: [],
      threads: effects[0]!.threads,
      notes: effects[0]!.notes,
      rows: new Map(),
      dirty: new Set(),
      missing: new Set(),
      latest: new Map(),
      threadRows: new Map(),
      runRows: new Map(),
      listLen: new Map(),
    };
    /** Lists this transaction appended to: their cached items are dropped if it fails. */
    const touched = new Set<string>();
    try {
      // What every commit of the batch reads, in one wave (as for one commit with all their ops).
      await this.prefetch(ctx, batch.length === 1 ? batch[0]!.ops : batch.flatMap((b) => b.ops));
      for (let i = 0; i < batch.length; i++) {
        ctx.threads = effects[i]!.threads;
        ctx.notes = effects[i]!.notes;
        for (const op of batch[i]!.ops) await this.applyOne(ctx, op, touched);
      }
      for (const key of ctx.dirty) {
        const row = ctx.rows.get(key)!;
        ctx.pending.push((tx as WTx).objectStore("cps").put(storedRow(row), cpKey(row)));
      }
      await Promise.all(ctx.pending);
      await tx.done;
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      await tx.done.catch(() => undefined);
      await Promise.allSettled(ctx.pending);
      for (const list of touched) this.lists.delete(list);
      if ((err as { name?: string }).name === "DataCloneError") throw invalidInput(`agentdock indexeddb: ${(err as Error).message}`);
      throw err;
    }
    for (const { threads, notes } of effects) this.announce(threads, notes);
  }

  private threadConflict(id: string, why: string) {
    return conflict(`agentdock indexeddb: thread ${id} ${why}; the commit wrote nothing`);
  }

  private async checkThread(ctx: Ctx, id: string, expect: NonNullable<Extract<WriteOp, { op: "thread.put" }>["expect"]> | undefined) {
    const row = ctx.threadRows.has(id) ? ctx.threadRows.get(id) : await ctx.tx.objectStore("threads").get(id);
    if (!expect) return row;
    if (expect.exists !== undefined && expect.exists !== (row !== undefined)) {
      throw this.threadConflict(id, expect.exists ? "does not exist" : "already exists");
    }
    if (expect.status && (!row || !expect.status.includes(row.status))) {
      throw this.threadConflict(id, `is ${row ? row.status : "missing"}, not ${expect.status.join(" or ")}`);
    }
    if (expect.sameAs) {
      const rev = this.revisions.get(expect.sameAs);
      if (rev === undefined) throw this.threadConflict(id, "is not known to be unchanged (expect.sameAs is not a record this store returned)");
      if (!row || (row.$rev ?? 0) !== rev) throw this.threadConflict(id, "changed since it was read");
    }
    return row;
  }

  private async applyOne(ctx: Ctx, op: WriteOp, touched: Set<string>): Promise<void> {
    const tx = ctx.tx as WTx;
    const track = (p: Promise<unknown>) => {
      ctx.pending.push(p);
      p.catch(() => undefined);
    };
    switch (op.op) {
      case "assistant.put":
        track(tx.objectStore("assistants").put(op.assistant));
        return;
      case "assistant.delete":
        track(tx.objectStore("assistants").delete(op.assistant_id));
        track(tx.objectStore("versions").delete(under(op.assistant_id)));
        return;
      case "assistant_version.put":
        track(tx.objectStore("versions").put(op.version));
        return;
      case "thread.put": {
        const id = op.thread.thread_id;
        ctx.threads.add(id);
        const row = await this.checkThread(ctx, id, op.expect);
        const stored: ThreadRow = { ...(await this.encodeThreadValues(ctx, op.thread, row)), $rev: nextRevision(row?.$rev) };
        ctx.threadRows.set(id, stored);
        track(tx.objectStore("threads").put(stored));
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        ctx.threads.add(id);
        await this.checkThread(ctx, id, op.expect);
        for (const [key, row] of ctx.rows) {
          if (row.thread_id !== id) continue;
          ctx.rows.delete(key);
          ctx.dirty.delete(key);
        }
        ctx.threadRows.set(id, undefined);
        ctx.listLen.clear();
        ctx.runBaseRows?.clear(); // its bases go: read again if asked
        for (const [runId, run] of ctx.runRows) if (run?.thread_id === id) ctx.runRows.set(runId, undefined);
        for (const key of ctx.latest.keys()) if (key.startsWith(`${id}\u0000`)) ctx.latest.set(key, null);
        track(tx.objectStore("threads").delete(id));
        track(tx.objectStore("cps").delete(under(id)));
        track(tx.objectStore("bases").delete(under(id)));
        track(tx.objectStore("items").delete(under(id)));
        const [runKeys, cancelKeys] = await Promise.all([
          tx.objectStore("runs").index("by_thread").getAllKeys(under(id)),
          tx.objectStore("cancels").index("by_thread").getAllKeys(id),
        ]);
        for (const key of runKeys) track(tx.objectStore("runs").delete(key));
        for (const key of cancelKeys) track(tx.objectStore("cancels").delete(key));
        return;
      }
      case "checkpoint.put":
        ctx.threads.add(op.checkpoint.thread_id);
        await this.putCheckpoint(ctx, op.checkpoint, touched, track);
        return;
      case "checkpoint.delete": {
        ctx.threads.add(op.thread_id);
        const ns = op.checkpoint_ns ?? "";
        const rows = await Promise.all(op.checkpoint_ids.map((id) => this.rowById(tx, op.thread_id, ns, id, ctx)));
        await this.keepParents(ctx, rows.filter((row): row is CpRow => row !== undefined));
        for (const row of rows) {
          if (!row) continue;
          const key = rowKey(row.thread_id, row.checkpoint_ns, row.id);
          ctx.rows.delete(key);
          ctx.dirty.delete(key);
          ctx.missing.add(key);
          ctx.latest.delete(`${row.thread_id}\u0000${row.checkpoint_ns}`);
          track(tx.objectStore("cps").delete(cpKey(row)));
        }
        return;
      }
      case "writes.put": {
        ctx.threads.add(op.thread_id);
        const ns = op.checkpoint_ns ?? "";
        const row = await this.rowById(tx, op.thread_id, ns, op.checkpoint_id, ctx);
        if (!row) {
          throw new AgentdockError(
            "not_found",
            `agentdock store: writes for unknown checkpoint ${op.checkpoint_id} of thread ${op.thread_id}`,
          );
        }
        const kept = (row.w as unknown[]).filter((w) => (w as PendingWrite)[0] !== op.task_id);
        const key = rowKey(op.thread_id, ns, op.checkpoint_id);
        ctx.rows.set(key, { ...row, w: [...kept, ...(shareItems(op.writes, new Map()) as unknown[])] });
        ctx.dirty.add(key);
        return;
      }
      case "run.put": {
        const runs = tx.objectStore("runs");
        const row = ctx.runRows.has(op.run.run_id) ? ctx.runRows.get(op.run.run_id) : await runs.get(op.run.run_id);
        if (op.expect) {
          if (op.expect.exists !== undefined && op.expect.exists !== (row !== undefined)) {
            throw conflict(`agentdock indexeddb: run ${op.run.run_id} ${op.expect.exists ? "does not exist" : "already exists"}; the commit wrote nothing`);
          }
          if (op.expect.status && (!row || !op.expect.status.includes(row.status))) {
            throw conflict(
              `agentdock indexeddb: run ${op.run.run_id} is ${row ? row.status : "missing"}, not ${op.expect.status.join(" or ")}; the commit wrote nothing`,
            );
          }
        }
        ctx.threads.add(op.run.thread_id);
        let q = row?.q;
        if (q === undefined) {
          if (ctx.lastQ === undefined) {
            const last = await runs.index("by_q").openKeyCursor(null, "prev");
            ctx.lastQ = last ? (last.key as number) : -1;
          }
          q = ++ctx.lastQ;
        }
        const { run_id, thread_id, assistant_id, status, created_at, ...rest } = op.run;
        // The rest is kept as a diff against a base run of the thread (kwargs and metadata repeat).
        let b: number | undefined;
        let base: Record<string, unknown> | undefined;
        if (row && row.thread_id === thread_id && row.b !== undefined) {
          b = row.b;
          base = await this.baseById(tx, thread_id, RUNS, b);
        } else {
          const hint = this.runBases.get(thread_id);
          // The hint is checked in this transaction: another tab may have deleted the thread.
          const at = `${thread_id}\u0000${hint}`;
          base =
            hint === undefined ? undefined : ctx.runBaseRows?.has(at) ? ctx.runBaseRows.get(at) : await tx.objectStore("bases").get([thread_id, RUNS, hint]);
          if (base) b = hint;
          else {
            b = Math.random();
            base = rest;
            track(tx.objectStore("bases").put(rest, [thread_id, RUNS, b]));
            this.runBases.delete(thread_id);
            this.runBases.set(thread_id, b);
            for (const old of this.runBases.keys()) {
              if (this.runBases.size <= 4096) break;
              this.runBases.delete(old);
            }
          }
        }
        const stored: RunRow = { run_id, thread_id, assistant_id, status, created_at, q, b, r: diffLeaves(rest, base ?? {}) as unknown as Record<string, unknown> };
        ctx.runRows.set(run_id, stored);
        track(runs.put(stored));
        return;
      }
      case "run.delete": {
        const row = ctx.runRows.has(op.run_id) ? ctx.runRows.get(op.run_id) : await tx.objectStore("runs").get(op.run_id);
        if (op.expect) {
          if (op.expect.exists !== undefined && op.expect.exists !== (row !== undefined)) {
            throw conflict(`agentdock indexeddb: run ${op.run_id} ${op.expect.exists ? "does not exist" : "already exists"}; the commit wrote nothing`);
          }
          if (op.expect.status && (!row || !op.expect.status.includes(row.status))) {
            throw conflict(`agentdock indexeddb: run ${op.run_id} is ${row ? row.status : "missing"}, not ${op.expect.status.join(" or ")}; the commit wrote nothing`);
          }
        }
        if (row) ctx.threads.add(row.thread_id);
        ctx.runRows.set(op.run_id, undefined);
        track(tx.objectStore("runs").delete(op.run_id));
        track(tx.objectStore("cancels").delete(op.run_id));
        return;
      }
      case "cancel.put":
        ctx.threads.add(op.request.thread_id);
        track(tx.objectStore("cancels").put(op.request));
        return;
      case "lease.put": {
        if (op.expect) {
          const held = ctx.leases?.has(op.lease.key) ? ctx.leases.get(op.lease.key) : await tx.objectStore("leases").get(op.lease.key);
          const now = op.expect.now;
          const live = held !== undefined && held.expires_at >= now;
          const ok = op.expect.state === "free" ? !live : live && held!.owner === op.lease.owner;
          if (!ok) {
            throw conflict(
              `agentdock indexeddb: lease ${op.lease.key} is not ${op.expect.state}` +
                (held ? ` (held by ${held.owner} until ${held.expires_at})` : "") +
                "; the commit wrote nothing",
            );
          }
        }
        ctx.leases?.set(op.lease.key, op.lease);
        track(tx.objectStore("leases").put(op.lease));
        return;
      }
      case "lease.delete": {
        if (op.owner !== undefined) {
          const held = ctx.leases?.has(op.key) ? ctx.leases.get(op.key) : await tx.objectStore("leases").get(op.key);
          if (!held || held.owner !== op.owner) return;
        }
        ctx.leases?.set(op.key, undefined);
        track(tx.objectStore("leases").delete(op.key));
        return;
      }
      case "doc.put": {
        const docs = tx.objectStore("docs");
        const [existing, last] = await Promise.all([
          docs.get([op.collection, op.id]),
          docs.index("by_seq").openKeyCursor(under(op.collection), "prev"),
        ]);
        const seq = existing?.seq ?? (last ? (last.key[1] as number) + 1 : 0);
        track(docs.put({ collection: op.collection, id: op.id, parent: op.parent, doc: op.doc, seq }));
        return;
      }
      case "item.put": {
        const { vectors, ...rest } = op.item;
        const row: ItemRow = { ...rest, namespace: [...rest.namespace], ns: namespaceKey(rest.namespace), ...(vectors ? { vectors: vectors.map((v) => [...v]) } : {}) };
        track(tx.objectStore("store_items").put(row));
        return;
      }
      case "item.delete": {
        const key: [string, string] = [namespaceKey(op.namespace), op.key];
        if (op.expiredAt !== undefined) {
          const cur = await tx.objectStore("store_items").get(key);
          if (!cur || cur.expires_at === null || cur.expires_at > op.expiredAt) return;
        }
        track(tx.objectStore("store_items").delete(key));
        return;
      }
      case "item.touch": {
        const cur = await tx.objectStore("store_items").get([namespaceKey(op.namespace), op.key]);
        if (!cur || cur.ttl === null) return;
        track(tx.objectStore("store_items").put({ ...cur, expires_at: op.expires_at }));
        return;
      }
      case "doc.delete":
        track(tx.objectStore("docs").delete([op.collection, op.id]));
        return;
      case "cron.put":
      case "cron.delete": {
        const id = op.op === "cron.put" ? op.cron.cron_id : op.cron_id;
        const crons = tx.objectStore("crons");
        const why = cronExpectationFails(op.expect, op.expect ? await crons.get(id) : undefined);
        if (why) throw conflict(`agentdock indexeddb: ${op.op} of cron ${id}: ${why}; the commit wrote nothing`);
        track(op.op === "cron.put" ? crons.put(cronRow(op.cron)) : crons.delete(id));
        return;
      }
      case "notify":
        ctx.notes.push({ topic: op.topic, payload: op.payload });
        return;
      default: {
        const never: never = op;
        throw invalidInput(`agentdock store: unknown write op ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * Before rows are deleted: a row right after one of them that left its parent id out (its
   * parent is the row before it) gets it written in, as the row before it changes.
   */
  private async keepParents(ctx: Ctx, deleting: CpRow[]): Promise<void> {
    const { tx } = ctx;
    const gone = new Set(deleting.map((row) => row.id));
    for (const row of deleting) {
      const c = await tx.objectStore("cps").openCursor(IDBKeyRange.bound([row.thread_id, row.checkpoint_ns, row.s], [row.thread_id, row.checkpoint_ns, []], true, false));
      if (!c) continue;
      const stored = located(c.primaryKey, c.value);
      if (gone.has(stored.id)) continue;
      const key = rowKey(stored.thread_id, stored.checkpoint_ns, stored.id);
      const next = ctx.rows.get(key) ?? stored;
      const base = await this.base(tx, next);
      const record = rowRecord(next, base);
      if (Object.hasOwn(record, "parent_checkpoint_id")) continue;
      ctx.rows.set(key, { ...next, ...rowBody({ ...record, parent_checkpoint_id: row.id }, base && { id: next.b!, record: base }) });
      ctx.dirty.add(key);
    }
  }

  /**
   * A thread with its values encoded by reference to list logs where they match: first the logs
   * its stored row already refers to (a thread's values usually extend them), else those of the
   * latest checkpoint of the root namespace.
   */
  private async encodeThreadValues(ctx: Ctx, thread: ThreadRecord, row: ThreadRow | undefined): Promise<ThreadRecord> {
    const values = thread.values ?? {};
    const longest = Math.max(0, ...Object.values(values).map((v) => (Array.isArray(v) ? v.length : 0)));
    const inline = (): ThreadRecord => ({ ...thread, values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { v }])) });
    if (longest < LIST_MIN) return inline();
    const allListed = (t: ThreadRecord) =>
      Object.entries(values).every(([k, v]) => !Array.isArray(v) || v.length < LIST_MIN || "l" in ((t.values as EncodedValues)[k] ?? {}));
    const attempt = async (base: EncodedValues) => {
      const needs = new Map<string, number>(listRefs(base).map(({ l }) => [l, longest]));
      const lookup = await this.loadLists(ctx.tx, thread.thread_id, needs);
      return encodeThread(thread, { checkpoint: { channel_values: base } } as unknown as StoredCheckpoint, lookup);
    };
    if (row && listRefs(row.values as EncodedValues).length > 0) {
      const encoded = await attempt(row.values as EncodedValues);
      if (allListed(encoded)) return encoded;
    }
    const latest = await this.latestRow(ctx.tx, thread.thread_id, "", ctx);
    if (!latest) return inline();
    const rec = await this.recordOf(ctx.tx, latest);
    return attempt((rec.checkpoint as { channel_values: EncodedValues }).channel_values);
  }

  /**
   * Puts a checkpoint: its list channels extend the parent's logs (appending only new items);
   * values elsewhere that are items of its lists become references; the parent row is shared
   * again against the items this one appended (a task's writes become the next list items).
   */
  private async putCheckpoint(ctx: Ctx, cp: StoredCheckpoint, touched: Set<string>, track: (p: Promise<unknown>) => void) {
    const tx = ctx.tx as WTx;
    const thread = cp.thread_id;
    const ns = cp.checkpoint_ns ?? "";
    const id = cp.checkpoint.id;
    const [existing, parentRow, latest] = await Promise.all([
      this.rowById(tx, thread, ns, id, ctx),
      cp.parent_checkpoint_id === null ? undefined : this.rowById(tx, thread, ns, cp.parent_checkpoint_id, ctx),
      this.latestRow(tx, thread, ns, ctx),
    ]);
    const parentRecord = parentRow && (await this.recordOf(tx, parentRow));
    const parentValues = parentRecord && (parentRecord.checkpoint as { channel_values: EncodedValues }).channel_values;
    // Appending needs each log's true length (another tab may have forked it): undefined = all.
    const needs = new Map<string, number | undefined>(parentValues ? listRefs(parentValues).map(({ l }) => [l, undefined]) : []);
    const lookup = await this.loadLists(tx, thread, needs, ctx);
    const { checkpoint: encoded, appends } = encodeCheckpoint(
      cp,
      parentValues && ({ checkpoint: { channel_values: parentValues } } as unknown as StoredCheckpoint),
      lookup,
      shortId,
    );
    const items = tx.objectStore("items");
    const appended: ItemIndex = new Map();
    const lists = new Map<string, unknown[]>();
    for (const { list, at, items: added } of appends) {
      touched.add(listKey(thread, list));
      const known = (lookup(list) as unknown[] | undefined) ?? [];
      if (known.length !== at) throw new Error(`agentdock indexeddb: list ${list} is not loaded before an append (bug)`);
      // The cache keeps items as stored: frozen (callers get them in the values they read), and a
      // caller's item that is not frozen is copied first, so changing it later changes nothing here.
      const kept = added.map((item) => (typeof item === "object" && item !== null && !Object.isFrozen(item) ? deepFreeze(structuredClone(item)) : item));
      const all = at === 0 ? kept : known;
      if (at > 0) all.push(...kept);
      this.remember(listKey(thread, list), all);
      lists.set(list, all);
      ctx.listLen.set(listKey(thread, list), all.length);
      kept.forEach((item, k) => track(items.put(item, [thread, list, at + k])));
      indexItems(appended, list, all, at);
    }
    // Objects that are items of this checkpoint's lists (near their ends) become references.
    const index: ItemIndex = new Map(appended);
    for (const { l, n } of listRefs(encoded.checkpoint.channel_values as EncodedValues)) {
      const all = lists.get(l) ?? (lookup(l) as unknown[] | undefined);
      if (all) indexItems(index, l, all, n - 8, n);
    }
    const { id: _id, ...checkpointRest } = encoded.checkpoint;
    const s = existing?.s ?? (latest ? latest.s + 1 : 0);
    // Format 4: a new row whose parent is the row just before it (the usual case) leaves the
    // parent id out; it is read from that row (`withParents`).
    const parentIsPrevious = !existing && latest !== undefined && encoded.parent_checkpoint_id === latest.id;
    const record = shareItems(
      parentIsPrevious
        ? { checkpoint: checkpointRest, metadata: encoded.metadata }
        : { checkpoint: checkpointRest, metadata: encoded.metadata, parent_checkpoint_id: encoded.parent_checkpoint_id },
      index,
    ) as CpRecord;
    const w = shareItems(encoded.pending_writes, index) as unknown[];
    // The parent's writes and inline values may hold what this checkpoint appended: its row is
    // shared again (a task's writes become the next checkpoint's list items).
    let parentShared: CpRecord | undefined;
    if (parentRow && parentRecord) {
      const hit = { hit: false };
      parentShared = appended.size > 0 ? (reshareItems(parentRecord, appended, hit) as CpRecord) : parentRecord;
      const w2 = appended.size > 0 ? (reshareItems(parentRow.w, appended, hit) as unknown[]) : parentRow.w;
      if (hit.hit) {
        const parentBase = await this.base(tx, parentRow);
        const key = rowKey(thread, ns, parentRow.id);
        ctx.rows.set(key, { ...parentRow, ...rowBody(parentShared, parentBase && { id: parentRow.b!, record: parentBase }), w: w2 });
        ctx.dirty.add(key);
      }
    }
    // The base: the parent's while it is recent, else a new one copied from the parent's record
    // (after the sharing above, so the base holds references, not copies). No parent: whole.
    let base: { id: number; record: CpRecord } | undefined;
    if (parentRow && parentShared) {
      const since = parentRow.b === undefined ? Infinity : s - Math.floor(parentRow.b);
      const parentBase = since < BASE_EVERY ? await this.base(tx, parentRow) : undefined;
      if (parentBase) base = { id: parentRow.b!, record: parentBase };
      else {
        base = { id: s + Math.random(), record: parentShared };
        track(tx.objectStore("bases").put(parentShared, [thread, ns, base.id]));
      }
    }
    const row: CpRow = { thread_id: thread, checkpoint_ns: ns, s, id, ...rowBody(record, base), w };
    const key = rowKey(thread, ns, id);
    ctx.rows.set(key, row);
    ctx.dirty.delete(key);
    ctx.missing.delete(key);
    if (!latest || s >= latest.s) ctx.latest.set(`${thread}\u0000${ns}`, row);
    track(tx.objectStore("cps").put(storedRow(row), cpKey(row)));
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

  private assistantRows(q: AssistantQuery) {
    return this.read(["assistants"], async (tx) => {
      const store = tx.objectStore("assistants");
      if (q.ids && q.ids.length > 0) return (await Promise.all(q.ids.map((id) => store.get(id)))).filter((a): a is AssistantRecord => !!a);
      if (q.graph_id !== undefined) return store.index("by_graph").getAll(q.graph_id);
      return store.getAll();
    });
  }
  async queryAssistants(q: AssistantQuery) {
    return evalAssistants(await this.assistantRows(q), q);
  }
  async countAssistants(q: AssistantQuery) {
    return (await this.assistantRows(q)).filter((a) => matchesAssistant(a, q)).length;
  }
  queryAssistantVersions(q: AssistantVersionQuery) {
    return this.read(["versions"], async (tx) => evalVersions(await tx.objectStore("versions").getAll(under(q.assistant_id)), q));
  }

  /** A thread row as the caller sees it, with its revision remembered for `sameAs`. */
  private threadOut(row: ThreadRow, lookup: ListLookup): ThreadRecord {
    const { $rev, ...rest } = row;
    const record = { ...rest, values: decodeValues(row.values as EncodedValues, lookup) } as ThreadRecord;
    this.revisions.set(record, $rev ?? 0);
    return record;
  }

  private async decodeThreads(tx: Tx, rows: ThreadRow[]): Promise<ThreadRecord[]> {
    const out: ThreadRecord[] = [];
    for (const row of rows) {
      const needs = new Map<string, number>(listRefs(row.values as EncodedValues).map(({ l, n }) => [l, n]));
      out.push(this.threadOut(row, needs.size ? await this.loadLists(tx, row.thread_id, needs) : () => undefined));
    }
    return out;
  }

  getThread(id: string) {
    return this.read(["threads", "items"], async (tx) => {
      const row = await tx.objectStore("threads").get(id);
      return row && (await this.decodeThreads(tx, [row]))[0];
    });
  }

  private async threadRows(tx: Tx, q: ThreadQuery): Promise<ThreadRow[]> {
    const store = tx.objectStore("threads");
    let rows: ThreadRow[];
    if (q.ids && q.ids.length > 0) rows = (await Promise.all(q.ids.map((id) => store.get(id)))).filter((t): t is ThreadRow => !!t);
    else if (q.status !== undefined) rows = await store.index("by_status").getAll(q.status);
    else rows = await store.getAll();
    if (q.values === undefined) return rows.filter((row) => matchesThread(row, q));
    // Only a `values` filter needs the values: rebuilt for the rows that pass the others.
    const others = rows.filter((row) => matchesThread(row, { ...q, values: undefined }));
    const decoded = await this.decodeThreads(tx, others);
    return others.filter((_, i) => contains(decoded[i]!.values, q.values));
  }

  queryThreads(q: ThreadQuery) {
    return this.read(["threads", "items"], async (tx) => {
      const hits = await this.threadRows(tx, q);
      const page = sortAndPage(hits, q.sortBy ?? "created_at", q.sortOrder ?? "desc", "thread_id", q);
      return this.decodeThreads(tx, page);
    });
  }
  countThreads(q: ThreadQuery) {
    return this.read(["threads", "items"], async (tx) => (await this.threadRows(tx, q)).length);
  }

  getCheckpoint(key: CheckpointKey) {
    return this.read(CHECKPOINTS, async (tx) => {
      const ns = key.checkpoint_ns ?? "";
      const row = key.checkpoint_id === undefined ? await this.latestRow(tx, key.thread_id, ns) : await this.rowById(tx, key.thread_id, ns, key.checkpoint_id);
      return row && (await this.decodeRows(tx, [row]))[0];
    });
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}) {
    return this.read(CHECKPOINTS, async (tx) => {
      const ns = options.checkpoint_ns ?? "";
      const limit = options.limit ?? Infinity;
      if (limit <= 0) return [];
      let upper: number | [] = [];
      if (options.before !== undefined) {
        const before = await this.rowById(tx, threadId, ns, options.before);
        if (!before) return [];
        upper = before.s;
      }
      const range = IDBKeyRange.bound([threadId, ns], [threadId, ns, upper], false, true);
      const rows: CpRow[] = [];
      const store = tx.objectStore("cps");
      if (!options.filter && limit !== Infinity) {
        for (let c = await store.openCursor(range, "prev"); c && rows.length < limit; c = await c.continue()) rows.push(located(c.primaryKey, c.value));
        return this.decodeRows(tx, rows, true);
      }
      if (!options.filter) {
        const [keys, values] = await Promise.all([store.getAllKeys(range), store.getAll(range)]);
        return this.decodeRows(tx, values.map((v, i) => located(keys[i]!, v)).reverse(), true);
      }
      for (let c = await store.openCursor(range, "prev"); c && rows.length < limit; c = await c.continue()) {
        const row = located(c.primaryKey, c.value);
        const rec = await this.recordOf(tx, row);
        let metadata = rec.metadata;
        const needs = itemNeeds(metadata);
        if (needs.size > 0) metadata = resolveItems(metadata, await this.loadLists(tx, threadId, needs));
        if (contains(metadata, options.filter)) rows.push(row);
      }
      return this.decodeRows(tx, rows);
    });
  }

  listCheckpointNamespaces(threadId: string) {
    return this.read(["cps"], async (tx) => {
      const out: string[] = [];
      let c = await tx.objectStore("cps").openKeyCursor(under(threadId));
      while (c) {
        const ns = c.key[1];
        out.push(ns);
        c = await c.continue([threadId, ns, []] as unknown as [string, string, number]);
      }
      return out;
    });
  }

  /** A run as the caller sees it. */
  private async runOut(tx: Tx, row: RunRow): Promise<RunRecord> {
    const { run_id, thread_id, assistant_id, status, created_at, b, r } = row;
    let rest = r;
    if (b !== undefined) {
      const base = await this.baseById(tx, thread_id, RUNS, b);
      if (!base) throw new Error(`agentdock indexeddb: base ${b} of run ${run_id} is missing (corrupt store)`);
      rest = patchLeaves(base, r as unknown as LeafDiff);
    }
    return { run_id, thread_id, assistant_id, ...rest, created_at, status } as RunRecord;
  }

  getRun(id: string) {
    return this.read(["runs", "bases"], async (tx) => {
      const row = await tx.objectStore("runs").get(id);
      return row && this.runOut(tx, row);
    });
  }

  /** Runs that may match, in queue order (the fields queries filter on are stored whole). */
  private async runRows(tx: Tx, q: RunQuery): Promise<RunRow[]> {
    const store = tx.objectStore("runs");
    if (q.thread_id !== undefined && q.status !== undefined) {
      // A thread's runs of some statuses (its queue): only those are read, however long its history.
      const statuses = typeof q.status === "string" ? [q.status] : [...new Set(q.status)];
      const index = store.index("by_thread_status");
      const parts = await Promise.all(statuses.map((st) => index.getAll(under(q.thread_id!, st))));
      return parts.length === 1 ? parts[0]! : parts.flat().sort((a, b) => a.q - b.q);
    }
    if (q.thread_id !== undefined) return store.index("by_thread").getAll(under(q.thread_id));
    if (typeof q.status === "string") return store.index("by_status").getAll(under(q.status));
    return store.index("by_q").getAll();
  }
  queryRuns(q: RunQuery) {
    return this.read(["runs", "bases"], async (tx) => {
      // Filtered, sorted and paged on the stored fields; only the page is rebuilt.
      const page = evalRuns((await this.runRows(tx, q)) as unknown as RunRecord[], q) as unknown as RunRow[];
      return Promise.all(page.map((row) => this.runOut(tx, row)));
    });
  }
  countRuns(q: RunQuery) {
    return this.read(["runs"], async (tx) => (await this.runRows(tx, q)).filter((r) => matchesRun(r as unknown as RunRecord, q)).length);
  }
  getCancelRequest(runId: string) {
    return this.read(["cancels"], (tx) => tx.objectStore("cancels").get(runId));
  }

  getLease(key: string) {
    return this.read(["leases"], (tx) => tx.objectStore("leases").get(key));
  }
  expiredLeases(prefix: string, now: number, limit = Infinity) {
    return this.read(["leases"], async (tx) => {
      const out: Lease[] = [];
      const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`, false, false);
      for (let c = await tx.objectStore("leases").openCursor(range); c && out.length < limit; c = await c.continue()) {
        if (c.value.key.startsWith(prefix) && c.value.expires_at < now) out.push(c.value);
      }
      return out;
    });
  }

  getCron(id: string) {
    return this.read(["crons"], async (tx) => cronOut(await tx.objectStore("crons").get(id)));
  }
  /** Crons a query may match: those it names, else every cron (a small table, scanned). */
  private async cronRows(tx: Tx, q: CronQuery): Promise<CronRecord[]> {
    const store = tx.objectStore("crons");
    const rows = q.ids?.length ? await Promise.all([...new Set(q.ids)].map((id) => store.get(id))) : await store.getAll();
    return rows.flatMap((row) => (row ? [cronOut(row)!] : []));
  }
  queryCrons(q: CronQuery) {
    return this.read(["crons"], async (tx) => evalCrons(await this.cronRows(tx, q), q));
  }
  countCrons(q: CronQuery) {
    return this.read(["crons"], async (tx) => evalCountCrons(await this.cronRows(tx, q), q));
  }
  dueCrons(asOf?: string, limit = 100) {
    return this.read(["crons"], async (tx) => {
      const range = asOf === undefined ? undefined : IDBKeyRange.upperBound([asOf, []]);
      const rows = await tx.objectStore("crons").index("by_due").getAll(range, limit);
      return rows.map((row) => cronOut(row)!);
    });
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
      return rows.filter((r) => parent === undefined || r.parent === parent).map((r) => ({ id: r.id, parent: r.parent, doc: r.doc }) as StoredDoc<T>);
    });
  }

  getItem(namespace: readonly string[], key: string) {
    return this.read(["store_items"], async (tx) => itemOf(await tx.objectStore("store_items").get([namespaceKey(namespace), key])));
  }
  /** Rows of the namespaces starting with `labels` (a key range: the namespace itself, then `labels.` up to `labels/`). */
  private async itemRows(tx: Tx, labels: readonly string[]): Promise<ItemRow[]> {
    const store = tx.objectStore("store_items");
    if (labels.length === 0) return store.getAll();
    const p = namespaceKey(labels);
    const [own, deeper] = await Promise.all([store.getAll(IDBKeyRange.bound([p], [p, []])), store.getAll(IDBKeyRange.bound([`${p}.`], [`${p}/`], false, true))]);
    return [...own, ...deeper];
  }
  searchItems(q: ItemQuery) {
    return this.read(["store_items"], async (tx) => rankItems((await this.itemRows(tx, q.prefix)).map((row) => itemOf(row)).filter((item) => matchesItemQuery(item, q)), q));
  }
  listItemNamespaces(q: ItemNamespaceQuery) {
    return this.read(["store_items"], async (tx) => {
      // The leading labels without wildcards narrow the key range.
      const fixed: string[] = [];
      for (const label of q.prefix ?? []) {
        if (label === "*") break;
        fixed.push(label);
      }
      const groups = new Map<string, [readonly string[], StoredItem[]]>();
      for (const row of await this.itemRows(tx, fixed)) {
        const group = groups.get(row.ns) ?? [row.namespace, []];
        groups.set(row.ns, group);
        group[1].push(itemOf(row));
      }
      return listNamespacesOf(groups.values(), q);
    });
  }
  expiredItems(now: number, limit = Infinity) {
    return this.read(["store_items"], async (tx) => {
      const out: ExpiredItem[] = [];
      const index = tx.objectStore("store_items").index("by_expiry");
      for (let c = await index.openCursor(IDBKeyRange.upperBound(now)); c && out.length < limit; c = await c.continue()) {
        out.push({ namespace: c.value.namespace, key: c.value.key, expires_at: c.value.expires_at! });
      }
      return out;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Other tabs.

  /** The channel to the other runtimes on this database, where BroadcastChannel exists. */
  private port(): BroadcastChannel | undefined {
    if (!this.channel && !this.closed && typeof BroadcastChannel !== "undefined") {
      this.channel = new BroadcastChannel(`agentdock:${this.name}`);
      // Node keeps the process alive for an open channel; browsers have no unref.
      (this.channel as { unref?: () => void }).unref?.();
      this.channel.onmessage = (event: MessageEvent<TabMessage>) => this.receive(event.data);
    }
    return this.channel;
  }

  private post(message: TabMessage) {
    try {
      this.port()?.postMessage(message);
    } catch {
      // a value the channel cannot clone: other tabs miss it (run events read back from storage)
    }
  }

  private receive(message: TabMessage) {
    if (message.k === "change") for (const l of this.changeListeners) l(message.change);
    else if (message.k === "notify") this.topics.deliver(message.topic, message.payload);
    else if (message.k === "event") for (const l of this.eventListeners) l(message.m);
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    this.port();
    return this.topics.subscribe(topic, listener);
  }

  onExternalChange(listener: (change: ExternalChange) => void): () => void {
    this.port();
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
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

/** What tabs tell each other on the database's channel. */
type TabMessage =
  | { k: "change"; change: ExternalChange }
  | { k: "notify"; topic: string; payload?: string }
  | { k: "event"; m: EventMessage };

/** Freezes a JSON value and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A new revision, different from `prev` (random, so a deleted and recreated thread never repeats one). */
function nextRevision(prev: number | undefined): number {
  let rev = Math.floor(Math.random() * 2 ** 48) + 1;
  if (rev === prev) rev++;
  return rev;
}

/**
 * A store in the IndexedDB database `name` (created on first open). Several tabs on the same
 * database act as one store: commits are transactions with expectations checked inside them,
 * reads always see other tabs' commits, and notifications and run events reach every tab.
 */
export function indexedDbStore(name: string, options: IndexedDbStoreOptions = {}): Store {
  return new IndexedDbStore(name, options);
}

