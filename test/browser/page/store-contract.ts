/**
 * The persistence contract suite, bundled for a page: `indexedDbStore` on the browser's real
 * IndexedDB, one fresh database per store the suite creates; `reopen` closes the store and opens
 * a new one on the same database. Then two store instances on one database (as two tabs: they
 * share the database and its BroadcastChannel exactly as tabs do).
 */
import { storeContract } from "../../persistence/contract";
import { twoTabsSuite } from "../../persistence/indexeddb-tabs";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index";
import type { Store } from "../../../src/persistence/types";

const names = new WeakMap<Store, string>();
let count = 0;

function open(name: string): Store {
  const store = indexedDbStore(name);
  names.set(store, name);
  return store;
}

storeContract({
  name: "indexedDbStore in Chromium",
  create: async () => {
    const store = open(`contract-${Date.now()}-${count++}`);
    await store.open();
    return store;
  },
  reopen: async (store) => {
    await store.close();
    const again = open(names.get(store)!);
    await again.open();
    return again;
  },
});

twoTabsSuite("indexedDbStore in Chromium", async (name) => {
  const store = open(name);
  await store.open();
  return store;
});
