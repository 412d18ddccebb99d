/**
 * `GET /docs` (D82) in real Chromium: `serve` renders the API's OpenAPI document with Swagger UI
 * from files the package serves itself (every request of the page stays on the server: no CDN),
 * at the root and under a base path; a screenshot is kept in test-artifacts/http/docs.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { launchBrowser, ROOT, type Browser } from "../browser/harness.js";
import { echoGraph } from "./graphs.js";

let runtime: Runtime;
let browser: Browser;
const servers: ServeHandle[] = [];

beforeAll(async () => {
  runtime = await createRuntime({ graphs: { echo: echoGraph() } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  await runtime?.close();
});

/** Opens `<url>/docs`, waits for the operations to render; answers what the page requested. */
async function render(base: string, shot?: string) {
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on("request", (r) => requested.push(r.url()));
  await page.goto(`${base}/docs`);
  await page.waitForSelector(".opblock-summary", { timeout: 20_000 });
  const operations = await page.locator(".opblock-summary").count();
  const title = (await page.locator(".info .title").textContent())?.trim() ?? "";
  // One operation opened: its parameters, request body and answers, from the document's schemas.
  const run = page.locator(".opblock-post").filter({ has: page.locator('[data-path="/threads/{thread_id}/runs/wait"]') });
  await run.locator(".opblock-summary").click();
  await run.locator(".opblock-body .responses-table").waitFor();
  const opened = (await run.textContent()) ?? "";
  if (shot) {
    mkdirSync(join(ROOT, "test-artifacts", "http"), { recursive: true });
    await run.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ROOT, "test-artifacts", "http", `${shot}.png`), fullPage: false });
  }
  await page.close();
  return { operations, title, opened, requested };
}

describe("GET /docs", () => {
  it("renders every operation of /openapi.json in Chromium, from the server's own files", async () => {
    const server = await serve(runtime, { port: 0 });
    servers.push(server);
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const documented = Object.values(doc.paths as Record<string, object>).flatMap((item) => Object.keys(item).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))).length;
    const { operations, title, opened, requested } = await render(server.url, "docs");
    expect(title).toContain("graphdock agent server");
    for (const shown of ["thread_id", "assistant_id", "stream_mode", "__error__", "content-location"]) expect(opened).toContain(shown);
    expect(operations).toBe(documented);
    expect(requested.filter((u) => !u.startsWith(server.url) && !u.startsWith("data:"))).toEqual([]);
    expect(requested).toContain(`${server.url}/openapi.json`);
    expect(browser.errors).toEqual([]);
  });

  it("works under a base path, and is off with docs: false", async () => {
    const mounted = await serve(runtime, { port: 0, basePath: "/api" });
    const without = await serve(runtime, { port: 0, docs: false });
    servers.push(mounted, without);
    const { operations, requested } = await render(`${mounted.url}/api`);
    expect(operations).toBeGreaterThan(40);
    expect(requested).toContain(`${mounted.url}/api/openapi.json`);
    expect(requested).toContain(`${mounted.url}/api/docs/swagger-ui-bundle.js`);
    expect((await fetch(`${without.url}/docs`)).status).toBe(404);
    const gz = await fetch(`${mounted.url}/api/docs/swagger-ui.css`, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-type")).toMatch(/^text\/css/);
    expect((await gz.text()).length).toBeGreaterThan(10_000);
    expect(browser.errors).toEqual([]);
  });
});
