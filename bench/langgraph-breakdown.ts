/**
 * Where the time of a hosted LangGraph.js run goes (./langgraph.bench.ts's hosted graph against
 * `MemorySaver`), from hosts that each add one layer, timed with their turns interleaved (a fresh
 * thread each run) so they share whatever load the machine has:
 * - `no checkpointer`: `graph.invoke` without one (LangGraph's own work, common to every host);
 * - `MemorySaver`: `graph.invoke` with LangGraph's in-memory checkpointer;
 * - `+ InMemoryStore`: the same with a store; LangGraph wraps any store given to a run in its
 *   `AsyncBatchedStore`, whose loop waits on a 0 ms timer per iteration while the run goes
 *   (and `stop()` waits for the last one), whether a node uses the store or not: a run whose
 *   work takes under a millisecond waits for that timer;
 * - `adapter.execute`: the hosted graph's adapter run without the runtime, with the runtime's
 *   item store and a runtime run's config (configurable and metadata: what nodes see);
 * - `runtime, no-op graph`: `runs.wait` on a graph that does nothing (admission, thread and run
 *   records, lease, event log, outcome commit: the hosting itself);
 * - `hosted`: `runs.wait` of the LangGraph.js graph (./langgraph.bench.ts's hosted line);
 * - `hosted, saver free`: the same with `GraphdockSaver`'s calls made free (they return at once
 *   and store nothing): what hosting costs besides the saver, so how much any saver could gain.
 *   LangGraph's own checkpoint work (it builds and copies each checkpoint, then calls the saver)
 *   still happens, as with `MemorySaver`. If this host is slower than `MemorySaver`, no saver,
 *   however fast, makes a hosted run as cheap as `graph.invoke` on `MemorySaver`.
 * Each line gives CPU time per run (process.cpuUsage: steadier than wall time on a loaded
 * machine) and runs per second; each timed run starts on a new turn of the event loop.
 * Run: `npx tsx bench/langgraph-breakdown.ts [runs]` (not part of `npm run bench`).
 */
import { performance } from "node:perf_hooks";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createRuntime, memoryStore, systemClock, type CompiledGraph } from "../src/index.js";
import { EMPTY_SNAPSHOT } from "../src/graph/state.js";
import { GraphdockSaver, fromLangGraph } from "../src/langgraph/index.js";
import { builder, input } from "./langgraph-chat.js";

/** A graph whose runs do nothing and write no checkpoint. */
const noop = {
  nodeNames: ["noop"],
  execute: async () => ({ status: "done" as const, values: {}, interrupts: [], checkpointId: null }),
  validateInput: async () => undefined,
  getState: async () => EMPTY_SNAPSHOT(),
  getHistory: async () => [],
  bulkUpdateState: async () => {
    throw new Error("the no-op graph has no state to update");
  },
  getGraph: () => ({ nodes: [], edges: [] }),
  getSchemas: () => ({ input_schema: null, output_schema: null, state_schema: null, config_schema: null, context_schema: null }),
} satisfies CompiledGraph;

/** While set, `GraphdockSaver`'s calls return at once and store nothing (the `saver free` host). */
let saverFree = false;
const saver = GraphdockSaver.prototype;
const real = { put: saver.put, putWrites: saver.putWrites, getTuple: saver.getTuple };
saver.put = function (this: GraphdockSaver, config, checkpoint, ...rest) {
  if (!saverFree) return real.put.call(this, config, checkpoint, ...rest);
  return Promise.resolve({ configurable: { ...config.configurable, checkpoint_id: checkpoint.id } });
};
saver.putWrites = function (this: GraphdockSaver, ...args) {
  return saverFree ? Promise.resolve() : real.putWrites.apply(this, args);
};
// The runs are on new threads: the store has no checkpoint for them either.
saver.getTuple = function (this: GraphdockSaver, ...args) {
  return saverFree ? Promise.resolve(undefined) : real.getTuple.apply(this, args);
};

const runs = Number(process.argv[2] ?? 2000);
const withoutCheckpointer = builder().compile();
const withMemorySaver = builder().compile({ checkpointer: new MemorySaver() });
const withStore = builder().compile({ checkpointer: new MemorySaver(), store: new InMemoryStore() });
const runtime = await createRuntime({ graphs: { chat: builder().compile(), noop } });
const adapter = fromLangGraph(builder().compile());
const store = memoryStore();
await store.open();
const invoke = (graph: typeof withMemorySaver) => (i: number) => graph.invoke(input(i), { configurable: { thread_id: crypto.randomUUID() } });
const hosted = (i: number) => runtime.runs.wait(crypto.randomUUID(), "chat", { input: input(i), ifNotExists: "create" });
const hosts: Array<[string, (i: number) => Promise<unknown>]> = [
  ["LangGraph, no checkpointer", (i) => withoutCheckpointer.invoke(input(i))],
  ["LangGraph MemorySaver", invoke(withMemorySaver)],
  ["LangGraph MemorySaver + InMemoryStore", invoke(withStore)],
  [
    "adapter.execute (no runtime)",
    (i) => {
      const threadId = crypto.randomUUID();
      const runId = crypto.randomUUID();
      const ids = { graph_id: "chat", assistant_id: "eb6db400-e3c8-5d06-a834-015cb89efe69", run_id: runId, thread_id: threadId };
      return adapter.execute({
        store,
        threadId,
        input: input(i),
        config: { configurable: { ...ids }, metadata: { created_by: "system", ...ids, run_attempt: 1 } },
        signal: new AbortController().signal,
        ids: { uuid: () => crypto.randomUUID(), checkpointId: () => crypto.randomUUID() },
        clock: systemClock,
        // Nodes do not use it: lent, it starts LangGraph's store loop, as a hosted run's does.
        itemStore: runtime.store,
      });
    },
  ],
  ["runtime, no-op graph (runs.wait)", () => runtime.runs.wait(crypto.randomUUID(), "noop", { input: {}, ifNotExists: "create" })],
  ["hosted (runs.wait)", hosted],
  [
    "hosted, saver free (runs.wait)",
    async (i) => {
      saverFree = true;
      try {
        return await hosted(i);
      } finally {
        saverFree = false;
      }
    },
  ],
];
try {
  for (let i = 0; i < 100; i++) for (const [, turn] of hosts) await turn(i);
  const wall = hosts.map(() => 0);
  const cpu = hosts.map(() => 0);
  for (let i = 0; i < runs; i++) {
    for (const [k, [, turn]] of hosts.entries()) {
      // On a new turn of the event loop, as in ./langgraph.bench.ts (see there).
      await new Promise((resolve) => setImmediate(resolve));
      const c = process.cpuUsage();
      const w = performance.now();
      await turn(i);
      wall[k]! += performance.now() - w;
      const used = process.cpuUsage(c);
      cpu[k]! += (used.user + used.system) / 1000;
    }
  }
  for (const [k, [name]] of hosts.entries()) {
    console.log(`${name.padEnd(40)} ${(cpu[k]! / runs).toFixed(3)} ms CPU/run   ${(runs / (wall[k]! / 1000)).toFixed(0).padStart(6)} runs/s`);
  }
  const perRun = (k: number) => cpu[k]! / runs;
  const [bare, memorySaver, adapted, hosting, full, free] = [perRun(0), perRun(1), perRun(3), perRun(4), perRun(5), perRun(6)];
  console.log(
    `  hosted - MemorySaver = ${(full - memorySaver).toFixed(3)} ms CPU/run: adapter.execute ${(adapted - memorySaver).toFixed(3)} ` +
      `(store loop, run config, adapter), runtime alone ${hosting.toFixed(3)}, the two together ${(full - adapted - hosting).toFixed(3)}`,
  );
  console.log(
    `  checkpointing with MemorySaver (its calls and LangGraph's own checkpoint work) ${(memorySaver - bare).toFixed(3)} ms CPU/run; ` +
      `hosted with free saver calls ${(free - bare).toFixed(3)}; that is ${(memorySaver / free).toFixed(2)}x MemorySaver's runs per CPU-s and ` +
      `${(wall[1]! / wall[6]!).toFixed(2)}x its runs/s (the best any saver could do)`,
  );
} finally {
  await runtime.close();
  await store.close();
}
