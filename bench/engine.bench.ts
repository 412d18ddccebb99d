// Engine figures: echo runs per second in memory, heap retained per checkpoint of a long chat
// (which must grow with the new messages only), and history(limit 10) on a long thread.
import v8 from "node:v8";
import vm from "node:vm";
import { END, START, StateGraph, messagesState, type Message } from "../src/graph/index.js";
import { createIds, systemClock } from "../src/ids.js";
import { memoryStore } from "../src/persistence/memory.js";

const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ role: "assistant", content: String((s.messages.at(-1) as Message).content) }] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

export default async function (): Promise<void> {
  const ids = createIds();
  const clock = systemClock;
  const run = (store: ReturnType<typeof memoryStore>, threadId: string, content: string) =>
    echo.execute({ store, threadId, input: { messages: [{ role: "user", content }] }, config: { configurable: {} }, ids, clock });

  // 1. Runs per second: one echo run per fresh thread (3 checkpoints each).
  {
    const store = memoryStore();
    for (let i = 0; i < 500; i++) await run(store, `warm-${i}`, "hi");
    const n = 5000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await run(store, `t-${i}`, "hi");
    const perSec = n / ((performance.now() - t0) / 1000);
    console.log(`echo runs/s (fresh thread each): ${perSec.toFixed(0)}  (runtime target 2000: x${(perSec / 2000).toFixed(1)})`);
  }

  // 2. Heap retained per checkpoint over a 200-turn chat on one thread.
  {
    const store = memoryStore();
    const text = "x".repeat(200);
    const base = heap();
    let turns = 0;
    let prev = { turns: 0, bytes: 0, cps: 0 };
    const rows: Array<{ turns: number; perCp: number; marginal: number }> = [];
    for (const mark of [50, 100, 200]) {
      for (; turns < mark; turns++) await run(store, "chat", `${text} ${turns}`);
      const bytes = heap() - base;
      const cps = (await store.listCheckpoints("chat")).length;
      const marginal = (bytes - prev.bytes) / (cps - prev.cps);
      rows.push({ turns, perCp: bytes / cps, marginal });
      console.log(
        `chat ${String(turns).padStart(3)} turns: ${cps} checkpoints, ${(bytes / 1024).toFixed(0)} KiB retained, ` +
          `${(bytes / cps).toFixed(0)} B/checkpoint overall, ${marginal.toFixed(0)} B/checkpoint for turns ${prev.turns + 1}-${turns}`,
      );
      prev = { turns, bytes, cps };
    }
    const first = rows[0]!;
    const last = rows[rows.length - 1]!;
    console.log(
      `growth with history: B/checkpoint at 200 vs 50 turns x${(last.perCp / first.perCp).toFixed(2)} overall, ` +
        `x${(last.marginal / first.marginal).toFixed(2)} marginal (1.00 = grows with new messages only; a full copy per checkpoint would be ~x4)`,
    );
  }

  // 3. history(limit 10) on a 1,000-checkpoint thread.
  {
    const store = memoryStore();
    for (let i = 0; i < 334; i++) await run(store, "long", `m${i}`);
    const cps = (await store.listCheckpoints("long")).length;
    for (let i = 0; i < 50; i++) await echo.getHistory(store, "long", { limit: 10 });
    const n = 500;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await echo.getHistory(store, "long", { limit: 10 });
    const ms = (performance.now() - t0) / n;
    console.log(`getHistory(limit 10) on ${cps} checkpoints: ${ms.toFixed(3)} ms  (target 2 ms: ${(ms / 2).toFixed(2)} of budget)`);
  }
}
