/**
 * The logger graphs get from `getLogger()` (`createRuntime({ logger })`), over a server's logger,
 * so that what graphs log lands in the same lines as the server's own (D92).
 */
import type { DiagnosticsLogger } from "../diagnostics.js";
import type { SdkLogger } from "../runtime/sdk-logger.js";

/** winston's levels, which graphs call on `getLogger()`, as the four of a diagnostics logger. */
const SDK_LEVELS: Record<keyof SdkLogger, keyof DiagnosticsLogger> = {
  error: "error",
  warn: "warn",
  help: "info",
  data: "info",
  info: "info",
  debug: "debug",
  prompt: "info",
  http: "debug",
  verbose: "debug",
  input: "info",
  silly: "debug",
};

/**
 * The graphs' `getLogger()` over a server's logger: winston's `(message, ...meta)` as pino's
 * `(fields, message)`, in lines marked `"source": "graph"`.
 */
export function sdkLoggerOf(log: DiagnosticsLogger): SdkLogger {
  const out = {} as SdkLogger;
  for (const [name, level] of Object.entries(SDK_LEVELS) as Array<[keyof SdkLogger, keyof DiagnosticsLogger]>) {
    out[name] = (message, ...meta) => {
      const fields: Record<string, unknown> = { source: "graph" };
      const extra: unknown[] = [];
      for (const m of meta) {
        if (typeof m === "object" && m !== null && !Array.isArray(m)) Object.assign(fields, m instanceof Error ? { err: m } : m);
        else extra.push(m);
      }
      if (extra.length) fields.meta = extra;
      if (message instanceof Error) log[level]({ ...fields, err: message }, message.message);
      else if (typeof message === "object" && message !== null) log[level]({ ...fields, ...message }, "");
      else log[level](fields, String(message));
      return out;
    };
  }
  return out;
}
