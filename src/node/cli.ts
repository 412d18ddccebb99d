/**
 * The `agentdock` command:
 *   agentdock serve --config graph.json [--store memory|json:<dir>|postgres://user@host:port/db] [--port 2024] [--host 127.0.0.1]
 */
import { parseArgs } from "node:util";
import { redact, serveConfig } from "./config.js";

const USAGE = "usage: agentdock serve --config graph.json [--store memory|json:<dir>|postgres://user@host:port/db] [--port 2024] [--host 127.0.0.1] [--heartbeat-ms 5000] [--lease-ms 30000] [--api-key KEY]\n  --api-key (or AGENTDOCK_API_KEY): x-api-key required by the experiment upload endpoints";

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
      "api-key": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || positionals[0] !== "serve" || !values.config) {
    console.log(USAGE);
    if (!values.help) process.exitCode = 2;
    return;
  }
  // Without --port: 2024, or the next free port when it is taken (a development server); with
  // --port: exactly that port or an error.
  const port = Number(values.port ?? 2024);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0..65535, got "${values.port}"`);
  const apiKey = values["api-key"] ?? process.env.AGENTDOCK_API_KEY;
  const server = await serveConfig({
    config: values.config,
    store: values.store,
    port,
    strictPort: values.port !== undefined,
    host: values.host,
    heartbeatMs: values["heartbeat-ms"] === undefined ? undefined : Number(values["heartbeat-ms"]),
    apiKey,
    ...(values["lease-ms"] !== undefined ? { leaseMs: Number(values["lease-ms"]) } : {}),
  });
  if (apiKey === undefined && !server.hasAuth) {
    console.log(
      "agentdock: warning: the experiment upload endpoints (/api/v1/...) are open to anyone who can reach this server; set --api-key (or AGENTDOCK_API_KEY) or name an auth handler in graph.json",
    );
  }
  const moved = server.port !== port && port !== 0 ? ` (port ${port} was in use)` : "";
  console.log(`agentdock: serving graphs ${server.graphIds.join(", ")} on ${server.url}${moved} (store: ${redact(values.store)})`);
  const stop = async () => {
    console.log("agentdock: shutting down");
    await server.close();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(`agentdock: ${err.message}`);
  process.exit(1);
});
