import "fake-indexeddb/auto";
import { memoryStore } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { sharedStoreContract } from "./shared.js";

sharedStoreContract("one memoryStore() instance", async () => {
  const store = memoryStore();
  return [store, store];
});

sharedStoreContract("one IndexedDB database, two connections (two tabs)", async () => {
  const name = `shared-${Math.random()}`;
  return [indexedDbStore(name), indexedDbStore(name)];
});
