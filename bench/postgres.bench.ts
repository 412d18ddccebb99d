/**
 * PostgreSQL figures (D22), `npm run bench -- postgres`:
 * - runs/s over HTTP (official SDK Client, `runs.wait` of a one-node graph, 16 concurrent
 *   callers each on its own thread) with 1 and 2 `agentdock serve` processes on one database
 *   (target: 2 processes >= 1.4x of 1), and relative to 1 process on the memory store;
 * - history(limit 10) on 100- and 1,000-checkpoint threads (a state that does not grow, so only
 *   the history length differs: flat in thread length);
 * - storage of a 500-turn chat (echo graph, in process) against the JSON size of its final state
 *   (target <= 3x): the checkpoint values of all its checkpoints, and every row of the thread
 *   (checkpoint metadata with each step's writes, pending writes, run records included).
 *
 * Uses AGENTDOCK_BENCH_PG=postgres://... when set; otherwise starts a throwaway server as the
 * tests do (needs Debian's `postgresql` package).
 */
import { Client } from "@langchain/langgraph-sdk";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { echo } from "../examples/node/agent.js";
import { createRuntime } from "../src/index.js";
import { postgresStore } from "../src/postgres/index.js";
import type { StoredCheckpoint, WriteOp } from "../src/persistence/types.js";
import { startPgServer } from "../test/postgres/global-setup.js";
import { startServer, type Server } from "../test/postgres/procs.js";

const line = (label: string, value: string, target = "", ok?: boolean) =>
  console.log(`${label.padEnd(60)} ${value.padStart(14)}   ${target.padEnd(16)} ${ok === undefined ? "" : ok ? "ok" : "MISSED"}`);

const CALLERS = 16;
const SECONDS = Number(process.env.AGENTDOCK_BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.AGENTDOCK_BENCH_ROUNDS ?? 3);

/** Runs/s of `ordered` runs through `runs.wait`, callers spread round-robin over the servers. */
async function throughput(servers: Server[]): Promise<number> {
  const clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
  const threads = await Promise.all(Array.from({ length: CALLERS }, (_, i) => clients[i % clients.length]!.threads.create()));
  // Warm up every process.
  await Promise.all(threads.map((t, i) => clients[i % clients.length]!.runs.wait(t.thread_id, "ordered", { input: { n: 0, sleep: 0 } })));
  let done = 0;
  const end = performance.now() + SECONDS * 1000;
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
  return done / ((performance.now() - start) / 1000);
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
  const external = process.env.AGENTDOCK_BENCH_PG;
  const server = external ? undefined : await startPgServer();
  const url = external ?? server!.url;
  const tag = `${process.pid}_${Date.now() % 100000}`;
  try {
    // --- runs/s over HTTP ----------------------------------------------------------------------
    // Every configuration is up at once and measured in turns, best of ROUNDS: the machine is
    // shared, so the best round of each is the least disturbed one.
    const configs = {
      memory: await Promise.all([startServer("memory")]),
      one: await Promise.all([startServer(`${url}?schema=b1_${tag}`)]),
      two: await Promise.all([0, 1].map(() => startServer(`${url}?schema=b2_${tag}`))),
    };
    const best = { memory: 0, one: 0, two: 0 };
    try {
      for (let r = 0; r < ROUNDS; r++) {
        for (const key of ["memory", "one", "two"] as const) best[key] = Math.max(best[key], await throughput(configs[key]));
      }
    } finally {
      await Promise.all(Object.values(configs).flat().map((s) => s.stop()));
    }
    const { memory: mem, one, two } = best;
    line(`runs/s over HTTP, memory store, 1 process (best of ${ROUNDS})`, mem.toFixed(0));
    line(`runs/s over HTTP, postgres, 1 process (best of ${ROUNDS})`, one.toFixed(0), `${((one / mem) * 100).toFixed(0)}% of memory`);
    line(`runs/s over HTTP, postgres, 2 processes (best of ${ROUNDS})`, two.toFixed(0), "target >= 1.4x", two >= 1.4 * one);
    line("  2 processes / 1 process", `${(two / one).toFixed(2)}x`);

    // --- history(limit 10) ---------------------------------------------------------------------
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

    // --- storage of a 500-turn chat -----------------------------------------------------------
    const schema = `bs_${tag}`;
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
      const tables = ["threads", "checkpoints", "cp_logs", "cp_chunks", "cp_writes", "runs", "cancels", "run_logs", "run_events"];
      const perTable: string[] = [];
      let rowBytes = 0;
      for (const table of tables) {
        const byThread = ["run_logs", "run_events"].includes(table) ? "true" : `thread_id = $1`;
        const { rows } = await c.query<{ b: string | null }>(
          `SELECT sum(pg_column_size(x.*))::bigint AS b FROM "${schema}".${table} x WHERE ${byThread}`,
          byThread === "true" ? [] : [threadId],
        );
        const b = Number(rows[0]?.b ?? 0);
        rowBytes += b;
        if (b) perTable.push(`${table} ${(b / 1024).toFixed(0)}K`);
      }
      // The channel values of every checkpoint: the shared array logs plus each row's other values.
      const state = await c.query<{ b: string }>(
        `SELECT (SELECT COALESCE(sum(pg_column_size(items)), 0) FROM "${schema}".cp_chunks WHERE thread_id = $1)
              + (SELECT COALESCE(sum(pg_column_size(checkpoint)), 0) FROM "${schema}".checkpoints WHERE thread_id = $1) AS b`,
        [threadId],
      );
      const stateBytes = Number(state.rows[0]!.b);
      const { rows } = await c.query<{ b: string }>(
        `SELECT sum(pg_total_relation_size(format('%I.%I', schemaname, tablename)))::bigint AS b FROM pg_tables WHERE schemaname = $1`,
        [schema],
      );
      line("500-turn chat: final state (JSON bytes)", String(finalBytes));
      line("500-turn chat: checkpoint values (all checkpoints) / final state", `${(stateBytes / finalBytes).toFixed(2)}x`, "target <= 3x", stateBytes <= 3 * finalBytes);
      line("500-turn chat: every row of the thread / final state", `${(rowBytes / finalBytes).toFixed(2)}x`, "target <= 3x", rowBytes <= 3 * finalBytes);
      line("500-turn chat: tables+indexes on disk / final state", `${(Number(rows[0]!.b) / finalBytes).toFixed(2)}x`);
      console.log(`  rows by table: ${perTable.join(", ")}`);
    } finally {
      await c.end();
    }
  } finally {
    server?.stop();
  }
}
