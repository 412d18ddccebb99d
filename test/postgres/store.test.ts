import { inject } from "vitest";
import { postgresStore } from "../../src/postgres/index.js";
import type { Store } from "../../src/persistence/types.js";
import { storeContract } from "../persistence/contract.js";

const url = inject("pgUrl");
let n = 0;
const schemas = new WeakMap<Store, string>();

// The contract judges leases at the `now` each op passes (injected times, D19): `leaseClock:
// "caller"`. The database's clock (the default) is covered by test/postgres/clock.test.ts and the
// runtime suites.
async function openAt(schema: string): Promise<Store> {
  const store = postgresStore({ connectionString: url, schema, max: 4, eventPollMs: 200, leaseClock: "caller" });
  schemas.set(store, schema);
  await store.open();
  return store;
}

storeContract({
  name: "postgresStore",
  create: () => openAt(`contract_${process.pid}_${n++}`),
  reopen: async (store) => {
    await store.close();
    return openAt(schemas.get(store)!);
  },
});
