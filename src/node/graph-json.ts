/**
 * The parts of graph.json beyond graph paths and auth, as langgraph.json deployments write them:
 *
 * - `env`: a path to a `.env` file (relative to graph.json) or an object of variables, applied to
 *   `process.env` before graphs are imported (a variable already set in the environment wins, as
 *   with dotenv).
 * - graph entries `{ "path": "./file.ts:export", "config"?: {...}, "context"?: ..., "description"? }`
 *   next to the plain `"./file.ts:export"` form: `config` and `context` become the defaults of the
 *   graph's default assistant, under those of `LANGGRAPH_CONFIG` (`{"<graph id>": {...config,
 *   "context": ...}}`, read after `env` is applied).
 * - `http.app`: `"./file.ts:export"` naming a fetch-style app for custom routes (a Hono app, or
 *   `(request) => Response`; src/http/custom-app.ts).
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { invalidInput } from "../errors.js";
import { isPlainObject } from "../json.js";
import { isFetchApp, type FetchApp } from "../http/custom-app.js";
import { assistantDefaultsFromEnv, mergeAssistantDefaults, type AssistantDefaults } from "../runtime/assistant-defaults.js";
import { loadExport } from "./load.js";

/** Parses `.env` text: `KEY=value` lines, optional `export `, quotes, `#` comments. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === "`") && value.endsWith(quote) && value.length >= 2) {
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\r/g, "\r").replace(/\\t/g, "\t").replace(/\\"/g, '"');
    } else {
      value = value.replace(/\s+#.*$/, "");
    }
    out[m[1]!] = value;
  }
  return out;
}

/** Applies graph.json `env` to `process.env` (variables already set win). */
export async function applyEnv(env: unknown, dir: string, file: string): Promise<void> {
  if (env === undefined || env === null) return;
  let vars: Record<string, unknown>;
  if (typeof env === "string") {
    const path = resolve(dir, env);
    try {
      vars = parseEnvFile(await readFile(path, "utf8"));
    } catch (err) {
      throw invalidInput(`graphdock: "${file}" names env file "${env}", which cannot be read: ${(err as Error).message}`, [{ path: "env", message: "unreadable file" }]);
    }
  } else if (isPlainObject(env)) {
    vars = env;
  } else {
    throw invalidInput(`graphdock: "env" in "${file}" must be a path to a .env file or an object of variables`, [{ path: "env", message: "expected a path or an object" }]);
  }
  for (const [name, value] of Object.entries(vars)) {
    if (process.env[name] === undefined && value !== undefined && value !== null) process.env[name] = String(value);
  }
}

/** A graph entry of graph.json: `"<file>:<export>"` or `{ path, config?, context?, description? }`. */
export type GraphEntrySpec = string | { path: string; config?: Record<string, unknown>; context?: unknown; description?: string };

/** The specifier of an entry; `invalid_input` naming the graph when it is neither form. */
export function entryPath(id: string, spec: unknown, file: string): string {
  if (typeof spec === "string") return spec;
  if (isPlainObject(spec) && typeof spec.path === "string") return spec.path;
  throw invalidInput(`graphdock: graph "${id}" in "${file}" must be a "<file>:<export>" string or { "path": "<file>:<export>", "config"?, "context"? }`, [
    { path: `graphs.${id}`, message: "expected a specifier" },
  ]);
}

/** Default-assistant defaults: graph.json entries, then `LANGGRAPH_CONFIG` over them. */
export function configuredDefaults(graphs: Record<string, unknown>): Record<string, AssistantDefaults> {
  const fromFile: Record<string, AssistantDefaults> = {};
  for (const [id, spec] of Object.entries(graphs)) {
    if (!isPlainObject(spec)) continue;
    if (spec.config !== undefined || spec.context !== undefined || typeof spec.description === "string") {
      fromFile[id] = {
        ...(spec.config !== undefined ? { config: spec.config as AssistantDefaults["config"] } : {}),
        ...(spec.context !== undefined ? { context: spec.context } : {}),
        ...(typeof spec.description === "string" ? { description: spec.description } : {}),
      };
    }
  }
  const fromEnv = assistantDefaultsFromEnv(process.env.LANGGRAPH_CONFIG);
  // LANGGRAPH_CONFIG may name graphs of another deployment sharing the environment: kept to ours.
  const ours = Object.fromEntries(Object.entries(fromEnv).filter(([id]) => id in graphs));
  return mergeAssistantDefaults(fromFile, ours);
}

/** Loads graph.json `http.app`, if any. */
export async function loadHttpApp(http: unknown, dir: string, file: string): Promise<FetchApp | undefined> {
  if (http === undefined || http === null) return undefined;
  if (!isPlainObject(http)) throw invalidInput(`graphdock: "http" in "${file}" must be an object: { "app": "./file.ts:export" }`, [{ path: "http", message: "expected an object" }]);
  if (http.app === undefined || http.app === null) return undefined;
  if (typeof http.app !== "string") throw invalidInput(`graphdock: "http.app" in "${file}" must be a "<file>:<export>" string`, [{ path: "http.app", message: "expected a specifier" }]);
  const app = await loadExport(http.app, dir);
  if (!isFetchApp(app)) {
    throw invalidInput(`graphdock: "http.app" in "${file}" (${http.app}) is not a fetch-style app: export a Hono app or a function (request) => Response`, [
      { path: "http.app", message: "not a fetch-style app" },
    ]);
  }
  return app;
}
