/**
 * Size check: the core plus the IndexedDB store, bundled and minified for the browser
 * with esbuild, in gzip bytes. Printed twice: as bundled, and with zod's locale catalogue (every
 * language's messages, reachable through `z.locales`) replaced by an empty module; English, the
 * default, stays in both. Target: under 60 kB gzip without the locales.
 */
import { build, type Metafile, type Plugin } from "esbuild";
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

async function bundle(plugins: Plugin[], external: string[] = []): Promise<{ minified: number; gzip: number; metafile: Metafile }> {
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: ROOT, loader: "ts", sourcefile: "browser-entry.ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins,
    external,
  });
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
}
