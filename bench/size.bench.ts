/**
 * Size check: what a web page pays for the core plus the IndexedDB store, bundled and minified for
 * the browser with esbuild (every export kept), in gzip bytes (level 9).
 *
 * - "at start": what the page loads before anything runs, the bundle with its dynamic imports
 *   left out, compared with the budget of docs/browser.md ("Bundle size", D120). Code splitting
 *   bundlers (Vite, Rollup, webpack) ship about this; esbuild's `--splitting`, which cuts chunks
 *   per file, also puts there the parts of files shared with a lazy chunk (printed too).
 * - "on first use": what the dynamic imports add (croner, loaded by the first cron; zod's JSON
 *   Schema converter, loaded by the first `getSchemas`): "one file" less "at start".
 * - "one file": the bundle with those inlined, what a bundler without code splitting ships; the
 *   figure this bench printed before D120. It also says whether any of zod's locales beyond
 *   English got in.
 * - a page importing only `createRuntime`, `StateGraph` and `indexedDbStore`, at start.
 * - what zod costs at start, and the minified bytes by package at start.
 *
 * Then `graphdock/http` for the browser: alone, and what it adds to a page that has the core
 * (what a page serving its runtime with the fetch handler pays: the runtime's schemas and zod
 * are there already), as one file and at start (the OpenAPI document's code is loaded on the
 * first `GET /openapi.json`, D81).
 */
import type { Metafile, Plugin } from "esbuild";
import { pageBundle, startOnly } from "./page-bundle.js";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The budget of the core + IndexedDB page at start (D120). */
const BUDGET = 105 * 1024;
const CORE = `export * from "./src/index.ts";\n`;
const IDB = `export * from "./src/persistence/indexeddb/index.ts";\n`;
const HTTP = `export * from "./src/http/index.ts";\n`;
/** A page that imports only what it runs: the package is marked free of side effects. */
const APP = `export { createRuntime, StateGraph } from "./src/index.ts";\nexport { indexedDbStore } from "./src/persistence/indexeddb/index.ts";\n`;

const gzip = (code: Uint8Array) => gzipSync(code, { level: 9 }).byteLength;
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/** `entry` bundled and minified for the browser, in memory. */
const browserBuild = (entry: string, more: Parameters<typeof pageBundle>[2] = {}) => pageBundle(ROOT, entry, more);

interface Sized {
  minified: number;
  gzip: number;
  metafile: Metafile;
}

/** `entry` as one file: dynamic imports inlined, or left out with `startOnly()`. */
async function bundle(entry: string, plugins: Plugin[] = [], external: string[] = []): Promise<Sized> {
  const result = await browserBuild(entry, { plugins, external });
  const code = result.outputFiles[0]!.contents;
  return { minified: code.byteLength, gzip: gzip(code), metafile: result.metafile };
}

/** Gzip bytes esbuild `--splitting` loads at start: the entry and the chunks it imports statically. */
async function esbuildSplitStart(entry: string): Promise<number> {
  const result = await browserBuild(entry, { splitting: true, outdir: "size-out" });
  const outputs = result.metafile.outputs;
  const loaded = new Set<string>();
  const visit = (out: string) => {
    if (loaded.has(out)) return;
    loaded.add(out);
    for (const i of outputs[out]!.imports) if (i.kind === "import-statement" && !i.external) visit(i.path);
  };
  visit(Object.keys(outputs).find((o) => outputs[o]!.entryPoint === "browser-entry.ts")!);
  let bytes = 0;
  for (const file of result.outputFiles) if ([...loaded].some((o) => file.path.endsWith(o))) bytes += gzip(file.contents);
  return bytes;
}

/** Minified bytes each package (or graphdock's own src/) contributes to the bundle. */
function byPackage(metafile: Metafile): [string, number][] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? (path.startsWith("src/") ? "graphdock (src)" : path);
      totals.set(pkg, (totals.get(pkg) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]);
}

/** zod's locale modules other than English (the default) with code in the bundle. */
const foreignLocales = (metafile: Metafile) =>
  Object.values(metafile.outputs)
    .flatMap((o) => Object.entries(o.inputs))
    .filter(([p, { bytesInOutput }]) => bytesInOutput > 0 && /node_modules\/zod\/v4\/locales\/(?!en\.js$|index\.js$)/.test(p))
    .map(([p]) => p.replace(/.*\//, ""));

const line = (label: string, s: Pick<Sized, "gzip" | "minified">) => `  ${label.padEnd(10)} ${s.gzip} B gzip (${kB(s.gzip)}), ${s.minified} B minified`;

export default async function main(): Promise<void> {
  const start = await bundle(CORE + IDB, [startOnly()]);
  const whole = await bundle(CORE + IDB);
  const split = await esbuildSplitStart(CORE + IDB);
  const noZod = await bundle(CORE + IDB, [startOnly()], ["zod"]);
  const locales = foreignLocales(whole.metafile);
  console.log("core + indexedDbStore, esbuild --minify --platform=browser, every export kept, gzip -9");
  console.log(`${line("at start:", start)}; budget < ${BUDGET} B: ratio ${(start.gzip / BUDGET).toFixed(2)} ${start.gzip < BUDGET ? "(met)" : "(NOT met)"}`);
  console.log(`    (esbuild --splitting loads ${split} B (${kB(split)}) at start)`);
  console.log(`  on first use: ${whole.gzip - start.gzip} B gzip (${kB(whole.gzip - start.gzip)}) more: croner at the first cron, zod's JSON Schema converter at the first getSchemas`);
  console.log(`${line("one file:", whole)}; zod locales beyond English: ${locales.length ? locales.join(", ") : "none"}`);
  const app = await bundle(APP, [startOnly()]);
  console.log(`  only createRuntime, StateGraph and indexedDbStore imported, at start: ${app.gzip} B gzip (${kB(app.gzip)})`);
  console.log(`  zod left out (external): ${noZod.gzip} B gzip (${kB(noZod.gzip)}) at start: zod costs ${kB(start.gzip - noZod.gzip)} gzip there`);
  console.log("  minified bytes by package at start:");
  for (const [pkg, bytes] of byPackage(start.metafile)) console.log(`    ${pkg.padEnd(28)} ${String(bytes).padStart(8)} B`);

  const http = await bundle(HTTP);
  const [core, both] = [await bundle(CORE), await bundle(CORE + HTTP)];
  const [coreStart, bothStart] = [await bundle(CORE, [startOnly()]), await bundle(CORE + HTTP, [startOnly()])];
  console.log("graphdock/http, esbuild --minify --platform=browser, gzip -9");
  console.log(`  alone:                         ${http.gzip} B gzip (${kB(http.gzip)}), ${http.minified} B minified`);
  console.log(
    `  added to a page with the core: ${both.gzip - core.gzip} B gzip (${kB(both.gzip - core.gzip)}) as one file, ${bothStart.gzip - coreStart.gzip} B (${kB(bothStart.gzip - coreStart.gzip)}) at start`,
  );
  console.log("  minified bytes by package (alone):");
  for (const [pkg, bytes] of byPackage(http.metafile).slice(0, 12)) console.log(`    ${pkg.padEnd(28)} ${String(bytes).padStart(8)} B`);
}
