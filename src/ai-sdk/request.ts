/**
 * What the AI SDK's `DefaultChatTransport` posts (`id`, `messages`, `trigger`, `messageId`, plus
 * the fields of the hook's `body` option), read and checked. Only the last message is used (the
 * thread holds the history), so only it is validated, with the `ai` package's own validator;
 * the run options a client may set are those of the agent-server API's run body.
 */
import type { UIMessage } from "ai";
import { isPlainObject } from "../json.js";
import type { RunPayload } from "../runtime/types.js";
import type { AiSdk } from "./sdk.js";

/** The longest chat id accepted (the AI SDK's are 16 characters; a UUID is 36). */
export const MAX_CHAT_ID_LENGTH = 256;

/** A chat request, checked. */
export interface ChatRequest {
  chatId: string;
  trigger: "submit-message" | "regenerate-message";
  /** The message the request is about: a user message edited, or the assistant message answered. */
  messageId: string | undefined;
  /** The last message of the chat, validated. */
  last: UIMessage;
  /** Run options from the body (`config`, `context`, `metadata`, `on_disconnect`), checked by the runtime. */
  run: Pick<RunPayload, "config" | "context" | "metadata" | "onDisconnect">;
}

/** Why a request was refused: said to the client as an `error` part. */
export class ChatRequestError extends Error {}

function refuse(message: string): never {
  throw new ChatRequestError(message);
}

/** The chat request of `body`; throws {@link ChatRequestError} saying what is wrong with it. */
export async function readChatRequest(ai: AiSdk, body: unknown): Promise<ChatRequest> {
  if (!isPlainObject(body)) refuse("The body must be a JSON object: { id, messages, trigger, messageId }");
  const b = body as Record<string, unknown>;
  const chatId = b.id;
  if (typeof chatId !== "string" || chatId === "" || chatId.length > MAX_CHAT_ID_LENGTH) {
    refuse(`id must be the chat's id: a non-empty string of at most ${MAX_CHAT_ID_LENGTH} characters`);
  }
  const trigger = b.trigger ?? "submit-message";
  if (trigger !== "submit-message" && trigger !== "regenerate-message") refuse('trigger must be "submit-message" or "regenerate-message"');
  const messageId = b.messageId ?? undefined;
  if (messageId !== undefined && typeof messageId !== "string") refuse("messageId must be a string");
  if (!Array.isArray(b.messages) || b.messages.length === 0) refuse("messages must be a non-empty array of UI messages");
  const checked = await ai.safeValidateUIMessages({ messages: [(b.messages as unknown[]).at(-1)] });
  if (!checked.success) refuse(`The last message is not a UI message: ${problems(checked.error)}`);
  const last = checked.data[0]!;
  const onDisconnect = b.on_disconnect;
  if (onDisconnect !== undefined && onDisconnect !== "cancel" && onDisconnect !== "continue") refuse('on_disconnect must be "cancel" or "continue"');
  for (const key of ["config", "metadata"] as const) if (b[key] !== undefined && !isPlainObject(b[key])) refuse(`${key} must be an object`);
  const run: ChatRequest["run"] = {};
  if (b.config !== undefined) run.config = b.config as RunPayload["config"];
  if (b.context !== undefined) run.context = b.context;
  if (b.metadata !== undefined) run.metadata = b.metadata as RunPayload["metadata"];
  if (onDisconnect !== undefined) run.onDisconnect = onDisconnect as "cancel" | "continue";
  return { chatId: chatId as string, trigger: trigger as ChatRequest["trigger"], messageId: messageId as string | undefined, last, run };
}

/** The first problems the validator found (`path: message`), or its message. */
function problems(error: Error): string {
  const issues = (error.cause as { issues?: Array<{ path?: PropertyKey[]; message?: string }> } | undefined)?.issues;
  if (!Array.isArray(issues) || !issues.length) return error.message.slice(0, 300);
  const said = issues.slice(0, 3).map((i) => `${(i.path ?? []).map(String).slice(1).join(".") || "message"}: ${i.message}`);
  return said.join("; ") + (issues.length > 3 ? ` (and ${issues.length - 3} more)` : "");
}

/**
 * A user message as the graph's input: its id kept (so the thread's message is found again by
 * it), its text parts as the content, its files as content blocks (LangChain's standard image
 * and file blocks). A message with neither is refused.
 */
export function userInput(message: UIMessage): Record<string, unknown> {
  const texts: string[] = [];
  const files: Array<Record<string, unknown>> = [];
  for (const part of message.parts) {
    if (part.type === "text") texts.push(part.text);
    else if (part.type === "file") {
      const kind = part.mediaType.startsWith("image") ? "image" : "file";
      files.push({ type: kind, url: part.url, mimeType: part.mediaType, ...(part.filename ? { metadata: { filename: part.filename } } : {}) });
    }
  }
  if (!texts.length && !files.length) refuse("The user message has no text and no file");
  const text = texts.join("\n");
  const content = files.length ? [...(text ? [{ type: "text", text }] : []), ...files] : text;
  return { type: "human", id: message.id, content };
}
