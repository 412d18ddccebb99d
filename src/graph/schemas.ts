/**
 * The zod schemas a graph may declare (`new StateGraph(spec, { input, output, config, context })`)
 * and what they are used for: `getSchemas()` reports them as JSON Schema (draft-07, zod's own
 * converter, as the agent server's `/assistants/{id}/schemas` does), and runs check their input
 * and context against them. zod's converter is imported on first use, so apps that never ask for
 * schemas do not bundle it.
 */
import type { $ZodType } from "zod/v4/core";
import { invalidInput } from "../errors.js";

/** Schemas of a graph's input, output, run config (`configurable`) and run context (zod v4). */
export interface GraphSchemaOptions<Ctx = unknown> {
  /** What runs may send as input (checked; keys it does not declare are kept). */
  input?: $ZodType;
  /** What the graph returns (reported only). */
  output?: $ZodType;
  /** The run config's `configurable` (reported only, as on the agent server). */
  config?: $ZodType;
  /** The run context (checked, after the assistant's context is merged under the run's). */
  context?: $ZodType<Ctx>;
}

/** JSON Schema of a declared zod schema: draft-07, unrepresentable parts as `{}`. */
export async function toJsonSchema(schema: $ZodType, io: "input" | "output"): Promise<Record<string, unknown>> {
  const { toJSONSchema } = await import("./json-schema.js");
  return toJSONSchema(schema, { target: "draft-07", unrepresentable: "any", io }) as Record<string, unknown>;
}

/** LangGraph's mark of a messages channel in a JSON Schema property. */
export const MESSAGES_MARK = { langgraph_type: "messages" } as const;

/** Adds the messages mark to the properties named in `keys` (an object schema's top level). */
export function markMessages(schema: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties || typeof properties !== "object") return schema;
  const marked = { ...properties };
  for (const key of keys) if (marked[key] && typeof marked[key] === "object") marked[key] = { ...marked[key], ...MESSAGES_MARK };
  return { ...schema, properties: marked };
}

/**
 * Checks `value` with a declared schema (its standard-schema `validate`); a failure is
 * `invalid_input` listing each problem under `what` (`input`, `context`).
 */
export async function checkWithSchema(schema: $ZodType, value: unknown, what: "input" | "context"): Promise<void> {
  const result = await schema["~standard"].validate(value);
  if (!result.issues) return;
  const problems = result.issues.map((issue) => ({
    path: [what, ...(issue.path ?? []).map((p) => String(typeof p === "object" && p !== null ? (p as { key: PropertyKey }).key : p))].join("."),
    message: issue.message,
  }));
  throw invalidInput(`The run's ${what} does not match the graph's ${what} schema: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`, problems);
}
