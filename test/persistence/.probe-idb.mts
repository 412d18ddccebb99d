import "fake-indexeddb/auto";
import { openDB } from "idb";
import { END, START, StateGraph, messagesState } from "/work/main/src/graph/index.js";
import { indexedDbStore } from "/work/main/src/persistence/indexeddb/index.js";
import { createRuntime } from "/work/main/src/runtime/index.js";
const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ type: "ai", content: `You said: ${String((s.messages.at(-1) as { content: unknown }).content)}` }] }))
  .addEdge(START, "echo").addEdge("echo", END).compile();
const saidShort = (i: number) => `Turn ${i}. Which option suits a relaxed trip?`;
const N = Number(process.argv[2] ?? 50);
const store = indexedDbStore("probe");
const origCommit = store.commit.bind(store);
let log = process.argv[3] === "log";
(store as any).commit = async (ops: any) => { if (log) console.log("COMMIT", JSON.stringify(ops.map((o: any) => o.op))); return origCommit(ops); };
const runtime = await createRuntime({ graphs: { echo }, store });
const { thread_id } = await runtime.threads.create();
let values: unknown;
for (let i = 0; i < N; i++) values = await runtime.runs.wait(thread_id, "echo", { input: { messages: [{ type: "human", content: saidShort(i) }] }, ifNotExists: "create" });
await runtime.close();
const db = await openDB("probe");
let total = 0;
for (const s of db.objectStoreNames) { let t = 0; const all = await db.getAll(s as any); for (const v of all) t += JSON.stringify(v).length; total += t; console.log(s, all.length, t, (t / N).toFixed(0)); }
const state = JSON.stringify(values).length;
console.log("total", total, "state", state, "ratio", (total / state).toFixed(2), "per-turn state", (state / N).toFixed(0));
if (process.argv[4]) { const all = await db.getAll(process.argv[4] as any); for (const v of all.slice(-3)) console.log(JSON.stringify(v)); }
db.close();
