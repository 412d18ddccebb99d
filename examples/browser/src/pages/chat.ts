/** Chat with the offline agent: thread list, streamed replies, the approval interrupt. */
import { currentAssistant, runtime, setCurrentAssistant } from "../app";
import { guard, h, json, mount, shortId, showError, time } from "../dom";
import { humanInput, messagesOf, speaker, text, type ChatMessage } from "../messages";

interface SendRequest {
  input?: Record<string, unknown>;
  command?: { resume: unknown };
  checkpointId?: string;
}

let queued: { threadId: string; request: SendRequest } | undefined;

/** Starts `request` on `threadId` when its chat opens next (the history page forks this way). */
export function queueSend(threadId: string, request: SendRequest): void {
  queued = { threadId, request };
}

type Thread = Awaited<ReturnType<typeof runtime.threads.search>>[number];

function title(thread: Thread): string {
  const t = thread.metadata?.title;
  return typeof t === "string" && t ? t : `Thread ${shortId(thread.thread_id)}`;
}

async function threadList(activeId: string | undefined): Promise<HTMLElement> {
  const threads = await runtime.threads.search({ limit: 50, sortBy: "updated_at", sortOrder: "desc" });
  return h(
    "nav",
    { class: "thread-list", "data-testid": "thread-list" },
    h("a", { class: "button primary new-chat", href: "#/chat" }, "+ New chat"),
    threads.length === 0 ? h("p", { class: "muted" }, "No conversations yet.") : null,
    h(
      "ul",
      null,
      threads.map((t) =>
        h(
          "li",
          { class: t.thread_id === activeId ? "active" : "" },
          h(
            "a",
            { href: `#/chat/${t.thread_id}`, "data-testid": "thread-item", "data-thread-id": t.thread_id },
            h("span", { class: "title" }, title(t)),
            h("span", { class: `badge status-${t.status}` }, t.status),
            h("small", { class: "muted" }, time(t.updated_at)),
          ),
        ),
      ),
    ),
  );
}

function bubble(m: ChatMessage, streaming = false): HTMLElement {
  const who = speaker(m);
  const calls = m.tool_calls ?? [];
  const label = who === "human" ? "You" : who === "tool" ? `Tool${m.name ? ` · ${m.name}` : ""}` : "Agent";
  return h(
    "li",
    { class: `message ${who}${streaming ? " streaming" : ""}`, "data-testid": `message-${who}` },
    h("span", { class: "who" }, label),
    text(m) ? h("div", { class: "text" }, text(m)) : null,
    calls.map((c) => h("div", { class: "tool-call" }, "Calls ", h("code", null, `${c.name}(${JSON.stringify(c.args)})`))),
  );
}

function interruptText(value: unknown): string {
  if (typeof value === "string") return value;
  const v = value as Record<string, unknown> | null;
  for (const key of ["question", "message", "description", "prompt"]) {
    if (v && typeof v[key] === "string") return v[key] as string;
  }
  return "The agent asks for your approval to continue.";
}

export async function chatPage(threadId: string | undefined): Promise<HTMLElement> {
  const sidebar = h("div", { class: "sidebar-slot" }, await threadList(threadId));
  const list = h("ol", { class: "messages", "data-testid": "messages" });
  const approval = h("div", { class: "approval-slot" });
  const indicator = h(
    "div",
    { class: "streaming-indicator", "data-testid": "streaming", hidden: true },
    h("span", { class: "dots" }, h("i"), h("i"), h("i")),
    " Agent is replying…",
  );
  const input = h("textarea", {
    rows: 2,
    placeholder: "Ask the agent, e.g. “What is 12 * 7?”",
    "data-testid": "composer-input",
  });
  const sendButton = h("button", { class: "primary", type: "submit", "data-testid": "send" }, "Send");
  const form = h("form", { class: "composer" }, input, sendButton);

  function showMessages(messages: ChatMessage[], partial?: ChatMessage): void {
    mount(
      list,
      messages.length === 0 && !partial
        ? h("li", { class: "empty muted" }, "Say hello: the agent runs in this tab, offline, and can use a calculator.")
        : null,
      messages.map((m) => bubble(m)),
      partial ? bubble(partial, true) : null,
    );
    list.scrollTop = list.scrollHeight;
  }

  async function showState(id: string): Promise<void> {
    const state = await runtime.threads.getState(id);
    showMessages(messagesOf(state.values));
    const pending = state.tasks.flatMap((t) => t.interrupts ?? []);
    mount(
      approval,
      pending.map((intr) =>
        h(
          "div",
          { class: "approval card", "data-testid": "approval" },
          h("strong", null, "Approval needed"),
          h("p", null, interruptText(intr.value)),
          h("pre", null, json(intr.value)),
          h(
            "div",
            { class: "row" },
            h("button", { class: "primary", "data-testid": "approve", onclick: () => void send(id, { command: { resume: { approved: true } } }) }, "Approve"),
            h("button", { "data-testid": "reject", onclick: () => void send(id, { command: { resume: { approved: false } } }) }, "Reject"),
          ),
        ),
      ),
    );
  }

  async function send(id: string, request: SendRequest): Promise<void> {
    mount(approval);
    indicator.hidden = false;
    sendButton.disabled = true;
    let messages: ChatMessage[] = messagesOf((await runtime.threads.getState(id, request.checkpointId)).values);
    if (request.input) messages = [...messages, ...messagesOf(request.input)];
    showMessages(messages);
    const partial = new Map<string, ChatMessage>();
    try {
      const stream = runtime.runs.stream(id, currentAssistant(), {
        ...request,
        streamMode: ["values", "messages-tuple"],
      });
      for await (const chunk of stream) {
        if (chunk.event === "values") {
          partial.clear();
          messages = messagesOf(chunk.data);
          showMessages(messages);
        } else if (chunk.event === "messages") {
          const [piece] = chunk.data as [ChatMessage, unknown];
          const key = piece.id ?? "current";
          const sofar = partial.get(key);
          partial.set(key, { ...piece, content: (sofar ? text(sofar) : "") + text(piece) });
          showMessages(messages, partial.get(key));
        } else if (chunk.event === "error") {
          const data = chunk.data as { error?: string; message?: string };
          showError(`${data.error ?? "Error"}: ${data.message ?? "the run failed"}`);
        }
      }
      await showState(id);
    } catch (err) {
      showError(err);
    } finally {
      indicator.hidden = true;
      sendButton.disabled = false;
      mount(sidebar, await threadList(id));
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    void guard(async () => {
      let id = threadId;
      if (!id) {
        const thread = await runtime.threads.create({ metadata: { title: content.slice(0, 48) } });
        id = thread.thread_id;
        queueSend(id, { input: humanInput(content) });
        input.value = "";
        location.hash = `#/chat/${id}`;
        return;
      }
      input.value = "";
      await send(id, { input: humanInput(content) });
    });
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  // An assistant deleted since it was chosen falls back to the agent's default assistant.
  const assistant = await runtime.assistants.get(currentAssistant()).catch(() => {
    setCurrentAssistant("agent");
    return runtime.assistants.get("agent");
  });
  const assistantNote = h(
    "div",
    { class: "assistant-note muted" },
    `Assistant: ${assistant.name} (v${assistant.version}) · `,
    h("a", { href: `#/assistants/${assistant.assistant_id}` }, "change"),
  );
  let heading: HTMLElement = h("h2", null, "New conversation");
  if (threadId) {
    const thread = await runtime.threads.get(threadId);
    heading = h(
      "div",
      { class: "row spread" },
      h("h2", { "data-testid": "thread-title" }, title(thread)),
      h("a", { class: "button", href: `#/history/${threadId}`, "data-testid": "open-history" }, "History & branches"),
    );
    const next = queued?.threadId === threadId ? queued.request : undefined;
    queued = undefined;
    if (next) void send(threadId, next);
    else await showState(threadId);
  } else {
    showMessages([]);
  }

  return h(
    "section",
    { class: "chat" },
    sidebar,
    h("div", { class: "conversation" }, heading, assistantNote, list, approval, indicator, form),
  );
}
