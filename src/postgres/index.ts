/**
 * `graphdock/postgres`: the PostgreSQL store (D22), on the `pg` driver (an optional peer
 * dependency; the core entry never imports it).
 *
 *   import { postgresStore } from "graphdock/postgres";
 *   const runtime = await createRuntime({ graphs, store: postgresStore({ connectionString }) });
 */
export { postgresStore, PostgresStore, type PostgresStoreOptions } from "./store.js";
export type { PostgresPool } from "./pool.js";
export { PG_SCHEMA_VERSION } from "./schema.js";
