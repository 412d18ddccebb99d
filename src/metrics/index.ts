/**
 * Prometheus metrics of a server (D95): a prom-client registry of its own (never the global one,
 * so two servers in a process keep apart), fed by the runtime's lifecycle events and the HTTP
 * handler's `observe` hook, and served as `GET /metrics` by an endpoint beside the API.
 *
 * Families (prefix `graphdock_`): `runs_total{status}`, `run_duration_seconds{status}`,
 * `runs_queued`, `runs_running`, `http_requests_total{method,route,status}`,
 * `http_request_duration_seconds{method,route}`, `http_streams_active`,
 * `store_operation_duration_seconds{operation,outcome}` (of a store given to {@link timedStore}),
 * and prom-client's process metrics. Labels carry
 * route templates and statuses, never a user, thread, run or assistant id.
 */
import { performance } from "node:perf_hooks";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { HttpEndpoint } from "../http/endpoints.js";
import type { RequestEvent } from "../http/options.js";
import type { Runtime } from "../runtime/index.js";

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * A token `GET /metrics` requires as `Authorization: Bearer <token>` (401 otherwise). Without
   * it the endpoint is open: give one whenever the server has an auth handler.
   */
  token?: string;
  /** Prefix of every family name (default `graphdock_`). */
  prefix?: string;
  /** Whether to add prom-client's process metrics (CPU, memory, event loop lag; default true). */
  processMetrics?: boolean;
}

/** A server's metrics. */
export interface Metrics {
  /** The registry, for an application that serves it elsewhere (`await registry.metrics()`). */
  readonly registry: Registry;
  /** Records one request the API answered (the handler's `observe` option). */
  observe(event: RequestEvent): void;
  /** Counts a stream (server-sent events) as active; the function it returns ends it. */
  streamStarted(): () => void;
  /** Records one store operation's duration (see {@link timedStore}). */
  observeStore(operation: string, seconds: number, ok: boolean): void;
  /** `GET /metrics`, as an endpoint of the fetch handler. */
  readonly endpoint: HttpEndpoint;
  /** Stops listening to the runtime. */
  close(): void;
}

/** Run durations: 10 ms to 10 minutes. */
const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Request durations (a stream's: until its headers): 1 ms to 10 s. */
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Store operations: 0.1 ms to 5 s. */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** Collects `runtime`'s run metrics (from now on) and the requests given to `observe`. */
export function createMetrics(runtime: Pick<Runtime, "subscribe">, options: MetricsOptions = {}): Metrics {
  const prefix = options.prefix ?? "graphdock_";
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix });
  const registers = [registry];
  const runs = new Counter({ name: `${prefix}runs_total`, help: "Runs this process ended, by final status", labelNames: ["status"], registers });
  const durations = new Histogram({
    name: `${prefix}run_duration_seconds`,
    help: "Time from a run's start to its end in this process, by final status",
    labelNames: ["status"],
    buckets: RUN_BUCKETS,
    registers,
  });
  // Runs this process created that have not started; runs this process executes.
  const pending = new Set<string>();
  const running = new Map<string, number>();
  new Gauge({ name: `${prefix}runs_queued`, help: "Runs created by this process that have not started yet", registers, collect() { this.set(pending.size); } });
  new Gauge({ name: `${prefix}runs_running`, help: "Runs executing in this process", registers, collect() { this.set(running.size); } });
  const requests = new Counter({
    name: `${prefix}http_requests_total`,
    help: "HTTP requests answered, by route template and status",
    labelNames: ["method", "route", "status"],
    registers,
  });
  const latency = new Histogram({
    name: `${prefix}http_request_duration_seconds`,
    help: "Time to answer an HTTP request (a stream: until its headers), by route template",
    labelNames: ["method", "route"],
    buckets: HTTP_BUCKETS,
    registers,
  });

  let streams = 0;
  new Gauge({ name: `${prefix}http_streams_active`, help: "Streams (server-sent events) being sent", registers, collect() { this.set(streams); } });
  const storeLatency = new Histogram({
    name: `${prefix}store_operation_duration_seconds`,
    help: "Time of the store's operations, by operation and outcome",
    labelNames: ["operation", "outcome"],
    buckets: STORE_BUCKETS,
    registers,
  });

  const offs = [
    runtime.subscribe("run.created", ({ run }) => void pending.add(run.run_id)),
    runtime.subscribe("run.started", ({ run }) => {
      pending.delete(run.run_id);
      running.set(run.run_id, performance.now());
    }),
    runtime.subscribe("run.finished", ({ run }) => {
      pending.delete(run.run_id);
      const since = running.get(run.run_id);
      running.delete(run.run_id);
      runs.inc({ status: run.status });
      if (since !== undefined) durations.observe({ status: run.status }, (performance.now() - since) / 1000);
    }),
  ];

  const token = options.token;
  const endpoint: HttpEndpoint = {
    name: "metrics",
    paths: ["/metrics"],
    async fetch(request) {
      if (request.method !== "GET" && request.method !== "HEAD") return new Response(null, { status: 405, headers: { allow: "GET, HEAD" } });
      if (token !== undefined && request.headers.get("authorization") !== `Bearer ${token}`) {
        return Response.json({ detail: "GET /metrics needs its token: Authorization: Bearer <token>" }, { status: 401, headers: { "www-authenticate": 'Bearer realm="metrics"' } });
      }
      return new Response(request.method === "HEAD" ? null : await registry.metrics(), { headers: { "content-type": registry.contentType } });
    },
    openapi: {
      "/metrics": {
        get: {
          tags: ["Meta"],
          summary: "Prometheus metrics",
          description: "The server's metrics in the Prometheus text format (run counts and durations, HTTP requests by route template).",
          responses: { "200": { description: "Metrics", content: { "text/plain": { schema: { type: "string" } } } }, "401": { description: "The metrics token is missing or wrong" } },
        },
      },
    },
  };

  return {
    registry,
    observe({ request, response, route, start }) {
      const method = request.method;
      const template = route ?? "unmatched";
      requests.inc({ method, route: template, status: String(response.status) });
      latency.observe({ method, route: template }, (performance.now() - start) / 1000);
    },
    streamStarted() {
      streams++;
      let ended = false;
      return () => {
        if (!ended) streams--;
        ended = true;
      };
    },
    observeStore(operation, seconds, ok) {
      storeLatency.observe({ operation, outcome: ok ? "ok" : "error" }, seconds);
    },
    endpoint,
    close() {
      for (const off of offs) off();
    },
  };
}
