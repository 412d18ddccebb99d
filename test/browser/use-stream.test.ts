/**
 * `@langchain/react` v1 `useStream` (the v2 protocol) in real Chromium, against graphdock served
 * over HTTP (`serve()`, what `graphdock serve` runs) and fully in the page on IndexedDB with the
 * in-process transport and no network: a streamed reply, an interrupt and its resume, a reload
 * (rejoining a running run over HTTP; in the page, rejoining the interrupted thread), and stop.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent } from "../../examples/node/agent.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { Gate, startCli, talker } from "../protocol-v2/helpers.js";
import { ROOT, launchBrowser, screenshot, serveDir, tempDir, type Browser, type StaticServer } from "./harness.js";

const REACT_DIR = join(ROOT, "node_modules/@langchain/react/dist");

let browser: Browser;
let site: StaticServer;
let out: { path: string; remove: () => void };
let runtime: Runtime;
let server: ServeHandle;
const gate = new Gate();

beforeAll(async () => {
  out = tempDir("use-stream");
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(ROOT, "test/browser/page/use-stream-app.tsx")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outfile: join(out.path, "page.js"),
    define: { "process.env.NODE_ENV": '"production"' },
    // One SDK in the page: the one @langchain/react ships with (resolved from its directory).
    plugins: [
      {
        name: "one-sdk",
        setup(b) {
          b.onResolve({ filter: /^@langchain\/langgraph-sdk(\/.*)?$/ }, async (args) => {
            if ((args.pluginData as { oneSdk?: boolean } | undefined)?.oneSdk) return undefined;
            return b.resolve(args.path, { kind: args.kind, resolveDir: REACT_DIR, pluginData: { oneSdk: true } });
          });
        },
      },
    ],
    logLevel: "error",
  });
  await build({
    entryPoints: [join(ROOT, "test/browser/page/use-stream-sw.ts")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    outfile: join(out.path, "sw.js"),
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
  });
  const { writeFileSync } = await import("node:fs");
  writeFileSync(join(out.path, "index.html"), `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>useStream</title><script type="module" src="./page.js"></script>`);
  site = await serveDir(out.path);
  runtime = await createRuntime({ graphs: { agent, talker: talker(gate) } });
  server = await serve(runtime, { port: 0 });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  gate.release();
  await browser?.close();
  await site?.close();
  await server?.close();
  await runtime?.close();
  out?.remove();
});

type Snap = { threadId: string | null; isLoading: boolean; messages: Array<{ type: string; text: string }>; interrupts: unknown[]; error: string | null };
const snap = (page: Page) => page.evaluate(() => window.app!.snapshot()) as Promise<Snap>;

async function waitFor(page: Page, what: string, pred: (s: Snap) => boolean, ms = 15_000): Promise<Snap> {
  const end = Date.now() + ms;
  let last: Snap | undefined;
  for (;;) {
    last = await snap(page);
    if (pred(last)) return last;
    if (Date.now() > end) {
      await screenshot(page, `use-stream-${what.replace(/\W+/g, "-")}`);
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    }
    await page.waitForTimeout(50);
  }
}

async function open(query: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${site.url}/?${query}`);
  await page.waitForFunction(() => window.appReady === true || window.appError !== undefined);
  const error = await page.evaluate(() => window.appError);
  if (error) throw new Error(error);
  return page;
}

const lastAi = (s: Snap) => [...s.messages].reverse().find((m) => m.type === "ai")?.text ?? "";

describe("useStream against graphdock serve (SSE)", () => {
  const api = () => `api=${encodeURIComponent(server.url)}`;

  it("streams a reply, then an interrupt resumed with respond", async () => {
    const page = await open(`${api()}&assistant=agent`);
    await page.evaluate(() => void window.app!.submit("hello"));
    let s = await waitFor(page, "reply", (x) => !x.isLoading && lastAi(x).includes("You said: hello"));
    expect(s.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(s.error).toBeNull();
    await page.evaluate(() => void window.app!.submit("what is 2 * 3?"));
    s = await waitFor(page, "interrupt", (x) => x.interrupts.length === 1 && !x.isLoading);
    expect(JSON.stringify(s.interrupts[0])).toContain("calculator");
    await page.evaluate(() => void window.app!.respond(true));
    s = await waitFor(page, "resumed reply", (x) => lastAi(x) === "The answer is 6." && !x.isLoading);
    expect(s.interrupts).toEqual([]);
    expect(browser.errors).toEqual([]);
    await page.close();
  });

  it("rejoins a running run after a reload", async () => {
    const page = await open(`${api()}&assistant=talker`);
    await page.evaluate(() => void window.app!.submit("talk"));
    await waitFor(page, "partial reply", (x) => x.isLoading && lastAi(x).includes("three"));
    const threadId = (await snap(page)).threadId;
    await page.reload();
    await page.waitForFunction(() => window.appReady === true);
    let s = await waitFor(page, "rejoined partial reply", (x) => x.threadId === threadId && lastAi(x).includes("one two three"));
    expect(s.isLoading).toBe(true);
    gate.release();
    s = await waitFor(page, "final reply", (x) => !x.isLoading && lastAi(x) === "one two three four five");
    expect(s.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    await page.close();
  });

  it("stops a running run", async () => {
    const page = await open(`${api()}&assistant=talker`);
    await page.evaluate(() => void window.app!.submit("talk"));
    await waitFor(page, "partial reply", (x) => x.isLoading && lastAi(x).includes("three"));
    const threadId = (await snap(page)).threadId!;
    await page.evaluate(() => window.app!.stop());
    await waitFor(page, "stopped", (x) => !x.isLoading);
    const runs = await runtime.runs.list(threadId);
    await expect.poll(async () => (await runtime.runs.list(threadId))[0]!.status).toBe("interrupted");
    expect(runs).toHaveLength(1);
    await page.close();
  });
});

describe("useStream against the graphdock serve CLI (examples/graph.json)", () => {
  for (const transport of ["sse", "websocket"]) {
    it(`streams a reply and resumes an interrupt over ${transport}`, async () => {
      const cli = await startCli(["serve", "--config", "examples/graph.json", "--port", "0"]);
      try {
        const page = await open(`api=${encodeURIComponent(cli.url)}&assistant=agent&transport=${transport}`);
        await page.evaluate(() => void window.app!.submit("hi"));
        await waitFor(page, `${transport} reply`, (x) => !x.isLoading && lastAi(x).includes("You said: hi"));
        await page.evaluate(() => void window.app!.submit("what is 9 - 2?"));
        await waitFor(page, `${transport} interrupt`, (x) => x.interrupts.length === 1 && !x.isLoading);
        await page.evaluate(() => void window.app!.respond(true));
        const s = await waitFor(page, `${transport} resumed`, (x) => lastAi(x) === "The answer is 7." && !x.isLoading);
        expect(s.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai", "tool", "ai"]);
        expect(browser.errors).toEqual([]);
        await page.close();
      } finally {
        await cli.stop();
      }
    }, 60_000);
  }
});

describe("useStream fully in the page (IndexedDB, in-process transport, no network)", () => {
  const requests: string[] = [];

  it("streams a reply and resumes an interrupt, surviving a reload, with no request leaving the page", async () => {
    const page = await open("mode=in-page&assistant=agent");
    page.on("request", (r) => requests.push(r.url()));
    await page.evaluate(() => void window.app!.submit("hello"));
    let s = await waitFor(page, "in-page reply", (x) => !x.isLoading && lastAi(x).includes("You said: hello"));
    await page.evaluate(() => void window.app!.submit("what is 4 * 5?"));
    s = await waitFor(page, "in-page interrupt", (x) => x.interrupts.length === 1 && !x.isLoading);
    const threadId = s.threadId;
    // Reload: the thread comes back from IndexedDB, interrupt included, and can be resumed.
    await page.reload();
    await page.waitForFunction(() => window.appReady === true);
    s = await waitFor(page, "hydrated interrupt", (x) => x.threadId === threadId && x.interrupts.length === 1 && x.messages.length === 4);
    expect(await page.evaluate(() => window.app!.respond(true).then(() => "ok", (e: Error) => String(e?.stack ?? e)))).toBe("ok");
    s = await waitFor(page, "in-page resumed reply", (x) => lastAi(x) === "The answer is 20." && !x.isLoading);
    expect(s.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai", "tool", "ai"]);
    const foreign = requests.filter((u) => !u.startsWith(site.url));
    expect(foreign).toEqual([]);
    expect(browser.errors).toEqual([]);
    await page.close();
  });

  it("stops a running in-page run", async () => {
    const page = await open("mode=in-page&assistant=talker");
    await page.evaluate(() => void window.app!.submit("talk"));
    await waitFor(page, "in-page partial reply", (x) => x.isLoading && lastAi(x).includes("three"));
    await page.evaluate(() => window.app!.stop());
    const s = await waitFor(page, "in-page stopped", (x) => !x.isLoading);
    expect(lastAi(s)).toContain("one two three");
    await page.close();
  });
});

describe("useStream with the runtime in a service worker (IndexedDB, no network)", () => {
  it("a reload rejoins the running run, which the worker kept executing", async () => {
    const requests: string[] = [];
    const page = await open("mode=service-worker&assistant=talker");
    page.on("request", (r) => requests.push(r.url()));
    await page.evaluate(() => void window.app!.submit("talk"));
    let s = await waitFor(page, "worker partial reply", (x) => x.isLoading && lastAi(x).includes("three"));
    const threadId = s.threadId;
    await page.reload();
    await page.waitForFunction(() => window.appReady === true || window.appError !== undefined);
    expect(await page.evaluate(() => window.appError)).toBeUndefined();
    // The run still executes in the worker: the reloaded page shows it running, its reply so far.
    s = await waitFor(page, "worker rejoined", (x) => x.threadId === threadId && x.isLoading && lastAi(x).includes("three"));
    await page.evaluate(() => window.app!.release!());
    s = await waitFor(page, "worker finished", (x) => !x.isLoading && lastAi(x) === "one two three four five");
    expect(s.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(requests.filter((u) => !u.startsWith(site.url))).toEqual([]);
    expect(browser.errors).toEqual([]);
    await page.close();
  });
});
