/**
 * The JSON schemas of a hosted LangGraph.js graph (`assistants.getSchemas` / `getSubgraphs`),
 * found as the agent server finds them (D42), first that answers:
 *
 * 1. `StateSchema` state (`new StateSchema({...})`): its own `getJsonSchema()`, which carries each
 *    value's `jsonSchemaExtra` (`MessagesValue` is marked `langgraph_type: "messages"`);
 * 2. zod state registered with `withLangGraph` (`@langchain/langgraph/zod`): LangGraph's
 *    `get*TypeSchema`, which carry the registry's `jsonSchemaExtra`;
 * 3. plain zod state: converted as it is (`@langchain/core`'s `toJsonSchema`);
 * 4. the graph's TypeScript types, when the graph was loaded from a source file and `typescript` is
 *    installed (src/node/type-schemas.ts): what `Annotation<...>` channels hold, and the config
 *    schema from the graph's configurable annotation;
 * 5. the state channels' names (no types).
 *
 * The config schema is also the context schema (a LangGraph.js graph's second annotation is both).
 * Modules 2 and 3 need are imported by a name bundlers do not follow, so a browser bundle skips
 * those steps instead of carrying zod's JSON Schema code.
 */
import type { GraphSchemas } from "../graph/types.js";
import { isPlainObject } from "../json.js";

/** A JSON Schema object. */
type JsonSchema = Record<string, unknown>;

/** The schemas of one graph as the agent server's extraction gives them (any may be unknown). */
export interface RawSchemas {
  state?: JsonSchema | undefined;
  input?: JsonSchema | undefined;
  output?: JsonSchema | undefined;
  config?: JsonSchema | undefined;
}

/** Schemas read from a graph's TypeScript types, by namespace ("" the graph, "node|inner" a subgraph). */
export type TypeSchemasSource = () => Promise<Record<string, RawSchemas> | undefined>;

/* eslint-disable @typescript-eslint/no-explicit-any -- LangGraph's builders and schema objects are read by shape */
type Any = any;

/** What the extraction reads of a compiled graph. */
interface GraphLike {
  readonly name?: string;
  readonly builder?: {
    channels?: Record<string, unknown>;
    _schemaRuntimeDefinition?: unknown;
    _inputRuntimeDefinition?: unknown;
    _outputRuntimeDefinition?: unknown;
    _configRuntimeSchema?: unknown;
  };
}

/** Where LangGraph marks an input that is its state, all keys optional. */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}

const isStateSchema = (v: unknown): v is StateSchemaLike =>
  typeof v === "object" && v !== null && typeof (v as StateSchemaLike).getJsonSchema === "function" && typeof (v as StateSchemaLike).getInputJsonSchema === "function";

const some = (s: RawSchemas): RawSchemas | undefined => (s.state || s.input || s.output || s.config ? s : undefined);

/** 1. `StateSchema`. */
function fromStateSchema(builder: NonNullable<GraphLike["builder"]>): RawSchemas | undefined {
  const { _schemaRuntimeDefinition: state, _inputRuntimeDefinition: input, _outputRuntimeDefinition: output } = builder;
  if (!isStateSchema(state) && !isStateSchema(input) && !isStateSchema(output)) return undefined;
  return some({
    state: isStateSchema(state) ? state.getJsonSchema() : undefined,
    input: isStateSchema(input) ? input.getInputJsonSchema() : input === PARTIAL_STATE && isStateSchema(state) ? state.getInputJsonSchema() : undefined,
    output: isStateSchema(output) ? output.getJsonSchema() : undefined,
  });
}

/** A module imported by a name bundlers do not follow; undefined when it cannot be loaded. */
async function optionalModule<T>(...path: string[]): Promise<T | undefined> {
  const specifier = path.join("/");
  try {
    return (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as T;
  } catch {
    return undefined;
  }
}

/** 2. zod state in LangGraph's registry. */
async function fromZodRegistry(graph: GraphLike): Promise<RawSchemas | undefined> {
  const zod = await optionalModule<Record<string, (g: unknown) => JsonSchema | undefined>>("@langchain", "langgraph", "zod", "schema");
  if (!zod) return undefined;
  // One at a time: a getter may throw where its part is missing (LangGraph 1.7's config getter
  // does for a graph without a config schema), which says nothing about the others.
  const get = (name: string): JsonSchema | undefined => {
    try {
      return zod[name]?.(graph);
    } catch {
      return undefined;
    }
  };
  return some({ state: get("getUpdateTypeSchema"), input: get("getInputTypeSchema"), output: get("getOutputTypeSchema"), config: get("getConfigTypeSchema") });
}

/** 3. plain zod state. */
async function fromZod(builder: NonNullable<GraphLike["builder"]>): Promise<RawSchemas | undefined> {
  const json = await optionalModule<{ toJsonSchema(schema: unknown): JsonSchema }>("@langchain", "core", "utils", "json_schema");
  const types = await optionalModule<{ isZodSchemaV3(v: unknown): boolean; isZodSchemaV4(v: unknown): boolean }>("@langchain", "core", "utils", "types");
  if (!json || !types) return undefined;
  const convert = (schema: unknown): JsonSchema | undefined => {
    if (!schema || !(types.isZodSchemaV4(schema) || types.isZodSchemaV3(schema))) return undefined;
    try {
      return json.toJsonSchema(schema);
    } catch {
      return undefined;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  return some({
    state,
    input: convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : undefined),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  });
}

/** 5. the state channels' names. */
function fromChannels(graph: GraphLike): RawSchemas {
  const keys = Object.keys(graph.builder?.channels ?? {}).filter((k) => !k.startsWith("__") && !k.includes(":"));
  const properties: Record<string, unknown> = {};
  for (const k of keys) properties[k] = k === "messages" ? { type: "array", items: { type: "object" } } : {};
  const state = { type: "object", title: graph.name ?? "State", properties };
  return { state, input: state, output: state };
}

/** Steps 1-3: what the graph object itself says. */
async function fromRuntime(graph: GraphLike): Promise<RawSchemas | undefined> {
  const builder = graph.builder;
  if (!builder) return undefined;
  return fromStateSchema(builder) ?? (await fromZodRegistry(graph)) ?? (await fromZod(builder));
}

const orNull = (s: JsonSchema | undefined): JsonSchema | null => (isPlainObject(s) ? s : null);

/** Raw schemas as `getSchemas` answers them. */
export function toGraphSchemas(s: RawSchemas): GraphSchemas {
  return {
    input_schema: orNull(s.input),
    output_schema: orNull(s.output),
    state_schema: orNull(s.state),
    config_schema: orNull(s.config),
    context_schema: orNull(s.config),
  };
}

/**
 * The schemas of `graph`, the graph at `namespace` of a hosted graph ("" for the graph itself);
 * `types` gives the hosted graph's TypeScript-read schemas (step 4) when it has them.
 */
export async function graphSchemas(graph: Any, namespace: string, types: TypeSchemasSource | undefined): Promise<GraphSchemas> {
  const runtime = await fromRuntime(graph as GraphLike);
  if (runtime) return toGraphSchemas(runtime);
  const typed = types ? (await types())?.[namespace] : undefined;
  const channels = fromChannels(graph as GraphLike);
  if (!typed) return toGraphSchemas(channels);
  // What the types did not say (a state typed `any`), the channels do.
  return toGraphSchemas({ state: typed.state ?? channels.state, input: typed.input ?? channels.input, output: typed.output ?? channels.output, config: typed.config });
}
