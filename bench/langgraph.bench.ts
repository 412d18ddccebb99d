/**
 * LangGraph.js graphs hosted by agentdock (D23) against the same graph on LangGraph's own
 * `MemorySaver`. One `StateGraph` over `MessagesAnnotation` whose node answers with a ~200-character
 * AI message, run three ways:
 * - `MemorySaver`: `graph.invoke` with LangGraph's in-memory checkpointer (what hosting replaces);
 * - `AgentdockSaver`: `graph.invoke` with the saver over agentdock's memory store (the checkpointer alone);
 * - hosted: `runtime.runs.wait` on a runtime over the memory store (runs, threads, events included).
 * Figures: runs per second (a fresh thread each run), time per turn late in a 300-turn chat
 * (wall and CPU time: on a loaded machine the CPU time compares better)
 * (turns 280-300 on one thread), memory retained per turn (JS heap and byte arrays, turns 100-300).
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createRuntime, memoryStore } from "../src/index.js";
import { AgentdockSaver } from "../src/langgraph/index.js";

const answer = (text: string) => new AIMessage(`${"y".repeat(190)} ${text.slice(-8)}`);
const builder = () =>
  new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({ messages: [answer(String(state.messages[state.messages.length - 1]?.content ?? ""))] }))
    .addEdge(START, "reply")
    .addEdge("reply", END);
const input = (i: number) => ({ messages: [{ role: "user", content: `${"x".repeat(190)} turn ${i}` }] });

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
  const withAgentdockSaver = builder().compile({ checkpointer: new AgentdockSaver(memoryStore()) });
  const runtime = await createRuntime({ graphs: { chat: builder().compile() } });
  const made = new Set<string>();
  return [
    { name: "LangGraph MemorySaver", turn: (t, i) => withMemorySaver.invoke(input(i), { configurable: { thread_id: t } }), close: async () => undefined },
    { name: "LangGraph + AgentdockSaver(memoryStore)", turn: (t, i) => withAgentdockSaver.invoke(input(i), { configurable: { thread_id: t } }), close: async () => undefined },
    {
      name: "hosted by agentdock (runs.wait, memory store)",
      async turn(t, i) {
        if (!made.has(t)) {
          made.add(t);
          await runtime.threads.create({ threadId: t });
        }
        return runtime.runs.wait(t, "chat", { input: input(i) });
      },
      close: () => runtime.close(),
    },
  ];
}

const fmt = (n: number, d = 2) => n.toFixed(d);

export default async function (): Promise<void> {
  const quick = process.env.AGENTDOCK_BENCH_QUICK === "1";
  const runs = quick ? 100 : 1000;
  const turns = quick ? 120 : 300;
  const late = [turns - 20, turns];
  const memFrom = quick ? 40 : 100;
  for (const host of await hosts()) {
    try {
      // Warm up, then runs per second on fresh threads.
      for (let i = 0; i < 50; i++) await host.turn(crypto.randomUUID(), i);
      let start = performance.now();
      for (let i = 0; i < runs; i++) await host.turn(crypto.randomUUID(), i);
      const perSecond = runs / ((performance.now() - start) / 1000);
      // A long chat on one thread: time per turn late in it, heap retained per turn.
      const thread = crypto.randomUUID();
      let i = 0;
      for (; i < memFrom; i++) await host.turn(thread, i);
      const before = await heap();
      for (; i < late[0]!; i++) await host.turn(thread, i);
      start = performance.now();
      const cpu = process.cpuUsage();
      for (; i < late[1]!; i++) await host.turn(thread, i);
      const lateMs = (performance.now() - start) / (late[1]! - late[0]!);
      const used = process.cpuUsage(cpu);
      const lateCpuMs = (used.user + used.system) / 1000 / (late[1]! - late[0]!);
      const perTurn = ((await heap()) - before) / (turns - memFrom);
      console.log(
        `${host.name.padEnd(48)} ${fmt(perSecond, 0).padStart(6)} runs/s   ${fmt(lateMs).padStart(7)} ms/turn (${fmt(lateCpuMs).padStart(6)} ms CPU) at turns ${late[0]}-${late[1]}   ${fmt(perTurn / 1024, 1).padStart(7)} KiB memory/turn`,
      );
    } finally {
      await host.close();
    }
  }
}
