/**
 * A conversation as a chat: human and AI turns as bubbles, an AI turn's tool calls as cards with
 * their arguments, tool results as cards naming the call they answer (failed ones marked), system
 * messages as notes. Long conversations show their latest messages first, with the earlier ones
 * a click away.
 */
import { useState } from "preact/hooks";
import { pretty } from "../format.js";
import type { ChatMessage } from "../messages.js";

/** Messages drawn before "Show earlier messages" is needed. */
const SHOWN = 100;

export function Chat(props: { messages: ChatMessage[]; testId?: string }) {
  const [limit, setLimit] = useState(SHOWN);
  const { messages } = props;
  const hidden = Math.max(0, messages.length - limit);
  const callNames = new Map<string, string>();
  for (const m of messages) for (const c of m.toolCalls) if (c.id) callNames.set(c.id, c.name);
  return (
    <section class="chat" aria-label="Conversation" data-testid={props.testId ?? "chat"}>
      {hidden > 0 && (
        <button type="button" class="link" onClick={() => setLimit((l) => l + SHOWN)}>
          Show {Math.min(SHOWN, hidden)} earlier messages ({hidden} hidden)
        </button>
      )}
      {messages.length === 0 && <p class="muted">No messages yet.</p>}
      <ol class="messages">
        {messages.slice(hidden).map((m, i) => (
          <li key={m.id ?? `i${i + hidden}`} class={`message ${m.kind}${m.partial ? " streaming" : ""}${m.failed ? " failed" : ""}`} data-testid={`message-${m.kind}`}>
            <MessageBody message={m} callName={m.toolCallId ? callNames.get(m.toolCallId) : undefined} />
          </li>
        ))}
      </ol>
    </section>
  );
}

const WHO: Record<ChatMessage["kind"], string> = { human: "User", ai: "Assistant", tool: "Tool", system: "System", other: "Message" };

function MessageBody({ message: m, callName }: { message: ChatMessage; callName: string | undefined }) {
  if (m.kind === "tool") {
    return (
      <div class="tool-result">
        <p class="who">
          {m.failed ? "Tool error" : "Tool result"}: <strong>{m.name ?? callName ?? "tool"}</strong>
        </p>
        <pre class="tool-output">{m.text}</pre>
      </div>
    );
  }
  return (
    <>
      <p class="who">{WHO[m.kind]}{m.partial ? " (streaming)" : ""}</p>
      {m.text && <div class="text">{m.text}</div>}
      {m.parts.map((part, i) => (
        <pre key={i} class="part">
          {pretty(part)}
        </pre>
      ))}
      {m.toolCalls.map((call, i) => (
        <div key={call.id ?? i} class="tool-call" data-testid="tool-call">
          <p>
            Calls <strong>{call.name}</strong>
          </p>
          <pre>{typeof call.args === "string" ? call.args : pretty(call.args)}</pre>
        </div>
      ))}
    </>
  );
}
