/**
 * Cancel requests on PostgreSQL do not outlive their runs: a request is only read while its run is
 * in flight, so once the run has ended (or is gone) its row is deleted by the store's periodic
 * pruning (with the ended event logs), also one recorded just as its run ended.
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime/index.js";
import { postgresStore } from "../../src/postgres/index.js";
import { ticker } from "./fixtures/graphs.js";
import { until } from "./procs.js";
import { pgTestStores } from "./stores.js";

const { url, keep, sql } = pgTestStores();

describe("cancel requests on PostgreSQL", () => {
  it("are gone once their runs ended, cancelled from another runtime or recorded after the end", async () => {
    const schema = `cx_${process.pid}`;
    const store = (pruneEveryMs: number) => keep(postgresStore({ connectionString: url, schema, pruneEveryMs, eventPollMs: 200 }));
    const a = await createRuntime({ graphs: { ticker }, store: store(200) });
    const b = await createRuntime({ graphs: { ticker }, store: store(60_000) });
    try {
      const threads = await Promise.all(Array.from({ length: 5 }, () => a.threads.create()));
      const runs = await Promise.all(threads.map((t) => a.runs.create(t.thread_id, "ticker", { input: { every: 20, count: 10_000 } })));
      await until(async () => (await Promise.all(runs.map((r) => b.runs.get(r.thread_id, r.run_id)))).every((r) => r.status === "running"), 10_000, "the runs running");
      await Promise.all(runs.map((r) => b.runs.cancel(r.thread_id, r.run_id, true)));
      for (const r of runs) expect((await b.runs.get(r.thread_id, r.run_id)).status).toBe("interrupted");
      // A request recorded after its run ended (a cancel racing the run's end).
      const late = runs[0]!;
      await a.runs.cancel(late.thread_id, late.run_id); // ended: changes nothing (D26)
      const c = await sql();
      await c.query(`INSERT INTO "${schema}".cancels (run_id, thread_id, doc) VALUES ($1, $2, '{}') ON CONFLICT (run_id) DO NOTHING`, [late.run_id, late.thread_id]);
      await c.query(`INSERT INTO "${schema}".cancels (run_id, thread_id, doc) VALUES ('gone', $1, '{}')`, [late.thread_id]);
      const count = async () => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".cancels`)).rows[0]!.n;
      await until(async () => (await count()) === 0, 5_000, "the cancel requests pruned");
      // A run in flight keeps its request.
      const live = await a.runs.create(threads[1]!.thread_id, "ticker", { input: { every: 20, count: 10_000 } });
      await until(async () => (await b.runs.get(live.thread_id, live.run_id)).status === "running", 10_000, "the run running");
      await c.query(`INSERT INTO "${schema}".cancels (run_id, thread_id, doc) VALUES ($1, $2, '{"action": "interrupt"}')`, [live.run_id, live.thread_id]);
      await new Promise((r) => setTimeout(r, 600));
      expect(await count()).toBe(1);
      await b.runs.cancel(live.thread_id, live.run_id, true);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
