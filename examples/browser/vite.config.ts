import { defineConfig } from "vite";

// The runtime opens with top-level await before the first screen renders.
export default defineConfig({
  build: { target: "es2022" },
  esbuild: { target: "es2022" },
  optimizeDeps: { esbuildOptions: { target: "es2022" } },
  plugins: [
    {
      // The example imports graphdock from src/, and the repository's package.json declares its
      // modules free of side effects except the built `graphdock/langgraph` entry
      // (dist/langgraph.js), whose import registers the LangGraph.js adapter. Give its source,
      // src/langgraph/index.ts, the same standing, or the bundle drops `import ".../langgraph/index"`.
      // (An app importing the published "graphdock/langgraph" needs nothing of the kind.)
      name: "graphdock-langgraph-entry-has-side-effects",
      transform(code, id) {
        if (id.replace(/\\/g, "/").endsWith("/src/langgraph/index.ts")) return { code, map: null, moduleSideEffects: true };
        return undefined;
      },
    },
  ],
});
