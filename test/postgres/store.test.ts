import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { postgresStore, PG_SCHEMA_VERSION } from "../../src/postgres/index.js";
import type { Store } from "../../src/persistence/types.js";
import { storeContract, thread } from "../persistence/contract.js";
import { cron } from "../persistence/cron-contract.js";

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

describe("postgresStore schema 4 (crons)", () => {
  it("migrates a version-3 schema: the crons table is added, existing data kept", async () => {
    const schema = `migrate_crons_${process.pid}_${n++}`;
    let store = await openAt(schema);
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    await store.close();
    // What a version-3 database looks like: no crons table, version 3.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query(`DROP TABLE "${schema}".crons`);
    await pool.query(`UPDATE "${schema}".meta SET value = '3' WHERE key = 'schema_version'`);
    store = await openAt(schema);
    expect(await store.getThread("t1")).toEqual(thread("t1"));
    await store.commit([{ op: "cron.put", cron: cron("c1") }]);
    expect(await store.dueCrons()).toEqual([cron("c1")]);
    const { rows } = await pool.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
    await pool.end();
    await store.close();
  });
});
