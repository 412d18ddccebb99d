/**
 * W3C Trace Context (`traceparent`, `tracestate`): how a run's parent span is named in a request
 * and stored with the run, so the process that executes it (maybe another one) continues the trace.
 */
import { createTraceState, isSpanContextValid, type SpanContext } from "@opentelemetry/api";

/** A span context in its W3C form, as a run stores it. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The span context a `traceparent` (and `tracestate`) names, or undefined when it names none. */
export function parseTraceparent(traceparent: string | null | undefined, tracestate?: string | null): SpanContext | undefined {
  const m = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent.trim()) : null;
  // Version ff is invalid; version 00 has exactly four fields (later versions may add more).
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  const context: SpanContext = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & 1, isRemote: true };
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
