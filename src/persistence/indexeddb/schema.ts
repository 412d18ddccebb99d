/**
 * The IndexedDB store's database schema (`idb` typing), the object stores each write op touches,
 * the store's options and the key helpers shared by its parts (./base.ts, ./writes.ts,
 * ./reads.ts, ./index.ts). Core-safe: no Node built-ins.
 */
import { type DBSchema, type IDBPTransaction, type StoreNames } from "idb";
import type { AssistantRecord, AssistantVersionRecord } from "../../types.js";
import type { CancelRequest, ExternalChange, Lease, WriteOp } from "../types.js";
import { type EventMessage } from "./events.js";
import {
  type CronRow,
  type DocRow,
  type ItemRow,
  type LogRow,
  type ThreadRow,
} from "./migrate.js";
import { type CpRecord, type StoredCpRow } from "./rows.js";
import { type StoredRunRow } from "./run-row.js";

/** IndexedDB schema version; `upgradeDatabase` brings older databases to it. 4 added `store_items` and `crons`; 5 is format 4; 6 is format 5. */
export const DB_VERSION = 6;
/**
 * Storage format of this store's data (`meta.format`): 1 = one record per checkpoint, list item
 * and run; 2 = pages and chunks; 3 = one record per checkpoint, run and list item with shared
 * items and checkpoint bases (./rows.ts); 4 = format 3 where a checkpoint row leaves out its
 * parent id when its parent is the row put just before it in its namespace (read from that row),
 * and packs pending writes by task (./rows.ts `packWrites`); 5 = format 4 where a leaf diff may
 * move integer and time leaves of its base by a delta (shifts), new bases keep the leaf paths of
 * the previous base, and base ids are shorter (./rows.ts). Newer is refused.
 */
export const INDEXEDDB_FORMAT = 5;

/** The database schema (version 6). */
export interface GraphdockDB extends DBSchema {
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
  /** Runs under one-letter field names (./run-row.ts). */
  runs: {
    key: string;
    value: StoredRunRow;
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
  /** Crons; `by_due` holds the scheduled ones only, by (next_run_date, cron_id). */
  crons: { key: string; value: CronRow; indexes: { by_due: [string, string] } };
}

export type Names = StoreNames<GraphdockDB>;
export type Tx = IDBPTransaction<GraphdockDB, Names[], "readwrite" | "readonly">;
export type WTx = IDBPTransaction<GraphdockDB, Names[], "readwrite">;

export const CHECKPOINTS: Names[] = ["cps", "bases", "items"];
export const SCOPE: Record<WriteOp["op"], Names[]> = {
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
   * per commit in Chromium). See docs/indexeddb.md, "Durability hint".
   */
  durability?: "strict" | "relaxed" | "default";
}

/** Keys `[a]` < `[a, anything]` < `[a, []]`: every key under a prefix. */
export const under = (...prefix: Array<string | number>) => IDBKeyRange.bound(prefix, [...prefix, []]);

/** A list log's key in the item cache (list ids are unique within their thread). */
export const listKey = (thread: string, list: string) => `${thread}\u0000${list}`;
export const rowKey = (thread: string, ns: string, id: string) => `${thread}\u0000${ns}\u0000${id}`;
/** The pseudo-namespace of run bases in `bases` (checkpoint namespaces are `""` or `node:task`). */
export const RUNS = "\u0001runs";

/** What tabs tell each other on the database's channel. */
export type TabMessage =
  | { k: "change"; change: ExternalChange }
  | { k: "notify"; topic: string; payload?: string }
  | { k: "event"; m: EventMessage }
  /** A runtime started on the database: the others watch its liveness lock (`watchOwners`). */
  | { k: "runtime"; owner: string };
