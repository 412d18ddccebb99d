/**
 * The thread of a chat (D106): a chat id that is a UUID is the thread's id; any other (the AI
 * SDK's own ids are short random strings) names a thread derived from the caller's identity and
 * the chat id, so the same chat id of two users names two threads and no user can reach or
 * claim another's chat through its id.
 */
import { UUID_RE } from "../ids.js";

const encoder = new TextEncoder();

/** The thread id of chat `chatId` for the caller whose identity is `identity`. */
export async function chatThreadId(identity: string, chatId: string): Promise<string> {
  if (UUID_RE.test(chatId)) return chatId.toLowerCase();
  // JSON keeps the two parts apart whatever they hold; SHA-256 keeps one identity's chat ids off another's threads.
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(JSON.stringify(["graphdock/ai-sdk chat", identity, chatId]))));
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8: a UUID of our own derivation (RFC 9562)
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // the RFC variant
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
