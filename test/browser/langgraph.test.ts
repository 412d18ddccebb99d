/** A LangGraph.js graph hosted by agentdock in real Chromium on IndexedDB (page: ./page/langgraph.ts). */
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bundlePage, launchBrowser, runTestPage, serveDir, tempDir, testPageSource, type Browser, type StaticServer } from "./harness";

let dir: ReturnType<typeof tempDir>;
let server: StaticServer;
let browser: Browser;

beforeAll(async () => {
  dir = tempDir("langgraph-pages");
  server = await serveDir(dir.path);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  dir?.remove();
});

it("hosts a LangGraph.js graph on IndexedDB: tokens, breakpoint, a new runtime, resume", async () => {
  await bundlePage(testPageSource(["./test/browser/page/langgraph.ts"]), join(dir.path, "langgraph"));
  const results = await runTestPage(browser, `${server.url}/langgraph/`);
  const failures = results.filter((r) => !r.ok).map((r) => `${r.name}\n    ${r.error}`);
  expect(failures, failures.join("\n")).toEqual([]);
  expect(results.filter((r) => r.ok && !r.skipped)).toHaveLength(1);
  expect(browser.errors).toEqual([]);
}, 90_000);
