/**
 * The command's logs (D92): pino, one JSON object per line on stdout, or pino-pretty's lines when
 * stdout is a terminal (`--log-format` chooses), at `--log-level` (default info). Credentials never
 * appear: request lines carry no headers, and pino's redaction blanks the headers that carry
 * credentials wherever else they could appear in a line's fields.
 */
import pino from "pino";
import pretty from "pino-pretty";
import type { DiagnosticsLogger } from "../diagnostics.js";
import { CREDENTIAL_HEADERS } from "../http/configurable-headers.js";

/** The levels `--log-level` accepts. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];


/** The command's logger: pino, so also the runtime's `diagnostics` and `serve`'s `log`. */
export type CliLogger = pino.Logger & DiagnosticsLogger;

export interface CliLoggerOptions {
  level?: LogLevel;
  /** `json`, `pretty`, or `auto` (pretty when the destination is a terminal; the default). */
  format?: "json" | "pretty" | "auto";
  /** Where lines go (default stdout). */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Paths pino blanks in every line, at the top level and one level down (`headers.cookie`). */
const REDACT = CREDENTIAL_HEADERS.flatMap((h) => [`["${h}"]`, `*["${h}"]`]);

/** Makes the command's logger. */
export function createCliLogger(options: CliLoggerOptions = {}): CliLogger {
  const destination = options.destination ?? process.stdout;
  const format = options.format ?? "auto";
  const prettyLines = format === "pretty" || (format === "auto" && destination.isTTY === true);
  const settings: pino.LoggerOptions = {
    level: options.level ?? "info",
    base: { pid: process.pid },
    redact: { paths: REDACT, censor: "[redacted]" },
    // Errors under `err` as { type, message, stack }, pino's standard form.
    serializers: { err: pino.stdSerializers.err },
  };
  if (prettyLines) {
    return pino(settings, pretty({ colorize: true, sync: true, destination: destination as never, ignore: "pid,hostname" })) as CliLogger;
  }
  return pino(settings, destination === process.stdout ? pino.destination({ dest: 1, sync: true }) : destination) as CliLogger;
}
