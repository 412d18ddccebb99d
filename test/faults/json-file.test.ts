/**
 * Fault injection, JSON-file store (D66): a process executing `ledger` runs (four steps, each
 * appending to a ledger file outside the store) is SIGKILLed 20 times at random moments while
 * runs are created on it; each time a replacement opens the directory. A run is killed at most
 * twice (maxAttempts is 3), so every acknowledged run must complete. Afterwards: every
 * acknowledged run succeeded with each step done once in its state, only steps that were cut off
 * ran twice (the ledger against the checkpoints), no thread is left busy. The replacement
 * resumes the cut-off runs as soon as it opens (their leases are void, D64): the delay from
 * opening to each resumed attempt's first step is reported, and must be far below the lease.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { lineChild, type LineChild } from "./child.js";
import { checkLedger, completedIn, parseLedger, resumeDelays, sleep, type Cut, type RunTrail } from "./ledger.js";
import { percentile } from "./figures.js";

const KILLS = 20;
const STEP_MS = 60;
const root = await mkdtemp(join(tmpdir(), "graphdock-faults-json-"));
afterAll(() => rm(root, { recursive: true, force: true }));

it("20 SIGKILLs of a JSON-file process mid-run: every acknowledged run completes, only cut-off steps run twice, resumed at once on reopening", async () => {
  const dir = join(root, "store");
  const ledger = join(root, "ledger.txt");
  const script = fileURLToPath(new URL("./fixtures/json-child.ts", import.meta.url));
  const spawnChild = () => lineChild(script, [dir, ledger, String(STEP_MS)]);
  const started = Date.now();

  /** run id -> thread id, for every acknowledged run. */
  const acked = new Map<string, string>();
  const finished = new Set<string>();
  /** run id -> kills it was executing at. */
  const kills = new Map<string, number>();
  /** For each kill: the runs cut off, and when the replacement started opening. */
  const cuts: Cut[] = [];
  const ledgerLines = () => parseLedger(readFileSync(ledger, { encoding: "utf8", flag: "a+" }));
  const follow = (c: LineChild) => {
    c.proc.stdout!.on("data", () => {
      for (const l of c.lines.slice(followed.get(c) ?? 0)) {
        const [word, id, arg] = l.split(" ");
        if (word === "ack") acked.set(id!, arg!);
        else if (word === "finished") finished.add(id!);
      }
      followed.set(c, c.lines.length);
    });
  };
  const followed = new Map<LineChild, number>();

  /** How long each createRuntime took (the store's open included). */
  const opened: number[] = [];
  /** Opens the store in a loaded child: returns when it started opening (epoch ms). */
  const go = async (c: LineChild) => {
    c.send("go");
    const opening = Number((await c.line("opening ")).split(" ")[1]);
    opened.push(Number((await c.line("ready ")).split(" ")[1]) - opening);
    return opening;
  };

  let current = spawnChild();
  follow(current);
  await current.line("loaded");
  await go(current);
  // A run created every 100 ms on the process of the moment (each takes 4 x STEP_MS).
  let stop = false;
  const load = (async () => {
    while (!stop) {
      current.send("run");
      await sleep(100);
    }
  })();
  for (let k = 0; k < KILLS; ) {
    const next = spawnChild(); // loads while `current` works
    follow(next);
    const loaded = next.line("loaded");
    // Every other kill waits (a while) for a run cut off once to be executing again, right after
    // the restart: some runs are killed twice and finish in their third attempt.
    const twice = k % 2 === 1;
    if (!twice) await loaded;
    let inFlight: string[] = [];
    let lines = ledgerLines();
    for (let waited = 0; ; waited++) {
      await sleep(twice ? 20 : 50 + Math.random() * 250);
      // In flight here: runs with steps started by this process that it has not finished.
      const pid = String(current.proc.pid);
      lines = ledgerLines();
      inFlight = [...new Set(lines.filter((l) => l.who === pid && !finished.has(l.run)).map((l) => l.run))];
      // Not while a run already killed twice executes (or nothing does): it finishes first.
      if (inFlight.length === 0 || inFlight.some((r) => (kills.get(r) ?? 0) >= 2)) continue;
      if (!twice || waited > 50 || inFlight.some((r) => kills.get(r) === 1)) break;
    }
    await current.kill();
    await loaded;
    k++;
    const lastAttempt = (run: string) => Math.max(...lines.filter((l) => l.run === run).map((l) => l.attempt));
    for (const r of inFlight) kills.set(r, (kills.get(r) ?? 0) + 1);
    current = next;
    const opening = await go(next);
    cuts.push({ runs: inFlight.map((run) => ({ run, attempt: lastAttempt(run) })), at: opening });
  }

  // The last process finishes everything, then closes.
  stop = true;
  await load;
  for (;;) {
    current.send("inflight");
    if ((await current.line("inflight ")) === "inflight 0") break;
    await sleep(100);
  }
  current.send("close");
  await current.exited;

  const store = jsonFileStore(dir);
  await store.open();
  const trails: RunTrail[] = [];
  let busy = 0;
  try {
    for (const [runId, threadId] of acked) {
      const run = await store.getRun(runId);
      const state = await store.getCheckpoint({ thread_id: threadId });
      trails.push({
        run_id: runId,
        status: run?.status ?? "missing",
        attempt: run?.attempt ?? 0,
        done: ((state?.checkpoint.channel_values.done as string[] | undefined) ?? []).slice(),
        completedIn: completedIn(await store.listCheckpoints(threadId), runId),
      });
    }
    busy = await store.countThreads({ status: "busy" });
  } finally {
    await store.close();
  }

  const lines = ledgerLines();
  const verdict = checkLedger(lines, trails);
  // Resume delay: from a replacement starting to open the store to the first step of each cut-off run's next attempt.
  const delays = resumeDelays(cuts, lines);
  const cutRuns = cuts.reduce((n, c) => n + c.runs.length, 0);
  console.log(
    `faults, JSON file: ${cuts.length} SIGKILLs cutting off ${cutRuns} runs; ${acked.size} acknowledged runs (${trails.filter((t) => t.status === "success").length} success); ` +
      `${lines.length} step executions, ${verdict.rerun} re-run (cut-off attempts by steps left to redo: ${JSON.stringify(verdict.rerunPerCut)}); ` +
      `runs killed twice: ${[...kills.values()].filter((n) => n === 2).length}; threads busy: ${busy}; ` +
      `resumed after createRuntime began: median ${percentile(delays, 0.5)} ms, max ${Math.max(...delays)} ms (${delays.length} resumes; createRuntime itself: median ${percentile(opened, 0.5)} ms, max ${Math.max(...opened)} ms); ` +
      `${Math.round((Date.now() - started) / 1000)} s`,
  );
  expect(verdict.problems).toEqual([]);
  expect(busy).toBe(0);
  expect(cuts.length).toBe(KILLS);
  expect(acked.size).toBeGreaterThan(KILLS);
  expect(Math.max(...kills.values())).toBeLessThanOrEqual(2);
  // Runs cut off mid-step were resumed (their next attempt ran a step; a run cut off after its
  // last step has none to run) right after opening, not after their 30 s lease (a generous
  // bound for a loaded machine).
  expect(delays.length).toBeGreaterThanOrEqual(KILLS / 2);
  expect(Math.max(...delays)).toBeLessThan(10_000);
}, 240_000);
