/**
 * What one run of bench/langgraph.bench.ts's graph costs, counted rather than timed, so hosting
 * overhead can be followed on a busy machine (where run times are noise): per run, the promises
 * made (each costs more while LangChain's AsyncLocalStorage is active), the store calls, and the
 * bytes allocated (V8's sampling heap profiler, collected objects included), for `graph.invoke`
 * with `GraphdockSaver` over a memory store and for the same graph hosted (`runs.wait`, a fresh
 * thread each run). Run: `npx tsx bench/langgraph-costs.ts [runs]` (not part of `npm run bench`).
 * For where the time goes, profile the same loops: `node --cpu-prof --import tsx bench/langgraph-costs.ts`.
 */
import { createHook } from "node:async_hooks";
import { Session } from "node:inspector/promises";
import { createRuntime, memoryStore, type Store } from "../src/index.js";
import { GraphdockSaver, fromLangGraph } from "../src/langgraph/index.js";
import { builder, input } from "./langgraph-chat.js";


/** A store that counts its calls by name (`commit` by its ops' kinds). */
function counted(store: Store, calls: Map<string, number>): Store {
  const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        count(key === "commit" ? `commit(${(args[0] as Array<{ op: string }>).map((o) => o.op).join(",")})` : key);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function measure(name: string, runs: number, turn: (i: number) => Promise<unknown>, calls: Map<string, number>): Promise<void> {
  for (let i = 0; i < 100; i++) await turn(i);
  calls.clear();
  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === "PROMISE") promises++;
    },
  });
  hook.enable();
  for (let i = 0; i < runs; i++) await turn(i);
  hook.disable();
  const storeCalls = [...calls].map(([k, n]) => `${k} ${(n / runs).toFixed(1)}`).join(", ");
  const session = new Session();
  session.connect();
  // Collected objects included: what a run allocates, not what it keeps.
  await session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  for (let i = 0; i < runs; i++) await turn(i);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  session.disconnect();
  let bytes = 0;
  const walk = (node: { selfSize: number; children?: unknown[] }) => {
    bytes += node.selfSize;
    for (const child of node.children ?? []) walk(child as typeof node);
  };
  walk(profile.head as never);
  console.log(`${name.padEnd(40)} ${(promises / runs).toFixed(0).padStart(5)} promises/run ${(bytes / runs / 1024).toFixed(0).padStart(5)} KiB allocated/run   store: ${storeCalls}`);
}

const runs = Number(process.argv[2] ?? 500);
const saverCalls = new Map<string, number>();
const saverStore = counted(memoryStore(), saverCalls);
await saverStore.open();
const withSaver = builder().compile({ checkpointer: new GraphdockSaver(saverStore) });
await measure("graph.invoke + GraphdockSaver(memoryStore)", runs, (i) => withSaver.invoke(input(i), { configurable: { thread_id: crypto.randomUUID() } }), saverCalls);
const hostedCalls = new Map<string, number>();
const runtime = await createRuntime({ graphs: { chat: fromLangGraph(builder().compile()) }, store: counted(memoryStore(), hostedCalls) });
try {
  await measure("hosted (runs.wait, memory store)", runs, (i) => runtime.runs.wait(crypto.randomUUID(), "chat", { input: input(i), ifNotExists: "create" }), hostedCalls);
} finally {
  await runtime.close();
}
