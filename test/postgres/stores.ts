/**
 * Stores and SQL clients for the postgres test files, on the throwaway server of the global
 * setup: each file's `pgTestStores(defaults)` opens stores (`open`), connects clients (`sql`)
 * and keeps stores it did not open itself (`keep`); all are closed after each test.
 */
import pg from "pg";
import { afterEach, inject } from "vitest";
import { postgresStore, type PostgresStore, type PostgresStoreOptions } from "../../src/postgres/index.js";

export const pgUrl = (): string => inject("pgUrl");

export function pgTestStores(defaults: Partial<PostgresStoreOptions> = {}) {
  const url = pgUrl();
  const opened: PostgresStore[] = [];
  const clients: pg.Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const keep = <S extends PostgresStore>(store: S): S => {
    opened.push(store);
    return store;
  };
  return {
    url,
    keep,
    /** A store on `schema`, opened (so created or migrated). */
    open: async (schema: string, options: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> => {
      const s = keep(postgresStore({ connectionString: url, schema, ...defaults, ...options }));
      await s.open();
      return s;
    },
    /** A connected SQL client on the test database. */
    sql: async (): Promise<pg.Client> => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
      return c;
    },
  };
}
