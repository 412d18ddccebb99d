/**
 * The caller's assistants as MCP tools (D100): one tool per assistant the caller may see, named
 * after it (unique even when names are not), described by it or its graph, taking the graph's
 * input schema plus an optional `thread_id`; and a run's outcome as a tool result.
 */
import { lastAiText } from "../graph/messages.js";
import { isPlainObject } from "../json.js";
import type { HttpClient } from "../http/types.js";
import type { Assistant, GraphSchema, RunResult } from "../runtime/types.js";

/** The optional argument naming the thread a call runs on (created when it does not exist). */
export const THREAD_ARGUMENT = "thread_id";

/** One tool as `tools/list` shows it, with the assistant it calls. */
export interface AssistantTool {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  assistantId: string;
  /** False when the graph's own input has a `thread_id` key: the argument is then the graph's. */
  threadArgument: boolean;
}

const PAGE = 1000;

/** Every assistant the caller may see, oldest first (ties by id), so names are stable. */
async function visibleAssistants(client: HttpClient): Promise<Assistant[]> {
  const all: Assistant[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await client.assistants.search({ limit: PAGE, offset, sortBy: "created_at", sortOrder: "asc" });
    all.push(...page);
    if (page.length < PAGE) break;
  }
  return all.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.assistant_id.localeCompare(b.assistant_id));
}

/** A tool name as MCP allows it: 1-128 of `A-Z a-z 0-9 _ - .`. */
const sanitize = (name: string) => name.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 64) || "assistant";

/**
 * Tool names for `assistants`, in their order: an assistant's own name when no other assistant
 * has it, else the name with the end of its id (the random part of a v7 UUID), and the whole id
 * if that still collides.
 */
export function toolNames(assistants: readonly Assistant[]): string[] {
  const counts = new Map<string, number>();
  const bases = assistants.map((a) => sanitize(a.name || a.graph_id));
  for (const base of bases) counts.set(base, (counts.get(base) ?? 0) + 1);
  const taken = new Set<string>();
  return assistants.map((a, i) => {
    const base = bases[i]!;
    const id = a.assistant_id.replace(/[^A-Za-z0-9]/g, "");
    const candidates = counts.get(base) === 1 ? [base] : [];
    candidates.push(`${base}_${id.slice(-8)}`, `${base}_${id}`);
    const name = candidates.find((c) => !taken.has(c)) ?? `${base}_${id}_${i}`;
    taken.add(name);
    return name;
  });
}

/** The tool's input schema: the graph's input schema (an object), plus the thread argument. */
function inputSchemaOf(schemas: GraphSchema | undefined): Pick<AssistantTool, "inputSchema" | "threadArgument"> {
  const input = schemas?.input_schema;
  const base: AssistantTool["inputSchema"] = isPlainObject(input) && (input.type === undefined || input.type === "object") ? { ...input, type: "object" } : { type: "object" };
  const properties = isPlainObject(base.properties) ? base.properties : {};
  if (Object.hasOwn(properties, THREAD_ARGUMENT)) return { inputSchema: base, threadArgument: false };
  const thread = {
    type: "string",
    format: "uuid",
    description: "Optional: the id of the thread to run on, to continue a conversation (created when it does not exist). Without it the call runs on a fresh thread.",
  };
  return { inputSchema: { ...base, properties: { ...properties, [THREAD_ARGUMENT]: thread } }, threadArgument: true };
}

function describe(assistant: Assistant, schemas: GraphSchema | undefined): string {
  if (assistant.description) return assistant.description;
  const graphDescription = isPlainObject(schemas?.input_schema) ? schemas.input_schema.description : undefined;
  if (typeof graphDescription === "string" && graphDescription) return graphDescription;
  const as = assistant.name && assistant.name !== assistant.graph_id ? ` as the assistant "${assistant.name}"` : "";
  return `Runs the "${assistant.graph_id}" agent${as} and returns its final state.`;
}

const toTool = (assistant: Assistant, name: string, schemas: GraphSchema | undefined): AssistantTool => ({
  name,
  description: describe(assistant, schemas),
  ...inputSchemaOf(schemas),
  assistantId: assistant.assistant_id,
});

/** Every tool the caller may call. */
export async function listTools(client: HttpClient): Promise<AssistantTool[]> {
  const assistants = await visibleAssistants(client);
  const names = toolNames(assistants);
  const schemas = await Promise.all(assistants.map((a) => client.assistants.getSchemas(a.assistant_id)));
  return assistants.map((a, i) => toTool(a, names[i]!, schemas[i]));
}

/** The tool named `name`, or undefined when the caller has none by that name. */
export async function findTool(client: HttpClient, name: string): Promise<AssistantTool | undefined> {
  const assistants = await visibleAssistants(client);
  const i = toolNames(assistants).indexOf(name);
  if (i < 0) return undefined;
  const assistant = assistants[i]!;
  return toTool(assistant, name, await client.assistants.getSchemas(assistant.assistant_id));
}

/** What a tool call answers (the shape of MCP's `CallToolResult`). */
export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/**
 * A run's outcome as a tool result: the final values as structured content and the last AI
 * message as text (the values as JSON when there is none); an interrupt is said in a second text;
 * a failed run is a tool error with its message.
 */
export function toolResult(values: RunResult, meta: Record<string, unknown>): ToolResult {
  const { __error__: error, __interrupt__: interrupts, ...rest } = values as RunResult & { __interrupt__?: unknown };
  if (error) return { isError: true, content: [{ type: "text", text: `The agent failed: ${error.error}: ${error.message}` }], _meta: meta };
  const content: ToolResult["content"] = [{ type: "text", text: lastAiText(rest) ?? JSON.stringify(rest) }];
  if (Array.isArray(interrupts) && interrupts.length) {
    const asked = interrupts.map((i) => (isPlainObject(i) && "value" in i ? i.value : i));
    content.push({ type: "text", text: `The agent stopped to wait for input: ${JSON.stringify(asked.length === 1 ? asked[0] : asked)}` });
  }
  return { content, structuredContent: rest, _meta: meta };
}

/** A tool error the caller (often a model) can read and correct: bad arguments, an unknown thread. */
export const toolError = (message: string, meta?: Record<string, unknown>): ToolResult => ({
  isError: true,
  content: [{ type: "text", text: message }],
  ...(meta ? { _meta: meta } : {}),
});
