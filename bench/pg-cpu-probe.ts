/**
 * Where PostgreSQL's CPU per run goes (a measurement aid, not part of `npm run bench`): the
 * postgres bench's HTTP workload (bench/postgres.bench.ts: 16 SDK callers, `runs.wait` of a
 * one-node graph) against GRAPHDOCK_BENCH_PG, and per run: CPU of the server processes, of this
 * process (the clients), of PostgreSQL by kind of process (client backends, WAL writer,
 * autovacuum, ...), and, when the cluster preloads pg_stat_statements, each statement's calls,
 * execution and planning time.
 *
 *   PROBE_ROOTS=/path/a,/path/b  checkouts of graphdock to compare (default: this one), measured
 *                                in turns, each round (PROBE_ROUNDS, default 3) once each, so
 *                                that a busy machine disturbs them alike; the round with the
 *                                least PostgreSQL CPU per run of each is printed;
 *   PROBE_PROCS=1                server processes per checkout;
 *   PROBE_SECONDS=6              measured seconds per turn, after 2 s of warm-up.
 *
 * The cluster: any (e.g. initdb + pg_ctl with `-c shared_preload_libraries=pg_stat_statements`
 * and `CREATE EXTENSION pg_stat_statements`); PROBE_PGDATA names its data directory, to find
 * its processes (its postmaster.pid).
 */
import { Client } from "@langchain/langgraph-sdk";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import pg from "pg";

const url = process.env.GRAPHDOCK_BENCH_PG!;
const PGDATA = process.env.PROBE_PGDATA!;
const ROOTS = (process.env.PROBE_ROOTS ?? new URL("..", import.meta.url).pathname).split(",");
const PROCS = Number(process.env.PROBE_PROCS ?? 1);
const SECONDS = Number(process.env.PROBE_SECONDS ?? 6);
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3);
const CALLERS = 16;

/** CPU ms of a process (user + system) and of its waited-for children. */
function stat(pid: number): { cmd: string; cpu: number; children: number } | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
    return { cmd, cpu: (Number(f[11]) + Number(f[12])) * 10, children: (Number(f[13]) + Number(f[14])) * 10 };
  } catch {
    return undefined;
  }
}

/** PostgreSQL's processes -> kind and CPU ms; exited children (autovacuum workers, ...) under -1. */
function pgProcs(): Map<number, { kind: string; cpu: number }> {
  const pm = Number(readFileSync(`${PGDATA}/postmaster.pid`, "utf8").split("\n")[0]);
  const kids = execFileSync("ps", ["--ppid", String(pm), "-o", "pid="], { encoding: "utf8" })
    .split("\n")
    .map((s) => Number(s.trim()))
    .filter(Boolean);
  const out = new Map<number, { kind: string; cpu: number }>();
  const p = stat(pm)!;
  out.set(pm, { kind: "postmaster", cpu: p.cpu });
  out.set(-1, { kind: "exited children", cpu: p.children });
  for (const k of kids) {
    const s = stat(k);
    if (!s) continue;
    const kind = /^postgres: \S+ \S+ 127/.test(s.cmd) ? "client backends" : s.cmd.replace(/^postgres: /, "").replace(/ .*$/, "");
    out.set(k, { kind, cpu: s.cpu });
  }
  return out;
}

interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<unknown>;
}

/** `graphdock serve` of checkout `root` (as test/postgres/procs.ts starts it). */
function startServer(root: string, store: string): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/node/cli.ts", "serve", "--config", "test/postgres/fixtures/graph.json", "--port", "0", "--store", store], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GRAPHDOCK_API_KEY: "test-key" },
  });
  let out = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr!.on("data", (d: Buffer) => (out += d));
    void exited.then(() => reject(new Error(`graphdock serve exited: ${out}`)));
  });
}

interface Turn {
  runs: number;
  perSec: number;
  servers: number;
  client: number;
  pg: Map<string, number>;
  pgTotal: number;
  statements: Array<{ calls: number; exec: number; plan: number; rows: number; top: boolean; q: string }>;
}

const db = new pg.Client({ connectionString: url });
await db.connect();
const hasPgss = (await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`)).rowCount === 1;
const setups = await Promise.all(
  ROOTS.map(async (root, i) => {
    const schema = `probe_${process.pid}_${i}`;
    const servers = await Promise.all(Array.from({ length: PROCS }, () => startServer(root, `${url}?schema=${schema}`)));
    const clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
    const threads = await Promise.all(Array.from({ length: CALLERS }, (_, k) => clients[k % clients.length]!.threads.create()));
    return { root, schema, servers, clients, threads };
  }),
);

async function load(setup: (typeof setups)[number], ms: number): Promise<number> {
  let done = 0;
  const end = performance.now() + ms;
  await Promise.all(
    setup.threads.map(async (t, i) => {
      const c = setup.clients[i % setup.clients.length]!;
      while (performance.now() < end) {
        await c.runs.wait(t.thread_id, "ordered", { input: { n: done, sleep: 0 } });
        done++;
      }
    }),
  );
  return done;
}

async function turn(setup: (typeof setups)[number]): Promise<Turn> {
  await load(setup, 2000);
  if (hasPgss) await db.query("SELECT pg_stat_statements_reset()");
  const before = pgProcs();
  const srv0 = setup.servers.map((s) => stat(s.child.pid!)!.cpu);
  const cl0 = process.cpuUsage();
  const start = performance.now();
  const runs = await load(setup, SECONDS * 1000);
  const wall = performance.now() - start;
  const cl = process.cpuUsage(cl0);
  const srv = setup.servers.reduce((a, s, i) => a + stat(s.child.pid!)!.cpu - srv0[i]!, 0);
  const after = pgProcs();
  const pgByKind = new Map<string, number>();
  let pgTotal = 0;
  for (const [pid, a] of after) {
    const d = (a.cpu - (before.get(pid)?.cpu ?? 0)) / runs;
    pgByKind.set(a.kind, (pgByKind.get(a.kind) ?? 0) + d);
    pgTotal += d;
  }
  const statements: Turn["statements"] = [];
  if (hasPgss) {
    const { rows } = await db.query(
      `SELECT calls, total_exec_time, total_plan_time, rows, toplevel, regexp_replace(query, '\\s+', ' ', 'g') AS q
         FROM pg_stat_statements WHERE query LIKE '%' || $1 || '%' OR query LIKE '%pg_notify%' ORDER BY total_exec_time + total_plan_time DESC`,
      [setup.schema],
    );
    for (const r of rows) {
      statements.push({
        calls: r.calls / runs,
        exec: r.total_exec_time / runs,
        plan: r.total_plan_time / runs,
        rows: Number(r.rows) / Math.max(1, r.calls),
        top: r.toplevel,
        q: (r.q as string).replaceAll(`"${setup.schema}".`, "").replace(/^PREPARE graphdock_b_\w+ AS /, "[batch] "),
      });
    }
  }
  return { runs, perSec: runs / (wall / 1000), servers: srv / runs, client: (cl.user + cl.system) / 1000 / runs, pg: pgByKind, pgTotal, statements };
}

try {
  const best: Array<Turn | undefined> = setups.map(() => undefined);
  const all: Turn[][] = setups.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < setups.length; i++) {
      const t = await turn(setups[i]!);
      all[i]!.push(t);
      if (!best[i] || t.pgTotal < best[i]!.pgTotal) best[i] = t;
    }
  }
  for (let i = 0; i < setups.length; i++) {
    const b = best[i]!;
    console.log(`\n### ${setups[i]!.root}: ${PROCS} server process(es)`);
    console.log(`  per round: ${all[i]!.map((t) => `${t.perSec.toFixed(0)} runs/s S ${t.servers.toFixed(2)} D ${t.pgTotal.toFixed(2)} C ${t.client.toFixed(2)}`).join(" | ")}`);
    console.log(`  least-D round: ${b.runs} runs, ${b.perSec.toFixed(0)} runs/s; CPU ms/run: servers ${b.servers.toFixed(2)}, client ${b.client.toFixed(2)}, postgres ${b.pgTotal.toFixed(2)}`);
    for (const [k, v] of [...b.pg].sort((x, y) => y[1] - x[1])) if (v >= 0.005) console.log(`    postgres ${k.padEnd(22)} ${v.toFixed(3)}`);
    if (!b.statements.length) continue;
    const top = b.statements.filter((s) => s.top).reduce((a, s) => a + s.exec + s.plan, 0);
    console.log(`  statements (top-level exec+plan ${top.toFixed(3)} ms/run, wall time in the backend):`);
    console.log(`  ${"calls/run".padStart(9)} ${"exec".padStart(7)} ${"plan".padStart(6)} ${"rows".padStart(5)}   statement`);
    for (const s of b.statements.slice(0, 30)) {
      if (s.calls < 0.005) continue;
      console.log(`  ${s.calls.toFixed(2).padStart(9)} ${s.exec.toFixed(3).padStart(7)} ${s.plan.toFixed(3).padStart(6)} ${s.rows.toFixed(1).padStart(5)} ${s.top ? " " : "*"} ${s.q.slice(0, 150)}`);
    }
  }
} finally {
  await db.end();
  await Promise.all(setups.flatMap((s) => s.servers.map((x) => x.stop())));
}
