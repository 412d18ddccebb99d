import { defineConfig } from "vite";

// The runtime opens with top-level await before the first screen renders.
export default defineConfig({
  build: { target: "es2022" },
  esbuild: { target: "es2022" },
  optimizeDeps: { esbuildOptions: { target: "es2022" } },
});
