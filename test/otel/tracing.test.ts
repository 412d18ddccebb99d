/**
 * Runs traced with OpenTelemetry (D90): a provider registered globally with an in-memory exporter,
 * as an application registers its SDK, and nothing else configured. The span tree of a run of a
 * graphdock graph and of a hosted LangGraph.js `createAgent` agent with tools: names, GenAI
 * attributes, parent links, error spans; in process (under the caller's span) and through
 * `serve` with the official SDK client sending a `traceparent` header.
 */
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRuntime, END, START, StateGraph, messagesState, type CompiledGraph } from "../../src/index.js";
import { serve } from "../../src/node/index.js";
import { weatherAgent } from "./fixtures/weather-agent.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const one = (name: string) => {
  const found = named(name);
  expect(found, `spans named "${name}" among ${spans().map((s) => s.name).join(", ")}`).toHaveLength(1);
  return found[0]!;
};
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const childrenOf = (s: ReadableSpan) => spans().filter((c) => parentOf(c) === idOf(s));

/** research: one node that looks something up; run as a subgraph of `planner`. */
const research = new StateGraph({ notes: { default: (): string[] => [] } })
  .addNode("lookup", (state) => ({ notes: [...state.notes, "found"] }))
  .addEdge(START, "lookup")
  .addEdge("lookup", END)
  .compile();

/** planner: `plan` streams a model's message (with usage) and runs a tool; `dig` runs `research`. */
function planner(): CompiledGraph {
  return new StateGraph({ ...messagesState, notes: { default: (): string[] => [] } })
    .addNode("plan", async (_state, ctx) => {
      const id = `plan-${ctx.step}`;
      ctx.emitMessage({ id, type: "AIMessageChunk", content: "Let me ", response_metadata: { model_name: "planner-1" } });
      ctx.emitMessage({ id, type: "AIMessageChunk", content: "check.", usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 }, response_metadata: { finish_reason: "tool_calls" } });
      const answer = await ctx.runTool({ name: "search", args: { q: "otel" }, id: "call-1" }, async (args) => `results for ${String(args.q)}`);
      return { messages: [{ type: "ai", id, content: "Let me check." }, answer] };
    })
    .addNode("dig", async (_state, ctx) => ({ notes: (await ctx.invoke<{ notes: string[] }>(research, {})).notes }), { subgraphs: [research] })
    .addEdge(START, "plan")
    .addEdge("plan", "dig")
    .addEdge("dig", END)
    .compile();
}

class QuotaError extends Error {
  override name = "QuotaError";
}
const failing = new StateGraph({ n: { default: () => 0 } })
  .addNode("charge", () => {
    throw new QuotaError("out of credits");
  })
  .addEdge(START, "charge")
  .addEdge("charge", END)
  .compile();

describe("tracing a graphdock graph in process", () => {
  it("a run is an invoke_agent span under the caller's span, its nodes, tool call, model call and subgraph below it", async () => {
    const runtime = await createRuntime({ graphs: { planner: planner() } });
    try {
      const assistant = await runtime.assistants.create({ graphId: "planner", name: "Trip planner", description: "Plans trips." });
      const thread = await runtime.threads.create();
      // The caller's own span is current: the run continues its trace.
      const caller = await trace.getTracer("app").startActiveSpan("handle request", async (span) => {
        try {
          const run = await runtime.runs.create(thread.thread_id, assistant.assistant_id, { input: { messages: [{ role: "user", content: "plan" }] } });
          await runtime.runs.join(thread.thread_id, run.run_id);
          return { span, run };
        } finally {
          span.end();
        }
      });
      const agent = one("invoke_agent Trip planner");
      expect(agent.kind).toBe(SpanKind.INTERNAL);
      expect(agent.spanContext().traceId).toBe(caller.span.spanContext().traceId);
      expect(parentOf(agent)).toBe(caller.span.spanContext().spanId);
      expect(agent.attributes).toEqual({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": assistant.assistant_id,
        "gen_ai.agent.name": "Trip planner",
        "gen_ai.agent.description": "Plans trips.",
        "gen_ai.conversation.id": thread.thread_id,
        "graphdock.run.id": caller.run.run_id,
        "graphdock.graph.id": "planner",
        "graphdock.run.status": "success",
      });
      expect(agent.status.code).toBe(SpanStatusCode.UNSET);
      expect(childrenOf(agent).map((s) => s.name)).toEqual(["plan", "dig"]);

      const plan = one("plan");
      expect(plan.attributes).toMatchObject({ "graphdock.node.name": "plan", "graphdock.node.step": 1, "graphdock.checkpoint.ns": "" });
      expect(typeof plan.attributes["graphdock.task.id"]).toBe("string");
      expect(childrenOf(plan).map((s) => s.name).sort()).toEqual(["chat planner-1", "execute_tool search"]);
      const chat = one("chat planner-1");
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toEqual({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "planner-1",
        "gen_ai.response.model": "planner-1",
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
      });
      expect(one("execute_tool search").attributes).toEqual({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call-1",
      });
      // The subgraph's node nests under the node that ran it, in the subgraph's namespace.
      const dig = one("dig");
      const lookup = one("lookup");
      expect(parentOf(lookup)).toBe(idOf(dig));
      expect(lookup.attributes["graphdock.checkpoint.ns"]).toMatch(/^dig:[0-9a-f-]+$/);
      // Every span of the run is in the caller's trace and ended within the run's span.
      for (const s of spans()) expect(s.spanContext().traceId).toBe(caller.span.spanContext().traceId);
    } finally {
      await runtime.close();
    }
  });

  it("a failing node is an ERROR span with the exception, and so is its run", async () => {
    const runtime = await createRuntime({ graphs: { failing } });
    try {
      const thread = await runtime.threads.create();
      const run = await runtime.runs.create(thread.thread_id, "failing", { input: {} });
      await runtime.runs.join(thread.thread_id, run.run_id);
      const agent = one("invoke_agent failing");
      const node = one("charge");
      expect(parentOf(node)).toBe(idOf(agent));
      for (const s of [agent, node]) {
        expect(s.status).toEqual({ code: SpanStatusCode.ERROR, message: "out of credits" });
        expect(s.attributes["error.type"]).toBe("QuotaError");
        const exception = s.events.find((e) => e.name === "exception")!;
        expect(exception.attributes).toMatchObject({ "exception.type": "QuotaError", "exception.message": "out of credits" });
        expect(String(exception.attributes!["exception.stacktrace"])).toContain("QuotaError: out of credits");
      }
      expect(agent.attributes["graphdock.run.status"]).toBe("error");
      // Without a caller's span or traceparent, the run starts a trace of its own.
      expect(agent.parentSpanContext).toBeUndefined();
    } finally {
      await runtime.close();
    }
  });

  it("an interrupt is no error; a cancelled run says so; `tracing: false` records nothing", async () => {
    const gate = new StateGraph({ ok: { default: (): unknown => null } })
      .addNode("ask", (_s, ctx) => ({ ok: ctx.interrupt("approve?") }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile();
    const runtime = await createRuntime({ graphs: { gate } });
    try {
      const thread = await runtime.threads.create();
      await runtime.runs.wait(thread.thread_id, "gate", { input: {} });
      const ask = one("ask");
      expect(ask.status.code).toBe(SpanStatusCode.UNSET);
      expect(ask.attributes["graphdock.interrupted"]).toBe(true);
      expect(one("invoke_agent gate").attributes["graphdock.run.status"]).toBe("success");
    } finally {
      await runtime.close();
    }
    exporter.reset();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const stuck = new StateGraph({ n: { default: () => 0 } })
      .addNode("wait", (_s, ctx) => {
        started();
        return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))));
      })
      .addEdge(START, "wait")
      .addEdge("wait", END)
      .compile();
    const cancelling = await createRuntime({ graphs: { stuck } });
    try {
      const thread = await cancelling.threads.create();
      const run = await cancelling.runs.create(thread.thread_id, "stuck", { input: {} });
      await running;
      await cancelling.runs.cancel(thread.thread_id, run.run_id, true);
      const agent = one("invoke_agent stuck");
      expect(agent.attributes).toMatchObject({ "graphdock.run.status": "interrupted", "graphdock.cancelled": true });
      expect(agent.status.code).toBe(SpanStatusCode.UNSET);
      expect(one("wait").attributes["graphdock.cancelled"]).toBe(true);
    } finally {
      await cancelling.close();
    }
    exporter.reset();
    const off = await createRuntime({ graphs: { planner: planner() }, tracing: false });
    try {
      const thread = await off.threads.create();
      await off.runs.wait(thread.thread_id, "planner", { input: { messages: [] } });
      expect(spans()).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

describe("tracing a hosted LangGraph.js agent through serve", () => {
  let runtime: Awaited<ReturnType<typeof createRuntime>>;
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    runtime = await createRuntime({ graphs: { weather: weatherAgent } });
    server = await serve(runtime, { port: 0 });
  });
  afterAll(async () => {
    await server.close();
    await runtime.close();
  });

  it("a traceparent header is the run span's parent; the agent's nodes, chat calls and tool calls are below it", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentSpanId = "00f067aa0ba902b7";
    const client = new Client({ apiUrl: server.url, defaultHeaders: { traceparent: `00-${traceId}-${parentSpanId}-01`, tracestate: "vendor=abc" } });
    const thread = await client.threads.create();
    const result = (await client.runs.wait(thread.thread_id, "weather", { input: { messages: [{ role: "user", content: "weather in Paris?" }] } })) as {
      messages: Array<{ type: string; content: string; status?: string }>;
    };
    expect(result.messages.at(-1)!.content).toBe("Sunny in Paris.");

    const agent = one("invoke_agent weather");
    expect(agent.spanContext().traceId).toBe(traceId);
    expect(parentOf(agent)).toBe(parentSpanId);
    expect(agent.parentSpanContext?.isRemote).toBe(true);
    expect(agent.spanContext().traceState?.get("vendor")).toBe("abc");
    expect(agent.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather", "gen_ai.conversation.id": thread.thread_id, "graphdock.graph.id": "weather" });

    // createAgent's loop: the model, a tools task per tool call (its Send), the model again.
    const nodes = childrenOf(agent).sort((a, b) => Number(a.attributes["graphdock.node.step"]) - Number(b.attributes["graphdock.node.step"]));
    expect(nodes.map((n) => `${n.name}@${String(n.attributes["graphdock.node.step"])}`)).toEqual(["model_request@1", "tools@2", "tools@2", "model_request@3"]);
    const [first, , , second] = nodes as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
    for (const [node, inputTokens] of [
      [first, 10],
      [second, 40],
    ] as const) {
      const chats = childrenOf(node);
      expect(chats.map((c) => c.name)).toEqual(["chat gpt-test"]);
      expect(chats[0]!.kind).toBe(SpanKind.CLIENT);
      expect(chats[0]!.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.request.temperature": 0,
        "gen_ai.response.model": "gpt-test-2026",
        "gen_ai.usage.input_tokens": inputTokens,
        "gen_ai.usage.output_tokens": 7,
      });
    }
    expect(childrenOf(first)[0]!.attributes["gen_ai.response.finish_reasons"]).toEqual(["tool_calls"]);

    // Each tool call under its own tools task.
    const calls = nodes.filter((n) => n.name === "tools").flatMap((t) => childrenOf(t).map((c) => [t, c] as const));
    expect(calls.map(([, c]) => c.name).sort()).toEqual(["execute_tool get_alerts", "execute_tool get_weather"]);
    const weather = calls.find(([, c]) => c.name === "execute_tool get_weather")![1];
    const [alertsTask, alerts] = calls.find(([, c]) => c.name === "execute_tool get_alerts")!;
    expect(weather.attributes).toEqual({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.type": "function", "gen_ai.tool.call.id": "call-weather" });
    expect(weather.status.code).toBe(SpanStatusCode.UNSET);
    // The failing tool: an error span (the agent answered with the error as the tool's result, so
    // its task and the run succeeded).
    expect(alerts.attributes).toMatchObject({ "gen_ai.tool.call.id": "call-alerts", "error.type": "Error" });
    expect(alerts.status).toEqual({ code: SpanStatusCode.ERROR, message: "the alerts service is down for Paris" });
    expect(alerts.events.map((e) => e.name)).toEqual(["exception"]);
    expect(alertsTask.status.code).toBe(SpanStatusCode.UNSET);
    expect(result.messages.find((m) => m.type === "tool" && m.status === "error")).toBeDefined();

    for (const s of spans()) expect(s.spanContext().traceId).toBe(traceId);
    expect(agent.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("without a traceparent the run starts its own trace", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "weather", { input: { messages: [{ role: "user", content: "weather?" }] } });
    const agent = one("invoke_agent weather");
    expect(agent.parentSpanContext).toBeUndefined();
    expect(childrenOf(agent)).toHaveLength(4);
  });
});
