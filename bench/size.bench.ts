/**
 * Size check: the core plus the IndexedDB store, bundled and minified for the browser
 * with esbuild, in gzip bytes. Printed twice: as bundled, and with zod's locale catalogue (every
 * language's messages, reachable through `z.locales`) replaced by an empty module; English, the
 * default, stays in both. Target: under 60 kB gzip without the locales.
 *
 * Then `graphdock/http` for the browser: alone, and what it adds to a page that has the core
 * (what a page serving its runtime with the fetch handler pays: the runtime's schemas and zod
 * are there already), as one file and split at its dynamic import (the OpenAPI document's code,
 * loaded on the first `GET /openapi.json`, D81).
 */
import { build, type BuildOptions, type Metafile, type Plugin } from "esbuild";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TARGET = 60 * 1024;
const ENTRY = `export * from "./src/index.ts";\nexport * from "./src/persistence/indexeddb/index.ts";\n`;

/** Resolves zod's `locales/index.js` (the catalogue of every language) to an empty module. */
const withoutZodLocales: Plugin = {
  name: "without-zod-locales",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: "zod-locales", namespace: "empty" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "empty" }, () => ({ contents: "export {};", loader: "js" }));
  },
};

/** `entry` bundled and minified for the browser, in memory. */
const browserBuild = (entry: string, more: Pick<BuildOptions, "plugins" | "external" | "splitting" | "outdir">) =>
  build({
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts", sourcefile: "browser-entry.ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    ...more,
  });

async function bundle(plugins: Plugin[], external: string[] = [], entry = ENTRY): Promise<{ minified: number; gzip: number; metafile: Metafile }> {
  const result = await browserBuild(entry, { plugins, external });
  const code = result.outputFiles[0]!.contents;
  return { minified: code.byteLength, gzip: gzipSync(code, { level: 9 }).byteLength, metafile: result.metafile };
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
  return [...totals].sort((a, b) => b[1] - a[1]);
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

const CORE = `export * from "./src/index.ts";\n`;
const HTTP = `export * from "./src/http/index.ts";\n`;

/** Gzip bytes of `entry` split at its dynamic imports: the entry and the chunks it imports statically. */
async function eager(entry: string): Promise<number> {
  const result = await browserBuild(entry, { splitting: true, outdir: "size-out" });
  const outputs = result.metafile.outputs;
  const loaded = new Set<string>();
  const visit = (out: string) => {
    if (loaded.has(out)) return;
    loaded.add(out);
    for (const i of outputs[out]!.imports) if (i.kind === "import-statement") visit(i.path);
  };
  visit(Object.keys(outputs).find((o) => outputs[o]!.entryPoint)!);
  let gzip = 0;
  for (const file of result.outputFiles) if ([...loaded].some((o) => file.path.endsWith(o))) gzip += gzipSync(file.contents, { level: 9 }).byteLength;
  return gzip;
}

export default async function main(): Promise<void> {
  const full = await bundle([]);
  const lean = await bundle([withoutZodLocales]);
  console.log("core + indexedDbStore, esbuild --minify --platform=browser, gzip -9");
  console.log(`  with zod locales:    ${full.gzip} B gzip (${kB(full.gzip)}), ${full.minified} B minified`);
  console.log(
    `  without zod locales: ${lean.gzip} B gzip (${kB(lean.gzip)}), ${lean.minified} B minified; target < ${TARGET} B: ratio ${(lean.gzip / TARGET).toFixed(2)} ${lean.gzip < TARGET ? "(met)" : "(NOT met)"}`,
  );
  const noZod = await bundle([], ["zod"]);
  console.log(`  zod left out (external): ${noZod.gzip} B gzip (${kB(noZod.gzip)}): zod costs ${kB(lean.gzip - noZod.gzip)} gzip here`);
  console.log("  minified bytes by package (without locales):");
  for (const [pkg, bytes] of byPackage(lean.metafile)) console.log(`    ${pkg.padEnd(28)} ${String(bytes).padStart(8)} B`);

  const http = await bundle([], [], HTTP);
  const core = await bundle([], [], CORE);
  const both = await bundle([], [], CORE + HTTP);
  const [coreEager, bothEager] = [await eager(CORE), await eager(CORE + HTTP)];
  console.log("graphdock/http, esbuild --minify --platform=browser, gzip -9");
  console.log(`  alone:                         ${http.gzip} B gzip (${kB(http.gzip)}), ${http.minified} B minified`);
  console.log(`  added to a page with the core: ${both.gzip - core.gzip} B gzip (${kB(both.gzip - core.gzip)}) as one file, ${bothEager - coreEager} B (${kB(bothEager - coreEager)}) loaded up front when split`);
  console.log("  minified bytes by package (alone):");
  for (const [pkg, bytes] of byPackage(http.metafile).slice(0, 12)) console.log(`    ${pkg.padEnd(28)} ${String(bytes).padStart(8)} B`);
}
