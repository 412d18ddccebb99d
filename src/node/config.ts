/**
 * Starting a server from graph.json (D17), shared by the `graphdock serve` command and by
 * programs that want the same behaviour: load the graphs and the auth handler the file names,
 * open the chosen store, create the runtime and serve it.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { GraphdockError, invalidInput } from "../errors.js";
import type { RunnableConfig } from "../graph/types.js";
import type { TypeSchemasSource } from "../langgraph/schemas.js";
import { isSupportedLangGraph, unsupportedLangGraph } from "../langgraph/version.js";
import { isLangGraphGraph, langGraphHost, langGraphOf, type HostedGraph } from "../runtime/graph-port.js";
import type { Store } from "../persistence/types.js";
import { jsonFileStore } from "../persistence/json-file/index.js";
import { memoryStore } from "../persistence/memory.js";
import { timedStore } from "../metrics/timed-store.js";
import { createRuntime, type Runtime } from "../runtime/index.js";
import { registerSdkLogger } from "../runtime/sdk-logger.js";
import { loadAuth } from "./auth-loader.js";
import { loadExport, parseSpecifier } from "./load.js";
import type { GraphSource, GraphTypeSchemas } from "./type-schemas.js";
import { readTypeSchemasInWorker } from "./type-schemas-thread.js";
import { applyEnv, configuredDefaults, entryPath, loadHttpApp, type GraphEntrySpec } from "./graph-json.js";
import type { AssistantDefaults, GraphEntry } from "../runtime/index.js";
import { serve, type ServeHandle, type ServeOptions } from "./serve.js";
import { sdkLoggerOf } from "./graph-logger.js";
import { checkKeys } from "./config-keys.js";
import { configOptions } from "./config-options.js";

/**
 * graph.json: graph id -> `"<file>:<export>"` (or `{ path, config?, context? }`), the optional
 * auth handler, `env` and `http.app` (src/node/graph-json.ts).
 */
export interface GraphConfig {
  graphs: Record<string, GraphEntrySpec>;
  auth?: { path: string } | null;
  /** A `.env` file path (relative to graph.json) or an object of variables. */
  env?: string | Record<string, string>;
  /** `app`: `"<file>:<export>"` of a fetch-style app for custom routes. */
  http?: { app?: string };
  [key: string]: unknown;
}

export interface ServeConfigOptions extends ServeOptions {
  /** Path of graph.json; graph and auth paths resolve against its directory. */
  config: string;
  /**
   * `memory` (default), `json:<dir>` (the JSON-file store in that directory, relative to cwd), or
   * `postgres://user@host:port/db` (`graphdock/postgres`; needs the `pg` package).
   */
  store?: string;
  /** The runtime's run lease in ms (`createRuntime`'s `leaseMs`). */
  leaseMs?: number;
  /** Attempts of a run cut off before it ends (`createRuntime`'s `maxAttempts`). */
  maxAttempts?: number;
}

/** A server started from graph.json, with the runtime behind it. */
export interface ConfigServer extends ServeHandle {
  runtime: Runtime;
  graphIds: string[];
  /** Whether graph.json named an auth handler. */
  hasAuth: boolean;
  /**
   * What the config file asks that graphdock does not do, each naming its key (unknown keys
   * included); also logged to `log` at warn.
   */
  warnings: string[];
}

/** Parses `--store`: `memory`, `json:<dir>` or a `postgres://` / `postgresql://` URL. */
export async function openStore(spec: string | undefined): Promise<Store | undefined> {
  if (spec === undefined || spec === "memory") return undefined;
  if (spec.startsWith("json:") && spec.length > 5) return jsonFileStore(resolve(spec.slice(5)));
  if (/^postgres(ql)?:\/\//.test(spec)) {
    // Loaded only when asked for: `pg` is an optional peer dependency.
    let mod: typeof import("../postgres/index.js");
    try {
      mod = await import("../postgres/index.js");
    } catch (err) {
      throw invalidInput(`graphdock: --store ${redact(spec)} needs the \`pg\` package (npm install pg): ${(err as Error).message}`);
    }
    return mod.postgresStore({ connectionString: spec });
  }
  throw invalidInput(`graphdock: unknown store "${redact(spec)}": use "memory", "json:<directory>" or "postgres://user@host:port/db"`, [
    { path: "store", message: "memory | json:<dir> | postgres://..." },
  ]);
}

/** The store spec without a password, for messages. */
export function redact(spec: string): string {
  return spec.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/, "$1:***@");
}

/** The command-line flags of the D25 limits, and the handler options they set. */
export const LIMIT_FLAGS = {
  "max-body-bytes": "maxBodyBytes",
  "max-depth": "maxDepth",
  "sse-buffer-bytes": "sseBufferBytes",
} as const;

/**
 * Turns the limit flags (`--max-body-bytes 16777216`, `--max-depth 128`, `--sse-buffer-bytes
 * 4194304`; absent = the default) into handler options; anything but a positive integer is an
 * error naming the flag.
 */
export function limitOptions(flags: Partial<Record<keyof typeof LIMIT_FLAGS, string | undefined>>): Pick<ServeOptions, (typeof LIMIT_FLAGS)[keyof typeof LIMIT_FLAGS]> {
  const out: Partial<Record<(typeof LIMIT_FLAGS)[keyof typeof LIMIT_FLAGS], number>> = {};
  for (const [flag, option] of Object.entries(LIMIT_FLAGS) as Array<[keyof typeof LIMIT_FLAGS, (typeof LIMIT_FLAGS)[keyof typeof LIMIT_FLAGS]]>) {
    const raw = flags[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n <= 0) {
      throw invalidInput(`graphdock: --${flag} must be a positive integer, got "${raw}"`, [{ path: flag, message: "expected a positive integer" }]);
    }
    out[option] = n;
  }
  return out;
}

/** What {@link loadGraphs} loaded. */
export interface LoadedGraphs {
  config: GraphConfig;
  /** By graph id; LangGraph.js graphs come wrapped for hosting (`fromLangGraph`) with their TypeScript-read schemas. */
  graphs: Record<string, GraphEntry>;
  /** The default assistants' config/context (graph entries, LANGGRAPH_CONFIG). */
  assistantDefaults: Record<string, AssistantDefaults>;
  /**
   * Starts reading the graphs' schemas from their TypeScript types now (in a worker thread), so
   * the first schema request does not wait for it; otherwise that request starts it.
   */
  readTypeSchemas(): void;
}

/**
 * Reads graph.json, applies its `env`, and imports every graph it names (TypeScript files load
 * through tsx); a graph may be a compiled graph, a promise of one or a factory (graph-source.ts).
 * Before any graph module is imported, the SDK logger is registered, and the `@langchain/langgraph`
 * each graph file resolves is checked against the releases graphdock hosts (D41).
 */
export async function loadGraphs(configPath: string): Promise<LoadedGraphs> {
  const file = resolve(configPath);
  let config: GraphConfig;
  try {
    config = JSON.parse(await readFile(file, "utf8")) as GraphConfig;
  } catch (err) {
    throw invalidInput(`graphdock: cannot read graph config "${file}": ${(err as Error).message}`);
  }
  if (!config || typeof config.graphs !== "object" || config.graphs === null || Object.keys(config.graphs).length === 0) {
    throw invalidInput(`graphdock: "${file}" must name at least one graph: { "graphs": { "<graph_id>": "./file.ts:export" } }`, [
      { path: "graphs", message: "expected a non-empty object" },
    ]);
  }
  // Before the graphs are imported: their modules may read the environment, and call the SDK's
  // getLogger() as they load.
  await applyEnv(config.env, dirname(file), file);
  registerSdkLogger();
  const sources: GraphSource[] = [];
  for (const [id, spec] of Object.entries(config.graphs)) {
    const { path, exportName } = parseSpecifier(entryPath(id, spec, file));
    sources.push({ id, file: resolve(dirname(file), path), exportName });
  }
  let typeSchemas: Promise<GraphTypeSchemas> | undefined;
  const readTypes = () => (typeSchemas ??= readTypeSchemasInWorker(sources));
  const graphs: Record<string, GraphEntry> = {};
  for (const source of sources) {
    let loaded: GraphEntry;
    try {
      loaded = await loadExport<GraphEntry>(entryPath(source.id, config.graphs[source.id], file), dirname(file));
    } catch (err) {
      // A release graphdock does not host may fail in its own way while the module loads.
      checkLangGraphAt(source.file, err);
      throw err;
    }
    graphs[source.id] = hosted(source, loaded, async () => (await readTypes()).get(source.id));
  }
  return { config, graphs, assistantDefaults: configuredDefaults(config.graphs), readTypeSchemas: () => void readTypes() };
}

/** Refuses a graph file that resolves an `@langchain/langgraph` graphdock does not host (D41). */
function checkLangGraphAt(file: string, cause?: unknown): void {
  let manifest: string;
  try {
    manifest = createRequire(file).resolve("@langchain/langgraph/package.json");
  } catch {
    return; // not resolvable from there: the adapter checks the release it runs with
  }
  const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown }).version;
  if (typeof version === "string" && !isSupportedLangGraph(version)) {
    throw new GraphdockError("invalid_input", unsupportedLangGraph(version, dirname(file)), cause === undefined ? undefined : { cause });
  }
}

/**
 * The entry, its LangGraph.js graph checked (D41) and wrapped for hosting with the schemas read
 * from the graph's types: a graph as is, a promise's once settled, a factory's at each call.
 */
function hosted(source: GraphSource, entry: GraphEntry, typeSchemas: TypeSchemasSource): GraphEntry {
  const wrap = async (value: unknown) => {
    if (!isLangGraphGraph(value)) return value;
    checkLangGraphAt(source.file);
    return (await langGraphHost(source.id)).fromLangGraph(langGraphOf(value), { typeSchemas });
  };
  if (isLangGraphGraph(entry)) return wrap(entry) as PromiseLike<HostedGraph>;
  if (typeof entry === "function") return ((config: RunnableConfig) => Promise.resolve(entry(config)).then(wrap)) as GraphEntry;
  if (typeof (entry as PromiseLike<unknown>)?.then === "function") return Promise.resolve(entry).then(wrap) as PromiseLike<HostedGraph>;
  return entry;
}

/** Loads graph.json, creates the runtime on the chosen store and serves it. */
export async function serveConfig(options: ServeConfigOptions): Promise<ConfigServer> {
  const { config: configPath, store: storeSpec, leaseMs, maxAttempts, ...serveOptions } = options;
  const { config, graphs, assistantDefaults, readTypeSchemas } = await loadGraphs(configPath);
  const dir = dirname(resolve(configPath));
  const file = resolve(configPath);
  const { log } = serveOptions;
  // Every key named, before anything starts (D93).
  const keys = checkKeys(config);
  if (keys.refused.length > 0) {
    throw invalidInput(`graphdock: "${file}" asks for what graphdock does not do: ${keys.refused.join("; ")}`, keys.refused.map((r) => ({ path: r.slice(1, r.indexOf('"', 1)), message: "not supported" })));
  }
  for (const warning of keys.warnings) log?.warn({ config: file }, `graphdock: ${warning}`);
  if (keys.build.length > 0) log?.info({ config: file, keys: keys.build }, `graphdock: keys for \`langgraph build\`'s image, not used here: ${keys.build.join(", ")}`);
  const settings = await configOptions(config, dir, file);
  const auth = await loadAuth(config, dir);
  const app = serveOptions.app ?? (await loadHttpApp(config.http, dir, file));
  // With custom routes, a run's webhook may loop back into this server (a path such as
  // "/custom/webhook", resolved to its URL), as on the agent server; nothing else is allowed.
  let self: URL | undefined;
  const loopback = new Set(["127.0.0.1", "localhost", "[::1]", ...(serveOptions.host ? [serveOptions.host] : [])]);
  const webhooks = settings.disableWebhooks
    ? { allow: () => true, fetch: async () => new Response(null, { status: 204 }) }
    : app
      ? { allow: (url: URL) => self !== undefined && url.port === self.port && loopback.has(url.hostname) }
      : undefined;
  // GET /metrics: open without an auth handler; with one, only behind its own token (D95).
  if (serveOptions.metrics === undefined) {
    if (auth === undefined) serveOptions.metrics = true;
    else log?.warn({}, "graphdock: GET /metrics is off: the server has an auth handler, so the metrics need their own token (--metrics-token)");
  } else if (serveOptions.metrics === true && auth !== undefined) {
    throw invalidInput("graphdock: GET /metrics would be open to anyone while the server has an auth handler: give it a token (--metrics-token)", [{ path: "metrics", message: "needs a token" }]);
  }
  // With metrics, the store's operations are timed into them once the server has them.
  let handle: ServeHandle | undefined;
  const opened = await openStore(storeSpec);
  const store = serveOptions.metrics ? timedStore(opened ?? memoryStore(), () => handle?.metrics?.observeStore) : opened;
  const runtime = await createRuntime({
    graphs,
    assistantDefaults,
    store,
    auth,
    ...settings.runtime,
    // The server's logger gets graphdock's diagnostics and what graphs log (D92).
    ...(log ? { diagnostics: log, logger: sdkLoggerOf(log) } : {}),
    ...(leaseMs !== undefined ? { leaseMs } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    ...(webhooks ? { webhooks } : {}),
  });
  try {
    // The command's options win over the file's.
    const served = await serve(runtime, { ...settings.serve, ...serveOptions, ...(app ? { app } : {}) });
    handle = served;
    self = new URL(served.url);
    // While the server answers, so the first schema request need not wait for TypeScript.
    readTypeSchemas();
    return {
      ...served,
      runtime,
      graphIds: Object.keys(graphs),
      hasAuth: auth !== undefined,
      warnings: keys.warnings,
      close: async () => {
        await served.close();
        await runtime.close();
      },
    };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
