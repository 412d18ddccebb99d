import v8 from "node:v8"; import vm from "node:vm";
import { END, START, StateGraph, messagesState, type Message } from "../src/graph/index.js";
import { createIds, systemClock } from "../src/ids.js";
import { memoryStore } from "../src/persistence/memory.js";
v8.setFlagsFromString("--expose-gc"); const gc = vm.runInNewContext("gc") as () => void;
const heap = async () => { for (let i = 0; i < 4; i++) { gc(); await new Promise((r) => setTimeout(r, 5)); } return process.memoryUsage().heapUsed; };
const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ role: "assistant", content: String((s.messages.at(-1) as Message).content) }] }))
  .addEdge(START, "echo").addEdge("echo", END).compile();
const ids = createIds();
const K = 8;
async function measure(M: number) {
  let stores: any[] | null = [];
  const refs: WeakRef<object>[] = [];
  for (let k = 0; k < K; k++) {
    const store = memoryStore(); stores.push(store); refs.push(new WeakRef(store));
    for (let t = 0; t < M; t++) await echo.execute({ store, threadId: "c", input: { messages: [{ role: "user", content: "x".repeat(200) + t }] }, config: { configurable: {} }, ids, clock: systemClock });
  }
  const h1 = await heap(); stores = null; const h0 = await heap();
  console.log(M, h1 - h0, ((h1 - h0) / (3 * M * K)).toFixed(0), refs.filter((r) => r.deref()).length);
}
for (const M of [50, 100, 200, 50, 100, 200]) await measure(M);
