/**
 * The studio in Chromium (`npm run bench -- studio`): how long each page takes to show its data
 * with 1,000 threads (each a short conversation) and a thread of 300 checkpoints, served by
 * `serve()` on loopback. A page has loaded when its content is on screen (the selector below),
 * timed from the navigation's start by the page's own clock. Cold: a new browser context (empty
 * cache) in a running Chromium (after one throwaway load); warm: the median of 5 reloads. The
 * figures move with the machine's load: print `uptime` with them. Budget: 1,000 ms per page (the
 * ratio printed is time / budget). Also the bytes of each first load: the app's files (gzip, as
 * served; budget 250 kB) and the API's answers (the data, as JSON).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRuntime, memoryStore } from "../src/index.js";
import { serve } from "../src/node/index.js";
import { agent, echo } from "../examples/node/agent.js";
import { chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS, ROOT, tempDir } from "../test/browser/harness.js";
import { buildStudio } from "../test/studio/harness.js";

const THREADS = 1000;
const CHECKPOINTS = 300;
const BUDGET_MS = 1000;
const BUDGET_BYTES = 250 * 1024;
const WARM_ROUNDS = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function (): Promise<void> {
  const assets = tempDir("studio-bench");
  const setupStart = performance.now();
  await buildStudio(assets.path);
  const runtime = await createRuntime({ graphs: { agent, echo }, store: memoryStore() });
  for (let i = 0; i < THREADS; i++) {
    const thread = await runtime.threads.create({ metadata: { bench: "studio", i } });
    await runtime.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: `question ${i}: what is ${i} + ${i}?` }] } });
  }
  const long = await runtime.threads.create({ metadata: { bench: "long" } });
  let checkpoints = 0;
  for (let i = 0; checkpoints < CHECKPOINTS; i++) {
    await runtime.runs.wait(long.thread_id, "echo", { input: { messages: [{ role: "user", content: `turn ${i}` }] } });
    checkpoints = (await runtime.threads.getHistory(long.thread_id, { limit: 1000, select: ["checkpoint"] })).length;
  }
  for (const f of ["baseline", "prompt-v2", "rag-v3"]) await runtime.experiments.upload(JSON.parse(readFileSync(join(ROOT, "examples/upload", `${f}.json`), "utf8")));
  const experiments = (await runtime.experiments.list()).map((e) => e.id).reverse();
  await runtime.store.putItem(["users", "alice"], "prefs", { theme: "dark" });
  await runtime.crons.create("agent", { schedule: "0 * * * *" });
  const agentId = (await runtime.assistants.search({ graphId: "agent" }))[0]!.assistant_id;
  const server = await serve(runtime, { port: 0, studio: { assetsDir: assets.path } });
  console.log(`setup: ${THREADS} threads, a thread of ${checkpoints} checkpoints, built and filled in ${((performance.now() - setupStart) / 1000).toFixed(1)} s`);

  const pages: Array<[name: string, path: string, ready: string]> = [
    ["assistants + graph", `/studio?assistant=${agentId}&tab=graph`, '[data-testid="graph-node"]'],
    ["threads (1,000)", "/studio/threads", '[data-testid="thread-row"]'],
    [`thread (${checkpoints} checkpoints)`, `/studio/threads/${long.thread_id}`, '[data-testid="checkpoint"] >> nth=0'],
    ["runs & crons", "/studio/runs", '[data-testid="cron-row"]'],
    ["store", "/studio/store", '[data-testid="store-item"]'],
    ["experiments", "/studio/experiments", '[data-testid="choose-experiment"]'],
    ["compare (3)", `/studio/experiments/compare?ids=${experiments.join(",")}`, '[data-testid="metric-chart"] canvas[data-ready]'],
  ];
  // The thread view has loaded when its conversation is drawn too.
  const also: Record<string, string> = { [`thread (${checkpoints} checkpoints)`]: '[data-testid="message-ai"]' };

  const rows: Array<{ name: string; cold: number; warm: number; app: number; data: number }> = [];
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    // The browser's own start (its first renderer) is not a page's cost: one throwaway load first.
    const warmup = await browser.newContext();
    await (await warmup.newPage()).goto(`${server.url}/studio/nowhere`);
    await warmup.close();
    for (const [name, path, ready] of pages) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (err) => errors.push(err.message));
      page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
      const sizes: Array<Promise<{ app: boolean; bytes: number }>> = [];
      page.on("requestfinished", (request) => {
        const app = new URL(request.url()).pathname.startsWith("/studio");
        sizes.push(request.sizes().then((s) => ({ app, bytes: s.responseBodySize + s.responseHeadersSize })));
      });
      const load = async () => {
        await page.goto(`${server.url}${path}`);
        await page.locator(ready).first().waitFor({ timeout: 30_000 });
        if (also[name]) await page.locator(also[name]!).first().waitFor({ timeout: 30_000 });
        return page.evaluate(() => performance.now());
      };
      const cold = await load();
      const first = await Promise.all(sizes);
      const warm: number[] = [];
      for (let i = 0; i < WARM_ROUNDS; i++) warm.push(await load());
      if (errors.length) throw new Error(`${name}: ${errors.join("; ")}`);
      const sum = (app: boolean) => first.filter((s) => s.app === app).reduce((n, s) => n + s.bytes, 0);
      rows.push({ name, cold, warm: median(warm), app: sum(true), data: sum(false) });
      await context.close();
    }
  } finally {
    await browser.close();
    await server.close();
    await runtime.close();
    assets.remove();
  }
  console.log("page                          cold ms  warm ms  ratio(cold/1 s)  app kB (gzip)  ratio(/250 kB)  data kB");
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(28)} ${r.cold.toFixed(0).padStart(8)} ${r.warm.toFixed(0).padStart(8)} ${(r.cold / BUDGET_MS).toFixed(2).padStart(16)} ${(r.app / 1024).toFixed(1).padStart(14)} ${(r.app / BUDGET_BYTES).toFixed(2).padStart(15)} ${(r.data / 1024).toFixed(1).padStart(8)}`,
    );
  }
  const worst = Math.max(...rows.map((r) => r.cold));
  const { loadavg } = await import("node:os");
  console.log(`slowest page: ${worst.toFixed(0)} ms cold (ratio ${(worst / BUDGET_MS).toFixed(2)} of the 1 s budget); load average ${loadavg()[0]!.toFixed(1)}`);
}
