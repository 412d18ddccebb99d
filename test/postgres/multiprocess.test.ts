/**
 * Three `graphdock serve` processes on one PostgreSQL database act as one service (D20, D22):
 * a run created on one is joined on another and cancelled from the third; 120 enqueued runs on
 * 12 threads, created round-robin across the processes, all succeed in order with never two
 * running on a thread; a process SIGKILLed mid-run: another resumes its run once its lease
 * expires, and the thread takes new runs through the others.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startServer, until, type Server } from "./procs.js";

const LEASE_MS = 1500;
const store = `${inject("pgUrl")}?schema=mp_${process.pid}`;
let servers: Server[] = [];
let clients: Client[] = [];

beforeAll(async () => {
  // Started at once: the schema is created by one of them under the advisory lock.
  servers = await Promise.all([0, 1, 2].map(() => startServer(store, ["--lease-ms", String(LEASE_MS)])));
  clients = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } }));
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

type Values = { order: number[]; spans: number[][] };

describe("three graphdock serve processes on one database", () => {
  it("a run created on one is joined on a second and cancelled from the third", async () => {
    const [a, b, c] = clients as [Client, Client, Client];
    const thread = await a.threads.create();
    const run = await a.runs.create(thread.thread_id, "ticker", { input: { every: 20, count: 2000 }, streamResumable: true, streamMode: ["custom", "values"] });
    const seen: Array<{ event: string; data: unknown }> = [];
    const joined = (async () => {
      for await (const part of b.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["custom", "values"] } as never)) seen.push(part);
    })();
    await until(async () => seen.filter((p) => p.event === "custom").length >= 5, 15_000, "ticks through the join on b");
    expect(await b.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "running" });
    const t0 = Date.now();
    await c.runs.cancel(thread.thread_id, run.run_id);
    await until(async () => (await b.runs.get(thread.thread_id, run.run_id)).status === "interrupted", 5_000, "the run interrupted");
    const cancelMs = Date.now() - t0;
    await joined;
    expect(cancelMs).toBeLessThan(3000);
    const ticks = seen.filter((p) => p.event === "custom").map((p) => (p.data as { tick: number }).tick);
    // Joined without Last-Event-ID: from the join on, every tick once, in order.
    expect(ticks).toEqual(ticks.map((_, i) => ticks[0]! + i));
    expect(await a.threads.get(thread.thread_id)).toMatchObject({ status: "idle" });
    console.log(`multi-process: cancel from the third process took ${cancelMs} ms; the join on the second saw ${ticks.length} ticks`);
  });

  it("a non-resumable run streams live to a reader on another process, which ends with the run", async () => {
    const [a, b] = clients as [Client, Client, Client];
    const thread = await a.threads.create();
    const run = await a.runs.create(thread.thread_id, "ticker", { input: { every: 20, count: 60 }, streamMode: ["custom"] });
    const ticks: number[] = [];
    for await (const part of b.runs.joinStream(thread.thread_id, run.run_id)) {
      if (part.event === "custom") ticks.push((part.data as { tick: number }).tick);
    }
    expect(ticks.length).toBeGreaterThan(10);
    expect(ticks).toEqual(ticks.map((_, i) => ticks[0]! + i));
    expect(ticks.at(-1)).toBe(59);
    expect(await b.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "success" });
  });

  it("120 enqueued runs on 12 threads, created round-robin, all succeed in order, never two at once on a thread", async () => {
    const threads = await Promise.all(Array.from({ length: 12 }, (_, i) => clients[i % 3]!.threads.create()));
    const runs: Array<{ thread: string; run: string; n: number }> = [];
    const t0 = Date.now();
    // Per thread in creation order; threads in parallel; run i through process i % 3.
    await Promise.all(
      threads.map(async (t, k) => {
        for (let j = 0; j < 10; j++) {
          const n = j * 12 + k;
          const run = await clients[n % 3]!.runs.create(t.thread_id, "ordered", { input: { n, sleep: 5 }, multitaskStrategy: "enqueue" });
          runs.push({ thread: t.thread_id, run: run.run_id, n });
        }
      }),
    );
    for (const r of runs) {
      const client = clients[r.n % 3]!;
      await until(async () => ["success", "error", "interrupted"].includes((await client.runs.get(r.thread, r.run)).status), 60_000, `run ${r.n}`);
    }
    const ms = Date.now() - t0;
    const statuses = await Promise.all(runs.map((r) => clients[(r.n + 1) % 3]!.runs.get(r.thread, r.run).then((x) => x.status)));
    expect(statuses.filter((s) => s !== "success")).toEqual([]);
    const pids = new Set<number>();
    for (const [k, t] of threads.entries()) {
      const state = await clients[k % 3]!.threads.getState(t.thread_id);
      const v = state.values as Values;
      expect(v.order).toEqual(Array.from({ length: 10 }, (_, j) => j * 12 + k));
      for (let i = 1; i < v.spans.length; i++) expect(v.spans[i]![0]).toBeGreaterThanOrEqual(v.spans[i - 1]![1]!);
      for (const s of v.spans) pids.add(s[2]!);
    }
    console.log(`multi-process: 120 runs on 12 threads in ${ms} ms, executed by ${pids.size} processes`);
    expect(pids.size).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("a process SIGKILLed mid-run: another resumes its run as attempt 2 once its lease expires (D60), and the thread takes new runs", async () => {
    const [a, b] = clients as [Client, Client, Client];
    const thread = await a.threads.create();
    const run = await a.runs.create(thread.thread_id, "ticker", { input: { every: 20, count: 100 }, streamResumable: true, streamMode: ["custom"] });
    // Wait until the run executes, then kill whichever process executes it.
    const pid = await until(async () => {
      for await (const part of b.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" } as never)) {
        if (part.event === "custom") return (part.data as { pid: number }).pid;
      }
      return undefined;
    }, 15_000, "the run to tick");
    const victim = servers.findIndex((s) => s.child.pid === pid);
    expect(victim).toBeGreaterThanOrEqual(0);
    const t0 = Date.now();
    await servers[victim]!.kill();
    const alive = clients.filter((_, i) => i !== victim);
    await until(async () => (await alive[0]!.runs.get(thread.thread_id, run.run_id)).status === "success", LEASE_MS * 10, "the run to be resumed and succeed");
    const endedMs = Date.now() - t0;
    expect(await alive[0]!.runs.get(thread.thread_id, run.run_id)).toMatchObject({ attempt: 2 });
    // Its node ran again from its start, on a surviving process.
    const ticks: Array<{ tick: number; pid: number }> = [];
    for await (const part of alive[1]!.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" } as never)) {
      if (part.event === "custom") ticks.push(part.data as { tick: number; pid: number });
    }
    const resumedBy = ticks.at(-1)!.pid;
    expect(resumedBy).not.toBe(pid);
    expect(ticks.filter((t) => t.pid === resumedBy).map((t) => t.tick)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(await alive[1]!.threads.get(thread.thread_id)).toMatchObject({ status: "idle" });
    const out = (await alive[1]!.runs.wait(thread.thread_id, "ordered", { input: { n: 1 } })) as Values;
    expect(out.order).toEqual([1]);
    console.log(`multi-process: the killed process's run was resumed and ended ${endedMs} ms after SIGKILL (lease ${LEASE_MS} ms, a 2 s node)`);
  }, 60_000);
});
