/**
 * The `graphdock` command as an operator runs it (D92, D93, D95): found config files, JSON log
 * lines (startup, each run's start and end, a failed run at error with its ids, error and stack,
 * requests at debug, graphs' getLogger() lines, shutdown) with no credential in any line, `--version`, and /metrics.
 */
import { Client } from "@langchain/langgraph-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const cli = join(root, "src/node/cli.ts");
const tsx = createRequire(import.meta.url).resolve("tsx");
const graphs = join(root, "test/node/fixtures/ops-graphs.ts");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A directory holding these files (JSON values are written as JSON). */
function folder(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "graphdock-ops-"));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
  return dir;
}

interface Started {
  url: string;
  child: ChildProcess;
  /** Everything written to stdout so far. */
  out(): string;
  stop(): Promise<number | null>;
}

/** Runs the command in `cwd` and resolves once it serves (its banner line). */
function start(cwd: string, args: string[]): Promise<Started> {
  const { GRAPHDOCK_API_KEY: _a, GRAPHDOCK_METRICS_TOKEN: _m, ...env } = process.env;
  const child = spawn(process.execPath, ["--import", tsx, cli, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"], env });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /serving graphs .* on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child, out: () => out, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr!.on("data", (d: Buffer) => (err += d));
    void exited.then((code) => reject(new Error(`graphdock exited with ${code}: ${err || out}`)));
  });
}

/** Runs the command to its end: exit code and output. */
function run(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", tsx, cli, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

const lines = (text: string) => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown> & { level: number; msg: string });

describe("graphdock serve's logs", () => {
  it("finds ./langgraph.json, logs startup, runs, a failed run with its ids and stack, requests at debug and shutdown, and never a credential", async () => {
    const dir = folder({ "langgraph.json": { graphs: { ok: `${graphs}:ok`, failing: `${graphs}:failing` } } });
    const server = await start(dir, ["serve", "--port", "0", "--log-format", "json", "--log-level", "debug"]);
    const secrets = { authorization: "Bearer sup3r-secret-token", "x-api-key": "key-4a7f9e", cookie: "session=c00kie-value" };
    let runId: string;
    let threadId: string;
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: secrets });
      const thread = await client.threads.create();
      threadId = thread.thread_id;
      await client.runs.wait(threadId, "ok", { input: {} });
      const failed = await client.runs.create(threadId, "failing", { input: {} });
      runId = failed.run_id;
      await client.runs.join(threadId, runId);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const text = server.out();
    for (const secret of ["sup3r-secret-token", "key-4a7f9e", "c00kie-value"]) expect(text).not.toContain(secret);
    const log = lines(text);
    const banner = log.find((l) => /serving graphs/.test(l.msg))!;
    expect(banner).toMatchObject({ level: 30, graphs: ["ok", "failing"], config: "langgraph.json" });
    expect(banner.version).toBe(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);

    // The graph's getLogger() line, in the server's log and marked as the graph's.
    expect(log.find((l) => l.msg === "incrementing")).toMatchObject({ level: 30, source: "graph", from: 0 });
    const ended = log.filter((l) => l.msg === "graphdock: run ended");
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ level: 30, thread_id: threadId, status: "success" });
    expect(typeof ended[0]!.duration_ms).toBe("number");
    const failure = log.find((l) => l.msg === "graphdock: run failed")!;
    expect(failure).toMatchObject({ level: 50, run_id: runId, thread_id: threadId, status: "error", err: { message: "the explode node failed on purpose" } });
    expect(typeof failure.assistant_id).toBe("string");
    expect((failure.err as { stack: string }).stack).toMatch(/the explode node failed on purpose\n\s+at /);
    expect(log.filter((l) => l.msg === "graphdock: run started").map((l) => l.level)).toEqual([30, 30]);

    const requests = log.filter((l) => l.msg === "graphdock: request");
    expect(requests.every((l) => l.level === 20)).toBe(true);
    expect(requests).toContainEqual(expect.objectContaining({ method: "POST", path: `/threads/${threadId}/runs/wait`, route: "/threads/:thread_id/runs/wait", status: 200 }));
    expect(log.at(-2)).toMatchObject({ msg: "graphdock: shutting down", signal: "SIGTERM" });
    expect(log.at(-1)).toMatchObject({ msg: "graphdock: stopped" });
  });

  it("logs nothing below --log-level: no request lines at info", async () => {
    const dir = folder({ "graph.json": { graphs: { ok: `${graphs}:ok` } } });
    const server = await start(dir, ["serve", "--port", "0", "--log-format", "json"]);
    try {
      await new Client({ apiUrl: server.url, apiKey: null }).runs.wait(null, "ok", { input: {} });
    } finally {
      await server.stop();
    }
    const log = lines(server.out());
    // ./graph.json, found when there is no ./langgraph.json.
    expect(log.find((l) => /serving graphs/.test(l.msg))).toMatchObject({ config: "graph.json" });
    expect(log.some((l) => l.msg === "graphdock: request")).toBe(false);
    expect(log.some((l) => l.msg === "graphdock: run ended")).toBe(true);
  });

  it("--version prints the package's version; serve without a config file says which files it looked for", async () => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    expect(await run(root, ["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
    const empty = await run(folder({}), ["serve"]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("neither ./langgraph.json nor ./graph.json exists");
  });
});

describe("graphdock serve --watch", () => {
  it("restarts the server when a graph file changes, and serves the new graph", async () => {
    const source = (n: number) =>
      `import { END, START, StateGraph } from ${JSON.stringify(join(root, "src/index.ts"))};\n` +
      `export const graph = new StateGraph({ n: { default: () => 0 } }).addNode("set", () => ({ n: ${n} })).addEdge(START, "set").addEdge("set", END).compile();\n`;
    const dir = folder({ "graph.mts": source(1), "langgraph.json": { graphs: { g: "./graph.mts:graph" } } });
    const server = await start(dir, ["serve", "--watch", "--port", "0", "--log-format", "json"]);
    try {
      expect(await new Client({ apiUrl: server.url, apiKey: null }).runs.wait(null, "g", { input: {} })).toEqual({ n: 1 });
      writeFileSync(join(dir, "graph.mts"), source(2));
      // A second banner: the server restarted (on another free port).
      const banners = () => [...server.out().matchAll(/serving graphs .* on (http:\/\/[^\s"]+)/g)].map((m) => m[1]!);
      await expect.poll(() => banners().length, { timeout: 20_000, interval: 200 }).toBe(2);
      expect(lines(server.out()).some((l) => l.msg === "graphdock: graph.mts changed; restarting")).toBe(true);
      expect(await new Client({ apiUrl: banners()[1]!, apiKey: null }).runs.wait(null, "g", { input: {} })).toEqual({ n: 2 });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("graphdock serve's /metrics", () => {
  it("is open without an auth handler and needs --metrics-token with one", async () => {
    const open = await start(folder({ "langgraph.json": { graphs: { ok: `${graphs}:ok` } } }), ["serve", "--port", "0", "--log-format", "json"]);
    try {
      const res = await fetch(`${open.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("# TYPE graphdock_runs_total counter");
      // The store's operations are timed: a run commits.
      await new Client({ apiUrl: open.url, apiKey: null }).runs.wait(null, "ok", { input: {} });
      const text = await (await fetch(`${open.url}/metrics`)).text();
      expect(Number(/^graphdock_store_operation_duration_seconds_count\{operation="commit",outcome="ok"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      expect(text).toMatch(/^graphdock_runs_total\{status="success"\} 1$/m);
    } finally {
      await open.stop();
    }
    const auth = `export const auth = { authenticate: async () => ({ identity: "someone", permissions: [], is_authenticated: true, display_name: "someone" }), authorize: async () => undefined };\n`;
    const withAuth = { "auth.mjs": auth, "langgraph.json": { graphs: { ok: `${graphs}:ok` }, auth: { path: "./auth.mjs:auth" } } };
    const off = await start(folder(withAuth), ["serve", "--port", "0", "--log-format", "json"]);
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.stop();
    }
    expect(lines(off.out()).find((l) => /metrics is off/.test(l.msg))).toMatchObject({ level: 40 });
    const guarded = await start(folder(withAuth), ["serve", "--port", "0", "--log-format", "json", "--metrics-token", "m-token"]);
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: "Bearer m-token" } })).status).toBe(200);
    } finally {
      await guarded.stop();
    }
  });
});
