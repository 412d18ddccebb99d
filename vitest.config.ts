import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The core loads `graphdock/langgraph` by name when given a LangGraph.js graph (graph-port.ts):
  // in the tests that is the source, not a build.
  resolve: { alias: [{ find: /^graphdock\/langgraph$/, replacement: fileURLToPath(new URL("./src/langgraph/index.ts", import.meta.url)) }] },
  test: {
    testTimeout: 20_000,
    hookTimeout: 120_000,
    pool: "forks",
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    // test/postgres runs against a throwaway PostgreSQL server that its global setup starts (D22);
    // the setup runs only when a test of that project is selected. test/faults is the
    // fault-injection suite (D66): real SIGKILLs, closed Chromium tabs, PostgreSQL too.
    projects: [
      {
        extends: true,
        // Every answer of the HTTP handler is checked against its OpenAPI document (D81).
        test: { name: "default", include: ["test/**/*.test.ts"], exclude: ["test/postgres/**", "test/faults/**", "**/node_modules/**"], setupFiles: ["test/setup/openapi-responses.ts"] },
      },
      {
        extends: true,
        test: { name: "postgres", include: ["test/postgres/**/*.test.ts"], globalSetup: ["test/postgres/global-setup.ts"], typecheck: { enabled: false } },
      },
      {
        extends: true,
        test: { name: "faults", include: ["test/faults/**/*.test.ts"], globalSetup: ["test/postgres/global-setup.ts"], typecheck: { enabled: false } },
      },
    ],
  },
});
