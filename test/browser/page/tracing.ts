/**
 * A tab tracing its runs (test/browser/tracing.test.ts): an OpenTelemetry provider registered in
 * the page (no context manager: a tab has no async context unless the application adds one), a
 * runtime on IndexedDB, a run whose node calls a tool and a run that fails. The finished spans
 * are published as `window.__spans`.
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { createRuntime, END, START, StateGraph } from "../../../src/index.js";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index.js";

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));

const lookup = new StateGraph({ answer: { default: () => "" } })
  .addNode("ask", async (_s, ctx) => {
    const result = await ctx.runTool({ name: "lookup", args: { q: "x" }, id: "call-1" }, () => "found");
    return { answer: String(result.content) };
  })
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();
const failing = new StateGraph({ answer: { default: () => "" } })
  .addNode("explode", () => {
    throw new Error("exploded in the tab");
  })
  .addEdge(START, "explode")
  .addEdge("explode", END)
  .compile();

async function main() {
  const runtime = await createRuntime({ graphs: { lookup, failing }, store: indexedDbStore(`tracing-${Date.now()}`) });
  const thread = await runtime.threads.create();
  await runtime.runs.wait(thread.thread_id, "lookup", { input: {} });
  await runtime.runs.wait(null, "failing", { input: {} }).catch(() => undefined);
  await runtime.close();
  (window as unknown as { __spans: unknown }).__spans = {
    thread: thread.thread_id,
    spans: exporter.getFinishedSpans().map((s) => ({
      name: s.name,
      traceId: s.spanContext().traceId,
      spanId: s.spanContext().spanId,
      parentSpanId: s.parentSpanContext?.spanId,
      status: s.status.code,
      attributes: s.attributes,
      events: s.events.map((e) => e.name),
    })),
  };
}
main().catch((err: unknown) => ((window as unknown as { __spans: unknown }).__spans = { error: String((err as Error)?.stack ?? err) }));
