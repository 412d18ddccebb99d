// `npm run bench -- json-file`: the JSON-file store at the store level (no runtime), against the
// memory store, with the commits of an echo run (scripts/store-echo.ts: run pending, running +
// lease, the engine's checkpoints and writes, success + thread idle): runs/s (20 threads x 10
// turns after 20 warm-up runs), and bytes stored for a 500-turn chat with ~400- and ~40-character
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

async function runsPerSecond(store: Store): Promise<number> {
  await store.open();
  const graph = echoGraph();
  const threads = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
  await store.commit(threads.map((id) => ({ op: "thread.put", thread: newThread(id) })));
  for (let i = 0; i < 20; i++) await echoTurn(store, graph, threads[i % 20]!, said(i)); // warm up
  const runs = 200;
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await echoTurn(store, graph, threads[i % 20]!, said(i));
  const rate = runs / ((performance.now() - t0) / 1000);
  await store.close();
  return rate;
}

export default async function (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "agentdock-bench-json-"));
  try {
    // Alternate the two stores three times and keep each one's best, as the machine is shared.
    let memory = 0;
    let json = 0;
    for (let round = 0; round < 3; round++) {
      memory = Math.max(memory, await runsPerSecond(memoryStore()));
      json = Math.max(json, await runsPerSecond(jsonFileStore(join(root, `rate-${round}`))));
    }
    console.log(`memory: ${fmt(memory, 0)} runs/s (echo run's commits at the store level, best of 3)`);
    console.log(`json-file: ${fmt(json, 0)} runs/s (${fmt(json / memory, 2)}x memory)`);
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
