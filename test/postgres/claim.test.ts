/**
 * Claiming on PostgreSQL (D20, D22): `claimRun` locks the lease row and the head run with
 * `FOR UPDATE SKIP LOCKED`, so claimers never wait for each other; and leases are judged at the
 * database's clock, so processes with skewed clocks cannot take each other's live leases.
 */
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { postgresStore } from "../../src/postgres/index.js";
import type { RunClaim } from "../../src/persistence/types.js";
import type { RunRecord } from "../../src/types.js";
import { createRuntime } from "../../src/runtime/index.js";
import { ordered } from "./fixtures/graphs.js";
import { until } from "./procs.js";
import { pgTestStores } from "./stores.js";

let n = 0;
const fresh = () => `cl_${process.pid}_${n++}`;
const { url, open, sql } = pgTestStores({ max: 4, eventPollMs: 200 });

const run = (runId: string, threadId: string, over: Partial<RunRecord> = {}): RunRecord => ({
  run_id: runId,
  thread_id: threadId,
  assistant_id: "a",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  status: "pending",
  metadata: {},
  kwargs: {},
  multitask_strategy: "enqueue",
  execution: { graph_id: "g", config: { configurable: {} }, context: undefined, temporary: false, not_before: 0 },
  ...over,
});
const claim = (threadId: string, owner: string, now = Date.now(), over: Partial<RunClaim> = {}): RunClaim => ({
  thread_id: threadId,
  key: `thread:${threadId}`,
  owner,
  now,
  expires_at: now + 30_000,
  updated_at: "2026-01-02T00:00:00.000Z",
  graph_ids: ["g"],
  ...over,
});

describe("claimRun on PostgreSQL", () => {
  it("lets exactly one of many concurrent claimers take the head run; the others answer none, nobody conflicts", async () => {
    const schema = fresh();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(schema)));
    for (let round = 0; round < 8; round++) {
      const t = `t${round}`;
      await stores[0]!.commit([{ op: "run.put", run: run(`r${round}a`, t) }, { op: "run.put", run: run(`r${round}b`, t) }]);
      const results = await Promise.all(stores.flatMap((s, i) => [s.claimRun(claim(t, `o${i}`)), s.claimRun(claim(t, `o${i}`))]));
      const claimed = results.filter((r) => r.outcome === "claimed");
      expect(claimed).toHaveLength(1);
      expect(results.filter((r) => r.outcome === "none")).toHaveLength(results.length - 1);
      // The head of the queue, marked running with the claim's time; the lease names it.
      expect(claimed[0]).toMatchObject({ run: { run_id: `r${round}a`, status: "running", updated_at: "2026-01-02T00:00:00.000Z" } });
      expect(await stores[1]!.getRun(`r${round}a`)).toMatchObject({ status: "running", updated_at: "2026-01-02T00:00:00.000Z" });
      expect(await stores[2]!.getRun(`r${round}b`)).toMatchObject({ status: "pending" });
      expect((await stores[3]!.getLease(`thread:${t}`))?.data).toEqual({ run_id: `r${round}a` });
      // A later write of the run (its outcome) is what the store returns from then on.
      await stores[0]!.commit([{ op: "run.put", run: run(`r${round}a`, t, { status: "success", updated_at: "2026-01-03T00:00:00.000Z" }), expect: { status: ["running"] } }]);
      expect(await stores[1]!.queryRuns({ thread_id: t, sortBy: "queue" })).toMatchObject([
        { run_id: `r${round}a`, status: "success", updated_at: "2026-01-03T00:00:00.000Z" },
        { run_id: `r${round}b`, status: "pending" },
      ]);
    }
  });

  it("does not wait for a locked lease row or head run, and never passes a locked head by", async () => {
    const schema = fresh();
    const store = await open(schema);
    await store.commit([{ op: "run.put", run: run("r1", "t") }, { op: "run.put", run: run("r2", "t") }]);
    const c = await sql();
    // Another transaction holds the head run (as a cancel or another claimer would).
    await c.query("BEGIN");
    await c.query(`SELECT 1 FROM "${schema}".runs WHERE run_id = 'r1' FOR UPDATE`);
    expect(await store.claimRun(claim("t", "me"))).toEqual({ outcome: "none" });
    await c.query("ROLLBACK");
    // Another transaction holds an expired lease row.
    await store.commit([{ op: "lease.put", lease: { key: "thread:t", owner: "gone", expires_at: Date.now() - 1000, data: {} }, expect: { state: "free", now: Date.now() } }]);
    await c.query("BEGIN");
    await c.query(`SELECT 1 FROM "${schema}".leases WHERE key = 'thread:t' FOR UPDATE`);
    expect(await store.claimRun(claim("t", "me"))).toEqual({ outcome: "none" });
    await c.query("ROLLBACK");
    // Unlocked: the head is claimed, taking over the expired lease.
    expect(await store.claimRun(claim("t", "me"))).toMatchObject({ outcome: "claimed", run: { run_id: "r1" } });
    expect(await store.getLease("thread:t")).toMatchObject({ owner: "me", data: { run_id: "r1" } });
  });

  it("answers stopped, later and none as the head run requires", async () => {
    const store = await open(fresh());
    expect(await store.claimRun(claim("empty", "me"))).toEqual({ outcome: "none" });
    // Running with no live lease: its runtime stopped.
    await store.commit([{ op: "run.put", run: run("s1", "ts", { status: "running" }) }]);
    expect(await store.claimRun(claim("ts", "me"))).toMatchObject({ outcome: "stopped", run: { run_id: "s1", status: "running" } });
    // No execution part (queued by an old version).
    const { execution: _e, ...old } = run("s2", "to");
    await store.commit([{ op: "run.put", run: old }]);
    expect(await store.claimRun(claim("to", "me"))).toMatchObject({ outcome: "stopped", run: { run_id: "s2" } });
    // A graph this runtime lacks: left for another.
    await store.commit([{ op: "run.put", run: run("s3", "tg", { execution: { ...run("x", "x").execution!, graph_id: "other" } }) }]);
    expect(await store.claimRun(claim("tg", "me"))).toEqual({ outcome: "none" });
    expect(await store.claimRun(claim("tg", "me", Date.now(), { graph_ids: ["g", "other"] }))).toMatchObject({ outcome: "claimed" });
    // Not before a time to come.
    const now = Date.now();
    await store.commit([{ op: "run.put", run: run("s4", "tl", { execution: { ...run("x", "x").execution!, not_before: now + 60_000 } }) }]);
    expect(await store.claimRun(claim("tl", "me", now))).toEqual({ outcome: "later", not_before: now + 60_000 });
    expect(await store.getRun("s4")).toMatchObject({ status: "pending" });
    // A live lease (a state update holds it): nothing.
    await store.commit([{ op: "run.put", run: run("s5", "th") }, { op: "lease.put", lease: { key: "thread:th", owner: "other", expires_at: now + 60_000, data: {} } }]);
    expect(await store.claimRun(claim("th", "me", now))).toEqual({ outcome: "none" });
    expect(await store.getRun("s5")).toMatchObject({ status: "pending" });
  });
});

describe("leases on the database's clock", () => {
  const HOUR = 3_600_000;
  const lease = (owner: string, now: number, ms = 30_000) => ({ key: "thread:t", owner, expires_at: now + ms, data: {} });

  it("a process whose clock runs ahead cannot take a live lease (it could on its own clock)", async () => {
    const schema = fresh();
    const [honest, ahead] = await Promise.all([open(schema), open(schema)]);
    const now = Date.now();
    await honest.commit([{ op: "lease.put", lease: lease("honest", now), expect: { state: "free", now } }]);
    const skewed = now + HOUR;
    const take = ahead.commit([{ op: "lease.put", lease: lease("ahead", skewed), expect: { state: "free", now: skewed } }]);
    await expect(take).rejects.toSatisfy((e: unknown) => GraphdockError.is(e, "conflict"));
    expect(await ahead.claimRun(claim("t", "ahead", skewed))).toEqual({ outcome: "none" });
    // Read on the skewed clock, the lease is still live there (its remaining time, not its writer's clock).
    const seen = (await ahead.getLease("thread:t"))!;
    expect(seen.owner).toBe("honest");
    expect(seen.expires_at).toBeGreaterThan(skewed);
    expect(await ahead.expiredLeases("thread:", skewed)).toEqual([]);
    // The holder renews it as usual.
    await honest.commit([{ op: "lease.put", lease: lease("honest", now + 10), expect: { state: "held", now: now + 10 } }]);

    // The same on the caller's clock: the skewed process takes it.
    const callerSchema = fresh();
    const [a, b] = await Promise.all([open(callerSchema, { leaseClock: "caller" }), open(callerSchema, { leaseClock: "caller" })]);
    await a.commit([{ op: "lease.put", lease: lease("honest", now), expect: { state: "free", now } }]);
    await b.commit([{ op: "lease.put", lease: lease("ahead", skewed), expect: { state: "free", now: skewed } }]);
    expect((await a.getLease("thread:t"))?.owner).toBe("ahead");
  });

  it("a lease written by a process whose clock runs behind lasts its duration, and then is free for others", async () => {
    const schema = fresh();
    const [behind, honest] = await Promise.all([open(schema), open(schema)]);
    const late = Date.now() - HOUR;
    await behind.commit([{ op: "lease.put", lease: lease("behind", late, 400), expect: { state: "free", now: late } }]);
    // On the honest clock its expires_at is an hour ago, yet it is live for its 400 ms.
    await expect(honest.commit([{ op: "lease.put", lease: lease("honest", Date.now()), expect: { state: "free", now: Date.now() } }])).rejects.toSatisfy((e: unknown) =>
      GraphdockError.is(e, "conflict"),
    );
    expect((await honest.getLease("thread:t"))!.expires_at).toBeGreaterThan(Date.now());
    // Once its duration passed on the database's clock, it is expired for everyone.
    const expired = await until(async () => (await honest.expiredLeases("thread:", Date.now())).length > 0, 10_000, "the lease to expire");
    expect(expired).toBe(true);
    const now = Date.now();
    await honest.commit([{ op: "lease.put", lease: lease("honest", now), expect: { state: "free", now } }]);
    expect((await behind.getLease("thread:t"))?.owner).toBe("honest");
    await expect(behind.commit([{ op: "lease.put", lease: lease("behind", late + 10), expect: { state: "held", now: late + 10 } }])).rejects.toSatisfy((e: unknown) =>
      GraphdockError.is(e, "conflict"),
    );
  });

  it("runs runtimes whose injected clocks disagree wildly (D19) on one database", async () => {
    const schema = fresh();
    const past = createRuntime({ graphs: { ordered }, store: postgresStore({ connectionString: url, schema, max: 4 }), clock: () => 1_000_000 });
    const future = createRuntime({ graphs: { ordered }, store: postgresStore({ connectionString: url, schema, max: 4 }), clock: () => Date.now() + 10 * HOUR });
    const [a, b] = await Promise.all([past, future]);
    try {
      const t = await a.threads.create();
      const runs = [];
      for (let i = 0; i < 6; i++) runs.push(await (i % 2 ? b : a).runs.create(t.thread_id, "ordered", { input: { n: i, sleep: 1 }, multitaskStrategy: "enqueue" }));
      await a.runs.join(t.thread_id, runs.at(-1)!.run_id);
      for (const r of runs) expect((await b.runs.get(t.thread_id, r.run_id)).status).toBe("success");
      expect((await a.threads.getState(t.thread_id)).values).toMatchObject({ order: [0, 1, 2, 3, 4, 5] });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
