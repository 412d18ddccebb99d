import { join } from "node:path";
const harness = await import("../test/browser/harness.js");
const dir = harness.tempDir("prof-idb");
const server = await harness.serveDir(dir.path);
const browser = await harness.launchBrowser();
await harness.bundlePage(`
import { indexedDbStore } from "./src/persistence/indexeddb/index.ts";
import { createRuntime, StateGraph, START, END, messagesState } from "./src/index.ts";
const stats = new Map(); let reqs = 0; let on = false;
const orig = IDBDatabase.prototype.transaction;
IDBDatabase.prototype.transaction = function (names, mode, opts) {
  const tx = orig.call(this, names, mode, opts);
  if (on) { const k = (mode ?? "readonly") + ":" + [].concat(names).join(","); const t0 = performance.now();
    tx.addEventListener("complete", () => { const s = stats.get(k) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t0; stats.set(k, s); }); }
  return tx;
};
for (const cls of [IDBObjectStore, IDBIndex]) for (const m of ["get","getAll","getAllKeys","put","delete","openCursor","openKeyCursor","count"]) { const o = cls.prototype[m]; cls.prototype[m] = function (...a) { if (on) reqs++; return o.apply(this, a); }; }
const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ type: "ai", content: "You said: " + String(s.messages.at(-1).content) }] }))
  .addEdge(START, "echo").addEdge("echo", END).compile();
(async () => {
  const runtime = await createRuntime({ graphs: { echo }, store: indexedDbStore("prof" + Math.random()) });
  const threads = [];
  for (let i = 0; i < 20; i++) threads.push((await runtime.threads.create()).thread_id);
  const turn = (i) => runtime.runs.wait(threads[i % 20], "echo", { input: { messages: [{ type: "human", content: "Turn " + i }] } });
  for (let i = 0; i < 20; i++) await turn(i);
  on = true; const N = 100; const t0 = performance.now();
  for (let i = 0; i < N; i++) await turn(i);
  const per = (performance.now() - t0) / N; on = false;
  const out = { msPerRun: per, reqPerRun: reqs / N };
  for (const [k, s] of stats) out[k] = (s.n / N).toFixed(1) + " tx/run, " + (s.ms / s.n).toFixed(2) + " ms each";
  window.__r = out;
})().catch((e) => { window.__r = { error: String(e && e.stack || e) }; });
`, join(dir.path, "page"));
const page = await browser.newPage();
await page.goto(`${server.url}/page/`);
await page.waitForFunction(() => (window as any).__r !== undefined, null, { timeout: 120_000 });
console.log(await page.evaluate(() => (window as any).__r));
await browser.close(); await server.close(); dir.remove();
