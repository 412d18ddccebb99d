/**
 * Tracing loads when a provider is registered (D98), not before: a runtime created while none is
 * registered keeps a request's `traceparent` with the runs it creates, and traces the runs that
 * start once the application registers a provider, under that `traceparent`. (Its own file: the
 * OpenTelemetry globals are per process.)
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, expect, it } from "vitest";
import { createRuntime, END, START, StateGraph } from "../../src/index.js";

afterAll(() => trace.disable());

it("a provider registered after createRuntime traces the runs that start from then on, under the traceparent stored before", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const graph = new StateGraph({ n: { default: () => 0 } })
    .addNode("wait", async (s) => (await gate, { n: s.n + 1 }))
    .addEdge(START, "wait")
    .addEdge("wait", END)
    .compile();
  const runtime = await createRuntime({ graphs: { graph } });
  try {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const client = await runtime.client({ headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    const thread = await client.threads.create();
    // Started with no provider: not traced. The second waits behind it, its traceparent stored.
    const first = await client.runs.create(thread.thread_id, "graph", { input: {} });
    const second = await client.runs.create(thread.thread_id, "graph", { input: {}, multitaskStrategy: "enqueue" });
    expect((await runtime.runs.get(thread.thread_id, second.run_id)).status).toBe("pending");

    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    release();
    await runtime.runs.join(thread.thread_id, first.run_id);
    await runtime.runs.join(thread.thread_id, second.run_id);

    const agents = exporter.getFinishedSpans().filter((s) => s.name === "invoke_agent graph");
    expect(agents.map((s) => s.attributes["graphdock.run.id"])).toEqual([second.run_id]);
    expect(agents[0]!.spanContext().traceId).toBe(traceId);
    expect(agents[0]!.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    const node = exporter.getFinishedSpans().find((s) => s.name === "wait")!;
    expect(node.parentSpanContext?.spanId).toBe(agents[0]!.spanContext().spanId);
  } finally {
    await runtime.close();
  }
});
