/**
 * How a web page bundles graphdock, shared by the size bench (bench/size.bench.ts) and the check
 * of what the core takes in (test/package/core-bundle.test.ts), so the test checks the bundle the
 * bench measures: esbuild, minified ES modules for the browser, in memory, with its metafile.
 */
import { build, type BuildOptions, type Plugin } from "esbuild";

/** Leaves every dynamic `import()` out of the bundle (calling `lazy` with each): what remains is what loads at start. */
export const startOnly = (lazy?: (path: string) => void): Plugin => ({
  name: "start-only",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind !== "dynamic-import") return undefined;
      lazy?.(args.path);
      return { path: args.path, external: true };
    });
  },
});

/** `entry` (source text resolved from `root`) bundled for a page. */
export const pageBundle = (root: string, entry: string, more: Pick<BuildOptions, "plugins" | "external" | "splitting" | "outdir"> = {}) =>
  build({
    stdin: { contents: entry, resolveDir: root, loader: "ts", sourcefile: "browser-entry.ts" },
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
