/**
 * W3C Trace Context (`traceparent`, `tracestate`): how a run's parent span is named in a request
 * and stored with the run, so the process that executes it (maybe another one) continues the trace.
 * Free of `@opentelemetry/api`, so a runtime that traces nothing never loads it (D98).
 */

/** A span context in its W3C form, as a request names it and a run stores it. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const INVALID_TRACE = /^0+$/;

/** The fields of a valid `traceparent`, or undefined when it names no span. */
export function traceparentFields(traceparent: string | null | undefined): { traceId: string; spanId: string; sampled: boolean } | undefined {
  const m = typeof traceparent === "string" ? TRACEPARENT.exec(traceparent.trim()) : null;
  // Version ff is invalid; version 00 has exactly four fields (later versions may add more).
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  if (INVALID_TRACE.test(m[2]!) || INVALID_TRACE.test(m[3]!)) return undefined;
  return { traceId: m[2]!, spanId: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 };
}

/** A request's `traceparent` / `tracestate` as a carrier (in the version 00 form), or undefined. */
export function carrierOf(traceparent: string | null | undefined, tracestate?: string | null): TraceCarrier | undefined {
  const fields = traceparentFields(traceparent);
  if (!fields) return undefined;
  const carrier: TraceCarrier = { traceparent: `00-${fields.traceId}-${fields.spanId}-0${fields.sampled ? 1 : 0}` };
  if (tracestate) carrier.tracestate = tracestate;
  return carrier;
}

/** The trace a run belongs to (its stored parent's), for logs when the run itself is not traced. */
export const storedTraceId = (stored: TraceCarrier | undefined): string | undefined => traceparentFields(stored?.traceparent)?.traceId;
