/** Chat messages as the agent's state holds them, for display. */

export interface ChatMessage {
  id?: string;
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
  tool_calls?: { name: string; args: unknown; id?: string }[];
  tool_call_id?: string;
}

export type Speaker = "human" | "ai" | "tool" | "system";

const ROLES: Record<string, Speaker> = {
  human: "human",
  user: "human",
  ai: "ai",
  assistant: "ai",
  AIMessageChunk: "ai",
  tool: "tool",
  system: "system",
};

export function speaker(m: ChatMessage): Speaker {
  return ROLES[m.type ?? m.role ?? ""] ?? "ai";
}

/** The text of a message: a string, or the text parts of a content list. */
export function text(m: ChatMessage): string {
  const c = m.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    return c
      .map((part) => (typeof part === "string" ? part : (part as { text?: string }).text ?? ""))
      .join("");
  }
  return c === undefined || c === null ? "" : JSON.stringify(c);
}

/** The messages list of a state's values (empty when the state has none). */
export function messagesOf(values: unknown): ChatMessage[] {
  const list = (values as { messages?: unknown } | null)?.messages;
  return Array.isArray(list) ? (list as ChatMessage[]) : [];
}

/** A human message to send as run input. */
export function humanInput(content: string): { messages: ChatMessage[] } {
  return { messages: [{ role: "user", content }] };
}
