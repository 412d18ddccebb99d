/**
 * Message chunks (what a node streams with `ctx.emitMessage`): their shapes on the wire, and their
 * concatenation as LangChain's `AIMessageChunk.concat` does it (to accumulate a streamed message
 * for the `events` mode's `on_chat_model_end` and the legacy `messages/partial` events).
 */
import { isPlainObject } from "../json.js";

type Rec = Record<string, unknown>;

/** Chunk types by the type of the message they stand for (LangChain's class names). */
export const CHUNK_TYPES: Readonly<Record<string, string>> = {
  ai: "AIMessageChunk",
  human: "HumanMessageChunk",
  tool: "ToolMessageChunk",
  system: "SystemMessageChunk",
  generic: "ChatMessageChunk",
  function: "FunctionMessageChunk",
};
const MESSAGE_TYPES = new Map(Object.entries(CHUNK_TYPES).map(([message, chunk]) => [chunk, message]));

/** The type of the message a chunk stands for (`AIMessageChunk` -> `ai`); `ai` when it has none. */
const messageType = (type: unknown): string => (typeof type === "string" ? (MESSAGE_TYPES.get(type) ?? type) : "ai");

/**
 * A streamed chunk as LangChain's stream events carry it (`on_chat_model_stream`): its
 * `toDict()` form, `type` the message's (`ai`), with the fields an `AIMessageChunk` always has
 * (`content`, `additional_kwargs`, `response_metadata`, `tool_call_chunks`, `tool_calls`,
 * `invalid_tool_calls`; the tool calls read from the chunk's tool call chunks).
 */
export function eventChunk(raw: Rec): Rec {
  const type = messageType(raw.type);
  const out: Rec = { content: "", additional_kwargs: {}, response_metadata: {}, ...raw, type };
  if (type === "ai") withToolCalls(out);
  return out;
}

/**
 * A streamed chunk as the `messages-tuple` mode sends it: every field of its message's wire form
 * (`name`, `id`, `example`, `usage_metadata` null when absent), `type` the chunk's
 * (`AIMessageChunk`), as a LangChain.js graph's chunks are sent.
 */
export function tupleChunk(raw: Rec): Rec {
  const type = messageType(raw.type);
  const out: Rec = { content: "", additional_kwargs: {}, response_metadata: {}, ...raw, type: CHUNK_TYPES[type] ?? type, name: raw.name ?? null, id: raw.id ?? null };
  if (type === "ai") {
    withToolCalls(out);
    out.example ??= false;
    out.usage_metadata ??= null;
  }
  return out;
}

/** An AI chunk's tool calls, read from its tool call chunks when it has some (as LangChain does). */
function withToolCalls(chunk: Rec): void {
  const chunks = asArray(chunk.tool_call_chunks) as Rec[];
  chunk.tool_call_chunks = chunks;
  if (chunks.length > 0) Object.assign(chunk, toolCallsOf(chunks));
  chunk.tool_calls ??= [];
  chunk.invalid_tool_calls ??= [];
}

/**
 * Two chunks of one streamed message as one: string content appended (list content
 * concatenated), tool call chunks merged by index (their argument strings appended) and the
 * tool calls read from them (arguments parsed as far as they go, as LangChain does: a call whose
 * arguments do not parse is an invalid tool call), token usage summed, metadata objects merged,
 * the first id, other fields from the later.
 */
export function concatChunks(left: Rec, right: Rec): Rec {
  const out: Rec = { ...left, ...right, id: left.id ?? right.id };
  const a = left.content;
  const b = right.content;
  if (typeof a === "string" && typeof b === "string") out.content = a + b;
  else if (Array.isArray(a) || Array.isArray(b)) out.content = [...asList(a), ...asList(b)];
  else if (b === undefined) out.content = a;
  for (const key of ["additional_kwargs", "response_metadata"]) {
    if (isPlainObject(left[key]) || isPlainObject(right[key])) out[key] = { ...(left[key] as Rec | undefined), ...(right[key] as Rec | undefined) };
  }
  const merged = mergeToolCallChunks(left.tool_call_chunks, right.tool_call_chunks);
  if (merged.length > 0) {
    out.tool_call_chunks = merged;
    Object.assign(out, toolCallsOf(merged));
  } else if (Array.isArray(left.tool_calls) || Array.isArray(right.tool_calls)) {
    out.tool_calls = [...asArray(left.tool_calls), ...asArray(right.tool_calls)];
  }
  if (isPlainObject(left.usage_metadata) || isPlainObject(right.usage_metadata)) out.usage_metadata = mergeUsage(left.usage_metadata, right.usage_metadata);
  return out;
}

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** String content as a one-block list, for concatenation with list content. */
const asList = (content: unknown): unknown[] =>
  Array.isArray(content) ? content : typeof content === "string" && content !== "" ? [{ type: "text", text: content }] : [];

/** Tool call chunks of both sides, those of one index as one (argument strings appended). */
function mergeToolCallChunks(left: unknown, right: unknown): Rec[] {
  const merged: Rec[] = asArray(left).map((c) => ({ ...(c as Rec) }));
  for (const raw of asArray(right)) {
    const c = raw as Rec;
    const same = merged.find((m) => m.index !== undefined && m.index === c.index);
    if (!same) merged.push({ ...c });
    else {
      same.args = `${typeof same.args === "string" ? same.args : ""}${typeof c.args === "string" ? c.args : ""}`;
      if (same.id == null && c.id != null) same.id = c.id;
      if (same.name == null && c.name != null) same.name = c.name;
    }
  }
  return merged;
}

/** The tool calls that merged tool call chunks stand for (LangChain's `collapseToolCallChunks`). */
function toolCallsOf(chunks: Rec[]): { tool_calls: Rec[]; invalid_tool_calls: Rec[] } {
  const tool_calls: Rec[] = [];
  const invalid_tool_calls: Rec[] = [];
  for (const c of chunks) {
    const name = typeof c.name === "string" ? c.name : "";
    const text = typeof c.args === "string" ? c.args.trim() : "";
    const args = parsePartialJson(text === "" ? "{}" : text);
    if (c.id && isPlainObject(args)) tool_calls.push({ name, args, id: c.id, type: "tool_call" });
    else invalid_tool_calls.push({ name, args: text === "" ? "{}" : text, id: c.id, error: "Malformed args.", type: "invalid_tool_call" });
  }
  return { tool_calls, invalid_tool_calls };
}

/**
 * JSON cut short (a tool call's arguments while they stream) read as far as it goes: an open
 * string, array or object is closed, a literal completed, a dangling key or separator dropped.
 * `null` when even that is not JSON.
 */
export function parsePartialJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // completed below
  }
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") closers.push("}");
    else if (ch === "[") closers.push("]");
    else if (ch === "}" || ch === "]") {
      if (closers.pop() !== ch) return null;
    }
  }
  let head = text;
  if (inString) head += escaped ? '\\"' : '"';
  // A literal cut short (`tr`) is the literal.
  else head = head.replace(/([:[,]\s*)(t|tr|tru|f|fa|fal|fals|n|nu|nul)$/, (_m, before: string, part: string) => before + (part[0] === "t" ? "true" : part[0] === "f" ? "false" : "null"));
  // Drop what cannot end a value (a separator, a key without its value), then close.
  for (let attempt = head; attempt.length > 0; ) {
    try {
      return JSON.parse(attempt + [...closers].reverse().join(""));
    } catch {
      const trimmed = attempt.replace(/(,|:|,?\s*"(?:[^"\\]|\\.)*"\s*:?)\s*$/, "");
      if (trimmed === attempt) return null;
      attempt = trimmed;
    }
  }
  return null;
}

type Usage = Rec & { input_token_details?: Rec; output_token_details?: Rec };

/** Token usage of two chunks summed (LangChain's `mergeUsageMetadata`). */
function mergeUsage(a: unknown, b: unknown): Rec {
  const x = (isPlainObject(a) ? a : {}) as Usage;
  const y = (isPlainObject(b) ? b : {}) as Usage;
  const sum = (key: string) => (Number(x[key] ?? 0) || 0) + (Number(y[key] ?? 0) || 0);
  const details = (p: Rec | undefined, q: Rec | undefined) => {
    const out: Rec = {};
    for (const key of new Set([...Object.keys(p ?? {}), ...Object.keys(q ?? {})])) out[key] = (Number(p?.[key] ?? 0) || 0) + (Number(q?.[key] ?? 0) || 0);
    return out;
  };
  return {
    input_tokens: sum("input_tokens"),
    output_tokens: sum("output_tokens"),
    total_tokens: sum("total_tokens"),
    input_token_details: details(x.input_token_details, y.input_token_details),
    output_token_details: details(x.output_token_details, y.output_token_details),
  };
}
