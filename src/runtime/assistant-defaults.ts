/**
 * Per-graph defaults of the default (system) assistants (D5): the `config` and `context`
 * a graph's default assistant is created with. They come from `createRuntime({ assistantDefaults })`
 * and, for servers started from graph.json, from the file's graph entries and the `LANGGRAPH_CONFIG`
 * environment variable of langgraph.json deployments (`{"<graph id>": {...config, "context": ...}}`).
 */
import { invalidInput } from "../errors.js";
import { isPlainObject } from "../json.js";
import type { Config } from "../types.js";
import type { ResolvedEntry } from "./graph-source.js";
import { parse, schemas } from "./schemas.js";

/** The config and context a graph's default assistant is created with. */
export interface AssistantDefaults {
  /** The assistant's `config` (`configurable`, `tags`, `recursion_limit`, ...). */
  config?: Config;
  /** The assistant's `context` (merged under each run's context). */
  context?: unknown;
  /** The assistant's description (langgraph.json's graph `description`). */
  description?: string;
}

/** Checks `createRuntime`'s `assistantDefaults`: registered graph ids, a config object each. */
export function checkAssistantDefaults(
  defaults: Record<string, AssistantDefaults> | undefined,
  graphs: ReadonlyMap<string, ResolvedEntry>,
): Map<string, { config: Config; context: unknown; description?: string }> {
  const out = new Map<string, { config: Config; context: unknown; description?: string }>();
  if (defaults === undefined) return out;
  if (!isPlainObject(defaults)) throw invalidInput("graphdock: createRuntime: assistantDefaults must be an object: graph id -> { config?, context? }.");
  for (const [graphId, value] of Object.entries(defaults)) {
    if (!graphs.has(graphId)) {
      throw invalidInput(`graphdock: createRuntime: assistantDefaults names graph "${graphId}", which is not in graphs (${[...graphs.keys()].join(", ")}).`);
    }
    const p = parse(schemas.assistantDefaults, value ?? {}, `createRuntime assistantDefaults.${graphId}`);
    out.set(graphId, { config: p.config ?? {}, context: p.context ?? {}, ...(p.description !== undefined ? { description: p.description } : {}) });
  }
  return out;
}

/**
 * Reads the `LANGGRAPH_CONFIG` convention: JSON `{"<graph id>": {...config, "context": ...}}`,
 * each value a config whose `context` key is the context. Empty or absent text is no defaults;
 * anything else that is not such an object is `invalid_input` naming the variable.
 */
export function assistantDefaultsFromEnv(text: string | undefined, name = "LANGGRAPH_CONFIG"): Record<string, AssistantDefaults> {
  if (text === undefined || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw invalidInput(`graphdock: ${name} is not JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw invalidInput(`graphdock: ${name} must be a JSON object: graph id -> {...config, "context": ...}.`);
  const out: Record<string, AssistantDefaults> = {};
  for (const [graphId, value] of Object.entries(parsed)) {
    if (!isPlainObject(value)) throw invalidInput(`graphdock: ${name}.${graphId} must be an object ({...config, "context": ...}).`);
    const { context, ...config } = value;
    out[graphId] = { config: config as Config, ...(context !== undefined ? { context } : {}) };
  }
  return out;
}

/**
 * Layers defaults: later sources win key by key; `configurable` is merged key-wise, an object
 * `context` is merged over an object one (otherwise the later one replaces it).
 */
export function mergeAssistantDefaults(...sources: Array<Record<string, AssistantDefaults> | undefined>): Record<string, AssistantDefaults> {
  const out: Record<string, AssistantDefaults> = {};
  for (const source of sources) {
    for (const [graphId, d] of Object.entries(source ?? {})) {
      const prev = out[graphId] ?? {};
      const config =
        d.config === undefined
          ? prev.config
          : { ...prev.config, ...d.config, ...(prev.config?.configurable || d.config.configurable ? { configurable: { ...prev.config?.configurable, ...d.config.configurable } } : {}) };
      const context =
        d.context === undefined ? prev.context : isPlainObject(prev.context) && isPlainObject(d.context) ? { ...prev.context, ...d.context } : d.context;
      const description = d.description ?? prev.description;
      out[graphId] = { ...(config !== undefined ? { config } : {}), ...(context !== undefined ? { context } : {}), ...(description !== undefined ? { description } : {}) };
    }
  }
  return out;
}
