/**
 * Node-side harness of the browser suite: builds pages (Vite for the example app, esbuild for
 * test pages), serves them on 127.0.0.1 and drives Debian's Chromium with playwright-core.
 */
import { createServer, type Server } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
export const ARTIFACTS = join(ROOT, "test-artifacts", "browser");
export const CHROMIUM = "/usr/bin/chromium";

/** The flags this machine needs: no sandbox as root, no network beyond loopback. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".map": "application/json",
};

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `graphdock-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Builds `examples/browser` with Vite into `outDir`. */
export async function buildExampleApp(outDir: string): Promise<void> {
  const { build } = await import("vite");
  const root = join(ROOT, "examples/browser");
  await build({
    root,
    configFile: join(root, "vite.config.ts"),
    logLevel: "error",
    build: { outDir, emptyOutDir: true },
  });
}

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `dir` on 127.0.0.1 at a free port; `/` is `index.html`. */
export async function serveDir(dir: string): Promise<StaticServer> {
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    let file = normalize(join(dir, path));
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": "no-store",
    });
    res.end(readFileSync(file));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("server has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export interface Browser {
  context: BrowserContext;
  /** Opens a page that records console errors and page errors into `errors`. */
  newPage(): Promise<Page>;
  /** Console errors and uncaught exceptions seen on every page so far. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with a fresh user data dir (a persistent context, so IndexedDB
 * survives reloads and is shared by every page of the context). Fails with the install command
 * when Chromium is missing: the suite never skips.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does).`,
    );
  }
  const profile = tempDir("chromium");
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  // Fail a step with Playwright's own message well before the test's timeout.
  context.setDefaultTimeout(10_000);
  const errors: string[] = [];
  return {
    context,
    errors,
    async newPage() {
      const page = await context.newPage();
      page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
      page.on("console", (msg) => {
        if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
      });
      return page;
    },
    async close() {
      await context.close();
      profile.remove();
    },
  };
}

/** Saves a full-page screenshot to `test-artifacts/browser/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

const SHIM = join(ROOT, "test/browser/page/vitest-shim.ts");

/**
 * Bundles `source` (TypeScript, imports relative to the repository root) for the browser with
 * esbuild into `outDir`, with an `index.html` that loads it. `vitest` resolves to the page shim.
 */
export async function bundlePage(source: string, outDir: string): Promise<void> {
  const { build } = await import("esbuild");
  await build({
    stdin: { contents: source, resolveDir: ROOT, loader: "ts", sourcefile: "page-entry.ts" },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outfile: join(outDir, "page.js"),
    alias: { vitest: SHIM },
    // The package says `sideEffects: false`; test files are imported for their side effects.
    ignoreAnnotations: true,
    logLevel: "error",
  });
  writeFileSync(
    join(outDir, "index.html"),
    `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>graphdock test page</title><script type="module" src="./page.js"></script>`,
  );
}

/** A page running vitest-style test files; it publishes its results as `window.__results`. */
export function testPageSource(files: string[]): string {
  return `${files.map((f) => `import ${JSON.stringify(f)};`).join("\n")}
import { runCollected } from ${JSON.stringify(SHIM)};
runCollected().then(
  (results) => { window.__results = results; },
  (err) => { window.__results = [{ name: "(suite hooks)", ok: false, error: String((err && err.stack) || err), ms: 0 }]; },
);
`;
}

export interface PageTestResult {
  name: string;
  ok: boolean;
  skipped?: boolean;
  error?: string;
  ms: number;
}

/**
 * Opens a page built from `testPageSource` and waits for its results; an uncaught error in the
 * page (a bundle that fails to load, say) fails at once with that error.
 */
export async function runTestPage(browser: Browser, url: string, timeoutMs = 50_000): Promise<PageTestResult[]> {
  const page = await browser.newPage();
  try {
    const crashed = new Promise<never>((_, reject) => page.on("pageerror", (err) => reject(err)));
    crashed.catch(() => undefined); // an error after the results is reported by `browser.errors`
    await page.goto(url);
    await Promise.race([
      crashed,
      page.waitForFunction(() => (window as { __results?: unknown }).__results !== undefined, null, { timeout: timeoutMs }),
    ]);
    return (await page.evaluate(() => (window as unknown as { __results: unknown }).__results)) as PageTestResult[];
  } finally {
    await page.close();
  }
}
