/**
 * The logger the agent server registers for graphs: `getLogger()` from
 * `@langchain/langgraph-sdk/logging` reads it from a global (`Symbol.for("langgraph.api.sdk-logger")`)
 * and throws when nothing registered one. Graphs written for the platform call it, so a runtime
 * registers one: the `logger` option of `createRuntime` (it replaces what was there), else a
 * console logger when none is registered yet (a platform's or another runtime's is kept). The
 * global is one per realm, as on the platform.
 */

/** One leveled log method: a message with metadata, or an object. Returns the logger (chaining). */
export type LogMethod = (message: unknown, ...meta: unknown[]) => SdkLogger;

/** The leveled logger graphs get from `getLogger()` (the SDK's levels, winston's names). */
export interface SdkLogger {
  error: LogMethod;
  warn: LogMethod;
  help: LogMethod;
  data: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  prompt: LogMethod;
  http: LogMethod;
  verbose: LogMethod;
  input: LogMethod;
  silly: LogMethod;
}

const LEVELS = ["error", "warn", "help", "data", "info", "debug", "prompt", "http", "verbose", "input", "silly"] as const;
const GLOBAL_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** A logger writing to `console` (error and warn to their methods, the rest to debug/log). */
export function consoleLogger(): SdkLogger {
  const logger = {} as SdkLogger;
  for (const level of LEVELS) {
    const method = level === "error" || level === "warn" || level === "info" ? level : "debug";
    logger[level] = (message, ...meta) => {
      // Looked up per call, so a console patched later (by an app or a test) is used.
      console[method](`[${level}]`, message, ...meta);
      return logger;
    };
  }
  return logger;
}

/** Checks a `logger` option: every level a function. */
export function isSdkLogger(value: unknown): value is SdkLogger {
  return typeof value === "object" && value !== null && LEVELS.every((l) => typeof (value as Record<string, unknown>)[l] === "function");
}

/** Registers the graphs' logger (see the module comment). */
export function registerSdkLogger(logger: SdkLogger | undefined): void {
  const global = globalThis as { [GLOBAL_LOGGER]?: SdkLogger };
  if (logger) global[GLOBAL_LOGGER] = logger;
  else global[GLOBAL_LOGGER] ??= consoleLogger();
}
