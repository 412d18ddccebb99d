/**
 * The doc test: every ```ts snippet of README.md and docs/*.md typechecks and runs, in order, as
 * written (rules in ./snippets.ts). "graphdock" resolves to this repository's built package (the
 * package's self-reference, so `npm run build` must have run: `npm test` does that first).
 * Each module runs in its own Node process with a fresh temporary directory as cwd; modules other
 * than standalone programs get fake-indexeddb installed, since Node has no IndexedDB.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transform } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docModules, type DocModule } from "./snippets.js";

const root = new URL("../..", import.meta.url).pathname;
const work = join(root, ".tmp", `doctest-${process.pid}`);
// Pages of prose with no program to run: the record of design decisions, and how to develop graphdock.
const PROSE = new Set(["decisions.md", "development.md"]);
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md") && !PROSE.has(f)).sort().map((f) => `docs/${f}`)];
const modules: DocModule[] = files.flatMap((f) => docModules(join(root, f), f).modules);
const fileOf = (m: DocModule) => join(work, `${m.name.replace(/[^\w.-]+/g, "_")}.ts`);

beforeAll(() => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/ is missing: run npm run build first");
  mkdirSync(work, { recursive: true });
  for (const m of modules) writeFileSync(fileOf(m), m.code);
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        lib: ["ES2023", "DOM", "DOM.Iterable"],
        types: ["node"],
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        moduleDetection: "force",
      },
      include: ["*.ts"],
    }),
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("documentation snippets", () => {
  it("every file has runnable snippets, and nodoctest blocks say why", () => {
    for (const f of files) {
      const { modules: ms, skipped } = docModules(join(root, f), f);
      for (const s of skipped) expect(s.info, `${f}:${s.line} nodoctest needs a reason`).toMatch(/nodoctest:?\s+\S/);
      expect(ms.length, f).toBeGreaterThan(0);
    }
  });

  it("typecheck (strict)", () => {
    const tsc = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", work], { encoding: "utf8", timeout: 120_000 });
    // Map the generated file's lines back to the markdown in the message.
    expect(tsc.stdout + tsc.stderr, "tsc errors in documentation snippets (files under .tmp/doctest-*)").toBe("");
  }, 120_000);

  for (const m of modules) {
    it(`runs ${m.name}`, async () => {
      const prelude = m.name.includes(":") ? "" : 'import "fake-indexeddb/auto";\n';
      const { code } = await transform(prelude + m.code, { loader: "ts", format: "esm", target: "node20", sourcefile: fileOf(m) });
      const file = fileOf(m).replace(/\.ts$/, ".mjs");
      writeFileSync(file, code);
      const cwd = mkdtempSync(join(tmpdir(), "graphdock-doctest-"));
      try {
        const run = spawnSync(process.execPath, [file], { cwd, encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_NO_WARNINGS: "1" } });
        const where = `${m.source} (generated: ${file})`;
        expect(run.error, where).toBeUndefined();
        expect(run.status, `${where} exited with ${run.status}:\n${run.stderr}\n${run.stdout.slice(-2000)}`).toBe(0);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }, 70_000);
  }
});
