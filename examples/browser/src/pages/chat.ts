/**
 * Chat with the offline agent: thread list, streamed replies, the approval interrupt. The agent
 * runs on graphdock's engine or as a LangGraph.js graph (the engine switch under the heading); a
 * thread keeps the graph it started on.
 */
import { currentAssistant, runtime, setCurrentAssistant } from "../app";
import type { ThreadSummary } from "../lib";
import { guard, h, json, mount, refresh, shortId, showError, time } from "../dom";
import { LANGGRAPH_AGENT } from "../langgraph-agent";
import { humanInput, messagesOf, speaker, text, type ChatMessage } from "../messages";

interface SendRequest {
  /** `null` continues a run paused at a static breakpoint (the LangGraph.js agent's approval). */
  input?: Record<string, unknown> | null;
  command?: { resume: unknown };
  checkpointId?: string;
}

let queued: { threadId: string; request: SendRequest } | undefined;

/** Starts `request` on `threadId` when its chat opens next (the history page forks this way). */
export function queueSend(threadId: string, request: SendRequest): void {
  queued = { threadId, request };
}

type Thread = ThreadSummary;

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

/** The engines the chat offers: graph ids hosted by the runtime (app.ts). */
const ENGINES: [graphId: string, label: string][] = [
  ["agent", "graphdock engine"],
  [LANGGRAPH_AGENT, "LangGraph.js"],
];

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

  function approvalCard(question: string, value: unknown, approve: () => void, reject: () => void): HTMLElement {
    return h(
      "div",
      { class: "approval card", "data-testid": "approval" },
      h("strong", null, "Approval needed"),
      h("p", null, question),
      h("pre", null, json(value)),
      h(
        "div",
        { class: "row" },
        h("button", { class: "primary", "data-testid": "approve", onclick: approve }, "Approve"),
        h("button", { "data-testid": "reject", onclick: reject }, "Reject"),
      ),
    );
  }

  async function showState(id: string): Promise<void> {
    const state = await runtime.threads.getState(id);
    const messages = messagesOf(state.values);
    showMessages(messages);
    const pending = state.tasks.flatMap((t) => t.interrupts ?? []);
    // A static breakpoint (the LangGraph.js agent pauses before `tools`) has no interrupt value:
    // the question is the tool call waiting to run. Approve continues with no input; Reject
    // answers the calls in the tools node's place, and the model goes on from there.
    const calls = pending.length === 0 && state.next.includes("tools") ? (messages.at(-1)?.tool_calls ?? []) : [];
    mount(
      approval,
      pending.map((intr) =>
        approvalCard(
          interruptText(intr.value),
          intr.value,
          () => void send(id, { command: { resume: { approved: true } } }),
          () => void send(id, { command: { resume: { approved: false } } }),
        ),
      ),
      calls.length > 0
        ? approvalCard(
            calls.map((c) => `Run ${c.name}(${Object.values((c.args ?? {}) as Record<string, unknown>).map(String).join(", ")})?`).join(" "),
            calls,
            () => void send(id, { input: null }),
            () =>
              void guard(async () => {
                const declined = calls.map((c) => ({ type: "tool", name: c.name, tool_call_id: c.id, content: "the user declined to run the calculator" }));
                await runtime.threads.updateState(id, { values: { messages: declined }, asNode: "tools" });
                await send(id, { input: null });
              }),
          )
        : null,
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
      const stream = runtime.runs.stream(id, await assistantFor(id), {
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

  /** The assistant a run on `id` uses: the chosen one, unless the thread started on another graph. */
  async function assistantFor(id: string): Promise<string> {
    const meta = (await runtime.threads.get(id)).metadata ?? {};
    const own = typeof meta.graph_id === "string" && typeof meta.assistant_id === "string" && meta.graph_id !== assistant.graph_id;
    return own ? (meta.assistant_id as string) : currentAssistant();
  }

  const engines = ENGINES.map(([graphId, label]) =>
    h(
      "button",
      {
        class: `link${assistant.graph_id === graphId ? " active" : ""}`,
        "data-testid": `engine-${graphId}`,
        "aria-pressed": assistant.graph_id === graphId ? "true" : "false",
        onclick: () => {
          setCurrentAssistant(graphId);
          if (threadId) location.hash = "#/chat";
          else refresh();
        },
      },
      label,
    ),
  );
  const assistantNote = h(
    "div",
    { class: "assistant-note muted", "data-testid": "assistant-note" },
    `Assistant: ${assistant.name} (v${assistant.version}, graph ${assistant.graph_id}) · `,
    h("a", { href: `#/assistants/${assistant.assistant_id}` }, "change"),
    " · Engine: ",
    engines,
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
