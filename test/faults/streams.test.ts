/**
 * The stream contract across attempts (D62) as the official SDK client sees it, through real
 * SIGKILLs: a stream stays open while its run is cut off and resumed; a second `metadata` event
 * with the next attempt marks the restart; event ids keep increasing; no `error` event for a
 * run that succeeded in the end.
 *
 * - JSON-file store: the process serving and executing the run is killed and started again on
 *   the same port; the SDK reconnects by itself (Location, Last-Event-ID) to the new process,
 *   which resumed the run at once (its log starts past every id the dead one gave out). The run
 *   is `streamResumable`: what is published while no client is connected is kept for it.
 * - PostgreSQL: the stream is read from one process while another executes the run; that one is
 *   killed, and the reading process resumes the run once its lease expires.
 */
import { Client } from "@langchain/langgraph-sdk";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { tempDir } from "../browser/harness.js";
import { startServer, type Server } from "../postgres/procs.js";
import { parseLedger, sleep, STEPS } from "./ledger.js";
import { readFileSync } from "node:fs";

const files = tempDir("faults-streams");
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  files.remove();
});

const serve = async (store: string, ledger: string, extra: string[] = []) => {
  const s = await startServer(store, extra, "test/faults/fixtures/graph.json", { GRAPHDOCK_FAULT_LEDGER: ledger, GRAPHDOCK_FAULT_STEP_MS: "300" });
  servers.push(s);
  return s;
};
const client = (url: string) => new Client({ apiUrl: url, apiKey: null });

/** Resolves once the ledger shows the run's `step` (index) started in `attempt`. */
async function reached(ledger: string, run: string, attempt: number, step: number): Promise<void> {
  for (;;) {
    const lines = parseLedger(readFileSync(ledger, { encoding: "utf8", flag: "a+" }));
    if (lines.some((l) => l.run === run && l.attempt === attempt && STEPS.indexOf(l.step as (typeof STEPS)[number]) >= step)) return;
    await sleep(20);
  }
}

type Part = { event: string; data: unknown; id?: string };

/** The contract across attempts, on what a client read. */
function expectContract(parts: Part[], runId: string, attempts: number[]): void {
  const ids = parts.map((p) => Number(p.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i], `ids keep increasing: ${ids.join(", ")}`).toBeGreaterThan(ids[i - 1]!);
  expect(parts[0]!.event).toBe("metadata");
  expect(parts.filter((p) => p.event === "metadata").map((p) => p.data)).toEqual(attempts.map((attempt) => expect.objectContaining({ run_id: runId, attempt })));
  expect(parts.some((p) => p.event === "error")).toBe(false);
  expect(parts.at(-1)).toMatchObject({ event: "values", data: { done: [...STEPS] } });
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

it("JSON-file store: the SDK's resumable stream of a run survives a SIGKILL of its server, reconnecting to the restarted one, which resumes the run", async () => {
  const ledger = join(files.path, "json-ledger.txt");
  const store = `json:${join(files.path, "json-store")}`;
  const port = String(await freePort());
  const first = await serve(store, ledger, ["--port", port]);
  const c = client(first.url);
  const thread = await c.threads.create();
  const parts: Part[] = [];
  let runId = "";
  const reading = (async () => {
    // Resumable: what the new process publishes before the client is back is kept for it.
    for await (const part of c.runs.stream(thread.thread_id, "ledger", { input: {}, streamMode: ["values"], streamResumable: true, onRunCreated: ({ run_id }) => void (runId = run_id) })) {
      parts.push(part as Part);
    }
  })();
  while (!runId) await sleep(20);
  await reached(ledger, runId, 1, 1);
  await first.kill();
  const second = await serve(store, ledger, ["--port", port]);
  expect(second.url).toBe(first.url);
  await reading;
  expectContract(parts, runId, [1, 2]);
  // The new process numbered the second attempt past anything the first gave out.
  const restart = parts.findIndex((p) => p.event === "metadata" && (p.data as { attempt: number }).attempt === 2);
  expect(Number(parts[restart]!.id)).toBeGreaterThanOrEqual(1_000_000_000);
  expect(await c.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", attempt: 2 });
}, 90_000);

it("PostgreSQL: a join read from one process stays open while the process executing the run is killed and the reader's resumes it", async () => {
  const ledger = join(files.path, "pg-ledger.txt");
  const store = `${inject("pgUrl")}?schema=faults_streams_${process.pid}`;
  const [executing, reading] = await Promise.all([serve(store, ledger, ["--lease-ms", "2000"]), serve(store, ledger, ["--lease-ms", "2000"])]);
  const thread = await client(executing.url).threads.create();
  const run = await client(executing.url).runs.create(thread.thread_id, "ledger", { input: {}, streamMode: ["values"] });
  const parts: Part[] = [];
  const joined = (async () => {
    for await (const part of client(reading.url).runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" })) parts.push(part as Part);
  })();
  await reached(ledger, run.run_id, 1, 1);
  await executing.kill();
  await joined;
  expectContract(parts, run.run_id, [1, 2]);
  expect(await client(reading.url).runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
}, 90_000);
