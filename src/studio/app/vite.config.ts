import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The studio's web app, built into dist/studio/ by `npm run build` and served by the studio
// endpoint (src/studio/endpoint.ts). Asset URLs are relative (`base: "./"`): the endpoint points
// them at the studio's root for each page depth, so the app works under any mount prefix.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact", target: "es2022" },
  build: {
    outDir: fileURLToPath(new URL("../../../dist/studio", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    assetsInlineLimit: 0,
    // A sourcemap would double the package's share of the studio for no user benefit.
    sourcemap: false,
    rollupOptions: {
      onwarn(warning, warn) {
        // zod (through @langchain/core, a dependency of the official client) has comments rollup reads as misplaced annotations.
        if (warning.code === "INVALID_ANNOTATION") return;
        warn(warning);
      },
    },
  },
});
