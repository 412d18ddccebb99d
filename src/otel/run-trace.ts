/**
 * Runs as OpenTelemetry spans, after the GenAI semantic conventions of OpenTelemetry semantic
 * conventions v1.41.0 (the last release holding them; their status is Development), through
 * `@opentelemetry/api` only: a no-op until the application registers a tracer provider (or passes
 * one), and the spans go wherever its SDK exports them.
 *
 * - A run is an `invoke_agent {assistant name}` span (kind INTERNAL: the agent runs in this
 *   process) with `gen_ai.operation.name`, `gen_ai.agent.name` / `.id` / `.description`,
 *   `gen_ai.conversation.id` (the thread) and graphdock's `graphdock.run.id`, `graphdock.graph.id`,
 *   `graphdock.run.status`. Its parent is the trace context stored with the run: the span current
 *   where the run was created, else the request's `traceparent` (D90).
 * - A node execution is a child span named after the node (`graphdock.node.name`, `.step`,
 *   `graphdock.task.id`, `graphdock.checkpoint.ns`); a subgraph's nodes nest under the node that
 *   runs it.
 * - A tool call is `execute_tool {tool}` (`gen_ai.tool.name`, `gen_ai.tool.call.id`,
 *   `gen_ai.tool.type` "function"); a chat-model call is `chat {model}` (kind CLIENT;
 *   `gen_ai.request.model`, `gen_ai.provider.name`, `gen_ai.response.model`,
 *   `gen_ai.usage.input_tokens` / `output_tokens`, `gen_ai.response.finish_reasons`).
 * - A failure sets status ERROR with `error.type` and the exception recorded; an `interrupt()`
 *   or a cancel is no error (`graphdock.interrupted` / `graphdock.cancelled`).
 *
 * When the run's span is not recording (no provider, or sampled out) nothing else is made.
 */
import {
  context as contextApi,
  createTraceState,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import type { ChatOutcome, ChatStart, NodeTrace, TraceOutcome, TraceScope } from "../graph/types.js";
import type { RunRecord, RunStatus } from "../types.js";
import { traceparentFields, type TraceCarrier } from "./w3c.js";

/** The `tracing` option of `createRuntime`. */
export interface TracingOptions {
  /**
   * The provider whose tracer records runs. Default: the global one (`trace.getTracerProvider()`),
   * i.e. whatever the application registered, at the time each run starts.
   */
  tracerProvider?: TracerProvider;
}

/** What a run span says about the agent beyond the run record. */
export interface AgentInfo {
  name?: string;
  description?: string | null;
}

/** A run being traced. */
export interface RunTrace {
  /** Where the engine reports the run's nodes, tools and model calls. */
  readonly scope: TraceScope;
  /** The run span's trace id. */
  readonly traceId: string;
  /** Names the agent on the span (the assistant's name and description, read once it started). */
  describe(agent: AgentInfo): void;
  /** Ends the run's span with the run's final status (and its error: an `Error`, or `{ error, message }`). */
  end(status: RunStatus, error?: unknown): void;
}

const TRACER_NAME = "graphdock";

/** Attributes of an error, as the conventions record it. */
function fail(span: Span, error: unknown): void {
  const err = error instanceof Error ? error : undefined;
  const type = err?.name ?? (typeof (error as { error?: unknown })?.error === "string" ? (error as { error: string }).error : "_OTHER");
  span.setAttribute("error.type", type);
  const message = err?.message ?? (error as { message?: unknown })?.message;
  span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof message === "string" ? { message } : {}) });
  if (err) span.recordException(err);
  else span.recordException({ name: type, ...(typeof message === "string" ? { message } : {}) });
}

/** Ends a span once (a late second end, after a cancel ended it, is ignored). */
function ender(span: Span): (outcome: TraceOutcome, attributes?: Attributes) => void {
  let ended = false;
  return (outcome, attributes) => {
    if (ended) return;
    ended = true;
    if (attributes) span.setAttributes(attributes);
    if (outcome.error !== undefined) fail(span, outcome.error);
    else if (outcome.interrupted) span.setAttribute("graphdock.interrupted", true);
    else if (outcome.cancelled) span.setAttribute("graphdock.cancelled", true);
    span.end();
  };
}

/** The scope of the run or of a node: what starts there is a child of `parent`. */
function scopeOf(tracer: Tracer, parent: Context): TraceScope {
  return {
    node(task) {
      const span = tracer.startSpan(
        task.name,
        {
          kind: SpanKind.INTERNAL,
          attributes: { "graphdock.node.name": task.name, "graphdock.node.step": task.step, "graphdock.task.id": task.id, "graphdock.checkpoint.ns": task.namespace },
        },
        parent,
      );
      return nodeTrace(tracer, trace.setSpan(parent, span), span);
    },
  };
}

function nodeTrace(tracer: Tracer, here: Context, span: Span): NodeTrace {
  const end = ender(span);
  return {
    ...scopeOf(tracer, here),
    tool(call) {
      const attributes: Attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.type": "function" };
      if (call.id) attributes["gen_ai.tool.call.id"] = call.id;
      if (call.description) attributes["gen_ai.tool.description"] = call.description;
      const end = ender(tracer.startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, attributes }, here));
      return { end: (outcome) => end(outcome) };
    },
    chat(model: ChatStart) {
      const attributes: Attributes = { "gen_ai.operation.name": "chat" };
      if (model.model) attributes["gen_ai.request.model"] = model.model;
      if (model.provider) attributes["gen_ai.provider.name"] = model.provider;
      if (model.temperature !== undefined) attributes["gen_ai.request.temperature"] = model.temperature;
      if (model.maxTokens !== undefined) attributes["gen_ai.request.max_tokens"] = model.maxTokens;
      const span = tracer.startSpan(model.model ? `chat ${model.model}` : "chat", { kind: SpanKind.CLIENT, attributes }, here);
      const end = ender(span);
      return {
        end(outcome: ChatOutcome) {
          const out: Attributes = {};
          if (outcome.model) out["gen_ai.response.model"] = outcome.model;
          if (outcome.responseId) out["gen_ai.response.id"] = outcome.responseId;
          if (outcome.finishReasons?.length) out["gen_ai.response.finish_reasons"] = outcome.finishReasons;
          if (outcome.inputTokens !== undefined) out["gen_ai.usage.input_tokens"] = outcome.inputTokens;
          if (outcome.outputTokens !== undefined) out["gen_ai.usage.output_tokens"] = outcome.outputTokens;
          end(outcome, out);
        },
      };
    },
    within: (fn) => contextApi.with(here, fn),
    end: (outcome) => end(outcome),
  };
}

/** The tracing of one runtime's runs. */
export class RunTracing {
  private readonly tracer: Tracer;

  constructor(options: TracingOptions = {}) {
    // The global provider is a proxy: a provider registered later is used from then on.
    this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  }

  /**
   * The span a request names (`traceparent` and `tracestate`, or whatever the global propagator
   * reads), in W3C form, or undefined.
   */
  fromHeaders(headers: Record<string, string>): TraceCarrier | undefined {
    const extracted = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers));
    if (extracted && trace.isSpanContextValid(extracted)) return toCarrier(extracted);
    const parsed = headers.traceparent === undefined ? undefined : parseTraceparent(headers.traceparent, headers.tracestate);
    return parsed ? toCarrier(parsed) : undefined;
  }

  /**
   * The trace context a new run continues, stored with it: the span current where it is created
   * (a node of another run, a request an HTTP instrumentation traces), else `requested` (the
   * caller's `traceparent`). Undefined when there is none.
   */
  parentOf(requested: TraceCarrier | undefined): TraceCarrier | undefined {
    const active = trace.getSpanContext(contextApi.active());
    return active && trace.isSpanContextValid(active) ? toCarrier(active) : requested;
  }

  /** Starts a run's span; undefined when it does not record (nothing else is traced then). */
  start(run: RunRecord, graphId: string): RunTrace | undefined {
    const parentContext = storedParent(run);
    const parent = parentContext ? trace.setSpanContext(ROOT_CONTEXT, parentContext) : ROOT_CONTEXT;
    const span = this.tracer.startSpan("invoke_agent", { kind: SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "invoke_agent" } }, parent);
    if (!span.isRecording()) return void span.end();
    span.setAttributes({
      "gen_ai.agent.id": run.assistant_id,
      "gen_ai.conversation.id": run.thread_id,
      "graphdock.run.id": run.run_id,
      "graphdock.graph.id": graphId,
    });
    const end = ender(span);
    return {
      scope: scopeOf(this.tracer, trace.setSpan(parent, span)),
      traceId: span.spanContext().traceId,
      describe(agent) {
        if (agent.name) {
          span.updateName(`invoke_agent ${agent.name}`);
          span.setAttribute("gen_ai.agent.name", agent.name);
        }
        if (agent.description) span.setAttribute("gen_ai.agent.description", agent.description);
      },
      end(status, error) {
        end(error ? { error } : { cancelled: status === "interrupted" }, { "graphdock.run.status": status });
      },
    };
  }
}

/** The parent span context stored with a run, if any. */
function storedParent(run: RunRecord): SpanContext | undefined {
  const stored = run.execution?.trace;
  return stored ? parseTraceparent(stored.traceparent, stored.tracestate) : undefined;
}

/** The span context a `traceparent` (and `tracestate`) names, or undefined when it names none. */
export function parseTraceparent(traceparent: string | null | undefined, tracestate?: string | null): SpanContext | undefined {
  const fields = traceparentFields(traceparent);
  if (!fields) return undefined;
  const context: SpanContext = { traceId: fields.traceId, spanId: fields.spanId, traceFlags: fields.sampled ? 1 : 0, isRemote: true };
  if (!isSpanContextValid(context)) return undefined;
  if (tracestate) context.traceState = createTraceState(tracestate);
  return context;
}

/** The W3C form of a valid span context. */
export function toCarrier(context: SpanContext): TraceCarrier {
  const carrier: TraceCarrier = { traceparent: `00-${context.traceId}-${context.spanId}-0${(context.traceFlags & 1).toString(16)}` };
  const state = context.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}
