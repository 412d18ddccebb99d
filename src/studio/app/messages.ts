/**
 * Chat messages as the studio shows them, from any of the forms a server sends: LangChain dict
 * form (`type: "human" | "ai" | "tool" | "system"`), OpenAI-style role form (`role: "user" |
 * "assistant" | ...`), and streamed chunks (`AIMessageChunk` of the `messages-tuple` mode, with
 * `tool_call_chunks`) merged into the message they build.
 */
import { isObject } from "./format.js";

export interface ToolCall {
  id?: string | null;
  name: string;
  args: unknown;
}

export interface ChatMessage {
  id: string | null;
  kind: "human" | "ai" | "tool" | "system" | "other";
  /** The text parts, joined. */
  text: string;
  /** Content parts that are not text (images, files), as sent. */
  parts: unknown[];
  toolCalls: ToolCall[];
  /** For a tool result: the call it answers, the tool's name and whether it failed. */
  toolCallId?: string;
  name?: string;
  failed?: boolean;
  /** Still streaming. */
  partial?: boolean;
}

const KINDS: Record<string, ChatMessage["kind"]> = {
  human: "human",
  user: "human",
  HumanMessage: "human",
  HumanMessageChunk: "human",
  ai: "ai",
  assistant: "ai",
  AIMessage: "ai",
  AIMessageChunk: "ai",
  tool: "tool",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  system: "system",
  developer: "system",
  SystemMessage: "system",
};

function contentOf(content: unknown): { text: string; parts: unknown[] } {
  if (typeof content === "string") return { text: content, parts: [] };
  if (!Array.isArray(content)) return { text: content === undefined || content === null ? "" : JSON.stringify(content), parts: [] };
  const text: string[] = [];
  const parts: unknown[] = [];
  for (const part of content) {
    if (typeof part === "string") text.push(part);
    else if (isObject(part) && (part.type === "text" || part.type === "text_delta") && typeof part.text === "string") text.push(part.text);
    else parts.push(part);
  }
  return { text: text.join(""), parts };
}

function toolCallsOf(m: Record<string, unknown>): ToolCall[] {
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : isObject(m.additional_kwargs) && Array.isArray(m.additional_kwargs.tool_calls) ? m.additional_kwargs.tool_calls : [];
  return calls.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : undefined; // OpenAI form
    let args: unknown = c.args ?? fn?.arguments;
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        // partial JSON while streaming: keep the text
      }
    }
    return { id: typeof c.id === "string" ? c.id : null, name: String(c.name ?? fn?.name ?? "tool"), args };
  });
}

/** One message in the studio's form; undefined for something that is not a message. */
export function toChatMessage(raw: unknown): ChatMessage | undefined {
  if (!isObject(raw)) return undefined;
  const type = String(raw.type ?? raw.role ?? "");
  const kind = KINDS[type] ?? (type ? "other" : undefined);
  if (!kind) return undefined;
  const { text, parts } = contentOf(raw.content);
  const message: ChatMessage = { id: typeof raw.id === "string" ? raw.id : null, kind, text, parts, toolCalls: kind === "ai" ? toolCallsOf(raw) : [] };
  if (kind === "tool") {
    if (typeof raw.tool_call_id === "string") message.toolCallId = raw.tool_call_id;
    if (typeof raw.name === "string") message.name = raw.name;
    if (raw.status === "error") message.failed = true;
  }
  return message;
}

/** The messages of a state's values (its `messages` key), in the studio's form. */
export function messagesOf(values: unknown): ChatMessage[] {
  const list = isObject(values) && Array.isArray(values.messages) ? values.messages : [];
  return list.map(toChatMessage).filter((m): m is ChatMessage => m !== undefined);
}

/**
 * Messages being streamed, by id: `messages-tuple` chunks append their text and tool-call
 * chunks; the legacy `messages/partial` events replace the whole message.
 */
export class StreamedMessages {
  readonly #byId = new Map<string, { raw: Record<string, unknown>; argText: Map<number, string> }>();

  /** Adds a `messages-tuple` chunk (`[chunk, metadata]`); returns whether it was a message. */
  addChunk(chunk: unknown): boolean {
    if (!isObject(chunk)) return false;
    const id = typeof chunk.id === "string" ? chunk.id : "(streaming)";
    const entry = this.#byId.get(id);
    if (!entry || !String(chunk.type ?? "").endsWith("Chunk")) {
      this.#byId.set(id, { raw: { ...chunk, tool_calls: chunk.tool_calls ?? [] }, argText: new Map() });
      if (String(chunk.type ?? "").endsWith("Chunk")) this.#mergeToolChunks(this.#byId.get(id)!, chunk);
      return true;
    }
    const { raw } = entry;
    const before = contentOf(raw.content).text;
    const add = contentOf(chunk.content).text;
    if (add) raw.content = before + add;
    this.#mergeToolChunks(entry, chunk);
    return true;
  }

  #mergeToolChunks(entry: { raw: Record<string, unknown>; argText: Map<number, string> }, chunk: Record<string, unknown>) {
    if (!Array.isArray(chunk.tool_call_chunks)) return;
    const calls = (entry.raw.tool_calls as Array<Record<string, unknown>>).slice();
    for (const [i, part] of chunk.tool_call_chunks.entries()) {
      if (!isObject(part)) continue;
      const index = typeof part.index === "number" ? part.index : i;
      const text = (entry.argText.get(index) ?? "") + (typeof part.args === "string" ? part.args : "");
      entry.argText.set(index, text);
      const previous = calls[index] ?? {};
      calls[index] = { ...previous, id: part.id ?? previous.id, name: part.name ?? previous.name ?? "tool", args: text };
    }
    entry.raw.tool_calls = calls;
  }

  /** Replaces one message (legacy `messages/partial`, `messages/complete`). */
  put(raw: unknown): void {
    if (isObject(raw) && typeof raw.id === "string") this.#byId.set(raw.id, { raw: { ...raw }, argText: new Map() });
  }

  /** The streamed messages not (yet) in `settled`, in the studio's form. */
  pending(settled: ChatMessage[]): ChatMessage[] {
    const known = new Set(settled.map((m) => m.id));
    const out: ChatMessage[] = [];
    for (const [id, { raw }] of this.#byId) {
      if (known.has(id)) continue;
      const m = toChatMessage(raw);
      if (m) out.push({ ...m, partial: true });
    }
    return out;
  }

  clear(): void {
    this.#byId.clear();
  }
}
