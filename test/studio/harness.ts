/**
 * Node-side helpers of the studio's browser tests and bench: the app built with Vite as
 * `npm run build` builds it (into a temporary directory here), axe-core run inside a page, and
 * the graphs the walks drive.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { ROOT } from "../browser/harness.js";

/** Builds the studio's web app (src/studio/app) into `outDir`, as `npm run build` does into dist/studio. */
export async function buildStudio(outDir: string): Promise<void> {
  const { build } = await import("vite");
  await build({ configFile: join(ROOT, "src/studio/app/vite.config.ts"), logLevel: "error", build: { outDir, emptyOutDir: true } });
}

/** The WCAG 2.0 and 2.1 rules of levels A and AA; none is disabled. */
const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's WCAG 2.1 AA violations on the page as it is now (open dialogs included). axe is
 * evaluated through the DevTools protocol, which the page's content security policy does not
 * govern, so the page runs with its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  return page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> }> }> } }).axe;
    const { violations } = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
    return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => `${JSON.stringify(n.target)} ${n.failureSummary ?? ""}`) }));
  }, WCAG_21_AA);
}
