/** A served directory and a Chromium for the tests of one file, set up before them and removed after. */
import { afterAll, beforeAll } from "vitest";
import { launchBrowser, serveDir, tempDir, type Browser, type StaticServer } from "./harness";

export interface BrowserPages {
  /** The directory served (pages are bundled or built into it). */
  dir: ReturnType<typeof tempDir>;
  server: StaticServer;
  browser: Browser;
}

/** Registers the hooks; the fields are set once `beforeAll` ran. `prepare` fills the directory before it is served. */
export function browserPages(prefix: string, prepare?: (dir: string) => Promise<void>): BrowserPages {
  const pages = {} as BrowserPages;
  beforeAll(async () => {
    pages.dir = tempDir(prefix);
    await prepare?.(pages.dir.path);
    pages.server = await serveDir(pages.dir.path);
    pages.browser = await launchBrowser();
  });
  afterAll(async () => {
    await pages.browser?.close();
    await pages.server?.close();
    pages.dir?.remove();
  });
  return pages;
}
