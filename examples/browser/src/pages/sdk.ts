/**
 * The official `@langchain/langgraph-sdk` Client, unchanged, talking to the runtime in this tab:
 * its fetch is graphdock's fetch handler, so requests never leave the page.
 */
import { Client } from "@langchain/langgraph-sdk";
import { handler } from "../app";
import { guard, h, json, mount } from "../dom";
import { humanInput, messagesOf, text } from "../messages";

/** A `fetch` that answers from the in-page HTTP API. */
const inPageFetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
  handler(new Request(input, init));

export const client = new Client({
  apiUrl: "http://graphdock.local",
  apiKey: null,
  callerOptions: { fetch: inPageFetch, maxRetries: 0 },
});

export async function sdkPage(): Promise<HTMLElement> {
  const info = h("p", { class: "muted", "data-testid": "sdk-info" }, "Asking the in-page server for its assistants…");
  const log = h("ol", { class: "event-log", "data-testid": "sdk-events" });
  const reply = h("div", { class: "sdk-reply", "data-testid": "sdk-reply" });
  const input = h("input", { type: "text", value: "What is 6 * 7?", "data-testid": "sdk-input" });
  const run = h("button", { class: "primary", type: "submit", "data-testid": "sdk-run" }, "Run with the official client");
  const form = h("form", { class: "row" }, input, run);

  /** Streams one run through the official client, logging every server-sent event. */
  async function stream(threadId: string, payload: { input?: Record<string, unknown>; command?: { resume: unknown } }): Promise<void> {
    for await (const chunk of client.runs.stream(threadId, "agent", { ...payload, streamMode: ["updates", "values"] })) {
      log.append(h("li", null, h("code", null, chunk.event), " ", h("span", { class: "muted" }, json(chunk.data).slice(0, 160))));
    }
    const state = await client.threads.getState(threadId);
    const messages = messagesOf(state.values);
    const final = messages[messages.length - 1];
    const approve = h("button", { class: "primary small", "data-testid": "sdk-approve" }, "Approve through the client");
    approve.addEventListener("click", () => void guard(() => stream(threadId, { command: { resume: true } }), approve));
    mount(
      reply,
      h("strong", null, "Final state: "),
      `${messages.length} messages; last: “${final ? text(final) : ""}” `,
      state.next.length > 0 ? [h("span", { class: "badge status-interrupted" }, `waiting at ${state.next.join(", ")}`), " ", approve] : null,
    );
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void guard(async () => {
      mount(log);
      mount(reply);
      const thread = await client.threads.create({ metadata: { title: `SDK: ${input.value.slice(0, 40)}` } });
      log.append(h("li", null, h("code", null, "POST /threads"), ` → thread ${thread.thread_id}`));
      await stream(thread.thread_id, { input: humanInput(input.value) });
    }, run);
  });

  void guard(async () => {
    const assistants = await client.assistants.search({ limit: 20 });
    mount(info, `The official client sees ${assistants.length} assistants: ${assistants.map((a) => a.name).join(", ")}.`);
  });

  return h(
    "section",
    { class: "page sdk" },
    h("h2", null, "Official client, offline"),
    h(
      "p",
      null,
      "This page uses ",
      h("code", null, "new Client({ callerOptions: { fetch } })"),
      " from @langchain/langgraph-sdk with graphdock's fetch handler: the agent-server HTTP API and its server-sent events are served inside this tab.",
    ),
    info,
    form,
    reply,
    log,
  );
}
