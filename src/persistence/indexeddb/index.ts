/**
 * `agentdock/indexeddb`: a durable store in an IndexedDB database, for browser apps and workers
 * (no Node built-ins; under Node it runs on `fake-indexeddb`).
 *
 * Typed `AgentdockDB` schema, one versioned upgrade ladder (schema 2; schema-1 databases are
 * migrated on open). Checkpoints and runs are kept in pages of `PAGE` records per thread, list
 * logs in chunks (./pages.ts): a checkpoint costs the keys that changed since the one before it,
 * and a message is stored once, in its list log. Every `commit` is one readwrite transaction and
 * resolves on `tx.done`, so a run step (checkpoint + writes + run + thread) is all or nothing; the
 * pages it changes are written back once, at its end. Reads go to IndexedDB every time, so a
 * runtime sees what another tab committed (a commit locks only the object stores its ops touch).
 * Two caches skip decoding, never reading: list-log items (append-only, keyed by random ids, so a
 * cached prefix is never stale) and decoded pages, used only while the page's stamp, read in the
 * same transaction, is the one they were decoded at (every write of a page draws a new stamp).
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
  type ListLookup,
} from "../delta.js";
import type {
  DocCollection,
  ExternalChange,
  ListCheckpointsOptions,
  Store,
  StoredCheckpoint,
  StoredDoc,
  WriteOp,
} from "../types.js";
import {
  CHUNK,
  decodeChunk,
  decodePage,
  encodeChunk,
  encodePage,
  indexItems,
  itemNeeds,
  PAGE,
  resolveItems,
  unchain,
  type Entry,
  type ItemIndex,
} from "./pages.js";

/** IndexedDB schema version; each step of `upgrade` brings the database one version further. */
const DB_VERSION = 2;
/**
 * Storage format of this store's data (`meta.format`): 1 = one record per checkpoint, list item
 * and run (schema 1); 2 = pages and chunks (./pages.ts, schema 2). Newer is refused.
 */
export const INDEXEDDB_FORMAT = 2;

/** Pages of checkpoints (`"c"`) or runs (`"r"`). */
type Kind = "c" | "r";

/** Schema-1 rows, read once by the migration to schema 2. */
interface V1CheckpointRow {
  thread_id: string;
  seq: number;
  cp: EncodedCheckpoint;
}
interface V1ItemRow {
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

/** The database schema (version 2). Pages, slots and chunks have out-of-line keys. */
export interface AgentdockDB extends DBSchema {
  meta: { key: string; value: { key: string; value: unknown } };
  assistants: { key: string; value: AssistantRecord };
  versions: { key: [string, number]; value: AssistantVersionRecord };
  threads: { key: string; value: EncodedThread };
  /** [kind, thread id, page number] -> up to `PAGE` records (./pages.ts). */
  pages: { key: [Kind, string, number]; value: unknown };
  /** Same keys as `pages` -> a random number that changes on every write of the page. */
  stamps: { key: [Kind, string, number]; value: number };
  /** [thread id, checkpoint id] -> the checkpoint's position in its thread (page * PAGE + slot). */
  cpslots: { key: [string, string]; value: number };
  /** run id -> [thread id, position]. */
  runslots: { key: string; value: [string, number] };
  /** [thread id, list id, chunk number] -> up to `CHUNK` list items (./pages.ts). */
  chunks: { key: [string, string, number]; value: unknown };
  docs: { key: [string, string]; value: DocRow; indexes: { by_seq: [string, number] } };
}

type Names = StoreNames<AgentdockDB>;
/** Helpers shared by commits and reads take the readwrite type; reads only call read methods. */
type Tx = IDBPTransaction<AgentdockDB, Names[], "readwrite">;
/** The object stores each op reads or writes: a commit locks only the union of its ops' stores. */
const CHECKPOINTS: Names[] = ["pages", "stamps", "cpslots", "chunks"];
const RUNS: Names[] = ["pages", "stamps", "runslots"];
const SCOPE: Record<WriteOp["op"], Names[]> = {
  "assistant.put": ["assistants"],
  "assistant.delete": ["assistants", "versions"],
  "assistant_version.put": ["versions"],
  "thread.put": ["threads", ...CHECKPOINTS],
  "thread.delete": ["threads", ...RUNS, ...CHECKPOINTS],
  "checkpoint.put": CHECKPOINTS,
  "checkpoint.delete": CHECKPOINTS,
  "writes.put": CHECKPOINTS,
  "run.put": RUNS,
  "run.delete": RUNS,
  "doc.put": ["docs"],
  "doc.delete": ["docs"],
};

/** A page as read (item references resolved) and changed within one transaction. */
interface Page {
  kind: Kind;
  thread: string;
  p: number;
  entries: Array<Entry | null>;
  dirty: boolean;
  /** The stamp read with the page; after `flush`, the one written. */
  stamp?: number;
}

/** One transaction and the pages it has read or changed (written back by `flush`). */
interface Ctx {
  tx: Tx;
  pages: Map<string, Page>;
  /** kind + thread -> number of the thread's last page (-1: none). */
  last: Map<string, number>;
}

const toEntry = ({ thread_id: _, ...rest }: { thread_id: string }): Entry => rest;
const checkpointOf = (thread_id: string, e: Entry) => ({ thread_id, ...e }) as unknown as EncodedCheckpoint;
const runOf = (thread_id: string, e: Entry) => ({ thread_id, ...e }) as unknown as RunRecord;

/**
 * Where the messages of a checkpoint page may be shared with list items: the items of every list
 * its checkpoints reference, from a little before the shortest reference to a little after the longest (a task's writes
 * become items of the next checkpoint's list).
 */
function pageIndex(entries: ReadonlyArray<Entry | null>, lists: ListLookup): ItemIndex {
  const span = new Map<string, [number, number]>();
  for (const e of entries) {
    if (!e) continue;
    for (const { l, n } of listRefs(encodedValuesOf(e as unknown as EncodedCheckpoint))) {
      const [lo, hi] = span.get(l) ?? [n, n];
      span.set(l, [Math.min(lo, n), Math.max(hi, n)]);
    }
  }
  const index: ItemIndex = new Map();
  for (const [l, [lo, hi]] of span) {
    const items = lists(l) ?? [];
    indexItems(index, l, items, lo - 2 * PAGE, Math.min(items.length, hi + 2 * PAGE));
  }
  return index;
}

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
/** Most decoded pages kept in memory per store. */
const PAGE_CACHE = 128;

class IndexedDbStore implements Store {
  readonly kind = "indexeddb";
  readonly capabilities = { persistent: true, shared: true };
  private db: Promise<IDBPDatabase<AgentdockDB>> | undefined;
  private closed = false;
  /** list id -> known prefix of its items. */
  private cache = new Map<string, unknown[]>();
  /** page key -> the page's records as of `stamp` (see `page`). */
  private pageCache = new Map<string, { stamp: number; entries: Array<Entry | null> }>();
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
    let migration: Promise<void> | undefined;
    try {
      db = await openDB<AgentdockDB>(this.name, DB_VERSION, {
        upgrade(db, oldVersion, _newVersion, tx) {
          // Schema 1 as it was released; step 2 moves its records into pages.
          const v1 = db as unknown as IDBPDatabase;
          if (oldVersion < 1) {
            v1.createObjectStore("meta", { keyPath: "key" });
            v1.createObjectStore("assistants", { keyPath: "assistant_id" });
            v1.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
            v1.createObjectStore("threads", { keyPath: "thread_id" });
            v1.createObjectStore("checkpoints", { keyPath: ["thread_id", "seq"] })
              .createIndex("by_id", ["thread_id", "id"], { unique: true });
            v1.createObjectStore("items", { keyPath: ["t", "l", "i"] });
            v1.createObjectStore("runs", { keyPath: "run_id" }).createIndex("by_thread", "thread_id");
            v1.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
          }
          if (oldVersion < 2) {
            db.createObjectStore("pages");
            db.createObjectStore("stamps");
            db.createObjectStore("cpslots");
            db.createObjectStore("runslots");
            db.createObjectStore("chunks");
            migration = migrateToPages(db, tx);
            // A failed migration aborts the upgrade: the database stays at schema 1, unchanged.
            migration.catch(() => {
              try {
                tx.abort();
              } catch {
                // already finished
              }
            });
          }
          // Later versions add `if (oldVersion < 3) { ... }` here, migrating data in `tx`.
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

  /**
   * Loads the first `n` items of each list (all of it when `n` is undefined) and returns a lookup
   * over them. The cache only speeds this up: a list evicted meanwhile (more lists than
   * `cacheLists`) is still in the returned lookup.
   */
  private async loadLists(tx: Tx, thread: string, refs: Array<{ l: string; n?: number }>): Promise<ListLookup> {
    const loaded = new Map<string, unknown[]>();
    await Promise.all(
      refs.map(async ({ l, n }) => {
        const known = this.cache.get(l) ?? [];
        if (n !== undefined && known.length >= n) {
          loaded.set(l, known);
          return;
        }
        const from = Math.floor(known.length / CHUNK);
        const upper = n === undefined ? [thread, l, []] : [thread, l, Math.floor((n - 1) / CHUNK)];
        const rows = await tx.objectStore("chunks").getAll(IDBKeyRange.bound([thread, l, from], upper));
        const items = this.cache.get(l) ?? [];
        // Chunks are written in order and never change but for the last: take what extends the prefix.
        rows.forEach((row, k) => {
          const chunk = decodeChunk(row);
          const at = (from + k) * CHUNK;
          if (at <= items.length) items.push(...chunk.slice(items.length - at));
        });
        this.remember(l, items);
        loaded.set(l, items);
      }),
    );
    return (list) => loaded.get(list) ?? this.cache.get(list);
  }

  private async decodeThread(tx: Tx, t: EncodedThread) {
    return decodeThread(t, await this.loadLists(tx, t.thread_id, listRefs(t.values as EncodedValues)));
  }

  private async decodeCheckpoints(tx: Tx, thread: string, cps: EncodedCheckpoint[]): Promise<StoredCheckpoint[]> {
    const need = new Map<string, number>();
    for (const cp of cps) for (const { l, n } of listRefs(encodedValuesOf(cp))) need.set(l, Math.max(n, need.get(l) ?? 0));
    const lookup = await this.loadLists(tx, thread, [...need].map(([l, n]) => ({ l, n })));
    return cps.map((cp) => decodeCheckpoint(cp, lookup));
  }

  // ---------------------------------------------------------------------------------------------
  // Pages.

  /** A page's records as stored, item references resolved (loading the items they need). */
  private async unpack(tx: Tx, thread: string, stored: unknown): Promise<Array<Entry | null>> {
    const entries = decodePage(stored);
    const needs = itemNeeds(entries);
    const lookup = await this.loadLists(tx, thread, [...needs].map(([l, n]) => ({ l, n })));
    return unchain(resolveItems(entries, lookup) as unknown[]);
  }

  /**
   * A page, from this transaction's pages, else from the page cache when its stamp is unchanged
   * (no tab wrote it since), else read and decoded.
   */
  private async page(ctx: Ctx, kind: Kind, thread: string, p: number): Promise<Page> {
    const key = `${kind}\u0000${thread}\u0000${p}`;
    let page = ctx.pages.get(key);
    if (!page) {
      const stamp = await ctx.tx.objectStore("stamps").get([kind, thread, p]);
      const cached = this.pageCache.get(key);
      let entries: Array<Entry | null>;
      if (cached && stamp !== undefined && cached.stamp === stamp) {
        entries = [...cached.entries];
      } else {
        const stored = await ctx.tx.objectStore("pages").get([kind, thread, p]);
        entries = stored === undefined ? [] : await this.unpack(ctx.tx, thread, stored);
        if (stamp !== undefined) this.cachePage(key, stamp, entries);
      }
      page = ctx.pages.get(key) ?? { kind, thread, p, entries, dirty: false, stamp };
      ctx.pages.set(key, page);
    }
    return page;
  }

  private cachePage(key: string, stamp: number, entries: Array<Entry | null>) {
    this.pageCache.delete(key);
    this.pageCache.set(key, { stamp, entries: [...entries] });
    for (const k of this.pageCache.keys()) {
      if (this.pageCache.size <= PAGE_CACHE) break;
      this.pageCache.delete(k);
    }
  }

  private async lastPage(ctx: Ctx, kind: Kind, thread: string): Promise<number> {
    const key = `${kind}\u0000${thread}`;
    let p = ctx.last.get(key);
    if (p === undefined) {
      const cursor = await ctx.tx.objectStore("pages").openKeyCursor(under(kind, thread), "prev");
      p = cursor ? cursor.key[2] : -1;
      ctx.last.set(key, p);
    }
    return p;
  }

  /** The record at `seq` of a thread, or undefined. */
  private async entry(ctx: Ctx, kind: Kind, thread: string, seq: number): Promise<Entry | undefined> {
    return (await this.page(ctx, kind, thread, Math.floor(seq / PAGE))).entries[seq % PAGE] ?? undefined;
  }

  private async setEntry(ctx: Ctx, kind: Kind, thread: string, seq: number, e: Entry | null): Promise<void> {
    const page = await this.page(ctx, kind, thread, Math.floor(seq / PAGE));
    page.entries[seq % PAGE] = e;
    page.dirty = true;
  }

  /** Adds a record after the thread's last one; returns its position. */
  private async append(ctx: Ctx, kind: Kind, thread: string, e: Entry): Promise<number> {
    let p = await this.lastPage(ctx, kind, thread);
    let page = p < 0 ? undefined : await this.page(ctx, kind, thread, p);
    if (!page || page.entries.length >= PAGE) {
      page = await this.page(ctx, kind, thread, ++p);
      ctx.last.set(`${kind}\u0000${thread}`, p);
    }
    page.entries.push(e);
    page.dirty = true;
    return p * PAGE + page.entries.length - 1;
  }

  /** The thread's latest checkpoint (the last put) with its position. */
  private async latest(ctx: Ctx, thread: string): Promise<{ seq: number; cp: EncodedCheckpoint } | undefined> {
    for (let p = await this.lastPage(ctx, "c", thread); p >= 0; p--) {
      const { entries } = await this.page(ctx, "c", thread, p);
      for (let i = entries.length - 1; i >= 0; i--) {
        const e = entries[i];
        if (e) return { seq: p * PAGE + i, cp: checkpointOf(thread, e) };
      }
    }
    return undefined;
  }

  private async checkpointById(ctx: Ctx, thread: string, id: string): Promise<{ seq: number; cp: EncodedCheckpoint } | undefined> {
    const seq = await ctx.tx.objectStore("cpslots").get([thread, id]);
    const e = seq === undefined ? undefined : await this.entry(ctx, "c", thread, seq);
    return e && { seq: seq!, cp: checkpointOf(thread, e) };
  }

  /** Writes back the pages changed in this transaction (a page left empty is removed). */
  private async flush(ctx: Ctx): Promise<void> {
    for (const page of ctx.pages.values()) {
      if (!page.dirty) continue;
      const pages = ctx.tx.objectStore("pages");
      const key: [Kind, string, number] = [page.kind, page.thread, page.p];
      if (page.entries.every((e) => !e)) {
        await pages.delete(key);
        await ctx.tx.objectStore("stamps").delete(key);
        page.stamp = undefined;
        continue;
      }
      page.stamp = Math.floor(Math.random() * 2 ** 52);
      await ctx.tx.objectStore("stamps").put(page.stamp, key);
      let index: ItemIndex = new Map();
      if (page.kind === "c") {
        const refs = page.entries.flatMap((e) => (e ? listRefs(encodedValuesOf(checkpointOf(page.thread, e))) : []));
        index = pageIndex(page.entries, await this.loadLists(ctx.tx, page.thread, refs));
      }
      await pages.put(encodePage(page.entries, index), key);
    }
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
    const ctx: Ctx = { tx: db.transaction([...scope], "readwrite") as unknown as Tx, pages: new Map(), last: new Map() };
    const touched = new Set<string>();
    const threads = new Set<string>();
    try {
      for (const op of ops) await this.applyOne(ctx, op, touched, threads);
      await this.flush(ctx);
      await ctx.tx.done;
      for (const [key, page] of ctx.pages) if (page.dirty && page.stamp !== undefined) this.cachePage(key, page.stamp, page.entries);
    } catch (err) {
      // Aborting undoes every op of the commit; items it added to the cache go too.
      try {
        ctx.tx.abort();
      } catch {
        // already finished or aborted
      }
      await ctx.tx.done.catch(() => undefined);
      for (const list of touched) this.cache.delete(list);
      throw err;
    }
    this.port()?.postMessage({ threadIds: [...threads] } satisfies ExternalChange);
  }

  private async applyOne(ctx: Ctx, op: WriteOp, touched: Set<string>, threads: Set<string>): Promise<void> {
    const { tx } = ctx;
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
        const latest = (await this.latest(ctx, id))?.cp;
        const lookup = await this.loadLists(tx, id, latest ? listRefs(encodedValuesOf(latest)) : []);
        await tx.objectStore("threads").put(encodeThread(op.thread, latest, lookup));
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        threads.add(id);
        const runslots = tx.objectStore("runslots");
        for (const stored of await tx.objectStore("pages").getAll(under("r", id))) {
          for (const e of await this.unpack(tx, id, stored)) if (e) await runslots.delete(e.run_id as string);
        }
        await tx.objectStore("threads").delete(id);
        for (const kind of ["c", "r"] as const) {
          await tx.objectStore("pages").delete(under(kind, id));
          await tx.objectStore("stamps").delete(under(kind, id));
        }
        await tx.objectStore("cpslots").delete(under(id));
        await tx.objectStore("chunks").delete(under(id));
        for (const [key, page] of ctx.pages) if (page.thread === id) ctx.pages.delete(key);
        ctx.last.delete(`c\u0000${id}`);
        ctx.last.delete(`r\u0000${id}`);
        return;
      }
      case "checkpoint.put": {
        const { thread_id, parent_checkpoint_id } = op.checkpoint;
        threads.add(thread_id);
        const id = op.checkpoint.checkpoint.id;
        const existing = await tx.objectStore("cpslots").get([thread_id, id]);
        const parent =
          parent_checkpoint_id === null ? undefined : (await this.checkpointById(ctx, thread_id, parent_checkpoint_id))?.cp;
        const lookup = await this.loadLists(tx, thread_id, parent ? listRefs(encodedValuesOf(parent)).map(({ l }) => ({ l })) : []);
        const { checkpoint, appends } = encodeCheckpoint(op.checkpoint, parent, lookup, uuid4);
        const chunks = tx.objectStore("chunks");
        for (const { list, at, items: added } of appends) {
          touched.add(list);
          // The store's own array (loaded above or new): appended in place, as lists only grow.
          const cached = (lookup(list) ?? []) as unknown[];
          if (cached.length !== at) throw new Error(`agentdock indexeddb: list ${list} is not loaded before an append (bug)`);
          cached.push(...added);
          this.remember(list, cached);
          for (let c = Math.floor(at / CHUNK); c * CHUNK < cached.length; c++) {
            await chunks.put(encodeChunk(cached.slice(c * CHUNK, (c + 1) * CHUNK)), [thread_id, list, c]);
          }
        }
        if (existing !== undefined) await this.setEntry(ctx, "c", thread_id, existing, toEntry(checkpoint));
        else await tx.objectStore("cpslots").put(await this.append(ctx, "c", thread_id, toEntry(checkpoint)), [thread_id, id]);
        return;
      }
      case "checkpoint.delete": {
        threads.add(op.thread_id);
        const slots = tx.objectStore("cpslots");
        for (const id of op.checkpoint_ids) {
          const seq = await slots.get([op.thread_id, id]);
          if (seq === undefined) continue;
          await this.setEntry(ctx, "c", op.thread_id, seq, null);
          await slots.delete([op.thread_id, id]);
        }
        return;
      }
      case "writes.put": {
        threads.add(op.thread_id);
        const found = await this.checkpointById(ctx, op.thread_id, op.checkpoint_id);
        if (!found) {
          throw new Error(`agentdock store: writes for unknown checkpoint ${op.checkpoint_id} of thread ${op.thread_id}`);
        }
        const kept = found.cp.pending_writes.filter((w) => w[0] !== op.task_id);
        const cp = { ...found.cp, pending_writes: [...kept, ...op.writes] };
        await this.setEntry(ctx, "c", op.thread_id, found.seq, toEntry(cp));
        return;
      }
      case "run.put": {
        const { run_id, thread_id } = op.run;
        threads.add(thread_id);
        const slot = await tx.objectStore("runslots").get(run_id);
        if (slot && slot[0] === thread_id) {
          await this.setEntry(ctx, "r", thread_id, slot[1], toEntry(op.run));
          return;
        }
        if (slot) await this.setEntry(ctx, "r", slot[0], slot[1], null);
        await tx.objectStore("runslots").put([thread_id, await this.append(ctx, "r", thread_id, toEntry(op.run))], run_id);
        return;
      }
      case "run.delete": {
        const slot = await tx.objectStore("runslots").get(op.run_id);
        if (!slot) return;
        threads.add(slot[0]);
        await this.setEntry(ctx, "r", slot[0], slot[1], null);
        await tx.objectStore("runslots").delete(op.run_id);
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

  private async read<T>(names: Names[], fn: (ctx: Ctx) => Promise<T>): Promise<T> {
    const db = await this.database();
    return fn({ tx: db.transaction(names, "readonly") as unknown as Tx, pages: new Map(), last: new Map() });
  }

  getAssistant(id: string) {
    return this.read(["assistants"], ({ tx }) => tx.objectStore("assistants").get(id));
  }
  listAssistants() {
    return this.read(["assistants"], ({ tx }) => tx.objectStore("assistants").getAll());
  }
  listAssistantVersions(id: string) {
    return this.read(["versions"], ({ tx }) => tx.objectStore("versions").getAll(under(id)));
  }

  getThread(id: string) {
    return this.read(["threads", "chunks"], async ({ tx }) => {
      const t = await tx.objectStore("threads").get(id);
      return t && this.decodeThread(tx, t);
    });
  }
  listThreads() {
    return this.read(["threads", "chunks"], async ({ tx }) => {
      const all = await tx.objectStore("threads").getAll();
      return Promise.all(all.map((t) => this.decodeThread(tx, t)));
    });
  }

  getCheckpoint(threadId: string, checkpointId?: string) {
    return this.read(CHECKPOINTS, async (ctx) => {
      const found = checkpointId === undefined ? await this.latest(ctx, threadId) : await this.checkpointById(ctx, threadId, checkpointId);
      return found && (await this.decodeCheckpoints(ctx.tx, threadId, [found.cp]))[0];
    });
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}) {
    return this.read(CHECKPOINTS, async (ctx) => {
      let start = (await this.lastPage(ctx, "c", threadId)) * PAGE + PAGE - 1;
      if (options.before !== undefined) {
        const before = await ctx.tx.objectStore("cpslots").get([threadId, options.before]);
        if (before === undefined) return [];
        start = before - 1;
      }
      const limit = options.limit ?? Infinity;
      const found: EncodedCheckpoint[] = [];
      for (let seq = start; seq >= 0 && found.length < limit; seq--) {
        const e = await this.entry(ctx, "c", threadId, seq);
        if (!e) continue;
        const cp = checkpointOf(threadId, e);
        if (!options.filter || contains(cp.metadata, options.filter)) found.push(cp);
      }
      return this.decodeCheckpoints(ctx.tx, threadId, found);
    });
  }

  getRun(id: string) {
    return this.read(RUNS, async (ctx) => {
      const slot = await ctx.tx.objectStore("runslots").get(id);
      const e = slot && (await this.entry(ctx, "r", slot[0], slot[1]));
      return e ? runOf(slot![0], e) : undefined;
    });
  }
  listRuns(threadId?: string) {
    return this.read(["pages"], async ({ tx }) => {
      const range = threadId === undefined ? under("r") : under("r", threadId);
      const pages = tx.objectStore("pages");
      const [keys, values] = await Promise.all([pages.getAllKeys(range), pages.getAll(range)]);
      const pagesOfRuns = await Promise.all(keys.map((key, k) => this.unpack(tx, key[1], values[k])));
      return pagesOfRuns.flatMap((entries, k) => entries.flatMap((e) => (e ? [runOf(keys[k]![1], e)] : [])));
    });
  }

  getDoc<T>(collection: DocCollection, id: string) {
    return this.read(["docs"], async ({ tx }) => {
      const row = await tx.objectStore("docs").get([collection, id]);
      return row && ({ id: row.id, parent: row.parent, doc: row.doc } as StoredDoc<T>);
    });
  }
  listDocs<T>(collection: DocCollection, parent?: string) {
    return this.read(["docs"], async ({ tx }) => {
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

/**
 * Schema 1 -> 2, inside the upgrade transaction: list items move into chunks, checkpoints and runs
 * into pages (positions keep each thread's order), then the schema-1 stores are dropped. Reads the
 * old records whole, once.
 */
async function migrateToPages(
  db: IDBPDatabase<AgentdockDB>,
  tx: IDBPTransaction<AgentdockDB, Names[], "versionchange">,
): Promise<void> {
  const old = tx as unknown as IDBPTransaction<unknown, string[], "versionchange">;
  const [items, cps, runs] = await Promise.all([
    old.objectStore("items").getAll() as Promise<V1ItemRow[]>,
    old.objectStore("checkpoints").getAll() as Promise<V1CheckpointRow[]>,
    old.objectStore("runs").getAll() as Promise<RunRecord[]>,
  ]);
  const puts: Array<Promise<unknown>> = [];
  const lists = new Map<string, { t: string; items: unknown[] }>();
  for (const { t, l, i, v } of items) {
    const list = lists.get(l) ?? { t, items: [] };
    if (i !== list.items.length) throw new Error(`agentdock indexeddb: list ${l} of thread ${t} has a gap at ${i} (corrupt store)`);
    list.items.push(v);
    lists.set(l, list);
  }
  for (const [l, { t, items: all }] of lists) {
    for (let c = 0; c * CHUNK < all.length; c++) puts.push(tx.objectStore("chunks").put(encodeChunk(all.slice(c * CHUNK, (c + 1) * CHUNK)), [t, l, c]));
  }
  const lookup: ListLookup = (l) => lists.get(l)?.items;
  const paginate = (kind: Kind, byThread: Map<string, Entry[]>) => {
    for (const [thread, entries] of byThread) {
      for (let p = 0; p * PAGE < entries.length; p++) {
        const page = entries.slice(p * PAGE, (p + 1) * PAGE);
        puts.push(tx.objectStore("pages").put(encodePage(page, kind === "c" ? pageIndex(page, lookup) : new Map()), [kind, thread, p]));
      }
    }
  };
  const group = <T extends { thread_id: string }>(records: T[]) => {
    const out = new Map<string, Entry[]>();
    for (const r of records) out.set(r.thread_id, [...(out.get(r.thread_id) ?? []), toEntry(r)]);
    return out;
  };
  // Rows come in key order: by thread, then put order.
  const checkpoints = cps.map((row) => row.cp);
  paginate("c", group(checkpoints));
  const seen = new Map<string, number>();
  for (const cp of checkpoints) {
    const seq = seen.get(cp.thread_id) ?? 0;
    seen.set(cp.thread_id, seq + 1);
    puts.push(tx.objectStore("cpslots").put(seq, [cp.thread_id, cp.checkpoint.id]));
  }
  paginate("r", group(runs));
  seen.clear();
  for (const run of runs) {
    const seq = seen.get(run.thread_id) ?? 0;
    seen.set(run.thread_id, seq + 1);
    puts.push(tx.objectStore("runslots").put([run.thread_id, seq], run.run_id));
  }
  puts.push(tx.objectStore("meta").put({ key: "format", value: INDEXEDDB_FORMAT }));
  await Promise.all(puts);
  const v1 = db as unknown as IDBPDatabase;
  for (const name of ["checkpoints", "items", "runs"]) v1.deleteObjectStore(name);
}
