/**
 * Run streams on PostgreSQL across processes (D73, D74):
 * - a create-and-stream call gets every event of its run from the first, wherever the run
 *   executes, however quick (a stream used to end empty when another runtime executed the run
 *   and ended it before hearing the stream's reader ask for its events);
 * - a stream of a run that did not succeed ends with an `error` event in every process, also
 *   when the process executing the run was killed and another one ended it (here it may make
 *   one attempt, so it is ended rather than resumed: D61);
 * - the process publishing a run's events holds only the latest `maxEventBacklog` of them in
 *   memory: its readers that fall further behind read the table when the events are written
 *   there, and fail otherwise, as readers of the memory store do.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { postgresStore } from "../../src/postgres/index.js";
import { ordered, ticker } from "./fixtures/graphs.js";
import { startServer, until, type Server } from "./procs.js";
import { pgTestStores, pgUrl } from "./stores.js";

const { url, keep } = pgTestStores();
let servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

const runtimes = async (schema: string, n: number, options: { maxEventBacklog?: number } = {}) =>
  Promise.all(Array.from({ length: n }, () => createRuntime({ graphs: { ordered, ticker }, store: keep(postgresStore({ connectionString: url, schema, eventPollMs: 200, ...options })) })));

describe("run streams across processes on PostgreSQL", () => {
  it("create-and-stream through two runtimes on shared threads: every stream has its run's events from the first", async () => {
    const [a, b] = (await runtimes(`st_race_${process.pid}`, 2)) as [Runtime, Runtime];
    try {
      const threads = await Promise.all(Array.from({ length: 4 }, () => a.threads.create()));
      const RUNS = 400;
      let next = 0;
      const bad: string[] = [];
      // 16 callers, alternating runtimes, 4 to a thread: runs queue behind runs of the other runtime,
      // which then often executes them (and quickly: the node does not sleep).
      await Promise.all(
        Array.from({ length: 16 }, async (_, k) => {
          while (next < RUNS) {
            const n = next++;
            const events: string[] = [];
            const rt = k % 2 ? a : b;
            for await (const ev of rt.runs.stream(threads[k % 4]!.thread_id, "ordered", { input: { n, sleep: 0 }, multitaskStrategy: "enqueue", streamMode: ["values"] })) {
              events.push(ev.event);
            }
            if (events[0] !== "metadata" || events.at(-1) !== "values") bad.push(`run ${n}: ${events.join(",") || "no event"}`);
          }
        }),
      );
      expect(bad).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("a stream joined on another process ends with an error event when the run's process is killed and the run ends error", async () => {
    const store = `${pgUrl()}?schema=st_kill_${process.pid}`;
    // One attempt: a run cut off is ended `error` by another process rather than resumed (D61).
    const args = ["--lease-ms", "1500", "--max-attempts", "1"];
    servers = await Promise.all([0, 1, 2].map(() => startServer(store, args)));
    const clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
    for (const resumable of [false, true]) {
      const thread = await clients[0]!.threads.create();
      const run = await clients[0]!.runs.create(thread.thread_id, "ticker", { input: { every: 20, count: 250 }, streamMode: ["custom"], streamResumable: resumable });
      // Which process executes it: its ticks say.
      const events: Array<{ event: string; data: unknown }> = [];
      let pid: number | undefined;
      const joinedOn = servers.findIndex((s) => s !== servers[0]);
      const joined = (async () => {
        for await (const part of clients[joinedOn]!.runs.joinStream(thread.thread_id, run.run_id, (resumable ? { lastEventId: "-1" } : {}) as never)) {
          events.push(part);
          if (part.event === "custom") pid ??= (part.data as { pid: number }).pid;
        }
      })();
      await until(async () => pid !== undefined, 15_000, "a tick through the join");
      const victim = servers.find((s) => s.child.pid === pid)!;
      expect(victim).toBeDefined();
      expect(victim).not.toBe(servers[joinedOn]);
      await victim.kill();
      await joined;
      const alive = clients[servers.findIndex((s) => s !== victim && s.child.exitCode === null && s.child.signalCode === null)]!;
      const status = (await alive.runs.get(thread.thread_id, run.run_id)).status;
      // The run ended error, and the stream on the third process says so as its last event.
      expect(status).toBe("error");
      expect(events.at(-1)).toMatchObject({ event: "error", data: { error: "ProcessStopped" } });
      expect(events.filter((e) => e.event === "error")).toHaveLength(1);
      console.log(`${resumable ? "resumable" : "non-resumable"} run whose process was killed: ${status}; the join on another process saw ${events.length} events, the last ${JSON.stringify(events.at(-1))}`);
      // Replace the killed process for the next round.
      const i = servers.indexOf(victim);
      servers[i] = await startServer(store, args);
      clients[i] = new Client({ apiUrl: servers[i]!.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    }
  }, 120_000);

  it("holds at most maxEventBacklog events of a run in memory: slow readers of this process read the table, or fail when the events are not there", async () => {
    const [a, b] = (await runtimes(`st_mem_${process.pid}`, 2, { maxEventBacklog: 50 })) as [Runtime, Runtime];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** Reads a run's ticks, pausing `pauseMs` at each event; resolves the ticks, or the error it failed with. */
    const read = async (rt: Runtime, threadId: string, runId: string, pauseMs: number) => {
      const ticks: number[] = [];
      try {
        for await (const ev of rt.runs.joinStream(threadId, runId, { lastEventId: "-1" })) {
          if (ev.event === "custom") ticks.push((ev.data as { tick: number }).tick);
          if (pauseMs) await sleep(pauseMs);
        }
        return { ticks };
      } catch (err) {
        return { ticks, error: (err as Error).message };
      }
    };
    try {
      const COUNT = 1500;
      const all = Array.from({ length: COUNT }, (_, i) => i);
      const start = async (resumable: boolean) => {
        const thread = await a.threads.create();
        const run = await a.runs.create(thread.thread_id, "ticker", { input: { every: 0, count: COUNT }, streamMode: ["custom"], streamResumable: resumable });
        return [thread.thread_id, run.run_id] as const;
      };
      // Resumable: every event is in the table; a reader too slow for memory reads it there.
      const [t1, r1] = await start(true);
      const [fast, slow, elsewhere] = await Promise.all([read(a, t1, r1, 0), read(a, t1, r1, 5), read(b, t1, r1, 0)]);
      expect(fast).toEqual({ ticks: all });
      expect(slow).toEqual({ ticks: all });
      expect(elsewhere).toEqual({ ticks: all });
      // Not resumable and read in this process only: the events are nowhere else, so a reader
      // too slow for memory is stopped, as on the memory store.
      const [t2, r2] = await start(false);
      const [fast2, slow2] = await Promise.all([read(a, t2, r2, 0), read(a, t2, r2, 5)]);
      expect(fast2).toEqual({ ticks: all });
      expect(slow2.error).toMatch(/fell more than 50 events behind/);
      expect(slow2.ticks).toEqual(all.slice(0, slow2.ticks.length));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);
});
