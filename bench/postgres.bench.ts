/**
 * PostgreSQL figures (D22), `npm run bench -- postgres`:
 * - runs/s over HTTP (official SDK Client, `runs.wait` of a one-node graph, 16 concurrent
 *   callers each on its own thread) with 1 and 2 `graphdock serve` processes on one database
 *   (target: 2 processes >= 1.4x of 1), and relative to 1 process on the memory store;
 * - history(limit 10) on 100- and 1,000-checkpoint threads (a state that does not grow, so only
 *   the history length differs: flat in thread length);
 * - round trips to the database per run (in process, the same one-node graph), by statement;
 * - storage of a 500-turn chat (echo graph, in process, its own schema) against the JSON size of
 *   its final state (target <= 3x), counted after a VACUUM of every table (what autovacuum
 *   leaves): the checkpoint values of all its checkpoints; every row of the schema
 *   (`pg_column_size` of whole rows: checkpoints with their metadata and pending writes, list
 *   chunks, run records, run event logs not yet pruned, the thread, ...); and on disk,
 *   `pg_total_relation_size` of the schema's tables less that of an empty schema (pages holding
 *   rows, free space left by updated rows, TOAST, indexes). A table of these by table follows.
 *
 * The machine is shared: the load average is printed, and the 2-vs-1 process ratio is given per
 * round (each round measures both back to back) as well as from the best rounds. CPU time per run
 * is split between the server processes (S), this process (the SDK clients, C), PostgreSQL's
 * processes (D, when the bench started the server itself) and the rest of the machine (other
 * work on it), with how busy the machine's cores were: when they are all busy with one server
 * process, a second one can only share them. From S, D and C of the 1-process round follows the
 * most 2 processes can give on this machine's cores, whatever the load balancing:
 * cores / (S + D + C) runs/s against 1 / S for one process's single thread.
 *
 * `GRAPHDOCK_BENCH_PG_PARTS=storage` (a comma list of http, trips, history, storage) runs only
 * those parts.
 *
 * Uses GRAPHDOCK_BENCH_PG=postgres://... when set; otherwise starts a throwaway server as the
 * tests do (needs Debian's `postgresql` package).
 */
import { Client } from "@langchain/langgraph-sdk";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { echo } from "../examples/node/agent.js";
import { ordered } from "../test/postgres/fixtures/graphs.js";
import { createRuntime } from "../src/index.js";
import { postgresStore } from "../src/postgres/index.js";
import type { StoredCheckpoint, WriteOp } from "../src/persistence/types.js";
import { startPgServer } from "../test/postgres/global-setup.js";
import { startServer, type Server } from "../test/postgres/procs.js";

const line = (label: string, value: string, target = "", ok?: boolean) =>
  console.log(`${label.padEnd(60)} ${value.padStart(14)}   ${target.padEnd(16)} ${ok === undefined ? "" : ok ? "ok" : "MISSED"}`);

const CALLERS = 16;
const SECONDS = Number(process.env.GRAPHDOCK_BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.GRAPHDOCK_BENCH_ROUNDS ?? 3);
const PARTS = new Set((process.env.GRAPHDOCK_BENCH_PG_PARTS ?? "http,trips,history,storage").split(",").map((p) => p.trim()));

/** CPU time (ms) the whole machine spent busy so far, over all cores. */
function machineBusyMs(): number {
  return cpus().reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
}

/** CPU time (ms) a process spent so far (user + system, from /proc). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** CPU time (ms) of PostgreSQL's processes so far: the postmaster of `dataDir` and its children (live ones, and those it reaped). */
function postgresCpuMs(dataDir: string): number {
  const postmaster = Number(readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0]);
  const fields = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const own = fields(postmaster);
  // utime, stime and the reaped children's cutime, cstime, in clock ticks (USER_HZ 100).
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = fields(Number(entry));
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * 10;
}

/** The cluster the bench started (its CPU is measured), if it did. */
let pgDataDir: string | undefined;

/** Where the CPU of the last `throughput` call went, in ms per run (`database`: NaN when not measured). */
const cpuPerRun = { servers: 0, client: 0, database: NaN, rest: 0, busy: 0 };

/** Runs/s of `ordered` runs through `runs.wait`, callers spread round-robin over the servers. */
async function throughput(servers: Server[]): Promise<number> {
  const clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
  const threads = await Promise.all(Array.from({ length: CALLERS }, (_, i) => clients[i % clients.length]!.threads.create()));
  // Warm up every process.
  await Promise.all(threads.map((t, i) => clients[i % clients.length]!.runs.wait(t.thread_id, "ordered", { input: { n: 0, sleep: 0 } })));
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
  const serversCpu = () => servers.reduce((sum, s) => sum + processCpuMs(s.child.pid!), 0);
  const databaseCpu = () => (pgDataDir ? postgresCpuMs(pgDataDir) : NaN);
  const before = { machine: machineBusyMs(), servers: serversCpu(), client: process.cpuUsage(), database: databaseCpu() };
  const start = performance.now();
  await Promise.all(
    threads.map(async (t, i) => {
      const c = clients[i % clients.length]!;
      while (performance.now() < end) {
        await c.runs.wait(t.thread_id, "ordered", { input: { n: done, sleep: 0 } });
        done++;
      }
    }),
  );
  const wall = performance.now() - start;
  const machine = machineBusyMs() - before.machine;
  const client = process.cpuUsage(before.client);
  cpuPerRun.servers = (serversCpu() - before.servers) / done;
  cpuPerRun.client = (client.user + client.system) / 1000 / done;
  cpuPerRun.database = (databaseCpu() - before.database) / done;
  cpuPerRun.rest = machine / done - cpuPerRun.servers - cpuPerRun.client - (Number.isNaN(cpuPerRun.database) ? 0 : cpuPerRun.database);
  cpuPerRun.busy = machine / (wall * cpus().length);
  return done / (wall / 1000);
}

const cp = (i: number, values: Record<string, unknown>): StoredCheckpoint => ({
  thread_id: "h",
  checkpoint_ns: "",
  checkpoint: {
    v: 1,
    id: `1f000000-0000-6000-8000-${String(i).padStart(12, "0")}`,
    ts: new Date(1_700_000_000_000 + i).toISOString(),
    channel_values: values,
    channel_versions: { n: i + 1 },
    versions_seen: { inc: { n: i } },
  },
  metadata: { source: "loop", step: i, parents: {}, writes: { inc: { n: i + 1 } } },
  parent_checkpoint_id: i === 0 ? null : `1f000000-0000-6000-8000-${String(i - 1).padStart(12, "0")}`,
  pending_writes: [],
});

export default async function (): Promise<void> {
  const external = process.env.GRAPHDOCK_BENCH_PG;
  const server = external ? undefined : await startPgServer();
  pgDataDir = server?.dataDir;
  const url = external ?? server!.url;
  const tag = `${process.pid}_${Date.now() % 100000}`;
  try {
    // --- runs/s over HTTP ----------------------------------------------------------------------
    if (PARTS.has("http")) {
    // Every configuration is up at once and measured in turns, best of ROUNDS: the machine is
    // shared, so the best round of each is the least disturbed one.
    const configs = {
      memory: await Promise.all([startServer("memory")]),
      one: await Promise.all([startServer(`${url}?schema=b1_${tag}`)]),
      two: await Promise.all([0, 1].map(() => startServer(`${url}?schema=b2_${tag}`))),
    };
    const best = { memory: 0, one: 0, two: 0 };
    const cpu: Record<string, typeof cpuPerRun> = {};
    const paired: number[] = [];
    console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    try {
      for (let r = 0; r < ROUNDS; r++) {
        const got = { memory: 0, one: 0, two: 0 };
        for (const key of ["memory", "one", "two"] as const) {
          got[key] = await throughput(configs[key]);
          if (got[key] > best[key]) (best[key] = got[key]), (cpu[key] = { ...cpuPerRun });
        }
        paired.push(got.two / got.one);
      }
    } finally {
      await Promise.all(Object.values(configs).flat().map((s) => s.stop()));
    }
    const { memory: mem, one, two } = best;
    line(`runs/s over HTTP, memory store, 1 process (best of ${ROUNDS})`, mem.toFixed(0));
    line(`runs/s over HTTP, postgres, 1 process (best of ${ROUNDS})`, one.toFixed(0), `${((one / mem) * 100).toFixed(0)}% of memory`);
    line(`runs/s over HTTP, postgres, 2 processes (best of ${ROUNDS})`, two.toFixed(0), "target >= 1.4x", two >= 1.4 * one);
    line("  2 processes / 1 process (best rounds)", `${(two / one).toFixed(2)}x`);
    line("  2 processes / 1 process (per round)", paired.map((x) => `${x.toFixed(2)}x`).join(" "));
    // Whether a second process can help at all: with the machine already busy during the
    // 1-process round, the database, the client and the servers share the same cores.
    for (const key of ["memory", "one", "two"] as const) {
      const c = cpu[key]!;
      line(
        `  CPU per run, ${key === "memory" ? "memory store" : key === "one" ? "postgres, 1 process" : "postgres, 2 processes"} (ms)`,
        `${(c.servers + c.client + (Number.isNaN(c.database) ? 0 : c.database) + c.rest).toFixed(2)}`,
        Number.isNaN(c.database)
          ? `servers ${c.servers.toFixed(2)}, client ${c.client.toFixed(2)}, database and rest ${c.rest.toFixed(2)}; machine ${(c.busy * 100).toFixed(0)}% busy`
          : `servers ${c.servers.toFixed(2)}, client ${c.client.toFixed(2)}, database ${c.database.toFixed(2)}, rest of the machine ${c.rest.toFixed(2)}; machine ${(c.busy * 100).toFixed(0)}% busy`,
      );
    }
    // The most a second process can give here: all cores busy with servers, database and clients
    // (cores / (S + D + C) runs/s) against one process's single thread (1 / S runs/s).
    const o = cpu.one!;
    if (!Number.isNaN(o.database)) {
      const ceiling = (cpus().length * o.servers) / (o.servers + o.database + o.client);
      line("  2 processes / 1 process at most, from the 1-process round's CPU", `${ceiling.toFixed(2)}x`, `cores*S/(S+D+C)`);
    }
    console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    }

    // --- round trips per run --------------------------------------------------------------------
    if (PARTS.has("trips")) {
      const counts = new Map<string, number>();
      const query = pg.Client.prototype.query;
      const rt = await createRuntime({ graphs: { ordered }, store: postgresStore({ connectionString: url, schema: `br_${tag}` }) });
      try {
        const t = await rt.threads.create();
        for (let i = 0; i < 5; i++) await rt.runs.wait(t.thread_id, "ordered", { input: { n: i, sleep: 0 } });
        const N = 50;
        // Counted on the driver: every statement is one round trip (node-pg does not pipeline).
        pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
          const q = args[0] as string | { text?: string };
          // Literals (inlined in a commit sent in one round trip, src/postgres/batch.ts) as `?`, so such commits group together.
          const text = (typeof q === "string" ? q : (q.text ?? "")).replace(/\s+/g, " ").replace(/"br_[^"]+"\./g, "").replace(/E?'(?:[^']|'')*'/g, "?");
          const key = text.startsWith("SELECT pg_notify") ? "SELECT pg_notify(...); COMMIT" : text.slice(0, 60);
          counts.set(key, (counts.get(key) ?? 0) + 1);
          return (query as (...a: unknown[]) => unknown).apply(this, args);
        } as typeof query;
        try {
          for (let i = 0; i < N; i++) await rt.runs.wait(t.thread_id, "ordered", { input: { n: i, sleep: 0 } });
        } finally {
          pg.Client.prototype.query = query;
        }
        const total = [...counts.values()].reduce((a, b) => a + b, 0);
        line("round trips per run (in process, one-node graph)", (total / N).toFixed(1));
        for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${(v / N).toFixed(1).padStart(4)}  ${k}`);
      } finally {
        await rt.close();
      }
    }

    // --- history(limit 10) ---------------------------------------------------------------------
    if (PARTS.has("history")) {
    const store = postgresStore({ connectionString: url, schema: `bh_${tag}` });
    await store.open();
    try {
      const history = async (n: number) => {
        const threadId = `h${n}`;
        for (let i = 0; i < n; i += 100) {
          const ops: WriteOp[] = [];
          for (let k = i; k < Math.min(n, i + 100); k++) ops.push({ op: "checkpoint.put", checkpoint: { ...cp(k, { n: k + 1, topic: "counter" }), thread_id: threadId } });
          await store.commit(ops);
        }
        for (let i = 0; i < 20; i++) await store.listCheckpoints(threadId, { limit: 10 });
        const R = 200;
        const t0 = performance.now();
        for (let i = 0; i < R; i++) await store.listCheckpoints(threadId, { limit: 10 });
        return (performance.now() - t0) / R;
      };
      const h100 = await history(100);
      const h1000 = await history(1000);
      line("history(limit 10), 100-checkpoint thread (ms)", h100.toFixed(3));
      line("history(limit 10), 1,000-checkpoint thread (ms)", h1000.toFixed(3), "flat", h1000 < h100 * 1.5 + 0.2);
    } finally {
      await store.close();
    }
    }

    // --- storage of a 500-turn chat -----------------------------------------------------------
    if (PARTS.has("storage")) await storage(url, tag);
  } finally {
    server?.stop();
  }
}

async function storage(url: string, tag: string): Promise<void> {
  const schema = `bs_${tag}`;
  // An empty schema's tables and indexes: what the chat's figure leaves out.
  const empty = postgresStore({ connectionString: url, schema: `be_${tag}` });
  await empty.open();
  await empty.close();
  const runtime = await createRuntime({ graphs: { echo }, store: postgresStore({ connectionString: url, schema }) });
  let finalBytes = 0;
  let threadId = "";
  try {
    const t = await runtime.threads.create();
    threadId = t.thread_id;
    const t0 = performance.now();
    for (let i = 0; i < 500; i++) {
      await runtime.runs.wait(threadId, "echo", { input: { messages: [{ role: "user", content: `turn ${i}: how is the weather today in city number ${i}?` }] } });
    }
    line("500-turn chat in process (ms per turn)", ((performance.now() - t0) / 500).toFixed(2));
    const state = await runtime.threads.getState(threadId);
    finalBytes = JSON.stringify(state.values).length;
  } finally {
    await runtime.close();
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // What a user's database holds once autovacuum has been by: dead row versions of updated rows
    // (leases, run status, thread row) reclaimed for reuse. VACUUM does not shrink a table's files
    // except for trailing free pages, so on-disk sizes still count the space of those versions.
    for (const name of [schema, `be_${tag}`]) {
      const { rows } = await c.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = $1`, [name]);
      for (const { t } of rows) await c.query(`VACUUM (ANALYZE) "${name}"."${t}"`);
    }
    // Per table: its rows (pg_column_size of each whole row: the datum as stored, compressed or
    // toasted values at their stored size), and its relation sizes on disk (heap = main fork with
    // free space map and visibility map, TOAST table with its index, indexes).
    const sizes = async (name: string) =>
      (
        await c.query<{ t: string; heap: string; toast: string; idx: string; total: string }>(
          `SELECT c.relname AS t,
                  (pg_relation_size(c.oid) + pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm'))::bigint AS heap,
                  COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0)::bigint AS toast,
                  pg_indexes_size(c.oid)::bigint AS idx,
                  pg_total_relation_size(c.oid)::bigint AS total
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind = 'r'`,
          [name],
        )
      ).rows;
    const full = await sizes(schema);
    const base = new Map((await sizes(`be_${tag}`)).map((r) => [r.t, r]));
    let rowBytes = 0;
    let rowCount = 0;
    /** Rows of the run event logs: pruned a minute after a run ends (`eventRetentionMs`; resumable runs' after their window). */
    let eventBytes = 0;
    const table: string[][] = [];
    const kb = (b: number) => (b / 1024).toFixed(1);
    const sum = { heap: 0, toast: 0, idx: 0, total: 0 };
    for (const r of full.sort((a, b) => Number(b.total) - Number(a.total))) {
      const e = base.get(r.t);
      const d = (k: "heap" | "toast" | "idx" | "total") => Number(r[k]) - Number(e?.[k] ?? 0);
      const { rows } = await c.query<{ n: number; b: string | null }>(`SELECT count(*)::int AS n, sum(pg_column_size(x.*))::bigint AS b FROM "${schema}".${r.t} x`);
      const rb = Number(rows[0]!.b ?? 0);
      rowBytes += rb;
      if (r.t === "run_logs" || r.t === "run_events") eventBytes += rb;
      rowCount += rows[0]!.n;
      if (!rows[0]!.n && d("total") === 0) continue;
      for (const k of ["heap", "toast", "idx", "total"] as const) sum[k] += d(k);
      table.push([r.t, String(rows[0]!.n), kb(rb), kb(d("heap")), kb(d("toast")), kb(d("idx")), kb(d("total"))]);
    }
    table.push(["all", String(rowCount), kb(rowBytes), kb(sum.heap), kb(sum.toast), kb(sum.idx), kb(sum.total)]);
    // The channel values of every checkpoint: the shared array logs plus each row's other values.
    const state = await c.query<{ b: string }>(
      `SELECT (SELECT COALESCE(sum(pg_column_size(items)), 0) FROM "${schema}".cp_chunks WHERE log_id IN (SELECT log_id FROM "${schema}".cp_logs WHERE thread_id = $1))
            + (SELECT COALESCE(sum(pg_column_size(checkpoint)), 0) FROM "${schema}".checkpoints WHERE thread_id = "${schema}".cp_key($1))
            + (SELECT COALESCE(sum(pg_column_size(cp)), 0) FROM "${schema}".cp_meta WHERE thread_id = $1) AS b`,
      [threadId],
    );
    const stateBytes = Number(state.rows[0]!.b);
    const ckptTables = new Set(["checkpoints", "cp_meta", "cp_logs", "cp_chunks", "cp_writes"]);
    const ckptDisk = full
      .filter((r) => ckptTables.has(r.t))
      .reduce((a, r) => a + Number(r.total) - Number(base.get(r.t)?.total ?? 0), 0);
    line("500-turn chat: final state (JSON bytes)", String(finalBytes));
    line("500-turn chat: checkpoint values (all checkpoints) / final state", `${(stateBytes / finalBytes).toFixed(2)}x`, "target <= 3x", stateBytes <= 3 * finalBytes);
    line("500-turn chat: every row of the schema / final state", `${(rowBytes / finalBytes).toFixed(2)}x`, "target <= 3x", rowBytes <= 3 * finalBytes);
    line("500-turn chat: every row but run event logs (pruned) / final state", `${((rowBytes - eventBytes) / finalBytes).toFixed(2)}x`);
    line("500-turn chat: checkpoint tables+indexes on disk / final state", `${(ckptDisk / finalBytes).toFixed(2)}x`, "", ckptDisk <= 3 * finalBytes);
    line("500-turn chat: all tables+indexes on disk / final state", `${(sum.total / finalBytes).toFixed(2)}x`, "", sum.total <= 3 * finalBytes);
    console.log("  by table after VACUUM, KiB (on disk: less an empty schema's):");
    const head = ["table", "rows", "row data", "heap", "toast", "indexes", "on disk"];
    for (const r of [head, ...table]) console.log(`  ${r[0]!.padEnd(18)}${r.slice(1).map((x) => x.padStart(10)).join("")}`);
  } finally {
    await c.end();
  }
}
