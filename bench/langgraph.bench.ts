/**
 * LangGraph.js graphs hosted by graphdock (D23) against the same graph on LangGraph's own
 * `MemorySaver`. One `StateGraph` over `MessagesAnnotation` whose node answers with a ~200-character
 * AI message, run three ways:
 * - `MemorySaver`: `graph.invoke` with LangGraph's in-memory checkpointer (what hosting replaces);
 * - `MemorySaver + InMemoryStore`: the same with LangGraph's in-memory store, as a hosted graph
 *   always has one (`getStore()`); LangGraph runs a store-batching loop (a 0 ms timer per
 *   iteration) for every run given a store, and a run ends only once its timer fired: a run
 *   whose work takes under a millisecond waits for it;
 * - `GraphdockSaver`: `graph.invoke` with the saver over graphdock's memory store (the checkpointer alone);
 * - hosted: `runtime.runs.wait` on a runtime over the memory store (runs, threads, events included;
 *   a thread is created by its first run), with the runtime's item store lent to the graph as
 *   its `getStore()` (so LangGraph's store-batching loop runs, as for `MemorySaver + InMemoryStore`).
 * Figures: runs per second (a fresh thread each run), time per turn late in a 300-turn chat
 * (wall and CPU time: on a loaded machine the CPU time compares better)
 * (turns 280-300 on one thread), memory retained per turn (JS heap and byte arrays, turns 100-300).
 * The hosts' timed turns are interleaved, so they share whatever load the machine has, and each
 * starts on a new turn of the event loop, as a request does in a server.
 * Where a hosted run's time goes: bench/langgraph-breakdown.ts.
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { createRuntime, memoryStore } from "../src/index.js";
import { GraphdockSaver } from "../src/langgraph/index.js";
import { builder, input } from "./langgraph-chat.js";


v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
async function heap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  // `external` too: MemorySaver keeps its checkpoints as byte arrays, outside the JS heap.
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** One way of running a turn: `turn(threadId, i)`, and `close`. */
interface Host {
  name: string;
  turn(threadId: string, i: number): Promise<unknown>;
  close(): Promise<void>;
}

async function hosts(): Promise<Host[]> {
  const withMemorySaver = builder().compile({ checkpointer: new MemorySaver() });
  const withMemorySaverAndStore = builder().compile({ checkpointer: new MemorySaver(), store: new InMemoryStore() });
  const withGraphdockSaver = builder().compile({ checkpointer: new GraphdockSaver(memoryStore()) });
  const runtime = await createRuntime({ graphs: { chat: builder().compile() } });
  return [
    { name: "LangGraph MemorySaver", turn: (t, i) => withMemorySaver.invoke(input(i), { configurable: { thread_id: t } }), close: async () => undefined },
    {
      name: "LangGraph MemorySaver + InMemoryStore",
      turn: (t, i) => withMemorySaverAndStore.invoke(input(i), { configurable: { thread_id: t } }),
      close: async () => undefined,
    },
    { name: "LangGraph + GraphdockSaver(memoryStore)", turn: (t, i) => withGraphdockSaver.invoke(input(i), { configurable: { thread_id: t } }), close: async () => undefined },
    {
      name: "hosted by graphdock (runs.wait, memory store)",
      // A new thread id is created by its first run (`ifNotExists: "create"`), as a client of the
      // agent server does: the thread record is written all the same.
      turn: (t, i) => runtime.runs.wait(t, "chat", { input: input(i), ifNotExists: "create" }),
      close: () => runtime.close(),
    },
  ];
}

const fmt = (n: number, d = 2) => n.toFixed(d);

export default async function (): Promise<void> {
  const quick = process.env.GRAPHDOCK_BENCH_QUICK === "1";
  const runs = quick ? 100 : 1000;
  const turns = quick ? 120 : 300;
  const late = [turns - 20, turns] as const;
  const memFrom = quick ? 40 : 100;
  const all = await hosts();
  try {
    // Time is measured with the hosts' turns interleaved (one turn of each in turn), so a machine
    // whose load changes during the bench weighs on every host alike; measured one host after
    // the other, a busy neighbour made any of them look slower.
    const wall = all.map(() => 0);
    const cpu = all.map(() => 0);
    // Each timed turn starts on a new turn of the event loop (a request's run does). Run back to
    // back inside one task, a run given a store waited for LangGraph's store-loop timer (due 1 ms
    // after the loop's cached clock, which goes stale while the task runs) anywhere from not at
    // all to a millisecond, depending on how long the task had run, and the process's CPU time
    // (all threads) grew during that wait: the store hosts' figures swung by 0.1-0.5 ms per run.
    const timed = async (k: number, turn: () => Promise<unknown>) => {
      await new Promise((resolve) => setImmediate(resolve));
      const c = process.cpuUsage();
      const w = performance.now();
      await turn();
      wall[k]! += performance.now() - w;
      const used = process.cpuUsage(c);
      cpu[k]! += (used.user + used.system) / 1000;
    };
    // Warm up, then runs per second on fresh threads.
    for (let i = 0; i < 50; i++) for (const host of all) await host.turn(crypto.randomUUID(), i);
    for (let i = 0; i < runs; i++) for (const [k, host] of all.entries()) await timed(k, () => host.turn(crypto.randomUUID(), i));
    const perSecond = wall.map((ms) => runs / (ms / 1000));
    const perCpuSecond = cpu.map((ms) => runs / (ms / 1000));
    // A long chat on one thread per host: time per turn late in it.
    wall.fill(0);
    cpu.fill(0);
    const threads = all.map(() => crypto.randomUUID());
    for (let i = 0; i < late[0]; i++) for (const [k, host] of all.entries()) await host.turn(threads[k]!, i);
    for (let i = late[0]; i < late[1]; i++) for (const [k, host] of all.entries()) await timed(k, () => host.turn(threads[k]!, i));
    // Memory retained per turn: one host at a time (the heap is the process's), on a new thread.
    const perTurnBytes: number[] = [];
    for (const [k, host] of all.entries()) {
      const thread = crypto.randomUUID();
      let i = 0;
      for (; i < memFrom; i++) await host.turn(thread, i);
      const before = await heap();
      for (; i < turns; i++) await host.turn(thread, i);
      const perTurn = ((await heap()) - before) / (turns - memFrom);
      perTurnBytes.push(perTurn);
      const n = late[1] - late[0];
      console.log(
        `${host.name.padEnd(48)} ${fmt(perSecond[k]!, 0).padStart(6)} runs/s (${fmt(perCpuSecond[k]!, 0).padStart(5)} per CPU-s)   ${fmt(wall[k]! / n).padStart(7)} ms/turn (${fmt(cpu[k]! / n).padStart(6)} ms CPU) at turns ${late[0]}-${late[1]}   ${fmt(perTurn / 1024, 1).padStart(7)} KiB memory/turn`,
      );
    }
    // The hosted graph against the saver it replaces, and against that saver with a store (a
    // hosted graph always has one): runs/s higher is better, time and memory per turn lower.
    const h = all.length - 1;
    for (const base of [0, 1]) {
      console.log(
        `  hosted / ${all[base]!.name.replace("LangGraph ", "")}: ${fmt(perSecond[h]! / perSecond[base]!)}x runs/s (${fmt(perCpuSecond[h]! / perCpuSecond[base]!)}x per CPU-s), ` +
          `${fmt(wall[h]! / wall[base]!)}x wall and ${fmt(cpu[h]! / cpu[base]!)}x CPU time per late turn, ${fmt(perTurnBytes[h]! / perTurnBytes[base]!)}x memory per turn`,
      );
    }
  } finally {
    for (const host of all) await host.close();
  }
}
