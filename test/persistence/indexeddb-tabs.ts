/**
 * Two IndexedDB store instances on one database name, as two tabs: notifications, run events
 * and conditional commits across them. Imports only `vitest` and core-safe src modules, so the
 * browser harness runs it on real IndexedDB too (two instances in one page share the database
 * and the BroadcastChannel exactly as two tabs do).
 */
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import type { RunEventRecord, Store } from "../../src/persistence/types.js";
import type { ThreadRecord } from "../../src/types.js";

const T0 = "2026-01-01T00:00:00.000Z";
const thread = (id: string, over: Partial<ThreadRecord> = {}): ThreadRecord => ({
  thread_id: id,
  created_at: T0,
  updated_at: T0,
  state_updated_at: T0,
  metadata: {},
  status: "idle",
  config: {},
  values: {},
  interrupts: {},
  ...over,
});

const within = <T>(p: Promise<T>, ms = 5000, what = "timed out"): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(what)), ms))]);

async function collect(iter: AsyncIterable<RunEventRecord>, max = Infinity): Promise<RunEventRecord[]> {
  const out: RunEventRecord[] = [];
  for await (const rec of iter) {
    out.push(rec);
    if (out.length >= max) break;
  }
  return out;
}

export function twoTabsSuite(name: string, open: (db: string) => Promise<Store>): void {
  let n = 0;
  const fresh = () => `tabs-${Date.now()}-${n++}`;
  const pair = async () => {
    const db = fresh();
    return [await open(db), await open(db), db] as const;
  };

  describe(`two instances on one database: ${name}`, () => {
    it("delivers a notify committed in one to subscribers of both, after the commit", async () => {
      const [a, b] = await pair();
      const inB = new Promise<string | undefined>((resolve) => b.subscribe("runs:t1", resolve));
      const inA = new Promise<string | undefined>((resolve) => a.subscribe("runs:t1", resolve));
      let other = 0;
      b.subscribe("other", () => other++);
      await a.commit([{ op: "thread.put", thread: thread("t1") }, { op: "notify", topic: "runs:t1", payload: "wake" }]);
      expect(await within(inB)).toBe("wake");
      expect(await within(inA)).toBe("wake");
      expect(await b.getThread("t1")).toBeDefined();
      // A failed commit notifies nobody.
      let late = 0;
      b.subscribe("never", () => late++);
      const failed = await a
        .commit([{ op: "thread.put", thread: thread("t1"), expect: { exists: false } }, { op: "notify", topic: "never" }])
        .then(() => undefined, (e: unknown) => e);
      expect(GraphdockError.is(failed, "conflict")).toBe(true);
      await new Promise((r) => setTimeout(r, 50));
      expect(late).toBe(0);
      expect(other).toBe(0);
      await a.close();
      await b.close();
    });

    it("streams events published in one live to the other, and replays them there", async () => {
      const [a, b, db] = await pair();
      await a.events.open("r1", { resumable: true });
      const live = collect(b.events.read("r1", { after: -1 }));
      for (let i = 0; i < 5; i++) a.events.publish("r1", "values", { i });
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 5; i < 10; i++) a.events.publish("r1", "values", { i });
      await a.events.end("r1");
      const got = await within(live);
      expect(got.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(got[7]).toEqual({ seq: 7, event: "values", data: { i: 7 } });
      // Replayed in the other tab (and in a third one opened later), from any position.
      expect((await within(collect(b.events.read("r1", { after: 6 })))).map((e) => e.seq)).toEqual([7, 8, 9]);
      const c = await open(db);
      expect((await within(collect(c.events.read("r1", { after: -1 })))).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await c.close();
      // Non-resumable: live only, not persisted.
      await a.events.open("r2", { resumable: false });
      const liveOnly = collect(b.events.read("r2", { after: -1 }));
      await new Promise((r) => setTimeout(r, 20));
      a.events.publish("r2", "messages", "x");
      a.events.publish("r2", "messages", "y");
      await a.events.end("r2");
      expect((await within(liveOnly)).map((e) => e.data)).toEqual(["x", "y"]);
      // Dropped logs replay nothing.
      await a.events.drop("r1");
      expect(await within(collect(b.events.read("r1", { after: -1, signal: AbortSignal.timeout(300) })))).toEqual([]);
      await a.close();
      await b.close();
    });

    it("waits in one for a log the other has not opened yet", async () => {
      const [a, b] = await pair();
      const waiting = collect(b.events.read("r9", { after: -1 }));
      await new Promise((r) => setTimeout(r, 30));
      await a.events.open("r9", { resumable: true });
      a.events.publish("r9", "metadata", { run_id: "r9" });
      await a.events.end("r9");
      expect((await within(waiting)).map((e) => e.event)).toEqual(["metadata"]);
      await a.close();
      await b.close();
    });

    it("lets exactly one of two racing conditional commits win", async () => {
      const [a, b] = await pair();
      await a.commit([{ op: "thread.put", thread: thread("t1") }]);
      for (let round = 0; round < 5; round++) {
        const [ra, rb] = [await a.getThread("t1"), await b.getThread("t1")];
        const results = await Promise.allSettled([
          a.commit([{ op: "thread.put", thread: thread("t1", { status: "busy", metadata: { by: "a", round } }), expect: { sameAs: ra! } }]),
          b.commit([{ op: "thread.put", thread: thread("t1", { status: "busy", metadata: { by: "b", round } }), expect: { sameAs: rb! } }]),
        ]);
        const won = results.filter((r) => r.status === "fulfilled");
        expect(won).toHaveLength(1);
        const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        expect(GraphdockError.is(lost.reason, "conflict")).toBe(true);
        const winner = results[0]!.status === "fulfilled" ? "a" : "b";
        expect((await b.getThread("t1"))?.metadata).toEqual({ by: winner, round });
      }
      // Leases: of two tabs taking a free lease at once, one gets it.
      const now = 1_000_000;
      const take = (s: Store, owner: string) =>
        s.commit([{ op: "lease.put", lease: { key: "thread:t1", owner, expires_at: now + 1000, data: {} }, expect: { state: "free", now } }]);
      const leases = await Promise.allSettled([take(a, "A"), take(b, "B")]);
      expect(leases.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const holder = (await a.getLease("thread:t1"))!.owner;
      expect(holder).toBe(leases[0]!.status === "fulfilled" ? "A" : "B");
      await a.close();
      await b.close();
    });
  });
}
