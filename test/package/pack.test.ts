/**
 * The pack test: the package as a user gets it. `npm pack` the repository, install the tarball in
 * a fresh directory outside the repository (one `npm install`, from the npm registry, shared by
 * every check below), then:
 * - run the README's quick start as written, as ESM (quickstart.mjs) and its CommonJS version
 *   (quickstart.cjs, `require("graphdock")`);
 * - run the README's other ts snippets (the usage tour) as one ES module, as the doc test does;
 * - typecheck the quick start, the usage snippets and an import of every entry with
 *   `moduleResolution: node10` and with `NodeNext`;
 * - run the `graphdock` bin from dist without tsx installed: help, a JavaScript graph served, a
 *   TypeScript graph refused with the install-tsx message, a throwing module reported with its line.
 * It needs the registry for the dependencies; without network it fails (it is not skipped).
 * `npm test` builds dist first; this test packs that build (`--ignore-scripts`: `prepack` would
 * build again).
 */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transform } from "esbuild";
import { docModules, extractSnippets } from "../docs/snippets.js";

const root = new URL("../..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const dir = mkdtempSync(join(tmpdir(), "pack-test-"));
// The environment of a user's shell: nothing inherited from an enclosing `npm test` that names
// this repository (its package fields, lifecycle and prefixes); registry and proxy settings stay.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix)$)/i.test(k) && k !== "INIT_CWD"),
);
Object.assign(env, { NODE_NO_WARNINGS: "1", npm_config_update_notifier: "false" });
delete env.NODE_OPTIONS;

function sh(cmd: string, args: string[], timeout = 60_000): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd: dir, encoding: "utf8", timeout, env });
}
const ok = (r: SpawnSyncReturns<string>, what: string) => {
  expect(r.error, what).toBeUndefined();
  expect(r.status, `${what} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
};

const readme = extractSnippets(readFileSync(join(root, "README.md"), "utf8"));
const quickstart = readme.find((s) => s.lang === "ts" && s.flags.includes("standalone"));
const quickstartCjs = readme.find((s) => s.lang === "js" && s.code.startsWith("// quickstart.cjs"));
// The README's other ts snippets, in order, as one program (the doc test's rule).
const usage = docModules(join(root, "README.md"), "README.md").modules.find((m) => m.name === "README.md");

beforeAll(() => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/ is missing: run npm run build first");
  const packed = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: root, encoding: "utf8", env, timeout: 60_000 });
  ok(packed, "npm pack");
  const tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  ok(sh("npm", ["init", "-y"]), "npm init");
  // TypeScript and Node's types at the versions this repository uses; graphdock from the tarball.
  const install = sh(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      tarball,
      // what the README's usage snippets use besides graphdock (the official client; IndexedDB for
      // Node; LangGraph.js, the optional peers of graphdock/langgraph)
      ...["typescript", "@types/node", "@langchain/langgraph-sdk", "fake-indexeddb", "@langchain/langgraph", "@langchain/core"].map((d) => `${d}@${pkg.devDependencies[d]}`),
    ],
    170_000,
  );
  ok(install, "npm install (needs the npm registry)");
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the packed package, installed outside the repository", () => {
  it("packs dist, README and package.json only, and builds on pack and git installs", () => {
    const listed = spawnSync("tar", ["-tzf", join(dir, `graphdock-${pkg.version}.tgz`)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
    expect(listed).toContain("package/dist/cli.js");
    expect(listed).toContain("package/README.md");
    expect(listed.filter((f) => !/^package\/(dist\/|README\.md$|package\.json$|LICENSE)/.test(f))).toEqual([]);
    // npm runs prepack on `npm pack`/`npm publish` and, for git dependencies, after installing devDependencies.
    expect(pkg.scripts.prepack).toBe("npm run build");
  });

  it("installs without tsx (an optional peer dependency)", () => {
    expect(existsSync(join(dir, "node_modules", "graphdock", "dist", "index.js"))).toBe(true);
    expect(existsSync(join(dir, "node_modules", "tsx"))).toBe(false);
  });

  it("runs the README quick start as ESM (quickstart.mjs)", () => {
    expect(quickstart, "README.md has a ```ts standalone quick start").toBeDefined();
    writeFileSync(join(dir, "quickstart.mjs"), quickstart!.code);
    const out = ok(sh(process.execPath, ["quickstart.mjs"]), "node quickstart.mjs");
    expect(out).toMatch(/^metadata \{/m);
    expect(out).toMatch(/^updates \{ echo:/m);
    expect(existsSync(join(dir, "data"))).toBe(true);
  });

  it("runs the README quick start as CommonJS (quickstart.cjs, require)", () => {
    expect(quickstartCjs, "README.md has a ```js block starting with // quickstart.cjs").toBeDefined();
    writeFileSync(join(dir, "quickstart.cjs"), quickstartCjs!.code);
    rmSync(join(dir, "data"), { recursive: true, force: true });
    expect(ok(sh(process.execPath, ["quickstart.cjs"]), "node quickstart.cjs")).toContain("you said: hi");
  });

  it("runs the README's usage snippets as written (one ES module, in order)", async () => {
    expect(usage, "README.md has usage snippets").toBeDefined();
    // Node has no IndexedDB: the one snippet using indexedDbStore gets fake-indexeddb, as in the doc test.
    const { code } = await transform('import "fake-indexeddb/auto";\n' + usage!.code, { loader: "ts", format: "esm", target: "node20" });
    writeFileSync(join(dir, "usage.mjs"), code);
    const out = ok(sh(process.execPath, ["usage.mjs"]), "node usage.mjs");
    expect(out).toContain("Not sent.");
  });

  const entries = `import { createRuntime, memoryStore, GraphdockError, type Runtime } from "graphdock";
import { jsonFileStore } from "graphdock/json-file";
import { indexedDbStore } from "graphdock/indexeddb";
import { createFetchHandler } from "graphdock/http";
import { serve, serveConfig } from "graphdock/node";
import { compareReport, compareCsv } from "graphdock/report";
import { fromLangGraph, GraphdockSaver } from "graphdock/langgraph";
export const all = [createRuntime, memoryStore, GraphdockError, jsonFileStore, indexedDbStore, createFetchHandler, serve, serveConfig, compareReport, compareCsv, fromLangGraph, GraphdockSaver];
export type R = Runtime;
`;

  for (const [resolution, module, ext] of [
    ["node10", "ESNext", "ts"],
    ["NodeNext", "NodeNext", "mts"],
  ] as const) {
    it(`typechecks the quick start, the usage snippets and every entry with moduleResolution ${resolution}`, () => {
      const sub = resolution.toLowerCase();
      writeFileSync(join(dir, `quickstart-${sub}.${ext}`), quickstart!.code);
      writeFileSync(join(dir, `entries-${sub}.${ext}`), entries);
      writeFileSync(join(dir, `usage-${sub}.${ext}`), usage!.code);
      writeFileSync(
        join(dir, `tsconfig.${sub}.json`),
        JSON.stringify({
          compilerOptions: {
            target: "ES2022",
            module,
            moduleResolution: resolution,
            lib: ["ES2023", "DOM"],
            types: ["node"],
            strict: true,
            noEmit: true,
            // as `tsc --init` sets them; checking every dependency's declarations too triples the time
            skipLibCheck: true,
            esModuleInterop: true,
          },
          files: [`quickstart-${sub}.${ext}`, `entries-${sub}.${ext}`, `usage-${sub}.${ext}`],
        }),
      );
      const tsc = sh(process.execPath, [join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", `tsconfig.${sub}.json`], 120_000);
      expect(tsc.stdout + tsc.stderr).toBe("");
      expect(tsc.status).toBe(0);
    }, 130_000);
  }

  describe("the graphdock bin (dist/cli.js), without tsx", () => {
    const bin = () => join(dir, "node_modules", ".bin", "graphdock");

    it("prints its usage", () => {
      expect(ok(sh(bin(), ["--help"]), "graphdock --help")).toMatch(/usage: graphdock serve --config graph.json/);
    });

    it("serves a JavaScript graph named in graph.json", async () => {
      writeFileSync(
        join(dir, "graph.mjs"),
        `import { StateGraph, START, END, messagesState } from "graphdock";
export const echo = new StateGraph(messagesState).addNode("echo", () => ({})).addEdge(START, "echo").addEdge("echo", END).compile();
`,
      );
      writeFileSync(join(dir, "graph.json"), JSON.stringify({ graphs: { echo: "./graph.mjs:echo" } }));
      const child = spawn(bin(), ["serve", "--config", "graph.json", "--port", "0"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let out = "";
          child.stdout.on("data", (d: Buffer) => {
            out += d;
            const m = /on (http:\/\/\S+)/.exec(out);
            if (m) resolve(m[1]!);
          });
          child.stderr.on("data", (d: Buffer) => (out += d));
          child.once("exit", (code) => reject(new Error(`graphdock serve exited with ${code}: ${out}`)));
        });
        const res = await fetch(`${url}/assistants/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(res.status).toBe(200);
        expect(((await res.json()) as Array<{ graph_id: string }>).map((a) => a.graph_id)).toEqual(["echo"]);
      } finally {
        child.kill("SIGTERM");
      }
    });

    it("refuses a TypeScript graph with a message saying to install tsx", () => {
      writeFileSync(join(dir, "graph.ts"), "export const g: number = 1;\n");
      writeFileSync(join(dir, "ts.json"), JSON.stringify({ graphs: { g: "./graph.ts:g" } }));
      const r = sh(bin(), ["serve", "--config", "ts.json", "--port", "0"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/install tsx to load TypeScript graph files.*or point graph\.json at compiled \.js/i);
    });

    it("reports a graph module that throws at import with its file and line, and --verbose prints the stack", () => {
      writeFileSync(join(dir, "broken.mjs"), 'export const ok = 1;\nthrow new Error("no API key configured");\n');
      writeFileSync(join(dir, "broken.json"), JSON.stringify({ graphs: { g: "./broken.mjs:ok" } }));
      const r = sh(bin(), ["serve", "--config", "broken.json", "--port", "0"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${join(dir, "broken.mjs")}:2:7`);
      expect(r.stderr).toContain("no API key configured");
      expect(r.stderr).not.toMatch(/^\s+at /m);
      const verbose = sh(bin(), ["serve", "--config", "broken.json", "--port", "0", "--verbose"]);
      expect(verbose.stderr).toMatch(/^\s+at .*broken\.mjs:2:7/m);
    });
  });
});
