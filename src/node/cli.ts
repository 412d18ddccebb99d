/**
 * The `graphdock` command:
 *   graphdock serve [--config langgraph.json] [--store memory|json:<dir>|postgres://user@host:port/db] [--port 2024] [--host 127.0.0.1] [--log-level info] [--verbose]
 *   graphdock --version
 * Built to dist/cli.js; it needs only the package's own dependencies (tsx is loaded only for
 * graph files written in TypeScript, when it is installed).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { limitOptions, redact, serveConfig } from "./config.js";
import { readEnv } from "./env.js";
import { createCliLogger, LOG_LEVELS, type LogLevel } from "./logging.js";
import { superviseWatch } from "./watch.js";

const USAGE = `usage: graphdock serve [--config langgraph.json] [options]
       graphdock --version
  --config, -c FILE     langgraph.json / graph.json (default: ./langgraph.json, else ./graph.json):
                        { "graphs": { "<id>": "./file.js:export" }, "auth"?: { "path": "./auth.js:auth" } }
                        (also "env", "http", "store", "checkpointer": a key graphdock does not
                        honour is named in a warning at startup; LANGGRAPH_CONFIG sets
                        default-assistant config)
  --store SPEC          memory (default), json:<directory>, or postgres://user:pass@host:port/db[?schema=name]
                        (graphdock/postgres; needs the pg package)
  --lease-ms N          run lease: a run of a process that died is resumed elsewhere after this (default 30000)
  --max-attempts N      attempts of a run cut off by a process dying before it ends error (default 3)
  --port, -p N          port; a port in use is an error, as with serve() (0 picks a free one);
                        without it: 2024, or the next free port after it
  --host HOST           interface (default 127.0.0.1)
  --heartbeat-ms N      SSE heartbeat interval (default 5000; 0 disables)
  --api-key KEY         x-api-key required by the experiment upload endpoints (or GRAPHDOCK_API_KEY)
  --max-body-bytes N    larger request bodies are refused with 413 (default 16777216)
  --max-depth N         JSON nested deeper is refused with 422 (default 128)
  --sse-buffer-bytes N  a stream client that leaves this much unread is disconnected; it can
                        resume with Last-Event-ID (default 4194304)
  --log-level LEVEL     fatal, error, warn, info (default), debug (a line per request), trace, silent
  --log-format FORMAT   json (one object per line), pretty, or auto (default: pretty on a terminal)
  --metrics-token TOKEN GET /metrics requires Authorization: Bearer TOKEN (or GRAPHDOCK_METRICS_TOKEN);
                        without a token /metrics is open, or off when an auth handler is configured
  --watch               restart the server when a file under the config's directory changes
  --verbose             print stack traces of errors
  --version, -v         print the version
TypeScript graph files load when tsx is installed (npm install --save-dev tsx).`;

let verbose = false;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      store: { type: "string", default: "memory" },
      port: { type: "string", short: "p" },
      host: { type: "string", default: "127.0.0.1" },
      "heartbeat-ms": { type: "string" },
      "lease-ms": { type: "string" },
      "max-attempts": { type: "string" },
      "api-key": { type: "string" },
      verbose: { type: "boolean" },
      "max-body-bytes": { type: "string" },
      "max-depth": { type: "string" },
      "sse-buffer-bytes": { type: "string" },
      "log-level": { type: "string" },
      "log-format": { type: "string" },
      "metrics-token": { type: "string" },
      version: { type: "boolean", short: "v" },
      watch: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  verbose = values.verbose === true;
  if (values.version) {
    console.log(version());
    return;
  }
  const config = values.config ?? ["langgraph.json", "graph.json"].find((name) => existsSync(name));
  if (values.help || positionals[0] !== "serve" || !config) {
    console.log(USAGE);
    if (!values.help) process.exitCode = 2;
    if (!values.help && positionals[0] === "serve") console.error("graphdock: no --config given and neither ./langgraph.json nor ./graph.json exists");
    return;
  }
  const level = values["log-level"] ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${level}"`);
  const format = values["log-format"] ?? "auto";
  if (format !== "json" && format !== "pretty" && format !== "auto") throw new Error(`--log-format must be json, pretty or auto, got "${format}"`);
  const log = createCliLogger({ level: level as LogLevel, format });
  if (values.watch) {
    const store = values.store ?? "memory";
    superviseWatch({
      dir: dirname(resolve(config)),
      args: argv.filter((a) => a !== "--watch").concat(values.config === undefined ? ["--config", config] : []),
      ignore: store.startsWith("json:") ? [store.slice(5)] : [],
      log,
    });
    return;
  }
  // The same rule as serve(): a port named is that port or an error (0 picks a free one); without
  // --port, 2024 or the next free port after it.
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`--port must be an integer 0..65535, got "${values.port}"`);
  const apiKey = values["api-key"] ?? readEnv("API_KEY");
  const metricsToken = values["metrics-token"] ?? readEnv("METRICS_TOKEN");
  const server = await serveConfig({
    config,
    store: values.store,
    ...(port !== undefined ? { port } : {}),
    host: values.host,
    heartbeatMs: values["heartbeat-ms"] === undefined ? undefined : Number(values["heartbeat-ms"]),
    apiKey,
    log,
    ...(metricsToken !== undefined ? { metrics: { token: metricsToken } } : {}),
    ...(values["lease-ms"] !== undefined ? { leaseMs: Number(values["lease-ms"]) } : {}),
    ...(values["max-attempts"] !== undefined ? { maxAttempts: Number(values["max-attempts"]) } : {}),
    ...limitOptions(values),
  });
  if (apiKey === undefined && !server.hasAuth) {
    log.warn(
      {},
      "graphdock: warning: the experiment upload endpoints (/api/v1/...) are open to anyone who can reach this server; set --api-key (or GRAPHDOCK_API_KEY) or name an auth handler in graph.json",
    );
  }
  log.info({ version: version(), config, graphs: server.graphIds, url: server.url }, `graphdock: serving graphs ${server.graphIds.join(", ")} on ${server.url} (store: ${redact(values.store)})`);
  const stop = async (signal: string) => {
    log.info({ signal }, "graphdock: shutting down");
    await server.close();
    log.info({}, "graphdock: stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
}

/** The package's version, from the package.json above this file (src/node/ or dist/). */
function version(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "graphdock") return pkg.version ?? "unknown";
  }
  return "unknown";
}

/** The error's message (once prefixed), and with --verbose its stack and the stacks of its causes. */
function report(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  let text = `graphdock: ${message.replace(/^graphdock: /, "")}`;
  // serve() says which port is taken; the command's way to choose another is its flag.
  if (/\bis in use\b/.test(message)) text += " (--port)";
  if (!verbose) {
    if (err instanceof Error && err.cause !== undefined) text += "\n(run with --verbose for the stack trace)";
    return text;
  }
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; e = (e as Error).cause, depth++) {
    text += `\n${depth === 0 ? "" : "caused by: "}${e instanceof Error ? (e.stack ?? String(e)) : String(e)}`;
  }
  return text;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(report(err));
  process.exit(1);
});
