/**
 * Kills a child writing to a JSON-file store with SIGKILL at random moments, then checks after
 * each kill that the store opens, is consistent (every checkpoint's parent exists, every run's
 * thread exists, every checkpoint decodes) and holds every write the child acknowledged.
 * Used by test/persistence/crash.test.ts (a few kills) and scripts/crash-soak.ts (many).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { jsonFileStore } from "../src/persistence/json-file/index.js";

const child = fileURLToPath(new URL("./crash-child.ts", import.meta.url));

export interface CrashReport {
  kills: number;
  failures: string[];
  acknowledged: number;
}

/** What the children acknowledged so far: checkpoint ids per thread, last status per run. */
interface Acked {
  checkpoints: Map<string, string[]>;
  runs: Map<string, { thread: string; status: string }>;
  count: number;
}

function runChild(dir: string, tag: string, maxDelayMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", child, dir, tag], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!timer && out.includes("ready\n")) {
        timer = setTimeout(() => proc.kill("SIGKILL"), Math.random() * maxDelayMs);
      }
    });
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    proc.on("error", reject);
    proc.on("close", (_code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`crash child exited by itself (${signal ?? _code}): ${err}`));
      else resolve(out);
    });
  });
}

function record(acked: Acked, out: string) {
  // A line cut by the kill (after the last newline) is not an acknowledgement.
  for (const line of out.split("\n").slice(0, -1)) {
    const [word, kind, thread, id, status] = line.split(" ");
    if (word !== "ack" || !id) continue;
    acked.count++;
    if (kind === "checkpoint") {
      const list = acked.checkpoints.get(thread!) ?? [];
      list.push(id);
      acked.checkpoints.set(thread!, list);
    } else {
      acked.runs.set(id, { thread: thread!, status: status! });
    }
  }
}

async function check(dir: string, acked: Acked): Promise<string[]> {
  const problems: string[] = [];
  const store = jsonFileStore(dir);
  try {
    await store.open();
  } catch (err) {
    return [`open failed: ${(err as Error).message}`];
  }
  try {
    const threads = new Set((await store.listThreads()).map((t) => t.thread_id));
    for (const thread of new Set([...threads, ...acked.checkpoints.keys()])) {
      const cps = await store.listCheckpoints(thread);
      const ids = new Set(cps.map((c) => c.checkpoint.id));
      for (const cp of cps) {
        if (cp.parent_checkpoint_id !== null && !ids.has(cp.parent_checkpoint_id)) {
          problems.push(`checkpoint ${cp.checkpoint.id} of ${thread}: parent ${cp.parent_checkpoint_id} missing`);
        }
        const messages = cp.checkpoint.channel_values.messages as unknown[];
        if (!Array.isArray(messages) || messages.length === 0) problems.push(`checkpoint ${cp.checkpoint.id}: bad values`);
      }
      for (const id of acked.checkpoints.get(thread) ?? []) {
        if (!ids.has(id)) problems.push(`acknowledged checkpoint ${id} of ${thread} lost`);
      }
    }
    for (const run of await store.listRuns()) {
      if (!threads.has(run.thread_id)) problems.push(`run ${run.run_id}: thread ${run.thread_id} missing`);
    }
    for (const [id, { status }] of acked.runs) {
      const run = await store.getRun(id);
      if (!run) problems.push(`acknowledged run ${id} lost`);
      else if (status === "success" && run.status !== "success") problems.push(`run ${id}: acknowledged success, found ${run.status}`);
    }
  } finally {
    await store.close();
  }
  return problems;
}

/** Runs `kills` kill-and-check cycles on the store in `dir`. */
export async function crashCycles(dir: string, kills: number, maxDelayMs = 600): Promise<CrashReport> {
  const acked: Acked = { checkpoints: new Map(), runs: new Map(), count: 0 };
  const failures: string[] = [];
  for (let i = 0; i < kills; i++) {
    record(acked, await runChild(dir, `k${i}`, maxDelayMs));
    for (const p of await check(dir, acked)) failures.push(`kill ${i + 1}: ${p}`);
  }
  return { kills, failures, acknowledged: acked.count };
}
