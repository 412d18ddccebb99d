/**
 * The logger the agent server registers for graphs: `getLogger()` from
 * `@langchain/langgraph-sdk/logging` reads it from a global (`Symbol.for("langgraph.api.sdk-logger")`)
 * and throws when nothing registered one. Graphs written for the platform call it, often when
 * their module is imported (`const logger = getLogger()` at the top), so it must be registered
 * before any graph module is imported: the graph.json loader does it first, and so does importing
 * `graphdock/langgraph` (an app that imports its graph modules itself imports that first).
 *
 * What graphdock registers is a forwarder: the object a graph got from `getLogger()` keeps
 * forwarding to the logger of the runtime created later (`createRuntime({ logger })`), else to a
 * console logger. A logger someone else registered (a platform's) is kept unless a runtime is
 * given its own. The global is one per realm, as on the platform.
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

/** Where graphdock's forwarder keeps its target (shared by every copy of graphdock in the realm). */
const TARGET = Symbol.for("graphdock.sdk-logger.target");

type Forwarder = SdkLogger & { [TARGET]: SdkLogger };

function forwarder(target: SdkLogger): Forwarder {
  const logger = { [TARGET]: target } as Forwarder;
  for (const level of LEVELS) {
    logger[level] = (message, ...meta) => {
      logger[TARGET][level](message, ...meta);
      return logger;
    };
  }
  return logger;
}

const isForwarder = (value: unknown): value is Forwarder => typeof value === "object" && value !== null && TARGET in value;

/** Registers the graphs' logger (see the module comment): `logger`, else a console logger unless one is registered. */
export function registerSdkLogger(logger?: SdkLogger): void {
  const global = globalThis as { [GLOBAL_LOGGER]?: SdkLogger };
  const current = global[GLOBAL_LOGGER];
  if (isForwarder(current)) {
    if (logger) current[TARGET] = logger;
  } else if (current === undefined || logger) {
    global[GLOBAL_LOGGER] = forwarder(logger ?? consoleLogger());
  }
}
