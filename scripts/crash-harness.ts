/**
 * Kills a child running echo turns on a JSON-file store (scripts/crash-child.ts: the commits of
 * a run at the store level) with SIGKILL at random moments. After each kill the store is opened
 * again and must be consistent (every checkpoint's parent exists, every run's thread exists) and
 * hold every write the child acknowledged. Used by test/persistence/crash.test.ts (a few kills)
 * and scripts/crash-soak.ts (many). (Recovering runs left pending or running, D10, is the
 * runtime's part and is tested with it.)
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import type { Store } from "../src/persistence/types.js";

const child = fileURLToPath(new URL("./crash-child.ts", import.meta.url));

export interface CrashReport {
  kills: number;
  failures: string[];
  acknowledged: number;
}

/** What the children acknowledged so far. */
interface Acked {
  threads: Set<string>;
  /** run id -> thread and the last acknowledged status. */
  runs: Map<string, { thread: string; status: string }>;
  count: number;
}

function runChild(dir: string, maxDelayMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", child, dir], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!timer && out.includes("ready\n")) timer = setTimeout(() => proc.kill("SIGKILL"), Math.random() * maxDelayMs);
    });
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    proc.on("error", reject);
    proc.on("close", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`crash child exited by itself (${signal ?? code}): ${err}`));
      else resolve(out);
    });
  });
}

function record(acked: Acked, out: string) {
  // A line cut by the kill (after the last newline) is not an acknowledgement.
  for (const line of out.split("\n").slice(0, -1)) {
    const [word, kind, thread, run, status] = line.split(" ");
    if (word !== "ack" || !thread) continue;
    acked.count++;
    if (kind === "thread") acked.threads.add(thread);
    else acked.runs.set(run!, { thread, status: status! });
  }
}

async function integrity(store: Store, acked: Acked): Promise<string[]> {
  const problems: string[] = [];
  const threads = new Map((await store.queryThreads({})).map((t) => [t.thread_id, t]));
  for (const id of acked.threads) if (!threads.has(id)) problems.push(`acknowledged thread ${id} lost`);
  for (const id of threads.keys()) {
    const cps = await store.listCheckpoints(id);
    const ids = new Set(cps.map((c) => c.checkpoint.id));
    for (const cp of cps) {
      if (cp.parent_checkpoint_id !== null && !ids.has(cp.parent_checkpoint_id)) {
        problems.push(`checkpoint ${cp.checkpoint.id} of ${id}: parent ${cp.parent_checkpoint_id} missing`);
      }
    }
  }
  for (const run of await store.queryRuns({})) {
    if (!threads.has(run.thread_id)) problems.push(`run ${run.run_id}: thread ${run.thread_id} missing`);
  }
  for (const [id, { thread, status }] of acked.runs) {
    const run = await store.getRun(id);
    if (!run) problems.push(`acknowledged run ${id} lost`);
    else if (status === "success" && run.status !== "success") problems.push(`run ${id}: acknowledged success, found ${run.status}`);
    else if (status === "success") {
      const values = (await store.getCheckpoint({ thread_id: thread }))?.checkpoint.channel_values;
      if (!values || !("messages" in values)) problems.push(`thread ${thread}: no messages after acknowledged run ${id}`);
    }
  }
  return problems;
}

async function check(dir: string, acked: Acked): Promise<string[]> {
  const store = jsonFileStore(dir);
  try {
    await store.open();
  } catch (err) {
    return [`reopen failed: ${(err as Error).message}`];
  }
  try {
    return await integrity(store, acked);
  } finally {
    await store.close();
  }
}

/** Runs `kills` kill-and-check cycles on the store in `dir`. */
export async function crashCycles(dir: string, kills: number, maxDelayMs = 800): Promise<CrashReport> {
  const acked: Acked = { threads: new Set(), runs: new Map(), count: 0 };
  const failures: string[] = [];
  for (let i = 0; i < kills; i++) {
    record(acked, await runChild(dir, maxDelayMs));
    for (const p of await check(dir, acked)) failures.push(`kill ${i + 1}: ${p}`);
  }
  return { kills, failures, acknowledged: acked.count };
}
