/**
 * Crash test (D20, D22, D60, D67): three `graphdock serve` processes on one database under a
 * steady load of enqueued runs, one of them SIGKILLed and replaced 20 times, and one stopped
 * (SIGSTOP) for longer than its lease and then continued 10 times. Afterwards: every
 * acknowledged run is there (one cut off by a kill is resumed by another process), none executed
 * twice (each run's input appears at most once in its thread's state), every successful run's
 * write is in its thread's state, never two runs at once on a thread, and no thread is left busy.
 * A run that breaks one of these is printed with its checkpoints (which run and attempt wrote
 * each, on which parent).
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, expect, inject, it } from "vitest";
import { sleep, startServer, until, type Server } from "./procs.js";

const LEASE_MS = 1000;
const KILLS = 20;
/** Stalls: a process stopped (SIGSTOP) for longer than its lease, then let go on (SIGCONT). */
const STALLS = 10;
const THREADS = 8;
const store = `${inject("pgUrl")}?schema=crash_${process.pid}`;
const live = new Set<Server>();
const all: Server[] = [];
/** Replacements being started (one may still be starting when the test ends). */
const starting: Array<Promise<Server>> = [];

afterAll(async () => {
  await Promise.allSettled(starting);
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

type Values = { order: number[]; spans: number[][]; n?: number };

/** What a run counted as executed twice or missing looked like: its run record, the thread's order around its n, its checkpoints. */
async function explain(c: Client, threadId: string, v: Values, suspects: string[], acked: Map<string, { thread: string; n: number }>) {
  const lines = [`thread ${threadId}: ${suspects.join("; ")}`];
  const history: Awaited<ReturnType<Client["threads"]["getHistory"]>> = [];
  for (;;) {
    const before = history.at(-1)?.checkpoint;
    const page = await c.threads.getHistory(threadId, { limit: 1000, ...(before ? { before: { configurable: { ...before } } } : {}) });
    history.push(...page);
    if (page.length < 1000) break;
  }
  const runs = await c.runs.list(threadId, { limit: 1000 });
  const ns = new Set<number>();
  for (const s of suspects) for (const m of s.matchAll(/n (\d+)/g)) ns.add(Number(m[1]));
  const runOf = (n: number) => [...acked].find(([, a]) => a.thread === threadId && a.n === n)?.[0];
  for (const n of ns) {
    const at = v.order.indexOf(n);
    const from = Math.max(0, at - 3);
    lines.push(
      at < 0
        ? `  n ${n}: not in the thread's order (${v.order.length} entries)`
        : `  n ${n}: order[${from}..${at + 3}] = ${JSON.stringify(v.order.slice(from, at + 4))}, spans ${JSON.stringify(v.spans.slice(from, at + 4))}`,
    );
    for (const [runId, a] of acked) {
      if (a.thread !== threadId || a.n !== n) continue;
      const run = runs.find((r) => r.run_id === runId) as (typeof runs)[number] & { attempt?: number };
      lines.push(`  run ${runId}: status ${run?.status}, attempt ${run?.attempt}, created ${run?.created_at}, updated ${run?.updated_at}`);
    }
    // The thread's checkpoints (newest first) around this n's: which run and attempt wrote each, when, on what.
    const hits = history.flatMap((s, i) => ((s.metadata as Record<string, unknown> | null)?.run_id === runOf(n) || (s.values as Values).n === n ? [i] : []));
    if (hits.length === 0) continue;
    for (let i = Math.max(0, Math.min(...hits) - 6); i <= Math.min(history.length - 1, Math.max(...hits) + 6); i++) {
      const s = history[i]!;
      const m = s.metadata as Record<string, unknown> | null;
      const values = s.values as Values;
      lines.push(
        `    #${i} checkpoint ${s.checkpoint.checkpoint_id} (parent ${s.parent_checkpoint?.checkpoint_id}): run_id ${m?.run_id}, run_attempt ${m?.run_attempt}, step ${m?.step}, source ${m?.source}, ` +
          `next ${JSON.stringify(s.next)}, n ${values.n}, created ${s.created_at}, order tail ${JSON.stringify(values.order?.slice(-4))}, last span ${JSON.stringify(values.spans?.at(-1))}`,
      );
    }
  }
  return lines.join("\n");
}

it("20 SIGKILLs and 10 stalls under load: no acknowledged write lost, no run executed twice or missing, no thread left busy", async () => {
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
  let stalls = 0;
  while (kills < KILLS) {
    await sleep(400 + Math.random() * 400);
    if (live.size < 2) {
      await sleep(200);
      continue;
    }
    if (stalls < Math.min(STALLS, kills)) {
      // Its runs are resumed elsewhere meanwhile; what it was sending, or about to, must not land.
      const stalled = anyLive();
      stalled.child.kill("SIGSTOP");
      try {
        await sleep(LEASE_MS * (1 + Math.random()));
      } finally {
        stalled.child.kill("SIGCONT");
      }
      stalls++;
      continue;
    }
    const victim = anyLive();
    live.delete(victim);
    await victim.kill();
    kills++;
    starting.push(start());
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
  let missing = 0;
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
    const suspects: string[] = [];
    for (const [n, count] of seen) if (count > 1) (twice++, suspects.push(`n ${n} appears ${count} times`));
    for (let i = 1; i < (v.spans ?? []).length; i++) if (v.spans[i]![0]! < v.spans[i - 1]![1]!) overlapping++;
    for (const [runId, a] of acked) {
      if (a.thread !== t) continue;
      const status = byThread.get(t)!.get(runId);
      if (status === undefined) lost++;
      else if (status === "success") {
        success++;
        if (!seen.has(a.n)) (missing++, suspects.push(`successful run ${runId} (n ${a.n}) is missing from the state`));
      } else errors++;
    }
    if (suspects.length > 0) console.log(await explain(c, t, v, suspects, acked));
  }
  console.log(
    `crash test: ${kills} SIGKILLs, ${stalls} stalls, ${acked.size} acknowledged runs (${success} success, ${errors} error), ${failedRequests} requests failed on killed processes; ` +
      `lost ${lost}, executed twice ${twice}, successful but missing ${missing}, overlapping ${overlapping}, threads busy ${busy}`,
  );
  // A run may be cut off here in each of its attempts (kills and stalls are not limited per run):
  // it then ends error; test/faults limits them and requires every run to succeed.
  expect({ lost, twice, missing, overlapping, busy }).toEqual({ lost: 0, twice: 0, missing: 0, overlapping: 0, busy: 0 });
  expect(stalls).toBe(STALLS);
  expect(acked.size).toBeGreaterThan(50);
}, 300_000);
