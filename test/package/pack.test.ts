/**
 * The pack test: the package as a user gets it. `npm pack` the repository (the build `npm test`
 * made) and install the tarball, from the npm registry, in two fresh directories outside the
 * repository:
 * - `bare`: exactly the README's steps (`npm init -y`, `npm pkg set type=module`, `npm install
 *   graphdock`), nothing else. The README's quick start runs there as written (quickstart.js, and
 *   quickstart.cjs, its CommonJS form), and the `graphdock` command runs through `npx graphdock`,
 *   without tsx (with its OpenAPI document and /docs from the files the package ships).
 * - `full`: a project as `npm init -y` makes it (`"type": "commonjs"`) with TypeScript 5.9 and the
 *   latest 7.x, tsx, @types/node, the optional peers (pg without @types/pg, LangGraph.js) and what
 *   the README's snippets use; `full/esm` is an ES module package inside it.
 * Every entry is loaded with `import` and with `require()` (require(esm) turned off, so no entry
 * needs it) and the quick start runs, on the lowest Node of each line `engines` admits, on the
 * Node running the tests and on the latest Node release (the `node` package on npm ships exact
 * Node binaries); tsx runs the CommonJS quick start as a .cts file. TypeScript checks the quick
 * start, the README's snippets and every entry, strict, under `nodenext` (an ES module package
 * and a CommonJS one) and `bundler` on TypeScript 5.9 and 7 (7 with skipLibCheck off, so our
 * declarations are checked whole), and `node10` on TypeScript 5.9 (7 removed it).
 * It needs the registry; without network it fails (it is not skipped).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transform } from "esbuild";
import { docModules, extractSnippets } from "../docs/snippets.js";

const root = new URL("../..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  engines: { node: string };
  exports: Record<string, unknown>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), "pack-test-"));
const bare = join(work, "bare");
const full = join(work, "full");
const esm = join(full, "esm");
// The environment of a user's shell: nothing inherited from an enclosing `npm test` that names
// this repository (its package fields, lifecycle and prefixes); registry and proxy settings stay.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix)$)/i.test(k) && k !== "INIT_CWD"),
);
Object.assign(env, { NODE_NO_WARNINGS: "1", npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" });
delete env.NODE_OPTIONS;

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}
/** Runs a command to its end (async, so independent steps overlap). */
function run(cmd: string, args: string[], cwd: string, timeout = 120_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.once("error", reject);
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}
async function ok(what: string, cmd: string, args: string[], cwd: string, timeout?: number): Promise<string> {
  const r = await run(cmd, args, cwd, timeout);
  expect(r.status, `${what} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

const readme = readFileSync(join(root, "README.md"), "utf8");
const snippets = extractSnippets(readme);
const quickstart = snippets.find((s) => s.lang === "ts" && s.flags.includes("standalone"))!;
const quickstartCjs = snippets.find((s) => s.lang === "js" && s.code.startsWith("// quickstart.cjs"))!;
// The README's other ts snippets, in order, as one program (the doc test's rule).
const usage = docModules(join(root, "README.md"), "README.md").modules.find((m) => m.name === "README.md")!;

/** One export of each entry, and the entries themselves: every subpath of package.json "exports". */
const ENTRY_EXPORT: Record<string, string> = {
  graphdock: "createRuntime",
  "graphdock/json-file": "jsonFileStore",
  "graphdock/indexeddb": "indexedDbStore",
  "graphdock/http": "createFetchHandler",
  "graphdock/node": "serve",
  "graphdock/postgres": "postgresStore",
  "graphdock/report": "compareReport",
  "graphdock/langgraph": "fromLangGraph",
  "graphdock/mcp": "mcpEndpoint",
  "graphdock/a2a": "a2aEndpoint",
  "graphdock/ai-sdk": "aiSdkEndpoint",
  "graphdock/studio": "studio",
};
const entries = Object.keys(pkg.exports)
  .filter((s) => s !== "./package.json")
  .map((s) => (s === "." ? "graphdock" : `graphdock/${s.slice(2)}`));

/** The lowest version of each range of `engines.node` (`^20.19.0 || >=22.12.0` -> 20.19.0, 22.12.0). */
const lowestNodes = [...pkg.engines.node.matchAll(/(?:\^|>=)\s*(\d+\.\d+\.\d+)/g)].map((m) => m[1]!);
/** The Node binaries to run on: name -> path (npx fetches exact versions from the `node` package). */
const nodes = new Map<string, string>();

let tarball = "";
beforeAll(async () => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/ is missing: run npm run build first");
  // `--ignore-scripts`: `prepack` would build again.
  const packed = await ok("npm pack", "npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], root);
  tarball = join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
  mkdirSync(bare);
  mkdirSync(esm, { recursive: true });
  const setUpBare = async () => {
    // The README's steps, as written there.
    await ok("npm init -y", "npm", ["init", "-y"], bare);
    await ok("npm pkg set type=module", "npm", ["pkg", "set", "type=module"], bare);
    await ok("npm install (needs the npm registry)", "npm", ["install", "--no-package-lock", tarball], bare, 170_000);
  };
  const setUpFull = async () => {
    await ok("npm init -y", "npm", ["init", "-y"], full);
    const dev = (d: string) => `${d}@${pkg.devDependencies[d]}`;
    await ok(
      "npm install (needs the npm registry)",
      "npm",
      [
        "install",
        "--no-package-lock",
        tarball,
        dev("typescript"),
        "typescript7@npm:typescript@7",
        dev("tsx"),
        dev("@types/node"),
        // the optional peers (pg's types are not needed: graphdock/postgres's declarations do not use them)
        dev("pg"),
        dev("@langchain/langgraph"),
        dev("@langchain/core"),
        // what the README's snippets use besides graphdock
        dev("@langchain/langgraph-sdk"),
        dev("fake-indexeddb"),
      ],
      full,
      170_000,
    );
    writeFileSync(join(esm, "package.json"), JSON.stringify({ type: "module" }));
  };
  const fetchNodes = async () => {
    const found = await Promise.all(
      [...lowestNodes, "latest"].map(async (v) => {
        const path = await ok(`npx -p node@${v}`, "npx", ["-y", "-p", `node@${v}`, "node", "-p", "process.version + ' ' + process.execPath"], work, 170_000);
        const [version, bin] = path.trim().split(" ");
        return [v === "latest" ? `${version} (the latest release)` : version!, bin!] as const;
      }),
    );
    for (const [name, bin] of found.slice(0, -1)) nodes.set(name, bin);
    nodes.set(`${process.version} (running the tests)`, process.execPath);
    nodes.set(...found.at(-1)!);
  };
  await Promise.all([setUpBare(), setUpFull(), fetchNodes()]);
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the packed package, installed outside the repository", () => {
  it("packs dist, README, LICENSE and package.json only, and builds on pack and git installs", async () => {
    const listed = (await ok("tar", "tar", ["-tzf", tarball], work)).split("\n").filter(Boolean);
    expect(listed).toContain("package/dist/cli.js");
    expect(listed).toContain("package/README.md");
    expect(listed).toContain("package/LICENSE");
    expect(listed.filter((f) => !/^package\/(dist\/|README\.md$|LICENSE$|package\.json$)/.test(f))).toEqual([]);
    // npm runs prepack on `npm pack`/`npm publish` and, for git dependencies, after installing devDependencies.
    expect(pkg.scripts.prepack).toBe("npm run build");
  });

  it("installs as the README says, without tsx (an optional peer) and without pg's types", () => {
    expect(readme).toContain("npm init -y && npm pkg set type=module\nnpm install graphdock");
    expect(JSON.parse(readFileSync(join(bare, "package.json"), "utf8")).type).toBe("module");
    expect(JSON.parse(readFileSync(join(full, "package.json"), "utf8")).type).toBe("commonjs");
    expect(existsSync(join(bare, "node_modules", "graphdock", "dist", "index.js"))).toBe(true);
    expect(existsSync(join(bare, "node_modules", "tsx"))).toBe(false);
    expect(existsSync(join(full, "node_modules", "@types", "pg"))).toBe(false);
  });

  it("checks every entry package.json exports", () => {
    expect(Object.keys(ENTRY_EXPORT).sort()).toEqual([...entries].sort());
    expect(lowestNodes.length).toBeGreaterThan(0);
  });

  describe("on every Node: the lowest of each line engines admits, the one running the tests, the latest", () => {
    beforeAll(() => {
      const probe = (load: (entry: string) => string) =>
        `const out = {};\n${entries.map((e) => `out[${JSON.stringify(e)}] = typeof (${load(JSON.stringify(e))})[${JSON.stringify(ENTRY_EXPORT[e])}];`).join("\n")}\nconsole.log(JSON.stringify(out));\n`;
      writeFileSync(join(full, "entries.mjs"), probe((e) => `await import(${e})`));
      writeFileSync(join(full, "entries.cjs"), probe((e) => `require(${e})`));
      writeFileSync(join(bare, "quickstart.js"), quickstart.code);
      writeFileSync(join(bare, "quickstart.cjs"), quickstartCjs.code);
      writeFileSync(join(full, "quickstart.cts"), quickstartCjs.code);
    });
    const functions = () => Object.fromEntries(entries.map((e) => [e, "function"]));

    it("every entry loads with import and with require() (require(esm) off)", async () => {
      for (const [name, node] of nodes) {
        expect(JSON.parse(await ok(`${name}: node entries.mjs`, node, ["entries.mjs"], full)), name).toEqual(functions());
        expect(JSON.parse(await ok(`${name}: node entries.cjs`, node, ["--no-experimental-require-module", "entries.cjs"], full)), name).toEqual(functions());
      }
    }, 120_000);

    it("the README quick start runs as written: quickstart.js (ESM) and quickstart.cjs", async () => {
      expect(quickstart, "README.md has a ```ts standalone quick start").toBeDefined();
      expect(quickstartCjs, "README.md has a ```js block starting with // quickstart.cjs").toBeDefined();
      for (const [name, node] of nodes) {
        rmSync(join(bare, "data"), { recursive: true, force: true });
        const out = await ok(`${name}: node quickstart.js`, node, ["quickstart.js"], bare);
        expect(out, name).toMatch(/^metadata \{/m);
        expect(out, name).toMatch(/^updates \{ echo:/m);
        expect(existsSync(join(bare, "data")), name).toBe(true);
        rmSync(join(bare, "data"), { recursive: true, force: true });
        expect(await ok(`${name}: node --no-experimental-require-module quickstart.cjs`, node, ["--no-experimental-require-module", "quickstart.cjs"], bare), name).toContain(
          "you said: hi",
        );
      }
    }, 120_000);

    it("the README quick start runs as quickstart.ts with npx tsx, as the README says", async () => {
      expect(readme).toContain("`npx tsx quickstart.ts`");
      writeFileSync(join(bare, "quickstart.ts"), quickstart.code);
      rmSync(join(bare, "data"), { recursive: true, force: true });
      // npx fetches tsx into its cache: the project itself stays without it.
      expect(await ok("npx tsx quickstart.ts", "npx", ["-y", "tsx", "quickstart.ts"], bare, 170_000)).toMatch(/^updates \{ echo:/m);
      expect(existsSync(join(bare, "node_modules", "tsx"))).toBe(false);
    }, 180_000);

    it("tsx runs the CommonJS quick start as quickstart.cts in a CommonJS project", async () => {
      for (const [name, node] of nodes) {
        rmSync(join(full, "data"), { recursive: true, force: true });
        expect(await ok(`${name}: tsx quickstart.cts`, node, [join(full, "node_modules", "tsx", "dist", "cli.mjs"), "quickstart.cts"], full), name).toContain("you said: hi");
      }
    }, 120_000);
  });

  it("serves the studio from graphdock/studio through the fetch handler, required in a CommonJS project", async () => {
    writeFileSync(
      join(full, "studio.cjs"),
      `const { createRuntime } = require("graphdock");
const { createFetchHandler } = require("graphdock/http");
const { studio } = require("graphdock/studio");
createRuntime({ graphs: {} }).then(async (runtime) => {
  const handler = createFetchHandler(runtime, { basePath: "/agents", endpoints: [studio()] });
  const shell = await handler(new Request("http://localhost/agents/studio"));
  const html = await shell.text();
  const entry = /src="([^"]*assets\\/[^"]+\\.js)"/.exec(html)[1];
  const asset = await handler(new Request(new URL(entry, "http://localhost/agents/studio")));
  console.log(shell.status, asset.status, asset.headers.get("content-type"));
  await runtime.close();
});
`,
    );
    expect((await ok("node studio.cjs", process.execPath, ["studio.cjs"], full)).trim()).toBe("200 200 text/javascript; charset=utf-8");
  });

  it("runs the README's usage snippets as written (one ES module, in order)", async () => {
    // Node has no IndexedDB: the snippets get fake-indexeddb, as in the doc test.
    const { code } = await transform('import "fake-indexeddb/auto";\n' + usage.code, { loader: "ts", format: "esm", target: "node20" });
    writeFileSync(join(esm, "usage.js"), code);
    await ok("node usage.js", process.execPath, ["usage.js"], esm);
  });

  describe("TypeScript, strict", () => {
    const entriesTs = `${Object.entries(ENTRY_EXPORT)
      .map(([entry, name]) => `import { ${name} } from "${entry}";`)
      .join("\n")}
import { GraphdockError, type Runtime, type ThreadState } from "graphdock";
export const all = [${[...Object.values(ENTRY_EXPORT), "GraphdockError"].join(", ")}];
export const checkpointOf = (runtime: Runtime, s: ThreadState) => [runtime, s.checkpoint?.checkpoint_id];
`;
    beforeAll(() => {
      for (const d of [full, esm]) writeFileSync(join(d, "entries.ts"), entriesTs);
      writeFileSync(join(esm, "quickstart.ts"), quickstart.code);
      writeFileSync(join(esm, "usage.ts"), usage.code);
      // In a CommonJS project, an ES module file is .mts (top-level await needs one).
      writeFileSync(join(full, "quickstart.mts"), quickstart.code);
    });
    const TS = { "5.9": "typescript", "7": "typescript7" } as const;
    const configs = [
      { name: "nodenext, an ES module package", dir: () => esm, module: "nodenext", resolution: "nodenext", files: ["quickstart.ts", "usage.ts", "entries.ts"], ts: ["5.9", "7"] },
      { name: "nodenext, a CommonJS package", dir: () => full, module: "nodenext", resolution: "nodenext", files: ["quickstart.mts", "entries.ts"], ts: ["5.9", "7"] },
      { name: "bundler", dir: () => esm, module: "preserve", resolution: "bundler", files: ["quickstart.ts", "usage.ts", "entries.ts"], ts: ["5.9", "7"] },
      { name: "node10 (TypeScript 7 removed it)", dir: () => full, module: "commonjs", resolution: "node10", files: ["entries.ts"], ts: ["5.9"] },
    ] as const;
    const cases = configs.flatMap((c) => c.ts.map((v) => ({ ...c, v })));

    it(`typechecks ${cases.map((c) => `${c.name} on ${c.v}`).join("; ")}`, async () => {
      const checks = cases.map(async (c) => {
        const tsconfig = `tsconfig.${c.resolution}-${c.module}-${c.v}.json`;
        writeFileSync(
          join(c.dir(), tsconfig),
          JSON.stringify({
            compilerOptions: {
              target: "ES2022",
              module: c.module,
              moduleResolution: c.resolution,
              lib: ["ES2023", "DOM"],
              types: ["node"],
              strict: true,
              noEmit: true,
              // 5.9: as `tsc --init` sets it (checking every dependency's declarations triples the
              // time); 7 checks them all, ours included.
              skipLibCheck: c.v === "5.9",
              esModuleInterop: true,
            },
            files: c.files,
          }),
        );
        const tsc = await run(process.execPath, [join(full, "node_modules", TS[c.v], "bin", "tsc"), "-p", tsconfig], c.dir(), 170_000);
        return { what: `${c.name}, TypeScript ${c.v}`, out: tsc.stdout + tsc.stderr, status: tsc.status };
      });
      for (const r of await Promise.all(checks)) {
        expect(r.out, r.what).toBe("");
        expect(r.status, r.what).toBe(0);
      }
    }, 180_000);

    it("the TypeScript 7 installed is the latest 7.x", async () => {
      const installed = JSON.parse(readFileSync(join(full, "node_modules", "typescript7", "package.json"), "utf8")).version as string;
      expect(installed).toMatch(/^7\./);
      expect((await ok("npm view typescript@7 version", "npm", ["view", "typescript@7", "version", "--json"], work)).includes(`"${installed}"`)).toBe(true);
    });
  });

  describe("the graphdock command through npx, without tsx", () => {
    const npx = (args: string[]) => run("npx", ["--no-install", "graphdock", ...args], bare);

    it("prints its usage", async () => {
      const r = await npx(["--help"]);
      expect(r.stdout).toMatch(/usage: graphdock serve \[--config langgraph.json\]/);
    });

    it("serves a JavaScript graph named in graph.json (npx graphdock serve)", async () => {
      writeFileSync(
        join(bare, "graph.js"),
        `import { StateGraph, START, END, messagesState } from "graphdock";
export const echo = new StateGraph(messagesState).addNode("echo", () => ({})).addEdge(START, "echo").addEdge("echo", END).compile();
`,
      );
      writeFileSync(join(bare, "graph.json"), JSON.stringify({ graphs: { echo: "./graph.js:echo" } }));
      // Its own process group, so that stopping it stops npx and the server it started.
      const child = spawn("npx", ["--no-install", "graphdock", "serve", "--config", "graph.json", "--port", "0"], { cwd: bare, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
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
        // The studio, from the package's own files.
        const shell = await fetch(`${url}/studio/threads`);
        expect(shell.status).toBe(200);
        const html = await shell.text();
        const entry = /src="([^"]*assets\/[^"]+\.js)"/.exec(html)?.[1];
        expect(entry, html).toBeDefined();
        const asset = await fetch(new URL(entry!, `${url}/studio/threads`));
        expect(asset.status).toBe(200);
        expect(asset.headers.get("cache-control")).toContain("immutable");
        // The API's description and its viewer, whose files the package ships (swagger-ui-dist
        // is not installed with it).
        expect(((await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string }).openapi).toBe("3.1.0");
        expect(await (await fetch(`${url}/docs`)).text()).toContain("swagger-ui-bundle.js");
        const viewer = await fetch(`${url}/docs/swagger-ui-bundle.js`);
        expect(viewer.status).toBe(200);
        expect((await viewer.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
        expect(existsSync(join(bare, "node_modules", "swagger-ui-dist"))).toBe(false);
      } finally {
        const exited = new Promise((r) => child.once("exit", r));
        process.kill(-child.pid!, "SIGTERM");
        await exited;
      }
    });

    it("refuses a TypeScript graph with a message saying to install tsx", async () => {
      writeFileSync(join(bare, "graph.ts"), "export const g: number = 1;\n");
      writeFileSync(join(bare, "ts.json"), JSON.stringify({ graphs: { g: "./graph.ts:g" } }));
      const r = await npx(["serve", "--config", "ts.json", "--port", "0"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/install tsx to load TypeScript graph files.*or point graph\.json at compiled \.js/i);
    });

    it("reports a graph module that throws at import with its file and line, and --verbose prints the stack", async () => {
      writeFileSync(join(bare, "broken.js"), 'export const ok = 1;\nthrow new Error("no API key configured");\n');
      writeFileSync(join(bare, "broken.json"), JSON.stringify({ graphs: { g: "./broken.js:ok" } }));
      const r = await npx(["serve", "--config", "broken.json", "--port", "0"]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${join(bare, "broken.js")}:2:7`);
      expect(r.stderr).toContain("no API key configured");
      expect(r.stderr).not.toMatch(/^\s+at /m);
      const verbose = await npx(["serve", "--config", "broken.json", "--port", "0", "--verbose"]);
      expect(verbose.stderr).toMatch(/^\s+at .*broken\.js:2:7/m);
    });
  });
});
