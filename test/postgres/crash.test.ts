/**
 * Crash test (D20, D22, D60): three `graphdock serve` processes on one database under a steady
 * load of enqueued runs, one of them SIGKILLed and replaced 20 times. Afterwards: every
 * acknowledged run is there (one cut off by a kill is resumed by another process), none executed
 * twice (each run's input appears at most once in its thread's state, and every successful run's
 * exactly once), never two runs at once on a thread, and no thread is left busy.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, expect, inject, it } from "vitest";
import { sleep, startServer, until, type Server } from "./procs.js";

const LEASE_MS = 1000;
const KILLS = 20;
const THREADS = 8;
const store = `${inject("pgUrl")}?schema=crash_${process.pid}`;
const live = new Set<Server>();
const all: Server[] = [];

afterAll(async () => {
  await Promise.all(all.map((s) => s.stop()));
});

const start = async () => {
  const s = await startServer(store, ["--lease-ms", String(LEASE_MS)]);
  all.push(s);
  live.add(s);
  return s;
};
const client = (s: Server) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } });
const anyLive = () => {
  const list = [...live];
  return list[Math.floor(Math.random() * list.length)]!;
};

type Values = { order: number[]; spans: number[][] };

it("20 SIGKILLs under load: no acknowledged write lost, no run executed twice, no thread left busy", async () => {
  await Promise.all([start(), start(), start()]);
  const threads: string[] = [];
  for (let i = 0; i < THREADS; i++) threads.push((await client(anyLive()).threads.create({ metadata: { crash: true } })).thread_id);
  const acked = new Map<string, { thread: string; n: number }>();
  let next = 0;
  let stop = false;
  let failedRequests = 0;

  const load = threads.map(async (threadId) => {
    while (!stop) {
      const n = next++;
      try {
        const run = await client(anyLive()).runs.create(threadId, "ordered", { input: { n, sleep: 20 }, multitaskStrategy: "enqueue" });
        acked.set(run.run_id, { thread: threadId, n });
        if (n % 3 === 0) await client(anyLive()).runs.join(threadId, run.run_id).catch(() => undefined);
      } catch {
        failedRequests++;
        await sleep(20);
      }
    }
  });

  let kills = 0;
  while (kills < KILLS) {
    await sleep(400 + Math.random() * 400);
    if (live.size < 2) {
      await sleep(200);
      continue;
    }
    const victim = anyLive();
    live.delete(victim);
    await victim.kill();
    kills++;
    void start();
  }
  stop = true;
  await Promise.all(load);
  await until(async () => live.size >= 2, 30_000, "replacement processes");

  // Every acknowledged run ends (queued ones run on the survivors; those killed mid-run are resumed there).
  const c = client(anyLive());
  const threadsBusy = await until(
    async () => {
      for (const t of threads) {
        const runs = await c.runs.list(t, { limit: 1000 });
        if (runs.some((r) => r.status === "pending" || r.status === "running")) return false;
      }
      return true;
    },
    90_000,
    "every run to end",
  );
  expect(threadsBusy).toBe(true);

  let lost = 0;
  let twice = 0;
  let overlapping = 0;
  let busy = 0;
  let success = 0;
  let errors = 0;
  const byThread = new Map<string, Map<string, string>>();
  for (const t of threads) {
    const thread = await c.threads.get(t);
    if (thread.status === "busy") busy++;
    const runs = await c.runs.list(t, { limit: 1000 });
    byThread.set(t, new Map(runs.map((r) => [r.run_id, r.status])));
    const v = (await c.threads.getState(t)).values as Values;
    const seen = new Map<number, number>();
    for (const n of v.order ?? []) seen.set(n, (seen.get(n) ?? 0) + 1);
    for (const count of seen.values()) if (count > 1) twice++;
    for (let i = 1; i < (v.spans ?? []).length; i++) if (v.spans[i]![0]! < v.spans[i - 1]![1]!) overlapping++;
    for (const [runId, a] of acked) {
      if (a.thread !== t) continue;
      const status = byThread.get(t)!.get(runId);
      if (status === undefined) lost++;
      else if (status === "success") {
        success++;
        if (seen.get(a.n) !== 1) twice++;
      } else errors++;
    }
  }
  console.log(
    `crash test: ${kills} SIGKILLs, ${acked.size} acknowledged runs (${success} success, ${errors} error), ${failedRequests} requests failed on killed processes; ` +
      `lost ${lost}, executed twice ${twice}, overlapping ${overlapping}, threads busy ${busy}`,
  );
  // A run may be cut off here in each of its attempts (kills are not limited per run): it then
  // ends error; test/faults limits them and requires every run to succeed.
  expect({ lost, twice, overlapping, busy }).toEqual({ lost: 0, twice: 0, overlapping: 0, busy: 0 });
  expect(acked.size).toBeGreaterThan(50);
}, 300_000);
