/**
 * The side-effect ledger of the fault-injection suite (D66): every step of a `ledger` run appends
 * one line to a file outside the store when it starts (`<run id> <step> <attempt> <who>`), so
 * the executions a crash made happen twice are counted from outside, whatever the store says.
 * After the faults, each run's checkpoints tell which attempt completed each step; the ledger
 * must agree: a step completed (checkpointed) in an attempt never runs in a later one, and a
 * step runs again only in a later attempt than one that was cut off before checkpointing it.
 */
import { END, START, StateGraph } from "../../src/graph/index.js";
import type { CompiledGraph } from "../../src/graph/types.js";

/** The steps of a ledger run, in order; step k's checkpoint has `metadata.step` k. */
export const STEPS = ["s1", "s2", "s3", "s4"] as const;

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("aborted"))), { once: true });
  });

/**
 * A graphdock graph: s1 -> s2 -> s3 -> s4, each recording `<run id> <step> <attempt> <who>`
 * (the attempt read where nodes read it, `config.metadata.run_attempt`) and then working for
 * `stepMs`; its state lists the steps done.
 */
export function ledgerGraph(record: (line: string) => void | Promise<void>, who: string, stepMs: number): CompiledGraph {
  let graph = new StateGraph({ done: { reducer: (a: string[], b: string[]) => [...a, ...b], default: (): string[] => [] } });
  for (const step of STEPS) {
    graph = graph.addNode(step, async (_state, ctx) => {
      const runId = String((ctx.config.configurable as { run_id?: string }).run_id);
      await record(`${runId} ${step} ${Number(ctx.config.metadata?.run_attempt)} ${who}`);
      await sleep(stepMs, ctx.signal);
      return { done: [step] };
    });
  }
  graph = graph.addEdge(START, STEPS[0]);
  for (let i = 1; i < STEPS.length; i++) graph = graph.addEdge(STEPS[i - 1]!, STEPS[i]!);
  return graph.addEdge(STEPS.at(-1)!, END).compile();
}

export interface LedgerLine {
  run: string;
  step: string;
  attempt: number;
  who: string;
  /** Epoch ms the step started, when the writer adds it. */
  at: number;
}

export function parseLedger(text: string): LedgerLine[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [run, step, attempt, who, at] = line.split(" ");
      return { run: run!, step: step!, attempt: Number(attempt), who: who!, at: Number(at) };
    });
}

/** What the store says of one run once it ended. */
export interface RunTrail {
  run_id: string;
  status: string;
  /** Its last attempt. */
  attempt: number;
  /** Its state's `done` list. */
  done: string[];
  /** Step name -> the attempt whose checkpoint completed it (`metadata.run_attempt` of the checkpoint with that `metadata.step`). */
  completedIn: Record<string, number>;
}

/** The run's trail from its checkpoints' metadata (newest first or not). */
export function completedIn(checkpoints: Array<{ metadata: Record<string, unknown> | null | undefined }>, runId: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const cp of checkpoints) {
    const m = cp.metadata ?? {};
    if (m.run_id !== runId || typeof m.step !== "number" || m.step < 1 || m.step > STEPS.length) continue;
    out[STEPS[m.step - 1]!] = Number(m.run_attempt ?? 1);
  }
  return out;
}

export interface LedgerVerdict {
  /** Step executions beyond the first per step: each one a step that was cut off. */
  rerun: number;
  /** Executions per cut-off attempt that were re-run (a histogram: how many steps each cut-off left to redo). */
  rerunPerCut: Record<number, number>;
  problems: string[];
}

/**
 * Checks the ledger against the runs' trails: every run succeeded with every step done once in
 * its state; each step ran at most once per attempt, in or before the attempt that completed it
 * and never after; the steps an attempt ran without completing them came after every step it
 * did complete (only the steps that were cut off run again).
 */
export function checkLedger(lines: LedgerLine[], trails: RunTrail[]): LedgerVerdict {
  const problems: string[] = [];
  let rerun = 0;
  const rerunPerCut: Record<number, number> = {};
  const byRun = new Map<string, LedgerLine[]>();
  for (const l of lines) {
    const list = byRun.get(l.run);
    if (list) list.push(l);
    else byRun.set(l.run, [l]);
  }
  for (const t of trails) {
    const p = (m: string) => problems.push(`run ${t.run_id}: ${m}`);
    if (t.status !== "success") p(`ended ${t.status}`);
    if (JSON.stringify(t.done) !== JSON.stringify(STEPS)) p(`state has steps ${JSON.stringify(t.done)}`);
    const mine = byRun.get(t.run_id) ?? [];
    for (const step of STEPS) {
      const c = t.completedIn[step];
      const attempts = mine.filter((l) => l.step === step).map((l) => l.attempt);
      if (c === undefined) {
        p(`no checkpoint completed ${step}`);
        continue;
      }
      // Ran in the attempt that completed it, or before it: an attempt cut off after the step's
      // writes were saved but before its checkpoint leaves them to the next, which applies them
      // without running the step again (a LangGraph.js graph's pending writes).
      if (!attempts.some((a) => a <= c)) p(`${step} never ran up to attempt ${c}, which completed it`);
      if (attempts.some((a) => a > c)) p(`${step}, completed in attempt ${c}, ran again in attempt ${Math.max(...attempts)}`);
      if (new Set(attempts).size !== attempts.length) p(`${step} ran twice in one attempt: ${attempts.join(", ")}`);
      rerun += Math.max(0, attempts.length - 1);
    }
    // Per cut-off attempt: the steps it started but did not complete come after all it completed.
    for (let a = 1; a < t.attempt; a++) {
      const started = mine.filter((l) => l.attempt === a).map((l) => STEPS.indexOf(l.step as (typeof STEPS)[number]));
      const completed = STEPS.map((s, i) => (t.completedIn[s] === a ? i : -1)).filter((i) => i >= 0);
      const cut = started.filter((i) => t.completedIn[STEPS[i]!] !== a);
      if (cut.length && completed.length && Math.min(...cut) < Math.max(...completed)) p(`attempt ${a} completed ${completed.map((i) => STEPS[i])} but not ${cut.map((i) => STEPS[i])}, which came before`);
      rerunPerCut[cut.length] = (rerunPerCut[cut.length] ?? 0) + 1;
    }
  }
  return { rerun, rerunPerCut, problems };
}

/** The runs a fault cut off (each in the attempt it was in), and when the fault happened or its replacement started (epoch ms). */
export interface Cut {
  at: number;
  runs: Array<{ run: string; attempt: number }>;
}

/**
 * For each run a fault cut off: the delay from `cut.at` to the first step of its next attempt in
 * the ledger (a run cut off after its last step has none: it is left out).
 */
export function resumeDelays(cuts: readonly Cut[], lines: readonly LedgerLine[]): number[] {
  const delays: number[] = [];
  for (const cut of cuts) {
    for (const { run, attempt } of cut.runs) {
      const resumed = lines.find((l) => l.run === run && l.attempt === attempt + 1);
      if (resumed) delays.push(resumed.at - cut.at);
    }
  }
  return delays;
}
