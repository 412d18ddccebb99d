import { join } from "node:path";
const harness = await import("../test/browser/harness.js");
const dir = harness.tempDir("micro-idb");
const server = await harness.serveDir(dir.path);
const browser = await harness.launchBrowser();
await harness.bundlePage(`
async function open(name) { return new Promise((res, rej) => { const r = indexedDB.open(name, 1); r.onupgradeneeded = () => { r.result.createObjectStore("s"); r.result.createObjectStore("t"); }; r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); }); }
const done = (tx) => new Promise((res, rej) => { tx.oncomplete = res; tx.onerror = () => rej(tx.error); tx.onabort = () => rej(tx.error); });
const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
(async () => {
  const db = await open("micro");
  const out = {};
  const N = 300;
  for (const dur of ["default", "strict", "relaxed"]) {
    let t0 = performance.now();
    for (let i = 0; i < N; i++) { const tx = db.transaction(["s","t"], "readwrite", { durability: dur }); tx.objectStore("s").put({ a: i, b: "x".repeat(300) }, i); await done(tx); }
    out["rw1put-" + dur] = (performance.now() - t0) / N;
    t0 = performance.now();
    for (let i = 0; i < N; i++) { const tx = db.transaction(["s","t"], "readwrite", { durability: dur }); for (let k = 0; k < 6; k++) tx.objectStore("s").put({ a: i, b: "x".repeat(300) }, i * 10 + k); await done(tx); }
    out["rw6put-" + dur] = (performance.now() - t0) / N;
    t0 = performance.now();
    for (let i = 0; i < N; i++) { const tx = db.transaction(["s","t"], "readwrite", { durability: dur }); await req(tx.objectStore("s").get(i)); tx.objectStore("s").put({ a: i }, i); await done(tx); }
    out["rwget+put-" + dur] = (performance.now() - t0) / N;
  }
  let t0 = performance.now();
  for (let i = 0; i < N; i++) { const tx = db.transaction(["s"], "readonly"); await req(tx.objectStore("s").get(i)); }
  out["ro1get(no wait done)"] = (performance.now() - t0) / N;
  t0 = performance.now();
  for (let i = 0; i < N; i++) { const tx = db.transaction(["s"], "readonly"); await req(tx.objectStore("s").get(i)); await req(tx.objectStore("s").get(i+1)); await req(tx.objectStore("s").get(i+2)); }
  out["ro3seqget"] = (performance.now() - t0) / N;
  window.__r = out;
})().catch((e) => { window.__r = { error: String(e) }; });
`, join(dir.path, "page"));
const page = await browser.newPage();
await page.goto(`${server.url}/page/`);
await page.waitForFunction(() => (window as any).__r !== undefined, null, { timeout: 120_000 });
console.log(await page.evaluate(() => (window as any).__r));
await browser.close(); await server.close(); dir.remove();
