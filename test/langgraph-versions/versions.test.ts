/**
 * Hosted LangGraph.js graphs on the lowest and the latest `@langchain/langgraph` graphdock hosts,
 * and the refusal of one it does not (D41), each as a user has it: a project of its own
 * (lowest/, latest/, unsupported/: a package.json and its lock) copied outside the repository,
 * `npm ci` from the registry, graphdock installed from `npm pack` of this repository, and exactly
 * one copy of `@langchain/langgraph` in it. The scenarios (scenarios/*.test.mjs) run there with
 * `node --test`, resolving every package from that project. It needs the npm registry; without
 * network it fails (it is not skipped). Like the pack test, it packs the current dist/ (`npm test`
 * builds it first).
 *
 * To move "latest" on: set the new release in latest/package.json (and the SDK and core it
 * depends on), then `npm install --package-lock-only` there.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const work = mkdtempSync(join(tmpdir(), "graphdock-langgraph-versions-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// A user's shell: nothing of an enclosing `npm test` that names this repository.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix)$)/i.test(k) && k !== "INIT_CWD"),
);
Object.assign(env, { NODE_NO_WARNINGS: "1", npm_config_update_notifier: "false" });
delete env.NODE_OPTIONS;

const run = (cwd: string, cmd: string, args: string[], timeout: number): SpawnSyncReturns<string> => spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, env });
const ok = (r: SpawnSyncReturns<string>, what: string) => {
  expect(r.error, what).toBeUndefined();
  expect(r.status, `${what} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
};

let tarball: string;
beforeAll(() => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/ is missing: run npm run build first");
  const packed = run(root, "npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], 60_000);
  ok(packed, "npm pack");
  tarball = join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
}, 120_000);

/** Copies the project and the scenarios out of the repository and installs them; returns its directory. */
function install(project: string, extra: string[] = []): string {
  const dir = join(work, project);
  cpSync(join(here, project), dir, { recursive: true, filter: (src) => !src.includes("node_modules") });
  cpSync(join(here, "scenarios"), join(dir, "scenarios"), { recursive: true });
  ok(run(dir, "npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], 300_000), `npm ci in ${project} (needs the npm registry)`);
  ok(run(dir, "npm", ["install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", ...extra, tarball], 300_000), `npm install graphdock in ${project}`);
  return dir;
}

/** The copies of `@langchain/langgraph` installed in `dir`, as `path@version`. */
function langGraphCopies(dir: string): string[] {
  const listed = run(dir, "npm", ["ls", "@langchain/langgraph", "--all", "--parseable"], 60_000).stdout.split("\n").filter(Boolean);
  return [...new Set(listed)].map((p) => `${p.slice(dir.length + 1)}@${(JSON.parse(readFileSync(join(p, "package.json"), "utf8")) as { version: string }).version}`);
}

const wanted = (project: string) =>
  (JSON.parse(readFileSync(join(here, project, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies["@langchain/langgraph"];

for (const project of ["lowest", "latest"] as const) {
  describe(`@langchain/langgraph ${wanted(project)} (${project} hosted)`, () => {
    let dir: string;
    beforeAll(() => {
      dir = install(project);
    }, 600_000);

    it("is installed once, at that release, next to graphdock from its tarball", () => {
      expect(langGraphCopies(dir)).toEqual([`node_modules/@langchain/langgraph@${wanted(project)}`]);
      expect(existsSync(join(dir, "node_modules", "graphdock", "dist", "node.js"))).toBe(true);
    });

    it("hosts graphs served from graph.json to the SDK client", () => {
      ok(run(dir, process.execPath, ["--test", "--test-reporter=spec", "scenarios/hosting.test.mjs"], 300_000), `the scenarios on ${wanted(project)}`);
    }, 320_000);
  });
}

describe(`@langchain/langgraph ${wanted("unsupported")} (not hosted)`, () => {
  let dir: string;
  beforeAll(() => {
    // npm refuses graphdock's peer range here by itself; a user who forces it meets graphdock's refusal.
    dir = install("unsupported", ["--legacy-peer-deps"]);
  }, 600_000);

  it("is refused by graphdock serve and createRuntime, with a message naming the releases hosted", () => {
    expect(langGraphCopies(dir)).toEqual([`node_modules/@langchain/langgraph@${wanted("unsupported")}`]);
    ok(run(dir, process.execPath, ["--test", "--test-reporter=spec", "scenarios/refusal.test.mjs"], 300_000), "the refusal");
  }, 320_000);
});
