import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { postgresStore } from "../../src/postgres/index.js";
import type { Store } from "../../src/persistence/types.js";
import { literal } from "../../src/postgres/batch.js";
import { run, thread } from "../persistence/contract.js";
import { ordered } from "./fixtures/graphs.js";

const url = inject("pgUrl");
let n = 0;

/** Calls `fn` with every statement text the driver sends (each is one round trip: node-pg does not pipeline). */
async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  const texts: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    texts.push(typeof q === "string" ? q : (q.text ?? ""));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return { result: await fn(), texts };
  } finally {
    pg.Client.prototype.query = query;
  }
}

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(): Promise<Store> {
  const store = postgresStore({ connectionString: url, schema: `one_trip_${process.pid}_${n++}`, max: 4, leaseClock: "caller" });
  stores.push(store);
  await store.open();
  return store;
}

describe("postgresStore: a commit in one round trip", () => {
  it("a run's admission is one round trip and writes every op", async () => {
    const store = await open();
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    const heard: Array<string | undefined> = [];
    store.subscribe("admitted", (p) => heard.push(p));
    const busy = thread("t1", { status: "busy" });
    const { texts } = await counted(() =>
      store.commit([
        { op: "thread.put", thread: busy, expect: { status: ["idle"] } },
        { op: "run.put", run: run("r1", "t1"), expect: { exists: false } },
        { op: "lease.put", lease: { key: "run:r1", owner: "me", expires_at: 2_000, data: {} }, expect: { state: "free", now: 1_000 } },
        { op: "notify", topic: "admitted", payload: "r1" },
      ]),
    );
    expect(texts).toHaveLength(1);
    expect((await store.getThread("t1"))?.status).toBe("busy");
    expect((await store.getRun("r1"))?.run_id).toBe("r1");
    expect((await store.getLease("run:r1"))?.owner).toBe("me");
    await expect.poll(() => heard).toEqual(["r1"]);
  });

  it("an expectation failing in its last statement writes nothing, sends no notification and rejects with conflict", async () => {
    const store = await open();
    await store.commit([
      { op: "thread.put", thread: thread("t1") },
      { op: "lease.put", lease: { key: "run:r1", owner: "other", expires_at: 5_000, data: {} } },
    ]);
    const heard: Array<string | undefined> = [];
    store.subscribe("admitted", (p) => heard.push(p));
    const before = await store.getThread("t1");
    const { result, texts } = await counted(() =>
      store
        .commit([
          { op: "thread.put", thread: thread("t1", { status: "busy" }), expect: { status: ["idle"] } },
          { op: "run.put", run: run("r1", "t1"), expect: { exists: false } },
          // Held by "other" until 5,000: not free at 1,000.
          { op: "lease.put", lease: { key: "run:r1", owner: "me", expires_at: 2_000, data: {} }, expect: { state: "free", now: 1_000 } },
          { op: "notify", topic: "admitted", payload: "r1" },
        ])
        .then(
          () => undefined,
          (err: unknown) => err,
        ),
    );
    // The one-round-trip commit was sent (and refused by the database), then judged statement by statement.
    expect(texts[0]).toMatch(/EXECUTE graphdock_b_/);
    expect(result).toMatchObject({ code: "conflict" });
    expect(String((result as Error).message)).toContain("held by other");
    expect(await store.getThread("t1")).toEqual(before);
    expect(await store.getRun("r1")).toBeUndefined();
    expect((await store.getLease("run:r1"))?.owner).toBe("other");
    // A later notification arrives alone: the refused commit's never went out.
    await store.commit([{ op: "notify", topic: "admitted", payload: "later" }]);
    await expect.poll(() => heard).toEqual(["later"]);
  });

  it("a conditional run update whose status does not hold writes nothing (conflict)", async () => {
    const store = await open();
    await store.commit([
      { op: "thread.put", thread: thread("t1", { status: "busy" }) },
      { op: "run.put", run: run("r1", "t1", { status: "success" }) },
    ]);
    const err = await store
      .commit([
        { op: "run.put", run: run("r1", "t1", { status: "error" }), expect: { status: ["running"] } },
        { op: "thread.put", thread: thread("t1", { status: "idle" }), expect: { status: ["busy"] } },
        { op: "lease.delete", key: "run:r1" },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "conflict" });
    expect((await store.getRun("r1"))?.status).toBe("success");
    expect((await store.getThread("t1"))?.status).toBe("busy");
  });

  it("values that need quoting are stored exactly", async () => {
    const store = await open();
    await store.commit([{ op: "thread.put", thread: thread("t'1\\") }]);
    const odd = thread("t'1\\", { status: "busy", metadata: { q: "it's \\ \"quoted\" $1 $$ ;" } });
    const { texts } = await counted(() =>
      store.commit([
        { op: "thread.put", thread: odd, expect: { status: ["idle"] } },
        { op: "run.put", run: run("r'1", "t'1\\"), expect: { exists: false } },
      ]),
    );
    expect(texts).toHaveLength(1);
    expect(await store.getThread("t'1\\")).toEqual(odd);
    expect((await store.getRun("r'1"))?.thread_id).toBe("t'1\\");
  });
});

describe("a parameter's value as a literal", () => {
  it("escapes strings, writes arrays as array literals and null as NULL", () => {
    expect(literal("it's")).toBe(`'it''s'`);
    // pg's escapeLiteral writes a text with a backslash as ` E'...'` (backslashes doubled).
    expect(literal(String.raw`a\b`)).toBe(String.raw` E'a\\b'`);
    expect(literal(["a", 'b"c', null])).toBe(String.raw` E'{"a","b\\"c",NULL}'`);
    expect(literal(-1)).toBe(`'-1'`);
    expect(literal(null)).toBe("NULL");
    expect(literal(true)).toBe(`'true'`);
  });
});

describe("round trips per run", () => {
  it("a one-node graph's run takes 10 round trips to the database, its admission and its outcome one each", async () => {
    const rt = await createRuntime({ graphs: { ordered }, store: postgresStore({ connectionString: url, schema: `one_trip_rt_${process.pid}_${n++}` }) });
    try {
      const t = await rt.threads.create();
      // Warm: the caches a run's commits rely on (the latest checkpoint put) are filled.
      for (let i = 0; i < 2; i++) await rt.runs.wait(t.thread_id, "ordered", { input: { n: i, sleep: 0 } });
      const N = 10;
      const { texts } = await counted(async () => {
        for (let i = 0; i < N; i++) await rt.runs.wait(t.thread_id, "ordered", { input: { n: i, sleep: 0 } });
      });
      // Statement by statement, the admission alone is 5 round trips and the outcome 7 (21 a run in all).
      expect(texts.filter((q) => /^\s*BEGIN\b/.test(q))).toEqual([]);
      // 10 a run, and a little for what timers do meanwhile (without one round trip per commit it would be 14 or more).
      expect(texts.length / N).toBeLessThanOrEqual(11);
    } finally {
      await rt.close();
    }
  });
});
