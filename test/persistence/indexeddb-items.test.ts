// IndexedDB schema 4 (long-term memory and crons): a schema-3 database is upgraded in place, keeping its data.
import "fake-indexeddb/auto";
import { openDB, type IDBPDatabase, type IDBPTransaction } from "idb";
import { describe, expect, it } from "vitest";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { upgradeDatabase } from "../../src/persistence/indexeddb/migrate.js";
import { thread } from "./contract.js";

describe("indexedDbStore: schema 3 -> 4", () => {
  it("adds the items and crons stores to a schema-3 database and keeps what it held", async () => {
    const name = "items-upgrade";
    // A schema-3 database as graphdock wrote it: the current layout without the schema-4 stores.
    const db = await openDB(name, 3, {
      upgrade(db, _old, _new, tx) {
        void upgradeDatabase(db as unknown as IDBPDatabase, 0, tx as unknown as IDBPTransaction<unknown, string[], "versionchange">);
        db.deleteObjectStore("store_items");
        db.deleteObjectStore("crons");
      },
    });
    await db.put("threads", { ...thread("t1"), $rev: 1 });
    expect([...db.objectStoreNames]).not.toContain("store_items");
    expect([...db.objectStoreNames]).not.toContain("crons");
    db.close();

    const store = indexedDbStore(name);
    await store.open();
    try {
      expect((await store.getThread("t1"))?.thread_id).toBe("t1");
      const item = { namespace: ["m", "u1"], key: "k", value: { x: 1 }, created_at: "t", updated_at: "t", expires_at: 5, ttl: 1 };
      await store.commit([{ op: "item.put", item }]);
      expect(await store.getItem(["m", "u1"], "k")).toEqual(item);
      expect(await store.expiredItems(5)).toEqual([{ namespace: ["m", "u1"], key: "k", expires_at: 5 }]);
      expect(await store.dueCrons()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
