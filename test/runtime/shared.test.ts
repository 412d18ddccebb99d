import "fake-indexeddb/auto";
import { memoryStore } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { durableRunsContract } from "./durable.js";
import { sharedStoreContract, type StorePair } from "./shared.js";

const memoryPair: StorePair = async () => {
  const store = memoryStore();
  return [store, store];
};
const idbPair: StorePair = async () => {
  const name = `shared-${Math.random()}`;
  return [indexedDbStore(name), indexedDbStore(name)];
};

sharedStoreContract("one memoryStore() instance", memoryPair);
sharedStoreContract("one IndexedDB database, two connections (two tabs)", idbPair);
durableRunsContract("one memoryStore() instance", memoryPair);
durableRunsContract("one IndexedDB database, two connections (two tabs)", idbPair);
