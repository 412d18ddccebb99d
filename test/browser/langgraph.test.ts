/** A LangGraph.js graph hosted by graphdock in real Chromium on IndexedDB (page: ./page/langgraph.ts). */
import { join } from "node:path";
import { expect, it } from "vitest";
import { bundlePage, runTestPage, testPageSource } from "./harness";
import { browserPages } from "./pages";

const pages = browserPages("langgraph-pages");

it("hosts a LangGraph.js graph on IndexedDB: tokens, breakpoint, a new runtime, resume", async () => {
  await bundlePage(testPageSource(["./test/browser/page/langgraph.ts"]), join(pages.dir.path, "langgraph"));
  const results = await runTestPage(pages.browser, `${pages.server.url}/langgraph/`);
  const failures = results.filter((r) => !r.ok).map((r) => `${r.name}\n    ${r.error}`);
  expect(failures, failures.join("\n")).toEqual([]);
  expect(results.filter((r) => r.ok && !r.skipped)).toHaveLength(1);
  expect(pages.browser.errors).toEqual([]);
}, 90_000);
