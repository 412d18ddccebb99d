/**
 * graphdock's own diagnostics (a background sweep that failed, a listener that threw, a store
 * connection lost): written to the logger the application passes (`createRuntime({ diagnostics })`),
 * and nowhere without one (D92). The calling convention is pino's, `(fields, message)`, with an
 * error under `err`: a pino logger (or bunyan, or anything shaped so) is passed as it is.
 */

/** Fields of one diagnostic line (an error goes under `err`). */
export type LogFields = Record<string, unknown>;

/** A leveled logger in pino's calling convention. */
export interface DiagnosticsLogger {
  error(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  debug(fields: LogFields, message: string): void;
}

const LEVELS = ["error", "warn", "info", "debug"] as const;

/** Logs nothing: the default. */
export const SILENT: DiagnosticsLogger = { error() {}, warn() {}, info() {}, debug() {} };

/** True when `value` has the four level methods. */
export function isDiagnosticsLogger(value: unknown): value is DiagnosticsLogger {
  return typeof value === "object" && value !== null && LEVELS.every((l) => typeof (value as Record<string, unknown>)[l] === "function");
}

/** `log` (or {@link SILENT}), made so that a throwing logger never breaks what called it. */
export function guardedLogger(log: DiagnosticsLogger | undefined): DiagnosticsLogger {
  if (!log) return SILENT;
  const out = {} as DiagnosticsLogger;
  for (const level of LEVELS) {
    out[level] = (fields, message) => {
      try {
        log[level](fields, message);
      } catch {
        // a failing logger must not fail a run or a sweep
      }
    };
  }
  return out;
}
