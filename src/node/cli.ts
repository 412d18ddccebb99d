/**
 * The `graphdock` command:
 *   graphdock serve --config graph.json [--store memory|json:<dir>|postgres://user@host:port/db] [--port 2024] [--host 127.0.0.1] [--verbose]
 * Built to dist/cli.js; it needs only the package's own dependencies (tsx is loaded only for
 * graph files written in TypeScript, when it is installed).
 */
import { parseArgs } from "node:util";
import { limitOptions, redact, serveConfig } from "./config.js";
import { readEnv } from "./env.js";

const USAGE = `usage: graphdock serve --config graph.json [options]
  --config, -c FILE     graph.json: { "graphs": { "<id>": "./file.js:export" }, "auth"?: { "path": "./auth.js:auth" } }
                        (also "env": "./.env", "http": { "app": "./app.js:app" }, and graph entries
                        { "path", "config", "context" }; LANGGRAPH_CONFIG sets default-assistant config)
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
  --verbose             print stack traces of errors
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
      help: { type: "boolean", short: "h" },
    },
  });
  verbose = values.verbose === true;
  if (values.help || positionals[0] !== "serve" || !values.config) {
    console.log(USAGE);
    if (!values.help) process.exitCode = 2;
    return;
  }
  // The same rule as serve(): a port named is that port or an error (0 picks a free one); without
  // --port, 2024 or the next free port after it.
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`--port must be an integer 0..65535, got "${values.port}"`);
  const apiKey = values["api-key"] ?? readEnv("API_KEY");
  const server = await serveConfig({
    config: values.config,
    store: values.store,
    ...(port !== undefined ? { port } : {}),
    host: values.host,
    heartbeatMs: values["heartbeat-ms"] === undefined ? undefined : Number(values["heartbeat-ms"]),
    apiKey,
    ...(values["lease-ms"] !== undefined ? { leaseMs: Number(values["lease-ms"]) } : {}),
    ...(values["max-attempts"] !== undefined ? { maxAttempts: Number(values["max-attempts"]) } : {}),
    ...limitOptions(values),
  });
  if (apiKey === undefined && !server.hasAuth) {
    console.log(
      "graphdock: warning: the experiment upload endpoints (/api/v1/...) are open to anyone who can reach this server; set --api-key (or GRAPHDOCK_API_KEY) or name an auth handler in graph.json",
    );
  }
  console.log(`graphdock: serving graphs ${server.graphIds.join(", ")} on ${server.url} (store: ${redact(values.store)})`);
  const stop = async () => {
    console.log("graphdock: shutting down");
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
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
