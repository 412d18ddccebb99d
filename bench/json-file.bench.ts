// `npm run bench -- json-file`: the JSON-file store at the store level (no runtime), against the
// memory store, with the commits of an echo run (scripts/store-echo.ts: run pending, running +
// lease, the engine's checkpoints and writes, success + thread idle): runs/s over 20 threads
// (alternating rounds), and bytes stored for a 500-turn chat with ~400- and ~40-character
// messages over the JSON size of its final state (target <= 3), after close and before it.
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStore } from "../src/persistence/memory.js";
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import type { Store } from "../src/persistence/types.js";
import { echoGraph, echoTurn, newThread } from "../scripts/store-echo.js";

const said = (i: number) =>
  `Turn ${i}. I am planning a trip and would like some help comparing the options I found. The first is a train that leaves early ` +
  `in the morning and arrives around noon; the second is a flight that is cheaper but needs a transfer. I care most about total ` +
  `travel time and a little about cost. Could you summarise the trade-offs and suggest which one fits a relaxed schedule?`;
const saidShort = (i: number) => `Turn ${i}. Which option suits a relaxed trip?`;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) total += (await stat(join(dir, f))).size;
  return total;
}

const fmt = (x: number, d = 1) => x.toFixed(d);

/** An opened store with 20 threads, warmed up by 20 runs; `rate(n)` runs n more and returns runs/s. */
async function runner(store: Store) {
  await store.open();
  const graph = echoGraph();
  const threads = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
  await store.commit(threads.map((id) => ({ op: "thread.put", thread: newThread(id) })));
  let i = 0;
  /** Runs `runs` more; returns [runs/s, CPU microseconds per run (every thread of the process)]. */
  const rate = async (runs: number): Promise<[number, number]> => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let k = 0; k < runs; k++, i++) await echoTurn(store, graph, threads[i % 20]!, said(i));
    const cpu = process.cpuUsage(c0);
    return [runs / ((performance.now() - t0) / 1000), (cpu.user + cpu.system) / runs];
  };
  await rate(20);
  return { store, rate };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "graphdock-bench-json-"));
  try {
    // The machine is shared: alternate the two stores in short rounds and report the median of
    // the per-round ratios (each round's two figures were taken a moment apart).
    const memory = await runner(memoryStore());
    const json = await runner(jsonFileStore(join(root, "rate")));
    const rounds: Array<{ m: [number, number]; j: [number, number] }> = [];
    for (let round = 0; round < 9; round++) rounds.push({ m: await memory.rate(40), j: await json.rate(40) });
    await memory.store.close();
    await json.store.close();
    const ratios = rounds.map(({ m, j }) => j[0] / m[0]);
    console.log(
      `memory: ${fmt(median(rounds.map(({ m }) => m[0])), 0)} runs/s, json-file: ${fmt(median(rounds.map(({ j }) => j[0])), 0)} runs/s ` +
        `(echo run's commits at the store level, medians of 9 alternating rounds of 40 runs)`,
    );
    console.log(`json-file: ${fmt(median(ratios), 2)}x memory (median of the rounds' ratios; range ${fmt(Math.min(...ratios), 2)}-${fmt(Math.max(...ratios), 2)})`);
    const cpuM = median(rounds.map(({ m }) => m[1]));
    const cpuJ = median(rounds.map(({ j }) => j[1]));
    console.log(`CPU per run: memory ${fmt(cpuM / 1000, 2)} ms, json-file ${fmt(cpuJ / 1000, 2)} ms (${fmt(cpuM / cpuJ, 2)}x memory's rate by CPU)`);
    for (const [variant, text] of [["~400-char", said], ["~40-char", saidShort]] as const) {
      const dir = join(root, `chat-${variant}`);
      const store = jsonFileStore(dir);
      await store.open();
      const graph = echoGraph();
      const thread = newThread();
      await store.commit([{ op: "thread.put", thread }]);
      let values: unknown;
      for (let i = 0; i < 500; i++) values = (await echoTurn(store, graph, thread.thread_id, text(i))).values;
      const open = await dirBytes(dir);
      await store.close();
      const closed = await dirBytes(dir);
      const state = JSON.stringify(values).length;
      console.log(
        `json-file: 500-turn chat, ${variant} messages, stores ${fmt(closed / 1024, 0)} KiB for a ${fmt(state / 1024, 0)} KiB state: ` +
          `ratio ${fmt(closed / state, 2)} (target <= 3); ${fmt(open / state, 2)} before close (log not yet folded)`,
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
