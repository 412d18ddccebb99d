/**
 * `GET /metrics` (src/metrics; D95) served by serve() and scraped as Prometheus would: the text is
 * parsed by a Prometheus text-format parser, the run counters move by exactly the runs made (by
 * status), the HTTP counters are labelled by route template, no label carries an id, and a token
 * keeps the endpoint closed to anyone without it.
 */
import { Client } from "@langchain/langgraph-sdk";
import parse, { type Family } from "parse-prometheus-text-format";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime, END, START, StateGraph, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle, type ServeOptions } from "../../src/node/index.js";

const ok = new StateGraph({ n: { default: () => 0 } })
  .addNode("inc", (s) => ({ n: s.n + 1 }))
  .addEdge(START, "inc")
  .addEdge("inc", END)
  .compile();
const failing = new StateGraph({ n: { default: () => 0 } })
  .addNode("boom", () => {
    throw new Error("boom");
  })
  .addEdge(START, "boom")
  .addEdge("boom", END)
  .compile();

const open: Array<ServeHandle | Runtime> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function start(metrics: ServeOptions["metrics"]) {
  const runtime = await createRuntime({ graphs: { ok, failing } });
  const server = await serve(runtime, { port: 0, metrics, studio: false, docs: false });
  open.push(runtime, server);
  return { runtime, server, client: new Client({ apiUrl: server.url, apiKey: null }) };
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Family[]> {
  const res = await fetch(`${url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

const family = (families: Family[], name: string) => families.find((f) => f.name === name);
/** The value of a counter or gauge sample with these labels (0 when absent). */
function value(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const sample = family(families, name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value ?? sample.count) : 0;
}
/** A sample's value read from the text itself: `name{labels} value` with exactly these labels. */
function sampleOf(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(",");
  for (const line of text.split("\n")) {
    const m = /^([a-z_:]+)\{(.*)\} (\S+)$/.exec(line);
    if (m && m[1] === name && m[2]!.split(",").sort().join(",") === want) return Number(m[3]);
  }
  return 0;
}
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe("GET /metrics", () => {
  it("counts runs by status and durations exactly, requests by route template, with no id in any label", async () => {
    const { server, client } = await start(true);
    const before = await scrape(server.url);
    const thread = await client.threads.create();
    for (let i = 0; i < 3; i++) await client.runs.wait(thread.thread_id, "ok", { input: {} });
    const failedThread = await client.threads.create();
    await client.runs.wait(failedThread.thread_id, "failing", { input: {} }).catch(() => undefined);
    await client.runs.wait(null, "failing", { input: {} }).catch(() => undefined);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const after = parse(text);

    expect(family(after, "graphdock_runs_total")?.type).toBe("COUNTER");
    expect(value(after, "graphdock_runs_total", { status: "success" }) - value(before, "graphdock_runs_total", { status: "success" })).toBe(3);
    expect(value(after, "graphdock_runs_total", { status: "error" }) - value(before, "graphdock_runs_total", { status: "error" })).toBe(2);
    expect(family(after, "graphdock_run_duration_seconds")?.type).toBe("HISTOGRAM");
    // (The parser keeps a histogram's buckets only: its `_count` samples are read from the text.)
    expect(sampleOf(text, "graphdock_run_duration_seconds_count", { status: "success" })).toBe(3);
    expect(sampleOf(text, "graphdock_run_duration_seconds_count", { status: "error" })).toBe(2);
    expect(value(after, "graphdock_runs_running")).toBe(0);
    expect(value(after, "graphdock_runs_queued")).toBe(0);

    // The three waits on one thread, by their route's template, not their path.
    expect(value(after, "graphdock_http_requests_total", { method: "POST", route: "/threads/:thread_id/runs/wait", status: "200" })).toBe(4);
    expect(value(after, "graphdock_http_requests_total", { method: "POST", route: "/threads", status: "200" })).toBe(2);
    expect(value(after, "graphdock_http_requests_total", { method: "GET", route: "/metrics", status: "200" })).toBe(1);
    expect(sampleOf(text, "graphdock_http_request_duration_seconds_count", { method: "POST", route: "/threads/:thread_id/runs/wait" })).toBe(4);
    expect(family(after, "graphdock_http_request_duration_seconds")?.type).toBe("HISTOGRAM");
    // Process metrics come from the server's own registry.
    expect(family(after, "graphdock_process_cpu_seconds_total")).toBeDefined();

    for (const f of after) for (const m of f.metrics) for (const v of Object.values(m.labels ?? {})) expect(v).not.toMatch(UUID);
  });

  it("counts a run that is executing, one that waits behind it, and a stream being sent", async () => {
    // Runs wait at the gate until it opens; `shut()` makes a new one.
    let release!: () => void;
    let gate!: Promise<void>;
    const shut = () => void (gate = new Promise<void>((r) => (release = r)));
    shut();
    const slow = new StateGraph({ n: { default: () => 0 } })
      .addNode("wait", async (s) => (await gate, { n: s.n + 1 }))
      .addEdge(START, "wait")
      .addEdge("wait", END)
      .compile();
    const runtime = await createRuntime({ graphs: { slow } });
    const server = await serve(runtime, { port: 0, metrics: true, studio: false, docs: false });
    open.push(runtime, server);
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "slow", { input: {} });
    await client.runs.create(thread.thread_id, "slow", { input: {}, multitaskStrategy: "enqueue" });
    await expect.poll(async () => value(await scrape(server.url), "graphdock_runs_running")).toBe(1);
    expect(value(await scrape(server.url), "graphdock_runs_queued")).toBe(1);
    release();
    await client.runs.join(thread.thread_id, first.run_id);
    await expect.poll(async () => value(await scrape(server.url), "graphdock_runs_total", { status: "success" })).toBe(2);
    const done = await scrape(server.url);
    expect([value(done, "graphdock_runs_running"), value(done, "graphdock_runs_queued")]).toEqual([0, 0]);

    // A stream being sent counts until it ends.
    shut();
    const streaming = client.runs.stream(null, "slow", { input: {}, streamMode: "values" })[Symbol.asyncIterator]();
    expect((await streaming.next()).value?.event).toBe("metadata");
    await expect.poll(async () => value(await scrape(server.url), "graphdock_http_streams_active")).toBe(1);
    release();
    while (!(await streaming.next()).done) {
      // drained
    }
    await expect.poll(async () => value(await scrape(server.url), "graphdock_http_streams_active")).toBe(0);
  });

  it("with a token, answers 401 without it and the metrics with it; two servers keep their counts apart", async () => {
    const guarded = await start({ token: "s3cret" });
    const other = await start(true);
    const refused = await fetch(`${guarded.server.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await refused.text()).not.toContain("graphdock_runs_total");
    expect((await fetch(`${guarded.server.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);

    await guarded.client.runs.wait(null, "ok", { input: {} });
    const metrics = await scrape(guarded.server.url, { authorization: "Bearer s3cret" });
    expect(value(metrics, "graphdock_runs_total", { status: "success" })).toBe(1);
    expect(value(await scrape(other.server.url), "graphdock_runs_total", { status: "success" })).toBe(0);
  });

  it("is not served unless asked for", async () => {
    const { server } = await start(undefined);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });
});
