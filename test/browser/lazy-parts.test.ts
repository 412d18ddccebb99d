/**
 * The parts of the core loaded on first use (D120), in real Chromium: a page built by Vite, as an
 * app is, loads neither croner nor zod's JSON Schema converter at start; the first getSchemas and
 * the first cron fetch their chunks, and they answer as they do when bundled whole.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ROOT } from "./harness";
import { browserPages } from "./pages";

/** Builds test/browser/page/lazy-parts.ts with Vite into `dir`: page.js, its chunks under chunks/, index.html. */
async function buildPage(dir: string): Promise<void> {
  const { build } = await import("vite");
  await build({
    configFile: false,
    root: ROOT,
    logLevel: "error",
    build: {
      outDir: dir,
      emptyOutDir: false,
      target: "es2022",
      rollupOptions: {
        input: join(ROOT, "test/browser/page/lazy-parts.ts"),
        preserveEntrySignatures: false,
        output: { entryFileNames: "page.js", chunkFileNames: "chunks/[name]-[hash].js" },
      },
    },
  });
  writeFileSync(join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>lazy parts</title><script type="module" src="./page.js"></script>`);
}

const pages = browserPages("lazy-parts", buildPage);

type LazyWindow = Window & {
  lazyParts: {
    inputSchema(): Promise<Record<string, unknown>>;
    createCron(schedule: string, timezone: string): Promise<{ next?: string | null; code?: string; message?: string }>;
    cronCount(): Promise<number>;
  };
};

/** The scripts the page has fetched so far, by file name. */
function scriptsOf(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (r) => {
    if (r.url().endsWith(".js")) seen.push(r.url().replace(/.*\//, ""));
  });
  return seen;
}

describe("the core's lazily loaded parts in Chromium (Vite build)", () => {
  it("loads croner at the first cron and the JSON Schema converter at the first getSchemas, not at start", async () => {
    const page = await pages.browser.newPage();
    const scripts = scriptsOf(page);
    await page.goto(`${pages.server.url}/`);
    await page.waitForFunction(() => "lazyParts" in window);
    const atStart = [...scripts];
    expect(atStart).toContain("page.js");
    expect(atStart.filter((s) => /croner|json-schema/.test(s))).toEqual([]);

    const schema = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.inputSchema());
    expect(schema).toMatchObject({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { topic: { type: "string" } }, required: ["topic"] });
    expect(scripts.filter((s) => /json-schema/.test(s))).toHaveLength(1);
    expect(scripts.filter((s) => /croner/.test(s))).toEqual([]);

    // Mondays at 09:00 in Paris: 08:00 UTC in winter, 07:00 UTC in summer.
    const cron = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.createCron("0 9 * * 1", "Europe/Paris"));
    expect(cron.code).toBeUndefined();
    const next = new Date(cron.next!);
    expect(next.getUTCDay()).toBe(1);
    expect([7, 8]).toContain(next.getUTCHours());
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(scripts.filter((s) => /croner/.test(s))).toHaveLength(1);

    // Loaded once: a refused schedule is checked by the same croner, with the same error.
    const bad = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.createCron("61 * * * *", "UTC"));
    expect(bad.code).toBe("invalid_input");
    expect(bad.message).toContain('schedule "61 * * * *" is not a cron expression');
    const badZone = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.createCron("0 9 * * 1", "Mars/Olympus"));
    expect(badZone).toMatchObject({ code: "invalid_input" });
    expect(badZone.message).toContain('timezone "Mars/Olympus" is not an IANA time zone');
    expect(scripts.filter((s) => /croner|json-schema/.test(s))).toHaveLength(2);
    expect(pages.browser.errors).toEqual([]);
  }, 60_000);

  it("a cron whose croner chunk could not be fetched is refused with nothing written, and the next one loads it", async () => {
    const page = await pages.browser.newPage();
    let refused = 0;
    await page.route(/croner[^/]*\.js$/, (route) => (refused++ === 0 ? route.abort("connectionfailed") : route.continue()));
    await page.goto(`${pages.server.url}/`);
    await page.waitForFunction(() => "lazyParts" in window);
    const failed = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.createCron("0 9 * * 1", "UTC"));
    expect(failed.code).toBe("not a GraphdockError");
    expect(failed.message).toMatch(/dynamically imported module|Failed to fetch/i);
    expect(await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.cronCount())).toBe(0);
    const cron = await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.createCron("0 9 * * 1", "UTC"));
    expect(cron.code).toBeUndefined();
    expect(new Date(cron.next!).getUTCHours()).toBe(9);
    expect(await page.evaluate(() => (window as unknown as LazyWindow).lazyParts.cronCount())).toBe(1);
    expect(refused).toBe(2);
    // The one aborted fetch, which the browser logs; nothing else went wrong.
    expect(pages.browser.errors).toEqual(["console: Failed to load resource: net::ERR_CONNECTION_FAILED"]);
  }, 60_000);
});

