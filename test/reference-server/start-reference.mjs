/**
 * Starts the reference server (`@langchain/langgraph-api`) as its CLI does (`langgraphjs dev`),
 * without the file watcher and the parent process it reports to (nor the CLI's module hook that
 * points graphs at the server's copy of @langchain/langgraph: this package installs one copy):
 *
 *   node --import tsx/esm start-reference.mjs <port> <langgraph.json>
 *
 * It prints `listening <url>` once it serves.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { startServer, StartServerSchema } from "@langchain/langgraph-api/server";

const [port, configPath] = process.argv.slice(-2);
const config = JSON.parse(readFileSync(configPath, "utf8"));
for (const [k, v] of Object.entries(config.env ?? {})) process.env[k] ??= v;
process.env.PORT = port;
const options = StartServerSchema.parse({
  port: Number(port),
  nWorkers: 10,
  host: "127.0.0.1",
  cwd: dirname(resolve(configPath)),
  graphs: config.graphs,
  ...(config.http ? { http: config.http } : {}),
});
const { host } = await startServer(options);
console.log(`listening http://${host}`);
