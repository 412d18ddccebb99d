/**
 * Data written under the package's former name: a store given no schema opens `graphdock`, unless
 * the database holds only the former default schema `agentdock`, which then opens unchanged.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgresStore } from "../../src/postgres/index.js";
import { pgUrl } from "./stores.js";

const database = `former_name_${process.pid}`;
let url: string;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: pgUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const u = new URL(pgUrl());
  u.pathname = `/${database}`;
  url = u.toString();
});

afterAll(async () => {
  const admin = new pg.Client({ connectionString: pgUrl() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

it("opens a database written under the former default schema `agentdock` unchanged, and a fresh one under `graphdock`", async () => {
  // What agentdock left: its tables in the schema "agentdock", a thread in it.
  const former = postgresStore({ connectionString: url, schema: "agentdock" });
  await former.open();
  await former.commit([{ op: "thread.put", thread: thread("t-former") }]);
  await former.close();

  const opened = postgresStore(url);
  await opened.open();
  expect(opened.schema).toBe("agentdock");
  expect((await opened.getThread("t-former"))?.thread_id).toBe("t-former");
  await opened.close();

  // Once a graphdock schema exists too, the default is graphdock's (nothing is moved or merged).
  const current = postgresStore({ connectionString: url, schema: "graphdock" });
  await current.open();
  await current.close();
  const fresh = postgresStore(url);
  await fresh.open();
  expect(fresh.schema).toBe("graphdock");
  expect(await fresh.getThread("t-former")).toBeUndefined();
  await fresh.close();
});

function thread(thread_id: string) {
  const at = "2026-01-01T00:00:00.000Z";
  return { thread_id, created_at: at, updated_at: at, state_updated_at: at, metadata: {}, status: "idle" as const, config: {}, values: {}, interrupts: {} };
}
