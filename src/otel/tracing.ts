/**
 * The runtime's tracing, loaded when there is something to trace (D98): `@opentelemetry/api` and
 * the span code (./run-trace.ts) are imported the first time a run is created or started while a
 * tracer provider is registered with the OpenTelemetry API (or one was given as an option). Until
 * then a request's `traceparent` is still kept with the runs it creates (./w3c.ts), so a process
 * that traces continues the trace. A page or process that never registers a provider never loads
 * them.
 */
import type { RunTracing, TracingOptions } from "./run-trace.js";

/** Where the OpenTelemetry API (major version 1, any copy of it) registers its globals. */
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/** Whether a tracer provider is registered with the OpenTelemetry API. */
const providerRegistered = () => (globalThis as unknown as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL]?.trace !== undefined;

/** The runtime's tracing: nothing until there is a provider, then the tracer, loaded once. */
export class LazyTracing {
  private loaded: RunTracing | undefined;
  private loading: Promise<RunTracing> | undefined;

  constructor(private readonly options: TracingOptions = {}) {}

  /**
   * The tracer: at once when loaded, a promise of it the first time it is wanted, undefined while
   * nothing would record a span (no provider registered or given).
   */
  tracer(): RunTracing | Promise<RunTracing> | undefined {
    if (this.loaded) return this.loaded;
    if (this.options.tracerProvider === undefined && !providerRegistered()) return undefined;
    return (this.loading ??= import("./run-trace.js").then((m) => (this.loaded = new m.RunTracing(this.options))));
  }
}
