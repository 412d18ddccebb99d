/**
 * The IndexedDB store's connection and what every part reads through: the open database
 * (reopened after another tab's upgrade), the caches of immutable data (list log prefixes,
 * checkpoint bases) and the reading of checkpoint rows (a row, its base, its parent id, the list
 * items it refers to). Core-safe: no Node built-ins.
 */
import { openDB, type IDBPDatabase, type IDBPTransaction } from "idb";
import { conflict } from "../../errors.js";
import { TopicListeners } from "../common.js";
import { decodeValues, listRefs, type EncodedValues, type ListLookup } from "../delta.js";
import type { Lease, PendingWrite, StoredCheckpoint } from "../types.js";
import { upgradeDatabase, type RunRow, type ThreadRow } from "./migrate.js";
import { homeOf, itemNeeds, located, resolveItems, rowRecord, type CpRecord, type CpRow } from "./rows.js";
import { ReadBatch } from "./read-batch.js";
import { decodeItem } from "./item-codec.js";
import {
  type GraphdockDB,
  DB_VERSION,
  INDEXEDDB_FORMAT,
  type Names,
  type Tx,
  type IndexedDbStoreOptions,
  under,
  listKey,
  rowKey,
  type TabMessage,
} from "./schema.js";

/** Freezes a JSON value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A transaction with the writes it issued (awaited together) and what it changed. */
export interface Ctx {
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
  /** Row lookups by id in flight (`rowKey`): one request for several callers. */
  lookups?: Map<string, Promise<CpRow | undefined>>;
}

/** The connection, caches and row reading of the IndexedDB store (./index.ts). */
export abstract class IdbBase {
  protected db: Promise<IDBPDatabase<GraphdockDB>> | undefined;
  protected closed = false;
  /** `listKey(thread, list id)` -> known prefix of its items (the objects a caller appended, or as read). */
  protected lists = new Map<string, unknown[]>();
  /** [thread, ns, base id] joined -> base record (immutable). */
  protected bases = new Map<string, CpRecord>();
  /** thread id -> a run base of the thread this instance made (checked before use). */
  protected runBases = new Map<string, number>();
  /** Thread record returned by this store -> the revision of the row it was read from. */
  protected revisions = new WeakMap<object, number>();
  // A listener's failure is its own (not reported: a page's console is the user's).
  protected topics = new TopicListeners(() => undefined);

  constructor(
    protected readonly name: string,
    protected readonly options: IndexedDbStoreOptions,
  ) {}

  /** Tells the other tabs on the database (./index.ts). */
  protected abstract post(message: TabMessage): void;

  /** The open connection; reopened after another tab's upgrade or a browser termination closed it. */
  protected database(): Promise<IDBPDatabase<GraphdockDB>> {
    if (this.closed) return Promise.reject(new Error(`graphdock indexeddb: store "${this.name}" is closed`));
    if (!this.db) {
      const opening = this.connect();
      this.db = opening;
      opening.catch(() => {
        if (this.db === opening) this.db = undefined;
      });
    }
    return this.db;
  }

  protected async connect(): Promise<IDBPDatabase<GraphdockDB>> {
    let db: IDBPDatabase<GraphdockDB>;
    let migration: Promise<void> | undefined;
    try {
      db = await openDB<GraphdockDB>(this.name, DB_VERSION, {
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

  protected dropConnection() {
    const db = this.db;
    this.db = undefined;
    void db?.then((d) => d.close(), () => undefined);
  }

  protected newerFormat(what: string) {
    return conflict(
      `graphdock indexeddb: database "${this.name}" has ${what} than this graphdock understands ` +
        `(storage format ${INDEXEDDB_FORMAT}); load a newer graphdock or use another database name`,
    );
  }

  // ---------------------------------------------------------------------------------------------
  // List logs and bases.

  protected remember(list: string, items: unknown[]) {
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
  protected async loadLists(tx: Tx, thread: string, needs: Map<string, number | undefined>, ctx?: Ctx): Promise<ListLookup> {
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
          for (let k = 0; k < rows.length; k++) if (from + k === items.length) items.push(deepFreeze(decodeItem(rows[k])));
          this.remember(listKey(thread, l), items);
        }
        loaded.set(l, n === undefined && items.length > want ? items.slice(0, want) : items);
      }),
    );
    return (list) => loaded.get(list);
  }

  /** How many items the list log holds in the database. */
  protected async listLength(tx: Tx, thread: string, list: string): Promise<number> {
    const lastKey = await tx.objectStore("items").openKeyCursor(under(thread, list), "prev");
    return lastKey ? lastKey.key[2] + 1 : 0;
  }

  protected base(tx: Tx, row: CpRow): Promise<CpRecord | undefined> {
    return row.b === undefined ? Promise.resolve(undefined) : this.baseById(tx, row.thread_id, row.checkpoint_ns, row.b);
  }

  /** A base record (immutable, with an id never used twice: cached). */
  protected async baseById(tx: Tx, thread: string, ns: string, b: number): Promise<CpRecord | undefined> {
    const key = `${thread}\u0000${ns}\u0000${b}`;
    let base = this.bases.get(key);
    if (!base) {
      base = await tx.objectStore("bases").get([thread, ns, b]);
      if (base) this.knownBase(thread, ns, b, base);
    }
    return base;
  }

  /**
   * Caches a base this instance wrote or read. A base never changes and its id is never used
   * twice, so the entry is right for any row that refers to it (a base dropped with its thread
   * by another tab is no longer referred to; a base of a commit that failed is referred to by no
   * row). Whether a base still exists is always read (the run base hint in ./writes.ts).
   */
  protected knownBase(thread: string, ns: string, b: number, base: CpRecord) {
    this.bases.set(`${thread}\u0000${ns}\u0000${b}`, base);
    for (const k of this.bases.keys()) {
      if (this.bases.size <= 256) break;
      this.bases.delete(k);
    }
  }

  /**
   * The records with the parent id in place where a row left it out (format 4: its parent is
   * the row before it in its namespace): taken from the next row of `rows` when they are
   * `consecutive` (newest first, no row between them), else read.
   */
  protected async withParents(tx: Tx, rows: CpRow[], records: CpRecord[], consecutive: boolean): Promise<CpRecord[]> {
    return Promise.all(
      records.map(async (rec, i) => {
        if (Object.hasOwn(rec, "parent_checkpoint_id")) return rec;
        const row = rows[i]!;
        const next = consecutive ? rows[i + 1] : undefined;
        const parent = next ?? (await this.previousRow(tx, row));
        if (!parent) throw new Error(`graphdock indexeddb: the parent of checkpoint ${row.id} is missing (corrupt store)`);
        return { ...rec, parent_checkpoint_id: parent.id };
      }),
    );
  }

  /** The row put just before `row` in its namespace. */
  protected async previousRow(tx: Tx, row: CpRow): Promise<CpRow | undefined> {
    const c = await tx.objectStore("cps").openCursor(IDBKeyRange.bound([row.thread_id, row.checkpoint_ns], [row.thread_id, row.checkpoint_ns, row.s], false, true), "prev");
    return c ? located(c.primaryKey, c.value) : undefined;
  }

  /** A row's record with item references still in place (lists refs are in its channel values). */
  protected async recordOf(tx: Tx, row: CpRow): Promise<CpRecord> {
    return rowRecord(row, await this.base(tx, row));
  }

  protected async decodeRows(tx: Tx, rows: CpRow[], consecutive = false): Promise<StoredCheckpoint[]> {
    const records = await this.withParents(tx, rows, await Promise.all(rows.map((row) => this.recordOf(tx, row))), consecutive);
    const byThread = new Map<string, Map<string, number>>();
    records.forEach((rec, i) => {
      const needs = byThread.get(rows[i]!.thread_id) ?? new Map<string, number>();
      byThread.set(rows[i]!.thread_id, needs);
      const home = homeOf(rec);
      itemNeeds(rec, needs, home);
      itemNeeds(rows[i]!.w, needs, home);
      const values = (rec.checkpoint as { channel_values: EncodedValues }).channel_values;
      for (const { l, n } of listRefs(values)) needs.set(l, Math.max(n, needs.get(l) ?? 0));
    });
    const lookups = new Map<string, ListLookup>();
    for (const [thread, needs] of byThread) lookups.set(thread, await this.loadLists(tx, thread, needs));
    return records.map((rec, i) => {
      const row = rows[i]!;
      const lookup = lookups.get(row.thread_id)!;
      const home = homeOf(rec);
      const plain = resolveItems(rec, lookup, home) as CpRecord & { checkpoint: StoredCheckpoint["checkpoint"] };
      const channel_values = decodeValues(plain.checkpoint.channel_values as EncodedValues, lookup);
      return {
        thread_id: row.thread_id,
        checkpoint_ns: row.checkpoint_ns,
        checkpoint: { ...plain.checkpoint, id: row.id, channel_values },
        metadata: plain.metadata as StoredCheckpoint["metadata"],
        parent_checkpoint_id: plain.parent_checkpoint_id as string | null,
        pending_writes: resolveItems(row.w, lookup, home) as PendingWrite[],
      };
    });
  }

  /** The latest row of a namespace (as this commit left it, with `ctx`). */
  protected async latestRow(tx: Tx, thread: string, ns: string, ctx?: Ctx): Promise<CpRow | undefined> {
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
  protected async rowById(tx: Tx, thread: string, ns: string, id: string, ctx?: Ctx): Promise<CpRow | undefined> {
    const k = rowKey(thread, ns, id);
    const known = ctx?.rows.get(k);
    if (known || ctx?.missing.has(k)) return known;
    // The latest row of the namespace, when this commit has read it, is the usual parent (no request).
    const latest = ctx?.latest.get(`${thread}\u0000${ns}`);
    if (latest && latest.id === id) {
      ctx!.rows.set(k, latest);
      return latest;
    }
    // Lookups of one row issued at once by one commit share one request.
    const inflight = ctx?.lookups?.get(k);
    if (inflight) return inflight;
    const lookup = this.findRow(tx, thread, ns, id).then((row) => {
      ctx?.lookups?.delete(k);
      // An op of the commit may have put or deleted the row meanwhile: what it left wins.
      if (ctx && (ctx.rows.has(k) || ctx.missing.has(k))) return ctx.rows.get(k);
      if (row) ctx?.rows.set(k, row);
      else ctx?.missing.add(k);
      return row;
    });
    (ctx ? (ctx.lookups ??= new Map()) : undefined)?.set(k, lookup);
    return lookup;
  }

  /**
   * A row by checkpoint id, read from the database: the primary keys of the id in the `by_id`
   * index (one request; ids are unique in practice, but a copied thread repeats them), then the
   * row under the key of this thread and namespace. A missing id (a new checkpoint) costs one
   * key-only request, no cursor.
   */
  private async findRow(tx: Tx, thread: string, ns: string, id: string): Promise<CpRow | undefined> {
    const keys = await tx.objectStore("cps").index("by_id").getAllKeys(IDBKeyRange.only(id));
    const key = keys.find((key) => key[0] === thread && key[1] === ns);
    if (!key) return undefined;
    const stored = await tx.objectStore("cps").get(key);
    return stored && located(key, stored);
  }

  /** Reads issued in one microtask turn share a readonly transaction (./read-batch.ts). */
  protected readonly reads = new ReadBatch<Tx, Names>(async (names) => (await this.database()).transaction(names, "readonly") as unknown as Tx);

  protected read<T>(names: Names[], fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.reads.submit(names, fn);
  }
}
