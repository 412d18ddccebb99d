// `npm run bench -- persistence` (or `-- indexeddb`): the IndexedDB store at store level, with
// the traffic of echo runs replayed without the runtime (./echo-workload.ts), against the
// memory store the same way:
// - runs/s and the ratio to memory, on fake-indexeddb in Node and on real IndexedDB in Chromium
//   (a page bundled and driven like the browser tests; skipped with a note when Chromium is
//   missing);
// - bytes stored for a 500-turn chat (~400- and ~40-character messages) over the JSON size of its
//   final state (target <= 3; JSON size of every stored value, as fake-indexeddb keeps no files);
// - opening a database holding 10,000 threads, and history(limit 10) on a 1,000-checkpoint thread;
// - in Chromium, echo runs through the runtime (runs.wait), memory vs IndexedDB: sequential (one
//   caller, one run at a time: latency-bound) and concurrent (8 and 20 callers at once, each doing
//   its runs one after another on its own thread: throughput), each with its ratio and the
//   IndexedDB transactions and requests per run (by scope and by kind and object store with
//   GRAPHDOCK_BENCH_TX_SCOPES=1;
//   GRAPHDOCK_BENCH_ONLY_RUNTIME=1 leaves out the page's store-level figures). `chromium()` is
//   exported to run the Chromium figures alone;
// - in Chromium, the floor: what raw IndexedDB costs per transaction and per request without
//   graphdock, and the time per run that 0.25x of memory leaves, in those units.
// GRAPHDOCK_BENCH_IDB_PARTS (a comma list of rate, size, open, history, chromium; default all)
// runs only those parts, e.g. `GRAPHDOCK_BENCH_IDB_PARTS=size npm run bench -- indexeddb`.
import "fake-indexeddb/auto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openDB } from "idb";
import { indexedDbStore } from "../src/persistence/indexeddb/index.js";
import { memoryStore } from "../src/persistence/memory.js";
import type { WriteOp } from "../src/persistence/types.js";
import { echoRate, echoTurn, newChat, said, saidShort } from "./echo-workload.js";

const fmt = (x: number, d = 1) => x.toFixed(d);
let n = 0;
const PARTS = new Set((process.env.GRAPHDOCK_BENCH_IDB_PARTS ?? "rate,size,open,history,chromium").split(",").map((p) => p.trim()));

async function storedBytes(name: string): Promise<number> {
  const db = await openDB(name);
  let total = 0;
  for (const s of db.objectStoreNames) for (const v of await db.getAll(s)) total += JSON.stringify(v).length;
  db.close();
  return total;
}

/** The Chromium figures alone (also run by the default export). */
export async function chromium(): Promise<void> {
  const harness = await import("../test/browser/harness.js");
  if (!existsSync(harness.CHROMIUM)) {
    console.log(`indexeddb (Chromium): skipped, no Chromium at ${harness.CHROMIUM}`);
    return;
  }
  const dir = harness.tempDir("bench-idb");
  const server = await harness.serveDir(dir.path);
  const browser = await harness.launchBrowser();
  try {
    await harness.bundlePage(
      `import { echoRate } from "./bench/echo-workload.ts";
import { memoryStore } from "./src/persistence/memory.ts";
import { indexedDbStore } from "./src/persistence/indexeddb/index.ts";
import { createRuntime, StateGraph, START, END, messagesState } from "./src/index.ts";
const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ type: "ai", content: "You said: " + String(s.messages.at(-1).content) }] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();
// Transactions opened while the timed runs go (what each echo run costs in IndexedDB), by
// mode and by scope (the object stores named).
let txCount = { on: false, readonly: 0, readwrite: 0, scopes: {} };
const openTx = IDBDatabase.prototype.transaction;
IDBDatabase.prototype.transaction = function (names, mode, options) {
  if (txCount.on) {
    const m = mode === "readwrite" ? "readwrite" : "readonly";
    txCount[m]++;
    const scope = m + " " + [].concat(names).join(",");
    txCount.scopes[scope] = (txCount.scopes[scope] ?? 0) + 1;
  }
  return openTx.call(this, names, mode, options);
};
// Requests issued while the timed runs go, by kind and object store (index requests as
// "store.index"; a cursor's continue counts as a request of its source).
let reqCount = { on: false, total: 0, kinds: {} };
const countReq = (proto, kinds, nameOf) => {
  for (const kind of kinds) {
    const orig = proto[kind];
    if (typeof orig !== "function") continue;
    proto[kind] = function (...args) {
      if (reqCount.on) {
        reqCount.total++;
        const k = kind + " " + nameOf(this);
        reqCount.kinds[k] = (reqCount.kinds[k] ?? 0) + 1;
      }
      return orig.apply(this, args);
    };
  }
};
countReq(IDBObjectStore.prototype, ["get", "getKey", "getAll", "getAllKeys", "put", "add", "delete", "clear", "count", "openCursor", "openKeyCursor"], (s) => s.name);
countReq(IDBIndex.prototype, ["get", "getKey", "getAll", "getAllKeys", "count", "openCursor", "openKeyCursor"], (i) => i.objectStore.name + "." + i.name);
countReq(IDBCursor.prototype, ["continue", "advance", "continuePrimaryKey"], (c) => (c.source instanceof IDBIndex ? c.source.objectStore.name + "." + c.source.name : c.source.name));
/**
 * Echo runs per second through the runtime (runs.wait), after one warm-up run per thread.
 * callers = 0: one caller, one run at a time, round-robin over 20 threads (latency-bound);
 * callers = N: N callers at once, each with its own thread, each doing its runs one after
 * another (throughput: what the store sustains under concurrent load). 200 runs in all.
 */
async function runtimeRate(store, callers, countTx = false) {
  const runtime = await createRuntime({ graphs: { echo }, store });
  const nThreads = callers || 20;
  const threads = [];
  for (let i = 0; i < nThreads; i++) threads.push((await runtime.threads.create()).thread_id);
  const turn = (t, i) => runtime.runs.wait(threads[t], "echo", { input: { messages: [{ type: "human", content: "Turn " + i }] } });
  for (let t = 0; t < nThreads; t++) await turn(t, 0);
  txCount = { on: countTx, readonly: 0, readwrite: 0, scopes: {} };
  reqCount = { on: countTx, total: 0, kinds: {} };
  const total = 200;
  const t0 = performance.now();
  if (callers === 0) {
    for (let i = 0; i < total; i++) await turn(i % nThreads, i);
  } else {
    await Promise.all(threads.map(async (_, t) => {
      for (let i = 0; i < total / callers; i++) await turn(t, i);
    }));
  }
  const rate = total / ((performance.now() - t0) / 1000);
  txCount.on = false;
  reqCount.on = false;
  await runtime.close();
  if (countTx) {
    out["tx" + callers] = { readonly: txCount.readonly / total, readwrite: txCount.readwrite / total, scopes: txCount.scopes };
    out["req" + callers] = { total: reqCount.total / total, kinds: reqCount.kinds };
  }
  return rate;
}
/**
 * What raw IndexedDB costs in this browser, without graphdock: the floor under any store built on
 * it. Sequential: ms per transaction holding one put (readwrite) or one get (readonly), one after
 * another. Throughput: ms per put and per get with 32 requests per transaction and 20
 * transactions at once. Records of ~350 bytes, like a run record.
 */
async function rawFloor() {
  const db = await new Promise((resolve, reject) => {
    const r = indexedDB.open("bench-raw-floor", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("s");
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  const done = (tx) => new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = tx.onabort = () => reject(tx.error); });
  const rec = (i) => ({ id: i, text: "x".repeat(300), tags: [1, 2, 3], at: { n: i } });
  const timed = async (n, body) => { const t0 = performance.now(); await body(); return (performance.now() - t0) / n; };
  const one = (mode, i) => {
    const tx = db.transaction("s", mode);
    if (mode === "readwrite") tx.objectStore("s").put(rec(i), i); else tx.objectStore("s").get(i);
    return done(tx);
  };
  const batches = (mode) => Promise.all(Array.from({ length: 20 }, async (_, c) => {
    for (let b = 0; b < 16; b++) {
      const tx = db.transaction("s", mode);
      const s = tx.objectStore("s");
      for (let k = 0; k < 32; k++) if (mode === "readwrite") s.put(rec(k), c * 1000 + b * 32 + k); else s.get(c * 1000 + b * 32 + k);
      await done(tx);
    }
  }));
  const floor = {
    readwriteTx: await timed(400, async () => { for (let i = 0; i < 400; i++) await one("readwrite", i); }),
    readonlyTx: await timed(400, async () => { for (let i = 0; i < 400; i++) await one("readonly", i); }),
    put: await timed(20 * 16 * 32, () => batches("readwrite")),
    get: await timed(20 * 16 * 32, () => batches("readonly")),
  };
  db.close();
  return floor;
}
const only = new URLSearchParams(location.search).get("only");
const out = {};
(async () => {
  for (let round = 0; round < 3; round++) {
    if (only !== "runtime") {
      out["memory" + round] = await echoRate(memoryStore());
      const store = indexedDbStore("bench-" + round);
      await store.open();
      out["indexeddb" + round] = await echoRate(store);
      await store.close();
    }
    for (const callers of [0, 8, 20]) {
      out["rtmemory" + callers + "_" + round] = await runtimeRate(memoryStore(), callers);
      out["rtindexeddb" + callers + "_" + round] = await runtimeRate(indexedDbStore("bench-rt-" + callers + "-" + round), callers, round === 0);
    }
  }
  out.floor = await rawFloor();
  window.__bench = out;
})().catch((e) => { window.__bench = { error: String(e && e.stack || e) }; });
`,
      join(dir.path, "page"),
    );
    const page = await browser.newPage();
    const only = process.env.GRAPHDOCK_BENCH_ONLY_RUNTIME ? "?only=runtime" : "";
    await page.goto(`${server.url}/page/${only}`);
    await page.waitForFunction(() => (window as { __bench?: unknown }).__bench !== undefined, null, { timeout: 600_000 });
    const out = (await page.evaluate(() => (window as unknown as { __bench: Record<string, unknown> }).__bench)) as Record<string, number> & {
      error?: string;
    } & Record<string, { readonly: number; readwrite: number; scopes: Record<string, number> }>;
    if (out.error !== undefined) throw new Error(String(out.error));
    const best = (k: string) => Math.max(out[`${k}0`]!, out[`${k}1`]!, out[`${k}2`]!);
    if (!only) {
      const mem = best("memory");
      const idb = best("indexeddb");
      console.log(`memory (Chromium): ${fmt(mem, 0)} runs/s (store level, echo run traffic; best of 3)`);
      console.log(`indexeddb (Chromium): ${fmt(idb, 0)} runs/s (${fmt(idb / mem, 2)}x memory; rounds ${[0, 1, 2].map((r) => fmt(out[`indexeddb${r}`]! / out[`memory${r}`]!, 2)).join(", ")})`);
    }
    for (const callers of [0, 8, 20]) {
      const label =
        callers === 0
          ? "sequential: 1 caller, one runs.wait at a time over 20 threads (latency)"
          : `concurrent: ${callers} callers at once, each runs.wait after runs.wait on its own thread (throughput)`;
      const rtMem = best(`rtmemory${callers}_`);
      const rtIdb = best(`rtindexeddb${callers}_`);
      const tx = out[`tx${callers}`]!;
      console.log(`through the runtime (Chromium), ${label}:`);
      console.log(`  memory ${fmt(rtMem, 0)} echo runs/s; indexeddb ${fmt(rtIdb, 0)} echo runs/s (best of 3)`);
      console.log(
        `  indexeddb / memory: ${fmt(rtIdb / rtMem, 2)}x (target >= 0.25; rounds ` +
          `${[0, 1, 2].map((r) => fmt(out[`rtindexeddb${callers}_${r}`]! / out[`rtmemory${callers}_${r}`]!, 2)).join(", ")})`,
      );
      console.log(`  indexeddb: ${fmt(tx.readonly + tx.readwrite, 2)} transactions per echo run (${fmt(tx.readonly, 2)} readonly, ${fmt(tx.readwrite, 2)} readwrite)`);
      if (process.env.GRAPHDOCK_BENCH_TX_SCOPES) {
        for (const [scope, count] of Object.entries(tx.scopes).sort((a, b) => b[1] - a[1])) console.log(`    ${fmt(count / 200, 2)} ${scope}`);
      }
      const req = out[`req${callers}`] as unknown as { total: number; kinds: Record<string, number> };
      console.log(`  indexeddb: ${fmt(req.total, 1)} requests per echo run (by kind with GRAPHDOCK_BENCH_TX_SCOPES=1)`);
      if (process.env.GRAPHDOCK_BENCH_TX_SCOPES) {
        for (const [kind, count] of Object.entries(req.kinds).sort((a, b) => b[1] - a[1])) console.log(`    ${fmt(count / 200, 2)} ${kind}`);
      }
    }
    const floor = out.floor as unknown as { readwriteTx: number; readonlyTx: number; put: number; get: number };
    console.log("raw IndexedDB in this Chromium, without graphdock (the floor under any IndexedDB store):");
    console.log(
      `  one after another: ${fmt(floor.readwriteTx, 2)} ms per readwrite transaction of one put, ${fmt(floor.readonlyTx, 2)} ms per readonly one of one get`,
    );
    console.log(`  throughput (32 per transaction, 20 transactions at once): ${fmt(floor.put * 1000, 0)} µs per put, ${fmt(floor.get * 1000, 0)} µs per get`);
    const budget0 = 1000 / (0.25 * best("rtmemory0_"));
    const budget20 = 1000 / (0.25 * best("rtmemory20_"));
    console.log(
      `  0.25x of memory leaves a sequential run ${fmt(budget0, 2)} ms (${fmt(budget0 / floor.readwriteTx, 1)} readwrite transactions and nothing else) ` +
        `and a run among 20 callers ${fmt(budget20, 2)} ms (${fmt(budget20 / floor.put, 1)} puts and nothing else)`,
    );
  } finally {
    await browser.close();
    await server.close();
    dir.remove();
  }
}

export default async function (): Promise<void> {
  // 1. Runs/s, store level, fake-indexeddb.
  if (PARTS.has("rate")) {
    const memoryRate = await echoRate(memoryStore());
    console.log(`memory (Node): ${fmt(memoryRate, 0)} runs/s (store level, echo run traffic)`);
    {
      const store = indexedDbStore(`bench-${n++}`);
      await store.open();
      const rate = await echoRate(store);
      console.log(`indexeddb (fake-indexeddb): ${fmt(rate, 0)} runs/s (${fmt(rate / memoryRate, 2)}x memory)`);
      await store.close();
    }
  }
  // 2. Bytes for a 500-turn chat.
  if (PARTS.has("size")) for (const [variant, text] of [["~400-char", said], ["~40-char", saidShort]] as const) {
    const name = `bench-${n++}`;
    const store = indexedDbStore(name);
    await store.open();
    const chat = newChat();
    let values: unknown;
    for (let i = 0; i < 500; i++) values = await echoTurn(store, chat, text(i));
    await store.close();
    const bytes = await storedBytes(name);
    const state = JSON.stringify(values).length;
    console.log(
      `indexeddb: 500-turn chat, ${variant} messages, stores ${fmt(bytes / 1024, 0)} KiB for a ${fmt(state / 1024, 0)} KiB state: ` +
        `ratio ${fmt(bytes / state, 2)} (target <= 3)`,
    );
  }
  // 3. Open with 10,000 threads.
  if (PARTS.has("open")) {
    const name = `bench-${n++}`;
    const store = indexedDbStore(name);
    await store.open();
    for (let b = 0; b < 100; b++) {
      const ops: WriteOp[] = [];
      for (let i = 0; i < 100; i++) {
        const id = `th-${b * 100 + i}`;
        const t = new Date().toISOString();
        ops.push({
          op: "thread.put",
          thread: { thread_id: id, created_at: t, updated_at: t, state_updated_at: t, metadata: { n: i }, status: "idle", config: {}, values: { messages: [] }, interrupts: {} },
        });
        ops.push({
          op: "checkpoint.put",
          checkpoint: {
            thread_id: id,
            checkpoint_ns: "",
            checkpoint: { v: 1, id: `cp-${id}`, ts: t, channel_values: { messages: [{ type: "human", content: said(i) }] }, channel_versions: { messages: 1 }, versions_seen: {} },
            metadata: { source: "input", step: -1, parents: {} },
            parent_checkpoint_id: null,
            pending_writes: [],
          },
        });
      }
      await store.commit(ops);
    }
    await store.close();
    const again = indexedDbStore(name);
    const t0 = performance.now();
    await again.open();
    const opened = performance.now() - t0;
    await again.getThread("th-5000");
    const firstRead = performance.now() - t0;
    const t1 = performance.now();
    const page = await again.queryThreads({ limit: 10 });
    const t2 = performance.now();
    const count = await again.countThreads({});
    console.log(
      `indexeddb: open with 10,000 threads ${fmt(opened)} ms (first read after ${fmt(firstRead)} ms; ` +
        `search limit ${page.length} ${fmt(t2 - t1)} ms; count ${count} ${fmt(performance.now() - t2)} ms)`,
    );
    await again.close();
  }
  // 4. history(limit 10) on a 1,000-checkpoint thread.
  if (PARTS.has("history")) {
    const store = indexedDbStore(`bench-${n++}`);
    await store.open();
    const chat = newChat();
    for (let i = 0; i < 334; i++) await echoTurn(store, chat, said(i));
    const all = await store.listCheckpoints(chat.threadId);
    const t0 = performance.now();
    const reps = 20;
    for (let r = 0; r < reps; r++) await store.listCheckpoints(chat.threadId, { limit: 10 });
    console.log(`indexeddb: listCheckpoints(limit 10) on a ${all.length}-checkpoint thread ${fmt((performance.now() - t0) / reps, 2)} ms`);
    await store.close();
  }
  // 5. Real IndexedDB.
  if (PARTS.has("chromium")) await chromium();
}
