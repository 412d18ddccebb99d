/**
 * The studio's live view across processes: two `graphdock serve` processes on one PostgreSQL
 * database; the studio of the first shows a thread in Chromium while a run started through the
 * second (with the official client) streams into it token by token (D117). The servers serve the
 * package's own build of the studio (dist/studio, written by `npm run build`).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ROOT, launchBrowser, screenshot, type Browser } from "../browser/harness.js";
import { startServer, type Server } from "./procs.js";

const store = `${inject("pgUrl")}?schema=studio_${process.pid}`;
let servers: Server[] = [];
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "studio", "index.html"))) throw new Error("dist/studio is missing: run npm run build first");
  servers = await Promise.all([0, 1].map(() => startServer(store)));
  browser = await launchBrowser();
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.stop()));
});

describe("the studio on PostgreSQL", () => {
  it("shows a run started through another process as it streams", async () => {
    const [a, b] = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } })) as [Client, Client];
    const thread = await a.threads.create();
    await page.goto(`${servers[0]!.url}/studio/threads/${thread.thread_id}`);
    await page.getByTestId("composer-input").waitFor();
    await page.waitForTimeout(300); // the thread's stream attaches
    const run = (async () => {
      for await (const _ of b.runs.stream(thread.thread_id, "chatty", { input: { messages: [{ role: "user", content: "tell me" }] }, streamMode: ["messages-tuple", "values"] })) {
        // read by the second process's client
      }
    })();
    await page.getByTestId("live-run").waitFor();
    // Part of the answer shows before the run ends.
    const streaming = page.locator('[data-testid="message-ai"].streaming');
    // The text the poll saw first is judged, not a later read (the next word may land in between).
    let seen = "";
    await expect.poll(async () => (seen = (await streaming.textContent()) ?? ""), { timeout: 5000 }).toContain("alpha beta");
    expect(seen).not.toContain("epsilon");
    await screenshot(page, "studio-pg-live");
    await run;
    await expect.poll(() => page.getByTestId("message-ai").last().textContent()).toContain("alpha beta gamma delta epsilon");
    await expect.poll(() => page.getByTestId("live-run").count(), { timeout: 5000 }).toBe(0);
    expect(await page.getByTestId("message-human").textContent()).toContain("tell me");
    expect(browser.errors).toEqual([]);
  });
});
