/**
 * Crons on the real clock on PostgreSQL (D65): two `graphdock serve` processes on one schema, a
 * per-second cron created through one and deleted through the other after 10 s of real time.
 * Each tick fires once across the two (9-11 runs, one per tick), and nothing after the delete.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, inject, it } from "vitest";
import { AFTER_MS, checkTicks, WINDOW_MS } from "../runtime/crons.js";
import { sleep, startServer, type Server } from "./procs.js";

const store = `${inject("pgUrl")}?schema=crons_clock_${process.pid}`;
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

it("a per-second cron fires 9-11 times in 10 s of real time, once per tick across two processes, and not after it is deleted", async () => {
  servers.push(await startServer(store), await startServer(store));
  const [one, two] = servers.map((s) => new Client({ apiUrl: s.url, apiKey: null, callerOptions: { maxRetries: 0 } })) as [Client, Client];
  const thread = await one.threads.create();
  const cron = await one.crons.createForThread(thread.thread_id, "ordered", { schedule: "* * * * * *", input: { n: 1, sleep: 1 }, multitaskStrategy: "enqueue" });
  await sleep(WINDOW_MS);
  await two.crons.delete(cron.cron_id);
  const deletedAt = Date.now();
  await sleep(AFTER_MS);
  checkTicks("PostgreSQL, two processes", await two.runs.list(thread.thread_id, { limit: 100 }), deletedAt);
}, 60_000);
