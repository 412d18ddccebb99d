/**
 * Fault injection, PostgreSQL (D66): `graphdock serve` processes (three) on one schema execute
 * `ledger` runs of a hosted LangGraph.js graph (four steps, each appending to a ledger file
 * outside the store); runs are created through either, over HTTP with the official SDK client.
 * A process executing runs is SIGKILLed 20 times and replaced; another resumes its runs once
 * their leases expire (no store here can tell at once that a process died: 2 s leases). Every
 * other kill waits for a run cut off once to be executing again, so some runs finish in their
 * third attempt. A run counts as cut off by a kill when the killed process held its thread's
 * lease, read from the store's leases table: also a run it had claimed but not yet logged a step
 * of (its ledger has no line of that process). Afterwards: every acknowledged run succeeded,
 * only steps that were cut off ran twice, no thread is busy; the delay from each kill to the
 * resumed attempt's first step is reported.
 */
import { Client } from "@langchain/langgraph-sdk";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, expect, inject, it } from "vitest";
import { tempDir } from "../browser/harness.js";
import { startServer, type Server } from "../postgres/procs.js";
import { percentile } from "./figures.js";
import { checkLedger, completedIn, parseLedger, resumeDelays, sleep, type Cut, type RunTrail } from "./ledger.js";

const KILLS = 20;
const LEASE_MS = 2000;
const STEP_MS = 150;
const schema = `faults_${process.pid}`;
const store = `${inject("pgUrl")}?schema=${schema}`;
const db = new pg.Client({ connectionString: inject("pgUrl") });
const files = tempDir("faults-pg");
const ledger = join(files.path, "ledger.txt");
const all: Server[] = [];
afterAll(async () => {
  await db.end();
  await Promise.all(all.map((s) => s.stop()));
  files.remove();
});

const client = (s: Server) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } });
const start = async () => {
  const s = await startServer(store, ["--lease-ms", String(LEASE_MS)], "test/faults/fixtures/graph.json", {
    GRAPHDOCK_FAULT_LEDGER: ledger,
    GRAPHDOCK_FAULT_STEP_MS: String(STEP_MS),
  });
  all.push(s);
  return s;
};
const final = new Set(["success", "error", "interrupted", "timeout"]);

/**
 * The runs held (their thread's lease) by the runtime that holds the lease of any of `runs`: a
 * process's runs, found from runs of it known by the ledger (a lease's owner is a runtime's id,
 * not its pid), including those it claimed but has not logged a step of yet.
 */
async function heldWith(runs: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ owner: string; run_id: string }>(`SELECT owner, data->>'run_id' AS run_id FROM ${schema}.leases WHERE starts_with(key, 'thread:')`);
  const owners = new Set(rows.filter((r) => runs.includes(r.run_id)).map((r) => r.owner));
  return rows.filter((r) => owners.has(r.owner)).map((r) => r.run_id);
}

it("20 SIGKILLs of a PostgreSQL process mid-run: every acknowledged run completes on the other, only cut-off steps run twice", async () => {
  const started = Date.now();
  await db.connect();
  const lines = () => parseLedger(readFileSync(ledger, { encoding: "utf8", flag: "a+" }));
  // Three processes; each one killed is replaced in the background (a start takes seconds), and
  // a process is killed only while another is up to resume its runs.
  let live: Server[] = await Promise.all([start(), start(), start()]);
  const replacing: Array<Promise<void>> = [];
  const pick = () => live[Math.floor(Math.random() * live.length)]!;
  const acked = new Map<string, string>();
  let refused = 0;
  let stop = false;
  // Runs created through either process, a few at a time, each on a new thread.
  const load = (async () => {
    while (!stop) {
      try {
        const c = client(pick());
        const thread = await c.threads.create();
        const run = await c.runs.create(thread.thread_id, "ledger", { input: {} });
        acked.set(run.run_id, thread.thread_id);
      } catch {
        refused++; // its process was killed meanwhile: not acknowledged
      }
      await sleep(300);
    }
  })();

  const kills = new Map<string, number>();
  /** Runs seen ended (not asked about again). */
  const ended = new Set<string>();
  const cuts: Cut[] = [];
  const status = async (run: string) => {
    for (const s of live) {
      try {
        return (await client(s).runs.get(acked.get(run)!, run)).status;
      } catch {
        // that one may be dying: ask the other
      }
    }
    return "unknown";
  };
  // Every other kill waits (up to ~6 s) for a run cut off once to be executing again, and kills
  // that process: some runs are cut off twice and finish in their third attempt.
  let waitedForResumed = 0;
  for (let k = 0; k < KILLS; ) {
    const twice = k % 2 === 1 && waitedForResumed < 60;
    await sleep(twice ? 100 : 100 + Math.random() * 400);
    if (live.length < 2) continue;
    const now = lines();
    // Each run's latest step: who executes it, in which attempt.
    const latest = new Map<string, { who: string; attempt: number }>();
    for (const l of now) latest.set(l.run, { who: l.who, attempt: l.attempt });
    let victim: Server | undefined;
    if (twice) {
      const resumed = [...latest].find(([run, l]) => kills.get(run) === 1 && l.attempt >= 2 && !ended.has(run) && live.some((s) => String(s.child.pid) === l.who));
      victim = resumed && live.find((s) => String(s.child.pid) === resumed[1].who);
      if (!victim) {
        waitedForResumed++;
        continue;
      }
    }
    victim ??= pick();
    waitedForResumed = 0;
    const pid = String(victim.child.pid);
    // Runs this process executes: its steps are the runs' latest, and they have not ended.
    const mine = [...latest].filter(([run, l]) => l.who === pid && acked.has(run) && !ended.has(run)).map(([run, l]) => ({ run, attempt: l.attempt }));
    const statuses = await Promise.all(mine.map((m) => status(m.run)));
    const inFlight = mine.filter((m, i) => !final.has(statuses[i]!));
    for (const [i, m] of mine.entries()) if (final.has(statuses[i]!)) ended.add(m.run);
    if (inFlight.length === 0) continue;
    const held = await heldWith(inFlight.map((m) => m.run));
    if ([...inFlight.map((m) => m.run), ...held].some((run) => (kills.get(run) ?? 0) >= 2)) continue;
    const cut = victim;
    await cut.kill();
    live = live.filter((s) => s !== cut);
    k++;
    // What it held when it died (read again: it may have claimed more since), its logged runs too.
    for (const run of new Set([...inFlight.map((m) => m.run), ...held, ...(await heldWith(inFlight.map((m) => m.run)))])) kills.set(run, (kills.get(run) ?? 0) + 1);
    cuts.push({ at: Date.now(), runs: inFlight });
    replacing.push(start().then((s) => void live.push(s)));
  }
  stop = true;
  await load;
  await Promise.all(replacing);

  // Every acknowledged run ends (a cut-off one on whichever process resumes it).
  const killing = Date.now() - started;
  const c = client(live[0]!);
  const trails: RunTrail[] = [];
  const queue = [...acked];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [run_id, thread_id] = next;
        await c.runs.join(thread_id, run_id);
        const [run, history] = await Promise.all([c.runs.get(thread_id, run_id), c.threads.getHistory(thread_id, { limit: 100 })]);
        trails.push({
          run_id,
          status: run.status,
          attempt: (run as { attempt?: number }).attempt ?? 0,
          done: ((history[0]?.values as { done?: string[] } | undefined)?.done ?? []).slice(),
          completedIn: completedIn(history.map((s) => ({ metadata: s.metadata as Record<string, unknown> })), run_id),
        });
      }
    }),
  );
  const busy = (await c.threads.search({ status: "busy", limit: 1000 })).length;

  const ledgerLines = lines();
  const verdict = checkLedger(ledgerLines, trails);
  const delays = resumeDelays(cuts, ledgerLines);
  console.log(
    `faults, PostgreSQL: ${cuts.length} SIGKILLs cutting off ${cuts.reduce((n, x) => n + x.runs.length, 0)} runs; ${acked.size} acknowledged runs ` +
      `(${trails.filter((t) => t.status === "success").length} success, ${[...kills.values()].filter((n) => n === 2).length} cut off twice), ${refused} requests refused by killed processes; ` +
      `${ledgerLines.length} step executions, ${verdict.rerun} re-run (${JSON.stringify(verdict.rerunPerCut)}); threads busy: ${busy}; ` +
      `resumed after the kill: median ${percentile(delays, 0.5)} ms, max ${Math.max(...delays)} ms (lease ${LEASE_MS} ms); ${Math.round(killing / 1000)} s of kills, ${Math.round((Date.now() - started) / 1000)} s in all`,
  );
  for (const t of trails) if (t.status !== "success") console.log(`run ${t.run_id} ended ${t.status} in attempt ${t.attempt}, cut off by ${kills.get(t.run_id) ?? 0} kills`);
  expect(verdict.problems).toEqual([]);
  expect(busy).toBe(0);
  expect(cuts.length).toBe(KILLS);
  expect(acked.size).toBeGreaterThan(KILLS);
  expect([...kills.values()].some((n) => n === 2)).toBe(true);
  expect(Math.max(...kills.values())).toBeLessThanOrEqual(2);
}, 300_000);
