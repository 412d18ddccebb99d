/**
 * The IndexedDB schema ladder, run inside the upgrade transaction (so a failure leaves the
 * database as it was). Schema 1 (one record per checkpoint, list item and run) -> 2 (pages and
 * chunks, ./pages.ts) -> 3 (one record per checkpoint, run, list item; ./rows.ts). A new
 * database is created at the newest schema directly. Each migration reads the older records once.
 * Schema 4 adds two empty object stores, `store_items` and `crons`, to any of them. Schema 5 marks
 * storage format 4 (./rows.ts: a checkpoint row may leave out a parent id that its key implies;
 * list ids of 8 characters), which reads every format-3 row as it is: no record is rewritten.
 * Schema 6 is storage format 5 (./rows.ts: leaf diffs with shifts): every checkpoint and run row
 * stored against a base is diffed again against the same base (`rediffRows`), so an older
 * database gets smaller too; list items are stored without their empty message fields
 * (./item-codec.ts); bases and everything else stay as they are.
 */
import type { IDBPDatabase, IDBPTransaction } from "idb";
import type { EncodedCheckpoint, ListLookup } from "../delta.js";
import { encodedValuesOf, listRefs } from "../delta.js";
import type { CronRecord } from "../crons.js";
import type { DocCollection, StoredItem } from "../types.js";
import type { RunRecord, ThreadRecord } from "../../types.js";
import { CHUNK, decodeChunk, decodePage, encodeChunk, encodePage, indexItems as pageIndexItems, PAGE, resolveItems as pageResolve, unchain, type Entry, type ItemIndex as PageItemIndex } from "./pages.js";
import { RUNS } from "./schema.js";
import { encodeItem } from "./item-codec.js";
import { packRun, RUN_INDEXES, RUN_KEY } from "./run-row.js";
import { diffLeaves, patchLeaves, shareItems, type CpRecord, type LeafDiff, type StoredCpRow } from "./rows.js";

/** A thread as stored: values encoded (../delta.ts), and the revision `sameAs` compares. */
export type ThreadRow = ThreadRecord & { $rev?: number };
/**
 * A run as stored: the fields queries use, its place in the queue (`q`: commit order of its
 * first put) and the rest (`r`), as a diff against the base `b` (a run of the same thread, in
 * `bases` under `[thread_id, RUNS, b]`) when there is one. Format 5 keeps `assistant_id` in the
 * rest (the runs of a thread mostly repeat their base's, so a diff leaves it out); rows written
 * before keep it here, and a reader takes it from where it is.
 */
export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id?: string;
  status: RunRecord["status"];
  created_at: string;
  q: number;
  b?: number;
  r: Record<string, unknown>;
}
export interface LogRow {
  run_id: string;
  resumable: boolean;
  ended: boolean;
  /** Seq of the last event, once ended. */
  last: number;
}
export interface DocRow {
  collection: DocCollection;
  id: string;
  parent: string | null;
  doc: unknown;
  /** Insertion order within the collection. */
  seq: number;
}

/** A cron as stored: `$due` = [next_run_date, cron_id] while it is scheduled (the `by_due` index). */
export type CronRow = CronRecord & { $due?: [string, string] };

type Db = IDBPDatabase;
type Tx = IDBPTransaction<unknown, string[], "versionchange">;

/**
 * An item of long-term memory as stored (schema 4): the item with `ns`, its namespace key
 * (labels joined with `.`), so that `[ns, key]` is its key and a namespace prefix is a key range.
 */
export type ItemRow = StoredItem & { ns: string };

/** Brings a database at `oldVersion` to the current schema. */
export async function upgradeDatabase(db: Db, oldVersion: number, tx: Tx): Promise<void> {
  if (oldVersion < 1) {
    createShared(db);
    createV3(db, tx);
    createV4(db);
    await runsV6(db, tx, []);
    await tx.objectStore("meta").put({ key: "format", value: 5 });
    return;
  }
  if (oldVersion < 2) {
    for (const name of ["pages", "stamps", "cpslots", "runslots", "chunks"]) db.createObjectStore(name);
    await migrateToPages(db, tx);
  }
  if (oldVersion < 3) {
    createV3(db, tx);
    await migrateToRows(db, tx);
  }
  if (oldVersion < 4) createV4(db);
  // Schema 5 is storage format 4: format-3 rows are format-4 rows (a row with its parent id in
  // place reads the same); only newer rows may leave it out, which format 3 cannot read.
  if (oldVersion < 5) await tx.objectStore("meta").put({ key: "format", value: 4 });
  // Schema 6 is storage format 5: rows diffed against a base are diffed again, with shifts.
  if (oldVersion < 6) {
    const runs = await rediffRows(tx);
    await runsV6(db, tx, runs);
    for (let c = await tx.objectStore("items").openCursor(); c; c = await c.continue()) {
      const stored = encodeItem(c.value);
      if (stored !== c.value) await c.update(stored);
    }
    await tx.objectStore("meta").put({ key: "format", value: 5 });
  }
}

/**
 * Format 4 -> 5: each checkpoint and run row that has a base is rebuilt against it and diffed
 * again (`diffLeaves` of format 5: integer and time leaves as shifts), in place; the bases are
 * kept, so a row reads the same record as before. One cursor over the checkpoint rows (memory
 * stays bounded by the bases, about one in 16 checkpoints); the runs are returned, diffed again,
 * for `runsV6`.
 */
async function rediffRows(tx: Tx): Promise<RunRow[]> {
  const bases = tx.objectStore("bases");
  const [baseKeys, baseRecords] = await Promise.all([
    bases.getAllKeys() as Promise<Array<[string, string, number]>>,
    bases.getAll() as Promise<CpRecord[]>,
  ]);
  const byKey = new Map<string, CpRecord>();
  const keyOf = (thread: string, ns: string, b: number) => JSON.stringify([thread, ns, b]);
  baseKeys.forEach((key, i) => byKey.set(keyOf(...key), baseRecords[i]!));
  // Format-4 checkpoint bases hold no absent leaves: read with or without them, the same.
  const again = (thread: string, ns: string, b: number, diff: unknown, what: string): LeafDiff => {
    const base = byKey.get(keyOf(thread, ns, b));
    if (!base) throw new Error(`graphdock indexeddb: base ${b} of ${what} is missing (corrupt store)`);
    const absent = ns !== RUNS;
    return diffLeaves(patchLeaves(base, diff as LeafDiff, absent), base, absent);
  };
  for (let c = await tx.objectStore("cps").openCursor(); c; c = await c.continue()) {
    const row = c.value as StoredCpRow;
    if (row.b === undefined) continue;
    const [thread, ns] = c.primaryKey as [string, string, number];
    await c.update({ ...row, r: again(thread, ns, row.b, row.r, `checkpoint ${row.id}`) });
  }
  const runs = (await tx.objectStore("runs").getAll()) as RunRow[];
  return runs.map((row) => (row.b === undefined ? row : { ...row, r: again(row.thread_id, RUNS, row.b, row.r, `run ${row.run_id}`) as unknown as RunRow["r"] }));
}

/**
 * Schema 6: the `runs` object store made again under the field names of format 5 (./run-row.ts:
 * its key path and indexes name them), holding `rows`.
 */
async function runsV6(db: Db, tx: Tx, rows: RunRow[]): Promise<void> {
  db.deleteObjectStore("runs");
  const runs = db.createObjectStore("runs", { keyPath: RUN_KEY });
  for (const [name, keyPath] of Object.entries(RUN_INDEXES)) runs.createIndex(name, keyPath as string | string[]);
  await Promise.all(rows.map((row) => tx.objectStore("runs").put(packRun(row))));
}

/**
 * What schema 4 adds: long-term memory items, keyed `[ns, key]`, with an index on expiry (items
 * without one are not in it: null is no key); crons, with an index on the due key that only
 * scheduled crons carry (`$due`).
 */
function createV4(db: Db) {
  db.createObjectStore("store_items", { keyPath: ["ns", "key"] }).createIndex("by_expiry", "expires_at");
  db.createObjectStore("crons", { keyPath: "cron_id" }).createIndex("by_due", "$due");
}

/** Object stores every schema has (as schema 1 created them). */
function createShared(db: Db) {
  db.createObjectStore("meta", { keyPath: "key" });
  db.createObjectStore("assistants", { keyPath: "assistant_id" });
  db.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
  db.createObjectStore("threads", { keyPath: "thread_id" });
  db.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
}

/** What schema 3 adds. */
function createV3(db: Db, tx: Tx) {
  tx.objectStore("assistants").createIndex("by_graph", "graph_id");
  tx.objectStore("threads").createIndex("by_status", "status");
  // [thread, namespace, put order] -> row; the index holds the checkpoint id alone.
  db.createObjectStore("cps").createIndex("by_id", "id");
  db.createObjectStore("bases");
  db.createObjectStore("items");
  const runs = db.createObjectStore("runs", { keyPath: "run_id" });
  runs.createIndex("by_thread", ["thread_id", "q"]);
  runs.createIndex("by_q", "q");
  runs.createIndex("by_status", ["status", "q"]);
  runs.createIndex("by_thread_status", ["thread_id", "status", "q"]);
  db.createObjectStore("cancels", { keyPath: "run_id" }).createIndex("by_thread", "thread_id");
  db.createObjectStore("leases", { keyPath: "key" });
  db.createObjectStore("logs", { keyPath: "run_id" });
  db.createObjectStore("events");
}

/**
 * Schema 2 -> 3: list chunks become one record per item, pages one record per checkpoint (in
 * put order, namespace kept) and run (queue order: thread by thread, in each thread's order),
 * then the schema-2 stores are dropped. Checkpoint records are stored whole (no base).
 */
async function migrateToRows(db: Db, tx: Tx): Promise<void> {
  const [chunkKeys, chunkRows, pageKeys, pageRows] = await Promise.all([
    tx.objectStore("chunks").getAllKeys() as Promise<Array<[string, string, number]>>,
    tx.objectStore("chunks").getAll(),
    tx.objectStore("pages").getAllKeys() as Promise<Array<["c" | "r", string, number]>>,
    tx.objectStore("pages").getAll(),
  ]);
  const puts: Array<Promise<unknown>> = [];
  const lists = new Map<string, unknown[]>();
  chunkKeys.forEach(([t, l, c], k) => {
    const items = lists.get(l) ?? [];
    lists.set(l, items);
    decodeChunk(chunkRows[k]).forEach((item, i) => {
      items[c * CHUNK + i] = item;
      puts.push(tx.objectStore("items").put(item, [t, l, c * CHUNK + i]));
    });
  });
  const lookup: ListLookup = (l) => lists.get(l);
  let q = 0;
  pageKeys.forEach(([kind, thread, p], k) => {
    const entries = unchain(pageResolve(decodePage(pageRows[k]), lookup) as unknown[]);
    entries.forEach((e, i) => {
      if (!e) return;
      if (kind === "r") {
        const { run_id, assistant_id, status, created_at, thread_id: _t, ...r } = e as unknown as RunRecord;
        puts.push(tx.objectStore("runs").put({ run_id, thread_id: thread, assistant_id, status, created_at, q: q++, r } satisfies RunRow));
        return;
      }
      const cp = e as unknown as Omit<EncodedCheckpoint, "thread_id">;
      const { id, ...checkpoint } = cp.checkpoint;
      const row: StoredCpRow = {
        id,
        r: shareItems({ checkpoint, metadata: cp.metadata, parent_checkpoint_id: cp.parent_checkpoint_id }, new Map()),
        w: shareItems(cp.pending_writes ?? [], new Map()),
      };
      puts.push(tx.objectStore("cps").put(row, [thread, cp.checkpoint_ns ?? "", p * PAGE + i]));
    });
  });
  puts.push(tx.objectStore("meta").put({ key: "format", value: 3 }));
  await Promise.all(puts);
  for (const name of ["pages", "stamps", "cpslots", "runslots", "chunks"]) db.deleteObjectStore(name);
}

// ---------------------------------------------------------------------------------------------
// Schema 1 -> 2 (as released with schema 2).

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

const toEntry = ({ thread_id: _, ...rest }: { thread_id: string }): Entry => rest;

/** Where the messages of a checkpoint page may be shared with list items (schema 2). */
function pageIndex(entries: ReadonlyArray<Entry | null>, lists: ListLookup): PageItemIndex {
  const span = new Map<string, [number, number]>();
  for (const e of entries) {
    if (!e) continue;
    for (const { l, n } of listRefs(encodedValuesOf(e as unknown as EncodedCheckpoint))) {
      const [lo, hi] = span.get(l) ?? [n, n];
      span.set(l, [Math.min(lo, n), Math.max(hi, n)]);
    }
  }
  const index: PageItemIndex = new Map();
  for (const [l, [lo, hi]] of span) {
    const items = lists(l) ?? [];
    pageIndexItems(index, l, items, lo - 2 * PAGE, Math.min(items.length, hi + 2 * PAGE));
  }
  return index;
}

/**
 * Schema 1 -> 2: list items move into chunks, checkpoints and runs into pages (positions keep
 * each thread's order), then the schema-1 stores are dropped.
 */
async function migrateToPages(db: Db, tx: Tx): Promise<void> {
  const [items, cps, runs] = await Promise.all([
    tx.objectStore("items").getAll() as Promise<V1ItemRow[]>,
    tx.objectStore("checkpoints").getAll() as Promise<V1CheckpointRow[]>,
    tx.objectStore("runs").getAll() as Promise<RunRecord[]>,
  ]);
  const puts: Array<Promise<unknown>> = [];
  const lists = new Map<string, { t: string; items: unknown[] }>();
  for (const { t, l, i, v } of items) {
    const list = lists.get(l) ?? { t, items: [] };
    if (i !== list.items.length) throw new Error(`graphdock indexeddb: list ${l} of thread ${t} has a gap at ${i} (corrupt store)`);
    list.items.push(v);
    lists.set(l, list);
  }
  for (const [l, { t, items: all }] of lists) {
    for (let c = 0; c * CHUNK < all.length; c++) puts.push(tx.objectStore("chunks").put(encodeChunk(all.slice(c * CHUNK, (c + 1) * CHUNK)), [t, l, c]));
  }
  const lookup: ListLookup = (l) => lists.get(l)?.items;
  const paginate = (kind: "c" | "r", byThread: Map<string, Entry[]>) => {
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
  puts.push(tx.objectStore("meta").put({ key: "format", value: 2 }));
  await Promise.all(puts);
  for (const name of ["checkpoints", "items", "runs"]) db.deleteObjectStore(name);
}
