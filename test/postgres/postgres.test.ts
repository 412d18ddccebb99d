/**
 * PostgreSQL specifics beyond the store contract: migration by several processes at once,
 * races between store instances (as between processes), the LISTEN connection coming back,
 * and run events read across instances.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { postgresStore, PG_SCHEMA_VERSION } from "../../src/postgres/index.js";
import type { RunEventRecord } from "../../src/persistence/types.js";
import { pgTestStores } from "./stores.js";

let n = 0;
const fresh = () => `px_${process.pid}_${n++}`;
const { url, open } = pgTestStores({ max: 4, eventPollMs: 200 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("postgresStore", () => {
  it("is migrated once when several processes open a new schema at once", async () => {
    const schema = fresh();
    const stores = await Promise.all(Array.from({ length: 6 }, () => open(schema)));
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
      expect(rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
      // A database written by a newer graphdock is refused.
      await c.query(`UPDATE "${schema}".meta SET value = '999' WHERE key = 'schema_version'`);
      await expect(open(schema)).rejects.toThrow(/newer than this graphdock understands/);
    } finally {
      await c.end();
    }
    expect(stores).toHaveLength(6);
  });

  it("lets exactly one of several instances take a free lease and start a pending run", async () => {
    const schema = fresh();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(schema)));
    for (let round = 0; round < 10; round++) {
      const runId = `r${round}`;
      await stores[0]!.commit([
        {
          op: "run.put",
          run: { run_id: runId, thread_id: "t", assistant_id: "a", created_at: "x", updated_at: "x", status: "pending", metadata: {}, kwargs: {}, multitask_strategy: null },
        },
      ]);
      const now = Date.now();
      const results = await Promise.allSettled(
        stores.map((s, i) =>
          s.commit([
            { op: "lease.put", lease: { key: "thread:t", owner: `o${i}`, expires_at: now + 60_000, data: { run_id: runId } }, expect: { state: "free", now } },
            { op: "run.put", run: { run_id: runId, thread_id: "t", assistant_id: "a", created_at: "x", updated_at: "x", status: "running", metadata: {}, kwargs: {}, multitask_strategy: null }, expect: { status: ["pending"] } },
          ]),
        ),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(GraphdockError.is(r.reason, "conflict")).toBe(true);
      await stores[1]!.commit([{ op: "lease.delete", key: "thread:t" }, { op: "run.put", run: { run_id: runId, thread_id: "t", assistant_id: "a", created_at: "x", updated_at: "x", status: "success", metadata: {}, kwargs: {}, multitask_strategy: null } }]);
    }
  });

  it("works on a pool of the caller's, shared by stores of two schemas (not ended by close)", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const [x, y] = [postgresStore({ pool, schema: fresh() }), postgresStore({ pool, schema: fresh() })];
      await Promise.all([x.open(), y.open()]);
      const thread = (id: string) => ({ thread_id: id, created_at: "t", updated_at: "t", state_updated_at: "t", metadata: {}, status: "idle" as const, config: {}, values: {}, interrupts: {} });
      for (let i = 0; i < 5; i++) {
        await x.commit([{ op: "thread.put", thread: thread(`x${i}`) }]);
        await y.commit([{ op: "thread.put", thread: thread(`y${i}`) }]);
      }
      expect((await x.queryThreads({ sortBy: "thread_id", sortOrder: "asc" })).map((t) => t.thread_id)).toEqual(["x0", "x1", "x2", "x3", "x4"]);
      expect(await y.getThread("x0")).toBeUndefined();
      expect((await y.getThread("y3"))?.thread_id).toBe("y3");
      await x.close();
      await y.close();
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("refuses as `pool` what is not one, before connecting anywhere", () => {
    for (const pool of [{}, { query: () => Promise.resolve() }, "postgres://localhost/db"]) {
      let caught: unknown;
      try {
        postgresStore({ pool: pool as never });
      } catch (err) {
        caught = err;
      }
      expect(GraphdockError.is(caught, "invalid_input"), String(caught)).toBe(true);
      expect((caught as Error).message).toMatch(/`pool` must be a pg\.Pool/);
    }
  });

  it("keeps delivering notifications after its LISTEN connection is killed", async () => {
    const schema = fresh();
    const [a, b] = await Promise.all([open(schema), open(schema)]);
    const got: string[] = [];
    a.subscribe("x", (p) => got.push(p ?? ""));
    await b.commit([{ op: "notify", topic: "x", payload: "before" }]);
    for (let i = 0; i < 100 && !got.includes("before"); i++) await sleep(20);
    expect(got).toContain("before");
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rowCount } = await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${a.channel}"`]);
      expect(rowCount).toBeGreaterThanOrEqual(1);
    } finally {
      await c.end();
    }
    // Notifications sent while it reconnects may be missed (the runtime's sweeper covers those); later ones arrive.
    for (let i = 0; i < 100 && !got.includes("after"); i++) {
      await b.commit([{ op: "notify", topic: "x", payload: "after" }]);
      await sleep(50);
    }
    expect(got).toContain("after");
  });

  it("streams a run's events to a reader on another instance: resumable replay, and a non-resumable log once asked", async () => {
    const schema = fresh();
    const [a, b] = await Promise.all([open(schema), open(schema)]);
    const collect = async (it: AsyncIterable<RunEventRecord>) => {
      const out: RunEventRecord[] = [];
      for await (const e of it) out.push(e);
      return out;
    };
    await a.events.open("r1", { resumable: true });
    for (let i = 0; i < 300; i++) a.events.publish("r1", "messages", { i });
    const live = collect(b.events.read("r1", { after: -1 }));
    await sleep(50);
    for (let i = 300; i < 600; i++) a.events.publish("r1", "messages", { i });
    await a.events.end("r1");
    expect((await live).map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    expect((await collect(b.events.read("r1", { after: 589 }))).map((e) => e.seq)).toEqual([590, 591, 592, 593, 594, 595, 596, 597, 598, 599]);

    // Non-resumable: nothing reaches the table until a reader elsewhere asks; then everything still held does.
    await a.events.open("r2", { resumable: false });
    for (let i = 0; i < 5; i++) a.events.publish("r2", "e", i);
    await sleep(100);
    const reader = collect(b.events.read("r2", { after: -1 }));
    await sleep(300);
    for (let i = 5; i < 10; i++) a.events.publish("r2", "e", i);
    await a.events.end("r2");
    expect((await reader).map((e) => e.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Ended and not resumable: a later reader gets nothing, at once.
    expect(await collect(b.events.read("r2", { after: -1 }))).toEqual([]);
    // ifAbsent "end": a log never opened ends at once.
    expect(await collect(b.events.read("nope", { after: -1, ifAbsent: "end" }))).toEqual([]);
  });
});
