/**
 * What crosses between a LangGraph.js graph and graphdock's wire: LangChain message objects
 * become the reference server's dict form (`{ type: "human" | "ai" | "tool" | ..., content, id,
 * ... }`, chunks `type: "AIMessageChunk"`), and graphdock's run input (`Command`, `Send`) becomes
 * LangGraph's.
 */
import { Command as LgCommand, Send as LgSend } from "@langchain/langgraph/web";
import { CHUNK_TYPES } from "../graph/chunks.js";
import { Command, Send } from "../graph/constants.js";

/** A message's `toJSON()` form (LangChain's serialized constructor: `{ lc, type, id, kwargs }`). */
export interface SerializedMessage {
  kwargs: Record<string, unknown>;
}

/** Looks up a message's `toJSON()` form already made (see `GraphdockSaver.serializedMessage`). */
export type SerializedLookup = (m: object) => SerializedMessage | undefined;

interface MessageLike {
  getType(): string;
  toDict(): { type: string; data: Record<string, unknown> };
}

/** A LangChain message instance (any version), recognised by shape. */
export function isMessageInstance(v: unknown): v is MessageLike {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { toDict?: unknown }).toDict === "function" &&
    typeof (v as { getType?: unknown }).getType === "function" &&
    "content" in v
  );
}

/**
 * One message in dict form, with the fields the reference server always sends. With `asChunk`
 * (the `messages-tuple` stream), a chunk keeps its chunk type (`AIMessageChunk`) and chunk
 * fields; in state and updates it is the message it stands for (`ai`).
 */
export function messageToDict(m: MessageLike, asChunk = false, serialized?: SerializedMessage): Record<string, unknown> {
  // `toDict()` is `{ type: getType(), data: toJSON().kwargs }`: a `toJSON()` form already made is reused.
  const { type, data } = serialized ? { type: m.getType(), data: serialized.kwargs } : m.toDict();
  const chunk = asChunk && typeof (m as { concat?: unknown }).concat === "function";
  const out: Record<string, unknown> = {
    content: data.content ?? "",
    additional_kwargs: data.additional_kwargs ?? {},
    response_metadata: data.response_metadata ?? {},
    ...data,
    type: chunk ? (CHUNK_TYPES[type] ?? type) : type,
    name: data.name ?? null,
    id: data.id ?? null,
  };
  if (type === "human" || type === "ai") out.example ??= false;
  if (type === "ai") {
    out.tool_calls ??= [];
    out.invalid_tool_calls ??= [];
    out.usage_metadata ??= null;
  }
  if (type === "tool") {
    out.artifact ??= null;
    out.status ??= "success";
  }
  delete out.lc_kwargs;
  if (!chunk) delete out.tool_call_chunks;
  return out;
}

/**
 * A value as plain JSON for the wire and the run's result: messages in dict form, class
 * instances by their `toJSON`, `undefined` dropped (as JSON does). Leaves primitives alone.
 * `serialized` gives the `toJSON()` form of messages already serialized (and not changed since),
 * which spares serializing them again (a long chat's state holds many messages).
 */
export function toWire(value: unknown, asChunks = false, serialized?: SerializedLookup): unknown {
  if (value === null || typeof value !== "object") return value;
  if (isMessageInstance(value)) return toWire(messageToDict(value, asChunks, asChunks ? undefined : serialized?.(value)));
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : toWire(v, asChunks, serialized)));
  if (value instanceof Date) return value.toISOString();
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return toWire((value as { toJSON(): unknown }).toJSON());
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined && typeof v !== "function") out[k] = toWire(v, false, serialized);
  return out;
}

/**
 * A LangChain stream event as plain JSON, as the reference server sends it: every message (a
 * chunk too) as LangChain's `toDict()` makes it (`{ ...fields set, type: "ai" | "human" | ... }`,
 * no defaults added), the rest as `toWire` makes it.
 */
export function eventToWire(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (isMessageInstance(value)) {
    const { type, data } = value.toDict();
    return eventToWire({ ...data, type });
  }
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : eventToWire(v)));
  if (value instanceof Date) return value.toISOString();
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return eventToWire((value as { toJSON(): unknown }).toJSON());
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined && typeof v !== "function") out[k] = eventToWire(v);
  return out;
}

const toLgSend = (g: string | Send): string | LgSend => (typeof g === "string" ? g : new LgSend(g.node, g.args));

/** graphdock's run input (a value, or its `Command`) as LangGraph.js input. */
export function toLangGraphInput(input: unknown): unknown {
  if (!Command.is(input)) return input ?? null;
  const goto = input.goto;
  return new LgCommand({
    ...(input.resume !== undefined ? { resume: input.resume } : {}),
    ...(input.update !== undefined ? { update: input.update as Record<string, unknown> } : {}),
    ...(goto !== undefined ? { goto: Array.isArray(goto) ? goto.map(toLgSend) : toLgSend(goto) } : {}),
  });
}
