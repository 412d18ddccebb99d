/**
 * PostgreSQL specifics of long-term memory beyond the store contract: a schema written before
 * items existed (version 2) is migrated on open, keeping its data; runtimes on two store
 * instances (as two processes) share items.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PG_SCHEMA_VERSION } from "../../src/postgres/index.js";
import { migrate } from "../../src/postgres/schema.js";
import { createRuntime } from "../../src/runtime/index.js";
import { pgTestStores } from "./stores.js";

let n = 0;
const fresh = () => `pitems_${process.pid}_${n++}`;
const { url, open } = pgTestStores({ max: 4, eventPollMs: 200 });

describe("postgresStore: items", () => {
  it("migrates a version-2 schema (no items) on open and keeps its data", async () => {
    const schema = fresh();
    // A version-2 database holding a document.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const client = await pool.connect();
    try {
      await migrate(client, schema, 2);
      await client.query(`INSERT INTO "${schema}".docs (collection, id, parent, seq, doc) VALUES ('datasets', 'd1', NULL, 1, '{"kept": true}')`);
    } finally {
      client.release();
      await pool.end();
    }
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const store = await open(schema);
      const { rows } = await c.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
      expect(rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
      expect((await store.getDoc("datasets", "d1"))?.doc).toEqual({ kept: true });
      const item = { namespace: ["m"], key: "k", value: { x: 1 }, created_at: "t", updated_at: "t", expires_at: null, ttl: null };
      await store.commit([{ op: "item.put", item }]);
      expect(await store.getItem(["m"], "k")).toEqual(item);
    } finally {
      await c.end();
    }
  });

  it("shares items between runtimes on two store instances, and both see expiry the same way", async () => {
    const schema = fresh();
    let now = Date.UTC(2026, 0, 1);
    const clock = () => now;
    const a = await createRuntime({ graphs: {}, store: await open(schema), clock });
    const b = await createRuntime({ graphs: {}, store: await open(schema), clock });
    try {
      await a.store.putItem(["users", "u1"], "pref", { theme: "dark" }, { ttl: 5 });
      await a.store.putItem(["users", "u2"], "pref", { theme: "light" });
      await a.store.putItem(["users", "u3"], "brief", { theme: "none" }, { ttl: 0.123457 }); // 7407.42 ms: whole ms are stored
      expect((await b.store.getItem(["users", "u3"], "brief", { refreshTtl: false }))?.value).toEqual({ theme: "none" });
      expect((await b.store.getItem(["users", "u1"], "pref"))?.value).toEqual({ theme: "dark" });
      expect((await b.store.searchItems(["users"], { filter: { theme: "light" } })).items.map((i) => i.namespace)).toEqual([["users", "u2"]]);
      now += 7408;
      expect(await b.store.getItem(["users", "u3"], "brief")).toBeNull();
      now += 6 * 60_000;
      expect(await a.store.getItem(["users", "u1"], "pref")).toBeNull();
      expect((await b.store.listNamespaces()).namespaces).toEqual([["users", "u2"]]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
