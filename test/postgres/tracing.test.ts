/**
 * A run's trace continues across processes (D90): a `graphdock serve` process on PostgreSQL, with
 * an OpenTelemetry SDK preloaded (`node --import`), takes a run whose request carried a
 * `traceparent`, and is SIGKILLed mid-run; another process resumes the run, and its spans (the
 * run's `invoke_agent` span and its node's) belong to the caller's trace, under the caller's span.
 */
import { Client } from "@langchain/langgraph-sdk";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { startServer, until, type Server } from "./procs.js";

const store = `${inject("pgUrl")}?schema=tracing_${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), "graphdock-spans-"));
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  pid: number;
}
const spansIn = (file: string): SpanLine[] => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as SpanLine) : []);

async function traced(name: string): Promise<{ server: Server; file: string }> {
  const file = join(dir, `${name}.jsonl`);
  const server = await startServer(store, ["--lease-ms", "1000"], undefined, { GRAPHDOCK_TEST_SPANS: file }, ["--import", "./test/postgres/fixtures/otel-preload.mjs"]);
  servers.push(server);
  return { server, file };
}

it("a run resumed by another process after a SIGKILL stays in the caller's trace, under the caller's span", async () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const callerSpan = "00f067aa0ba902b7";
  const first = await traced("first");
  const client = new Client({ apiUrl: first.server.url, apiKey: null, defaultHeaders: { traceparent: `00-${traceId}-${callerSpan}-01` }, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "ticker", { input: { every: 50, count: 40 } });
  await until(async () => (await client.runs.get(thread.thread_id, run.run_id)).status === "running", 10_000, "the run to start");
  await new Promise((r) => setTimeout(r, 300));
  await first.server.kill();
  expect(spansIn(first.file).filter((s) => s.name.startsWith("invoke_agent"))).toEqual([]); // killed before its span ended

  const second = await traced("second");
  const other = new Client({ apiUrl: second.server.url, apiKey: null });
  await until(async () => (await other.runs.get(thread.thread_id, run.run_id)).status === "success", 30_000, "the run to be resumed and end");
  await until(async () => spansIn(second.file).some((s) => s.name === "invoke_agent ticker"), 5_000, "the resumed run's span");

  const spans = spansIn(second.file);
  const agent = spans.find((s) => s.name === "invoke_agent ticker")!;
  expect(agent).toMatchObject({
    traceId,
    parentSpanId: callerSpan,
    pid: second.server.child.pid,
    attributes: { "gen_ai.operation.name": "invoke_agent", "graphdock.run.id": run.run_id, "gen_ai.conversation.id": thread.thread_id, "graphdock.run.status": "success" },
  });
  expect(spans.find((s) => s.name === "tick")).toMatchObject({ traceId, parentSpanId: agent.spanId });
});
