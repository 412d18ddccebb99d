import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { defineConfig } from "tsup";

/** The API viewer's files (`GET /docs`, src/node/docs.ts), shipped in dist/docs/ with their licence. */
function copyDocsViewer(): void {
  const from = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  mkdirSync("dist/docs", { recursive: true });
  for (const file of ["swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css", "LICENSE", "NOTICE"]) copyFileSync(join(from, file), join("dist/docs", file));
}

// One entry per subpath export; scripts/check-exports.mjs keeps this list and package.json in sync.
// The core entry (index) must stay free of Node built-ins (D18): the check bundles it for the browser.
export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      "json-file": "src/persistence/json-file/index.ts",
      indexeddb: "src/persistence/indexeddb/index.ts",
      http: "src/http/index.ts",
      node: "src/node/index.ts",
      report: "src/upload/report-entry.ts",
      postgres: "src/postgres/index.ts",
      // LangGraph.js hosting (D23); the core loads it by name only when given such a graph.
      langgraph: "src/langgraph/index.ts",
      // The protocols (D32): each loads its library (an optional peer) only when its endpoint serves.
      mcp: "src/mcp/index.ts",
      a2a: "src/a2a/index.ts",
      "ai-sdk": "src/ai-sdk/index.ts",
      // The studio's endpoint; its web app (src/studio/app) is built by Vite into dist/studio/.
      studio: "src/studio/index.ts",
      // Not an export: the worker thread src/node/type-schemas-thread.ts starts (D42).
      "type-schemas-worker": "src/node/type-schemas-worker.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: true,
    treeshake: true,
    // import.meta.url in the CommonJS build (the studio, the API viewer, src/node/docs.ts, and the
    // type-schemas worker find their files beside their module).
    shims: true,
    // lowdb is ESM-only: bundled (its core is one small class), so that every CommonJS entry loads
    // without require(esm) (off before Node 20.19 and 22.12, and under tsx's CommonJS loader).
    noExternal: ["lowdb"],
    onSuccess: async () => copyDocsViewer(),
  },
  {
    entry: { cli: "src/node/cli.ts" },
    format: ["esm"],
    target: "node20",
    sourcemap: true,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
