import "fake-indexeddb/auto";
import { END, START, StateGraph, messagesState } from "/work/main/src/graph/index.js";
import { memoryStore } from "/work/main/src/persistence/memory.js";
import { createRuntime } from "/work/main/src/runtime/index.js";
import { stringifyShared } from "/work/main/src/persistence/json-file/shared-json.js";
import { diffObject, encodeCheckpoint, diffCheckpoint } from "/work/main/src/persistence/delta.js";
const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ type: "ai", content: `You said: ${String((s.messages.at(-1) as { content: unknown }).content)}` }] }))
  .addEdge(START, "echo").addEdge("echo", END).compile();
const saidShort = (i: number) => `Turn ${i}. Which option suits a relaxed trip?`;
const N = 100, K = Number(process.argv[2] ?? 8), KI = Number(process.argv[3] ?? 16);
const store = memoryStore();
const runtime = await createRuntime({ graphs: { echo }, store });
const { thread_id } = await runtime.threads.create();
let values: unknown;
for (let i = 0; i < N; i++) values = await runtime.runs.wait(thread_id, "echo", { input: { messages: [{ type: "human", content: saidShort(i) }] }, ifNotExists: "create" });
const cps = (await store.listCheckpoints(thread_id)).reverse();
const runs = await store.listRuns(thread_id);
const state = JSON.stringify(values).length;
const lists = new Map<string, unknown[]>();
let n = 0;
const enc = [];
let prev: any;
for (const cp of cps) { const { checkpoint, appends } = encodeCheckpoint(cp, prev, (l) => lists.get(l), () => `L${n++}`); for (const a of appends) { const x = lists.get(a.list) ?? []; x.push(...a.items); lists.set(a.list, x); } enc.push(checkpoint); prev = checkpoint; }
let cpBytes = 0;
for (let p = 0; p < enc.length; p += K) {
  const page = enc.slice(p, p + K).map((c, i, a) => (i === 0 ? c : diffCheckpoint(c, a[i - 1]!)));
  cpBytes += stringifyShared(page).length;
}
let itemBytes = 0;
for (const items of lists.values()) for (let p = 0; p < items.length; p += KI) itemBytes += stringifyShared(items.slice(p, p + KI)).length;
let runBytes = 0, runFull = 0;
runs.sort((a, b) => a.created_at.localeCompare(b.created_at));
for (const [i, r] of runs.entries()) { runFull += JSON.stringify(r).length; runBytes += stringifyShared(i % K === 0 ? r : diffObject(r as any, runs[i - 1] as any)).length; }
console.log({ perTurnState: state / N, cp: cpBytes / N, items: itemBytes / N, runs: runBytes / N, runFull: runFull / N, ratio: (cpBytes + itemBytes + runBytes) / state });
console.log(JSON.stringify(runs[5]));
console.log(stringifyShared(enc.slice(8, 16).map((c, i, a) => (i === 0 ? c : diffCheckpoint(c, a[i - 1]!)))));
await runtime.close();
import { flatten } from "/tmp/idbwork/flat.ts";
import { jsonEqual } from "/work/main/src/json.js";
const fd = (v: any, b: any) => { const f = flatten(v), g = flatten(b); const s: any = {}; for (const [k, x] of Object.entries(f)) if (!(k in g) || !jsonEqual(x, g[k])) s[k] = x; const d = Object.keys(g).filter((k) => !(k in f)); return d.length ? [s, d] : [s]; };
const rt = (x: any) => JSON.parse(JSON.stringify(x));
let fb = 0;
for (let p = 0; p < enc.length; p += K) fb += stringifyShared(rt(enc.slice(p, p + K)).map((c: any, i: number, a: any[]) => (i === 0 ? flatten(c) : fd(c, a[i - 1])))).length;
let rb = 0;
for (let p = 0; p < runs.length; p += K) rb += stringifyShared(rt(runs.slice(p, p + K)).map((c: any, i: number, a: any[]) => (i === 0 ? flatten(c) : fd(c, a[i - 1])))).length;
console.log("flat cp", fb / N, "runs paged", rb / N, "ratio", (fb + itemBytes + rb) / state);
console.log(stringifyShared(rt(enc.slice(8, 16)).map((c: any, i: number, a: any[]) => (i === 0 ? flatten(c) : fd(c, a[i - 1])))));
let full = 0;
for (let p = 0; p < enc.length; p += K) full += stringifyShared(rt(enc.slice(p, p + K))).length;
console.log("full-page cp", full / N, "ratio", (full + itemBytes + rb) / state);
console.log(stringifyShared(rt(enc.slice(8, 16))));
function intern(root: unknown) {
  const seen = new Map<string, unknown>();
  const walk = (v: any): any => {
    if (typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v.id === "string") { const s = seen.get(v.id); if (s && jsonEqual(s, v)) return s; }
    const o: any = {}; for (const k of Object.keys(v)) o[k] = walk(v[k]);
    if (typeof v.id === "string" && !seen.has(v.id)) seen.set(v.id, o);
    return o;
  };
  return walk(root);
}
let full2 = 0;
for (let p = 0; p < enc.length; p += K) full2 += stringifyShared(intern(rt(enc.slice(p, p + K)))).length;
let nd = 0;
for (let p = 0; p < enc.length; p += K) nd += stringifyShared(intern(rt(enc.slice(p, p + K)).map((c: any, i: number, a: any[]) => (i === 0 ? c : diffCheckpoint(c, a[i - 1]!))))).length;
console.log("interned full-page cp", full2 / N, "ratio", (full2 + itemBytes + rb) / state, "interned nested diff", nd / N, (nd + itemBytes + rb) / state);
const pg = JSON.parse(stringifyShared(intern(rt(enc.slice(48, 48 + K)))));
console.log(pg.map((x: any) => JSON.stringify(x).length).join(" "));
console.log(JSON.stringify(pg[6])); console.log(JSON.stringify(pg[7]));console.log(JSON.stringify(pg[8]));
