import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { postgresStore, PG_SCHEMA_VERSION } from "../../src/postgres/index.js";
import { migrate } from "../../src/postgres/schema.js";
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
    // A version-3 database: no crons table.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const client = await pool.connect();
    try {
      await migrate(client, schema, 3);
    } finally {
      client.release();
    }
    await pool.query(
      `INSERT INTO "${schema}".threads (thread_id, status, created_at, updated_at, state_updated_at, metadata, vals, doc, revision)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1)`,
      (({ metadata, values, ...rest }) => [rest.thread_id, rest.status, rest.created_at, rest.updated_at, rest.state_updated_at, metadata, values, rest])(thread("t1")),
    );
    const store = await openAt(schema);
    expect(await store.getThread("t1")).toEqual(thread("t1"));
    await store.commit([{ op: "cron.put", cron: cron("c1") }]);
    expect(await store.dueCrons()).toEqual([cron("c1")]);
    const { rows } = await pool.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
    await pool.end();
    await store.close();
  });
});
