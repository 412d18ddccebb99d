/**
 * A PostgreSQL outage under load (D70-D74): two `graphdock serve` processes on a cluster of this
 * test's own (the shared one serves the other test files meanwhile), which is stopped with
 * `pg_ctl stop` for 10 s while clients (the official SDK) create, stream, join and cancel runs
 * through both processes.
 *
 * - Every acknowledged run completes: runs in flight wait for the database, streams and joins
 *   opened before or during the outage stay open and end with the run; nothing stays
 *   pending/running, no thread stays busy.
 * - During the outage every request answers 503 with `Retry-After` (never 500), `/ok` answers
 *   503, and each process logs two lines (the outage's start and end), no stack.
 * - Afterwards: `/ok` 200, both LISTEN connections are back (pg_stat_activity), a cancel from the
 *   other process stops a running run.
 */
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPgServer, type PgServer } from "./global-setup.js";
import { sleep, startServer, until, type Server } from "./procs.js";

const OUTAGE_MS = 10_000;
const SCHEMA = "outage";
let cluster: PgServer;
let servers: Server[] = [];
let clients: Client[] = [];

beforeAll(async () => {
  cluster = await startPgServer();
  const store = `${cluster.url}?schema=${SCHEMA}`;
  // JSON log lines: the outage's among the runs' own (logged at info).
  servers = await Promise.all([0, 1].map(() => startServer(store, ["--log-format", "json"])));
  clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
}, 120_000);

afterAll(async () => {
  try {
    // A server that does not stop within 10 s is killed: the cluster goes in any case.
    await Promise.all(servers.map((s) => Promise.race([s.stop(), sleep(10_000).then(() => s.kill())])));
  } finally {
    cluster?.stop();
  }
}, 60_000);

/** What a refused request answered. */
interface Refusal {
  status: number;
  retryAfter: string | null;
}

/** A refusal from the SDK's HTTPError (its Response carries the headers), else rethrown. */
function refusal(err: unknown): Refusal {
  const e = err as { status?: number; response?: Response };
  if (typeof e?.status !== "number") throw err;
  return { status: e.status, retryAfter: e.response?.headers.get("retry-after") ?? null };
}

async function listenConnections(): Promise<number> {
  const c = new pg.Client(cluster.url);
  await c.connect();
  try {
    const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN %'`);
    return rows[0]!.n;
  } finally {
    await c.end();
  }
}

const okStatus = (s: Server) => fetch(`${s.url}/ok`).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.text() }));

type Values = { order: number[] };

describe("PostgreSQL stopped for 10 s under load, two processes", () => {
  it("loses no acknowledged run, leaves nothing stuck, answers 503 meanwhile and recovers", async () => {
    const threads = await Promise.all(Array.from({ length: 6 }, (_, k) => clients[k % 2]!.threads.create()));
    /** Acknowledged runs: created (or streamed) with a 2xx answer. */
    const acked: Array<{ thread: string; run: string; how: string; sawError: boolean }> = [];
    const refusals: Refusal[] = [];
    const problems: string[] = [];
    let stopping = false;

    // Load: each worker alternates create-and-stream on one process with create on one process
    // and join on the other; a refusal is noted and the worker goes on.
    const worker = async (k: number) => {
      const thread = threads[k]!.thread_id;
      for (let i = 0; !stopping; i++) {
        const p = (k + i) % 2;
        const input = { n: i, sleep: 100 };
        try {
          if (i % 2 === 0) {
            const events: Array<{ event: string; data: unknown }> = [];
            for await (const part of clients[p]!.runs.stream(thread, "ordered", { input, multitaskStrategy: "enqueue", streamMode: ["values"] })) events.push(part);
            const meta = events[0]?.data as { run_id?: string } | undefined;
            if (events[0]?.event !== "metadata" || !meta?.run_id) problems.push(`a stream began with ${events[0]?.event ?? "nothing"} (${events.length} events)`);
            else {
              const sawError = events.some((e) => e.event === "error");
              if (!sawError && events.at(-1)?.event !== "values") problems.push(`stream of run ${meta.run_id} ended with ${events.at(-1)?.event}`);
              acked.push({ thread, run: meta.run_id, how: "stream", sawError });
            }
          } else {
            const run = await clients[p]!.runs.create(thread, "ordered", { input, multitaskStrategy: "enqueue" });
            const entry = { thread, run: run.run_id, how: "create+join", sawError: false };
            acked.push(entry);
            // Joined on the other process; a join refused during the outage is made again.
            for (;;) {
              try {
                const values = (await clients[1 - p]!.runs.join(thread, run.run_id)) as Values & { __error__?: unknown };
                if (values.__error__) entry.sawError = true;
                break;
              } catch (err) {
                refusals.push(refusal(err));
                await sleep(250);
              }
            }
          }
        } catch (err) {
          refusals.push(refusal(err));
          await sleep(100);
        }
      }
    };

    // Runs in flight across the whole outage, each streamed on the process that executes it and
    // joined on the other.
    const slowThreads = await Promise.all([0, 1].map((p) => clients[p]!.threads.create()));
    const slow = await Promise.all(
      slowThreads.map((t, p) => clients[p]!.runs.create(t.thread_id, "ordered", { input: { n: 7, sleep: 3000 }, streamResumable: true, streamMode: ["values"] })),
    );
    const slowJoins = slow.map((r, p) => clients[1 - p]!.runs.join(r.thread_id, r.run_id) as Promise<Values>);
    const slowStreams = slow.map(async (r, p) => {
      const events: string[] = [];
      for await (const part of clients[p]!.runs.joinStream(r.thread_id, r.run_id, { lastEventId: "-1" } as never)) events.push(part.event);
      return events;
    });
    // A long run to cancel from the other process once the database is back.
    const tickerThread = await clients[0]!.threads.create();
    const ticker = await clients[0]!.runs.create(tickerThread.thread_id, "ticker", { input: { every: 50, count: 100_000 }, streamMode: ["custom"] });
    const ticks: number[] = [];
    const tickerJoin = (async () => {
      const events: string[] = [];
      for await (const part of clients[1]!.runs.joinStream(tickerThread.thread_id, ticker.run_id)) {
        events.push(part.event);
        if (part.event === "custom") ticks.push((part.data as { tick: number }).tick);
      }
      return events;
    })();

    const workers = threads.map((_, k) => worker(k));
    await sleep(2000);
    expect(await listenConnections()).toBe(2);
    const linesBefore = servers.map((s) => s.output().split("\n").length);
    const ackedBefore = acked.length;

    // The outage.
    const haltedAt = Date.now();
    cluster.halt();
    const during: Array<{ status: number; retryAfter: string | null; body: string }> = [];
    const duringRefusals = refusals.length;
    while (Date.now() - haltedAt < OUTAGE_MS) {
      for (const s of servers) during.push(await okStatus(s));
      // A cancel cannot be recorded now: refused, to be sent again.
      try {
        await clients[1]!.runs.cancel(tickerThread.thread_id, ticker.run_id);
        problems.push("a cancel was acknowledged while the database was down");
      } catch (err) {
        during.push({ ...refusal(err), body: "" });
      }
      // New work is refused (the load's calls may all be runs under way, which wait instead).
      try {
        await clients[0]!.threads.create();
        problems.push("a thread was created while the database was down");
      } catch (err) {
        refusals.push(refusal(err));
      }
      await sleep(500);
    }
    const refusedDuring = refusals.slice(duringRefusals);
    cluster.resume();
    const resumedAt = Date.now();

    // Back: /ok first, then a cancel from the other process (the LISTEN connections may still
    // be reconnecting: the executing process then finds the request by polling).
    await until(async () => (await okStatus(servers[1]!)).status === 200 && (await okStatus(servers[0]!)).status === 200, 30_000, "/ok 200 on both");
    const okAfterMs = Date.now() - resumedAt;
    const listenersAtCancel = await listenConnections();
    const cancelAt = Date.now();
    await clients[1]!.runs.cancel(tickerThread.thread_id, ticker.run_id);
    await until(async () => (await clients[1]!.runs.get(tickerThread.thread_id, ticker.run_id)).status === "interrupted", 10_000, "the cancelled run interrupted");
    const cancelMs = Date.now() - cancelAt;
    await until(async () => (await listenConnections()) === 2, 15_000, "both LISTEN connections back");
    const listenersMs = Date.now() - resumedAt;

    await sleep(3000);
    stopping = true;
    await Promise.all(workers);
    const slowValues = await Promise.all(slowJoins);
    const slowEvents = await Promise.all(slowStreams);
    const tickerEvents = await tickerJoin;
    const ackedDuring = acked.length - ackedBefore;

    // Every acknowledged run completed (none failed, so no client had an error to see).
    const statuses = await Promise.all(acked.map((a, i) => clients[i % 2]!.runs.get(a.thread, a.run).then((r) => r.status)));
    const notSucceeded = acked.filter((a, i) => statuses[i] !== "success" && !a.sawError).map((a, i) => `${a.how} ${a.run}: ${statuses[i]}`);
    expect(notSucceeded).toEqual([]);
    expect(statuses.filter((s) => s !== "success")).toEqual([]);
    expect(problems).toEqual([]);
    for (const v of slowValues) expect(v.order).toEqual([7]);
    for (const events of slowEvents) expect([events[0], events.at(-1)]).toEqual(["metadata", "values"]);
    expect(tickerEvents[0]).toBe("metadata");
    expect(tickerEvents).not.toContain("error");
    // The join on the other process saw every tick from its start, across the outage.
    expect(ticks).toEqual(ticks.map((_, i) => ticks[0]! + i));

    // Nothing stuck: no run pending or running, every thread idle.
    const db = new pg.Client(cluster.url);
    await db.connect();
    const { rows } = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${SCHEMA}.runs GROUP BY status ORDER BY status`);
    const threadStatuses = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${SCHEMA}.threads GROUP BY status ORDER BY status`);
    await db.end();
    expect(rows.filter((r) => r.status === "pending" || r.status === "running")).toEqual([]);
    expect(threadStatuses.rows.map((r) => r.status)).toEqual(["idle"]);

    // Meanwhile: 503 with Retry-After, never anything else (the SDK's refusals and /ok alike).
    expect(refusedDuring.length).toBeGreaterThan(0);
    for (const r of [...refusals, ...during]) expect(r).toMatchObject({ status: 503, retryAfter: "5" });
    expect(during.filter((d) => d.body).every((d) => /the store is unavailable/.test(d.body))).toBe(true);

    // Two log lines per process for the outage, its start (error) and its end (info), and nothing
    // else at warn or above (no request or background failure, no stack); every line is the
    // logger's (a line that is not JSON was printed around it).
    type Line = { level?: number; msg?: string; raw: string };
    const parse = (raw: string): Line => {
      try {
        return { ...(JSON.parse(raw) as object), raw };
      } catch {
        return { raw };
      }
    };
    const logged = servers.map((s, i) => s.output().split("\n").slice(linesBefore[i]! - 1).filter((l) => l.trim()).map(parse));
    const outages = logged.map((lines) => lines.filter((l) => /^graphdock\/postgres: the database can/.test(l.msg ?? "")));
    for (const [i, lines] of logged.entries()) {
      const outage = outages[i]!;
      expect(outage.map((l) => [l.level, l.msg])).toEqual([
        [50, expect.stringMatching(/the database cannot be reached/)],
        [30, expect.stringMatching(/the database can be reached again/)],
      ]);
      const others = lines.filter((l) => !outage.includes(l) && (l.level === undefined || l.level >= 40));
      expect(others.map((l) => l.raw)).toEqual([]);
    }

    console.log(
      `outage: ${acked.length} runs acknowledged (${ackedDuring} after the stop began), all succeeded; ` +
        `${refusals.length} SDK calls and ${during.length} probes refused with 503 + Retry-After; /ok 200 ${okAfterMs} ms after the restart; ` +
        `LISTEN connections at the cancel: ${listenersAtCancel}, both back ${listenersMs} ms after the restart; ` +
        `cancel from the other process took ${cancelMs} ms; the ticker's join saw ${ticks.length} ticks in order; outage log lines per process: ${outages.map((l) => l.length).join(", ")} (of ${logged.map((l) => l.length).join(", ")} lines logged meanwhile)`,
    );
  }, 180_000);
});
