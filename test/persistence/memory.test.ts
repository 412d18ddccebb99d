import { memoryStore } from "../../src/persistence/memory.js";
import { storeContract } from "./contract.js";

storeContract({
  name: "memoryStore",
  create: async () => {
    const store = memoryStore();
    await store.open();
    return store;
  },
});
