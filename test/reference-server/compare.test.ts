/**
 * The LangGraph.js agent server (`@langchain/langgraph-api`, from npm) beside graphdock, on the same
 * LangGraph.js graphs (./graphs: a scripted chat model, a tool behind an interrupt, a subgraph),
 * compared on what each sends: every stream mode and the mixes clients use, frame by frame, and
 * the REST answers about the threads, runs and assistants they left, modulo ids and timestamps
 * (./transcript.ts); then the AG-UI adapter (`@ag-ui/langgraph`) driving the same conversation
 * against both (../agui/conversation.ts), and against graphdock's own version of the graph.
 *
 * This directory is its own package (package.json, package-lock.json): the test installs it in a
 * fresh folder (`npm ci`), with graphdock from `npm pack` of this repository's build, as a user
 * has it: one copy of LangGraph.js, which both servers' graphs import. The reference server runs
 * as its CLI runs it (./start-reference.mjs); graphdock as `graphdock serve --config
 * langgraph.json`. Every difference is either fixed or one of DECISIONS below (docs/decisions.md).
 * It needs the npm registry; without it the test fails (it is not skipped).
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { comparableTurns, converse } from "../agui/conversation.js";
import { nativeAgent } from "../agui/native-agent.js";
import { compare, normalize, Recorder, type Difference } from "./transcript.js";
import { converse as converseRest } from "./scenarios.js";
import { DECISIONS, unexplained } from "./decisions.js";

const root = new URL("../..", import.meta.url).pathname;
const here = new URL(".", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "reference-server-"));
// A user's shell: nothing of an enclosing `npm test` that names this repository.
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(package_|lifecycle_|config_(local_prefix|prefix|global_prefix)$)/i.test(k) && k !== "INIT_CWD"),
);
Object.assign(env, { NODE_NO_WARNINGS: "1", npm_config_update_notifier: "false" });
delete env.NODE_OPTIONS;

function sh(cmd: string, args: string[], cwd: string, timeout: number): string {
  const r: SpawnSyncReturns<string> = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, env });
  if (r.error || r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.error?.message ?? ""}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Starts a server process and resolves once it prints `ready` (its output is kept for errors). */
function start(name: string, cmd: string, args: string[], ready: RegExp, extraEnv: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const child = spawn(cmd, args, { cwd: dir, env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 120 s:\n${output}`)), 120_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before serving:\n${output}`));
    });
  });
}

const stop = (child: ChildProcess | undefined) =>
  new Promise<void>((resolve) => {
    if (!child || child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });

let reference: ChildProcess | undefined;
let graphdock: ChildProcess | undefined;
let native: ServeHandle | undefined;
const urls = { reference: "", graphdock: "", native: "" };

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/ is missing: run npm run build first");
  for (const f of ["package.json", "package-lock.json", "langgraph.json", "graphs", "start-reference.mjs"]) cpSync(join(here, f), join(dir, f), { recursive: true });
  sh("npm", ["ci", "--no-audit", "--no-fund"], dir, 240_000);
  const packed = JSON.parse(sh("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], root, 60_000)) as Array<{ filename: string }>;
  sh("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--no-package-lock", join(dir, packed[0]!.filename)], dir, 240_000);
  const [refPort, gdPort] = [await freePort(), await freePort()];
  // The reference extracts graph schemas with the TypeScript compiler, which can take longer
  // than its 30 s default on a loaded machine; the AG-UI adapter reads them on every run.
  [reference, graphdock] = await Promise.all([
    start("the reference server", process.execPath, ["--import", "tsx/esm", "start-reference.mjs", String(refPort), "langgraph.json"], /^listening /m, {
      LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "600000",
    }),
    start("graphdock serve", join(dir, "node_modules", ".bin", "graphdock"), ["serve", "--config", "langgraph.json", "--port", String(gdPort)], /serving graphs/),
  ]);
  urls.reference = `http://127.0.0.1:${refPort}`;
  urls.graphdock = `http://127.0.0.1:${gdPort}`;
  for (const graph of ["agent", "subgraph"]) {
    const [assistant] = (await (await fetch(`${urls.reference}/assistants/search`, { method: "POST", body: JSON.stringify({ graph_id: graph }), headers: { "content-type": "application/json" } })).json()) as Array<{ assistant_id: string }>;
    const schemas = await fetch(`${urls.reference}/assistants/${assistant!.assistant_id}/schemas`);
    if (!schemas.ok) throw new Error(`the reference server could not extract the schemas of ${graph}: ${await schemas.text()}`);
  }
  native = await serve(await createRuntime({ graphs: { agent: nativeAgent } }), { port: 0 });
  urls.native = native.url;
}, 900_000);

afterAll(async () => {
  await Promise.all([stop(reference), stop(graphdock), native?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Differences, one line each, for an assertion message. */
const show = (ds: Difference[]) => ds.map((d) => `${d.label} | ${d.path}: ${JSON.stringify(d.reference)} -> ${JSON.stringify(d.graphdock)}`.slice(0, 400)).join("\n");

describe("graphdock beside the LangGraph.js agent server, on the same LangGraph.js graphs", () => {
  it("sends what it sends, in every stream mode and REST answer, but where a decision says otherwise", { timeout: 600_000 }, async () => {
    const ref = new Recorder(urls.reference);
    const gd = new Recorder(urls.graphdock);
    await converseRest(ref);
    await converseRest(gd);
    const differences = compare(normalize(ref.exchanges), normalize(gd.exchanges));
    const left = unexplained(differences);
    expect(left, `differences no decision explains:\n${show(left)}`).toEqual([]);
    // Every decision explains something here (one that no longer does is stale).
    for (const d of DECISIONS) expect(differences.some(d.explains), `${d.id} explains no difference`).toBe(true);
  });

  it("gives the AG-UI adapter the same conversation for the LangGraph.js graph: tool call, interrupt, resume, abort, next turn", { timeout: 300_000 }, async () => {
    const expected = comparableTurns(await converse(urls.reference, "agent", randomUUID()));
    const actual = comparableTurns(await converse(urls.graphdock, "agent", randomUUID()));
    expect(actual).toEqual(expected);
  });

  it("gives it the same conversation for graphdock's own version of the graph, but for raw frames and passing state snapshots", { timeout: 300_000 }, async () => {
    const expected = comparableTurns(await converse(urls.reference, "agent", randomUUID()));
    const actual = comparableTurns(await converse(urls.native, "agent", randomUUID()));
    // The reference interleaves its modes' frames (which RAW events mirror, and which decide when
    // the adapter sends a passing STATE_SNAPSHOT) as LangChain's callback queues deliver them; the
    // last snapshot of each turn is the state's (D48).
    const view = (turns: typeof expected) =>
      turns.map((t) => {
        const events = t.events.filter((e) => e.type !== "RAW");
        const last = events.map((e) => e.type).lastIndexOf("STATE_SNAPSHOT");
        return { ...t, events: events.filter((e, i) => e.type !== "STATE_SNAPSHOT" || i === last) };
      });
    expect(view(actual)).toEqual(view(expected));
  });
});
