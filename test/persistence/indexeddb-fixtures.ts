/**
 * Helpers of the IndexedDB format tests (fake-indexeddb): opening a store, reading the raw
 * values of an object store, and recreating a database of an earlier format from a fixture
 * written by that format's store (./fixtures/make-indexeddb-fixture.ts).
 */
import "fake-indexeddb/auto";
import { readFileSync } from "node:fs";
import { openDB } from "idb";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import type { Store, StoredCheckpoint } from "../../src/persistence/types.js";

export async function openAt(name: string): Promise<Store> {
  const store = indexedDbStore(name);
  await store.open();
  return store;
}

/** The stored values of an object store, as JSON text. */
export async function rawValues(name: string, storeName: string): Promise<string[]> {
  const db = await openDB(name);
  const out = (await db.getAll(storeName)).map((v) => JSON.stringify(v));
  db.close();
  return out;
}

/** A fixture: the rows of each object store (key null for in-line keys) and what the store answered. */
export interface FormatFixture {
  rows: Record<string, Array<[IDBValidKey | null, unknown]>>;
  expected: { threads: unknown[]; checkpoints: Record<string, StoredCheckpoint[]>; runs: Array<{ run_id: string }> };
}

export const readFixture = (file: string): FormatFixture =>
  JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8")) as FormatFixture;

/**
 * Recreates a database at schema `version` (4 or 5: both had these object stores and indexes,
 * pinned here as those releases created them) holding the fixture's rows.
 */
export async function olderDatabase(name: string, version: 4 | 5, fixture: FormatFixture): Promise<void> {
  const db = await openDB(name, version, {
    upgrade(db) {
      db.createObjectStore("meta", { keyPath: "key" });
      db.createObjectStore("assistants", { keyPath: "assistant_id" }).createIndex("by_graph", "graph_id");
      db.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
      db.createObjectStore("threads", { keyPath: "thread_id" }).createIndex("by_status", "status");
      db.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
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
      db.createObjectStore("store_items", { keyPath: ["ns", "key"] }).createIndex("by_expiry", "expires_at");
      db.createObjectStore("crons", { keyPath: "cron_id" }).createIndex("by_due", "$due");
    },
  });
  for (const [store, rows] of Object.entries(fixture.rows)) {
    for (const [key, value] of rows) await (key === null ? db.put(store as never, value) : db.put(store as never, value, key as never));
  }
  db.close();
}
