import { defineConfig } from "vitest/config";

const shared = {
  testTimeout: 20_000,
  hookTimeout: 120_000,
  pool: "forks" as const,
};

export default defineConfig({
  test: {
    ...shared,
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    // test/postgres runs against a throwaway PostgreSQL server started by its global setup (D22).
    projects: [
      { extends: true, test: { name: "default", include: ["test/**/*.test.ts"], exclude: ["test/postgres/**", "**/node_modules/**"] } },
      { extends: true, test: { name: "postgres", include: ["test/postgres/**/*.test.ts"], globalSetup: ["test/postgres/global-setup.ts"] } },
    ],
  },
});
