/**
 * The AI SDK chat endpoint (D106-D109), judged by the AI SDK itself: its chat (`AbstractChat`,
 * the logic `useChat` runs, with `DefaultChatTransport`) and `readUIMessageStream`, over a socket
 * and through the fetch handler, against a LangChain `createAgent` agent and graphdock graphs:
 * two turns with a tool call, token streaming, approvals (LangChain's human-in-the-loop
 * middleware and a graph's own interrupt), a free question answered with a tool output,
 * regenerate and edit as forks, per-user chat ids, auth, on_disconnect, refusals that change nothing.
 */
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent as calcAgent } from "../../examples/node/agent.js";
import { aiSdkEndpoint, chatThreadId } from "../../src/ai-sdk/index.js";
import { createRuntime, type RuntimeClient } from "../../src/index.js";
import { serve } from "../../src/node/index.js";
import { as, keyAuth, lgAskGraph, served, type Served } from "../http/protocol-fixtures.js";
import { chatAgent, contents, NodeChat, partsOf, slowGraph, textOf } from "./fixtures.js";

let s: Served;
const ids: Record<string, string> = {};
let bobAgent: string;
let alice: RuntimeClient;
let bob: RuntimeClient;
const snapshot = () => contents([alice, bob]);

beforeAll(async () => {
  s = await served({ graphs: { agent: chatAgent(), ask: lgAskGraph(), calc: calcAgent, slow: slowGraph() }, auth: keyAuth() }, (onError) => [aiSdkEndpoint({ onError })]);
  alice = await s.runtime.client({ headers: as("alice") });
  bob = await s.runtime.client({ headers: as("bob") });
  bobAgent = (await bob.assistants.create({ graphId: "agent", name: "agent" })).assistant_id;
  for (const graphId of ["agent", "ask", "calc", "slow"]) ids[graphId] = (await alice.assistants.create({ graphId, name: graphId })).assistant_id;
});
afterAll(async () => {
  await s?.close();
  expect(s.faults).toEqual([]);
});

/** Resolves once `pred` holds (the chat's automatic requests are not awaited by the call that starts them). */
async function until<T>(what: string, read: () => T, pred: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
    if (pred(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v, null, 1).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls `read` until `pred` holds. */
async function settle<T>(read: () => Promise<T>, pred: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (pred(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const transports = [
  ["through the fetch handler", () => ({ base: "http://in-process", fetch: s.inProcess })],
  ["over a socket", () => ({ base: s.server.url, fetch: globalThis.fetch })],
] as const;

describe.each(transports)("useChat's chat %s", (_t, where) => {
  const chat = (graph: string, options: Partial<ConstructorParameters<typeof NodeChat>[0]> = {}) => {
    const { base, fetch } = where();
    return new NodeChat({ id: `chat-${crypto.randomUUID().slice(0, 8)}`, api: `${base}/ai-sdk/chat/${ids[graph]}`, fetch, headers: as("alice"), ...options });
  };

  it("holds two turns on one chat, the first with a tool call the agent runs; the thread keeps the history", async () => {
    const c = chat("agent");
    await c.sendMessage({ text: "weather in Paris" });
    expect(c.status).toBe("ready");
    expect(partsOf(c.messages[1])).toEqual([
      { text: "Let me check. " },
      { tool: "get_weather", state: "output-available", input: { city: "Paris" }, output: "sunny in Paris" },
      { text: "The weather: sunny in Paris" },
    ]);
    await c.sendMessage({ text: "thanks" });
    expect(c.messages.map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "weather in Paris"],
      ["assistant", "Let me check. The weather: sunny in Paris"],
      ["user", "thanks"],
      ["assistant", "You said: thanks"],
    ]);
    // Only each new user message went in: the thread holds the whole conversation, once.
    const threadId = await chatThreadId("alice", c.id);
    const state = await alice.threads.getState(threadId);
    const messages = (state.values as { messages: Array<{ type: string; id: string }> }).messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    expect(messages[0]!.id).toBe(c.messages[0]!.id);
    const runs = await alice.runs.list(threadId);
    expect(runs.map((r) => [r.status, r.metadata?.ai_sdk_chat_id])).toEqual([
      ["success", c.id],
      ["success", c.id],
    ]);
    expect(c.messages[3]!.id).toBe(runs[0]!.run_id); // the answer's id is its run's
  });

  it("streams the UI message stream token by token, as readUIMessageStream reads it", async () => {
    const { base, fetch } = where();
    const transport = new DefaultChatTransport({ api: `${base}/ai-sdk/chat/${ids.agent}`, fetch, headers: as("alice") });
    const user: UIMessage = { id: "u-stream", role: "user", parts: [{ type: "text", text: "weather in Oslo" }] };
    const stream = await transport.sendMessages({ chatId: `stream-${crypto.randomUUID()}`, messages: [user], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    const [raw, read] = stream.tee();
    const chunks: UIMessageChunk[] = [];
    const seen = (async () => {
      for await (const chunk of raw as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
    })();
    const snapshots: UIMessage[] = [];
    for await (const message of readUIMessageStream({ stream: read })) snapshots.push(structuredClone(message));
    await seen;
    const types = chunks.map((c) => c.type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("finish");
    expect(types.filter((t) => t === "text-delta").length).toBeGreaterThan(4);
    expect(types).toEqual(expect.arrayContaining(["start-step", "tool-input-start", "tool-input-delta", "tool-input-available", "tool-output-available", "finish-step", "text-end"]));
    expect(types.indexOf("tool-input-start")).toBeLessThan(types.indexOf("tool-input-available"));
    expect(chunks.filter((c) => c.type === "start-step")).toHaveLength(2); // one step per model call
    // The message grows as it streams: partial texts before the whole.
    const texts = snapshots.map(textOf);
    expect(texts.filter((t) => t && t !== texts.at(-1)).length).toBeGreaterThan(2);
    expect(texts.at(-1)).toBe("Let me check. The weather: sunny in Oslo");
  });

  it("asks for approval where LangChain's human-in-the-loop middleware interrupts; approved, the tool runs", async () => {
    const c = chat("agent", { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: "email bob" });
    const asked = c.messages[1]!.parts.find((p) => p.type === "tool-send_email") as { state: string; input: unknown; approval: { id: string; requestReason?: string } };
    expect(asked).toMatchObject({ state: "approval-requested", input: { to: "bob" } });
    expect(asked.approval.requestReason).toContain("Tool execution requires approval");
    await c.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until("the approved run", () => ({ status: c.status, parts: partsOf(c.messages.at(-1)) }), (v) => v.status === "ready" && v.parts.length === 2);
    expect(c.messages).toHaveLength(2); // the answer continues the same assistant message
    expect(partsOf(c.messages[1])).toEqual([
      { tool: "send_email", state: "output-available", input: { to: "bob" }, output: "sent to bob" },
      { text: "Result: sent to bob" },
    ]);
  });

  it("a denied approval answers output-denied and the agent goes on from the denial's reason", async () => {
    const c = chat("agent", { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: "email eve" });
    const asked = c.messages[1]!.parts.find((p) => p.type === "tool-send_email") as { approval: { id: string } };
    await c.addToolApprovalResponse({ id: asked.approval.id, approved: false, reason: "not today" });
    await until("the denied run", () => ({ status: c.status, parts: partsOf(c.messages.at(-1)) }), (v) => v.status === "ready" && v.parts.length === 2);
    expect(partsOf(c.messages[1])).toEqual([{ tool: "send_email", state: "output-denied", input: { to: "eve" } }, { text: "Result: not today" }]);
  });

  it("a graph's own interrupt that names a tool call is an approval on that call (the example agent)", async () => {
    const c = chat("calc", { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await c.sendMessage({ text: "what is 12 * (3 + 4)?" });
    const asked = c.messages[1]!.parts.find((p) => p.type === "tool-calculator") as { state: string; approval: { id: string } };
    expect(asked.state).toBe("approval-requested");
    await c.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await until("the calculation", () => ({ status: c.status, text: textOf(c.messages.at(-1)) }), (v) => v.status === "ready" && v.text !== "");
    expect(partsOf(c.messages[1])).toEqual([
      { tool: "calculator", state: "output-available", input: { expression: "12 * (3 + 4)" }, output: "84" },
      { text: "The answer is 84." },
    ]);
  });

  it("any other interrupt is the dynamic tool `interrupt`, answered with a tool output", async () => {
    const c = chat("ask", { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls });
    await c.sendMessage({ text: "hi" });
    const asked = c.messages[1]!.parts.find((p) => p.type === "dynamic-tool") as { toolName: string; toolCallId: string; state: string; input: unknown };
    expect(asked).toMatchObject({ toolName: "interrupt", state: "approval-requested", input: "What is your name?" });
    await c.addToolOutput({ tool: "interrupt", toolCallId: asked.toolCallId, output: "Ada" } as never);
    await until("the greeting", () => ({ status: c.status, text: textOf(c.messages.at(-1)) }), (v) => v.status === "ready" && v.text !== "");
    expect(textOf(c.messages[1])).toBe("Hello, Ada!");
    expect(c.messages).toHaveLength(2);
  });

  it("regenerate forks from the checkpoint before the last answer, again and again; the old answers stay in the history", async () => {
    const c = chat("agent");
    await c.sendMessage({ text: "hello" });
    const threadId = await chatThreadId("alice", c.id);
    const first = (await alice.threads.getState(threadId)).values as { messages: Array<{ id: string }> };
    await c.regenerate();
    expect(c.status).toBe("ready");
    expect(c.messages.map(textOf)).toEqual(["hello", "You said: hello"]);
    const now = (await alice.threads.getState(threadId)).values as { messages: Array<{ id: string }> };
    expect(now.messages).toHaveLength(2);
    expect(now.messages[0]!.id).toBe(first.messages[0]!.id);
    expect(now.messages[1]!.id).not.toBe(first.messages[1]!.id); // a new answer, not the old one kept
    const history = await alice.threads.getHistory(threadId, { limit: 100 });
    // The first answer stays in the history, on the branch the fork left.
    expect(history.some((h) => (h.values as { messages?: Array<{ id: string }> }).messages?.some((m) => m.id === first.messages[1]!.id))).toBe(true);
    // Regenerating again forks from the head's branch, not from the first answer's.
    await c.regenerate();
    expect(c.messages.map(textOf)).toEqual(["hello", "You said: hello"]);
    expect(((await alice.threads.getState(threadId)).values as { messages: unknown[] }).messages).toHaveLength(2);
    expect((await alice.runs.list(threadId)).map((r) => r.status)).toEqual(["success", "success", "success"]);
  });

  it("an edited user message forks from the checkpoint before it", async () => {
    const c = chat("agent");
    await c.sendMessage({ text: "hello" });
    await c.sendMessage({ text: "and more" });
    const edited = c.messages[2]!.id;
    await c.sendMessage({ text: "something else", messageId: edited });
    expect(c.messages.map(textOf)).toEqual(["hello", "You said: hello", "something else", "You said: something else"]);
    const state = (await alice.threads.getState(await chatThreadId("alice", c.id))).values as { messages: Array<{ id: string; content: unknown }> };
    expect(state.messages.map((m) => m.content)).toEqual(["hello", "You said: hello", "something else", "You said: something else"]);
    expect(state.messages[2]!.id).toBe(edited);
  });

  it("a chat id is the caller's own: the same id of two users names two threads, and a UUID id of another's thread is refused", async () => {
    const shared = `shared-${crypto.randomUUID().slice(0, 8)}`;
    const mine = chat("agent", { id: shared });
    const theirs = chat("agent", { id: shared, headers: as("bob"), api: `${where().base}/ai-sdk/chat/${bobAgent}` });
    await mine.sendMessage({ text: "from alice" });
    await theirs.sendMessage({ text: "from bob" });
    expect(textOf(theirs.messages[1])).toBe("You said: from bob");
    const aliceThread = await chatThreadId("alice", shared);
    expect(aliceThread).not.toBe(await chatThreadId("bob", shared));
    expect(((await alice.threads.getState(aliceThread)).values as { messages: unknown[] }).messages).toHaveLength(2);

    const uuidChat = chat("agent", { id: crypto.randomUUID() });
    await uuidChat.sendMessage({ text: "mine" });
    expect(await alice.threads.get(uuidChat.id)).toMatchObject({ thread_id: uuidChat.id }); // a UUID chat id is the thread id
    const before = await snapshot();
    const intruder = chat("agent", { id: uuidChat.id, headers: as("bob"), api: `${where().base}/ai-sdk/chat/${bobAgent}` });
    await intruder.sendMessage({ text: "let me in" });
    expect(intruder.status).toBe("error");
    expect(intruder.messages).toHaveLength(1);
    expect(await snapshot()).toEqual(before);
  });

  it("refuses a caller without credentials with 401 and the auth handler's challenge", async () => {
    const c = chat("agent", { headers: {} });
    await c.sendMessage({ text: "hi" });
    expect(c.status).toBe("error");
    expect((c.error as { statusCode?: number }).statusCode).toBe(401);
    const { base, fetch } = where();
    const res = await fetch(`${base}/ai-sdk/chat/${ids.agent}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('ApiKey realm="graphdock-test"');
    expect(await res.json()).toEqual({ detail: "Send a valid x-api-key" });
  });

  it("a stream the client abandons follows on_disconnect: cancel stops the run, the default lets it finish", async () => {
    for (const onDisconnect of ["cancel", undefined] as const) {
      const c = chat("slow", onDisconnect ? { body: { on_disconnect: onDisconnect } } : {});
      const sent = c.sendMessage({ text: "talk" });
      await until("the first words", () => textOf(c.messages[1]), (t) => t.length > 10);
      await c.stop();
      await sent;
      const threadId = await chatThreadId("alice", c.id);
      const [run] = await alice.runs.list(threadId);
      const ended = await settle(() => alice.runs.get(threadId, run!.run_id), (r) => r.status !== "pending" && r.status !== "running");
      expect([onDisconnect, ended.status]).toEqual([onDisconnect, onDisconnect === "cancel" ? "interrupted" : "success"]);
    }
  });

  it("a reloaded page follows the answer in flight again (useChat's resume), from its start; with none in flight, 204", async () => {
    const c = chat("slow");
    const sent = c.sendMessage({ text: "talk" });
    await until("the first words", () => textOf(c.messages[1]), (t) => t.length > 10);
    const reloaded = chat("slow", { id: c.id });
    await reloaded.resumeStream();
    await sent;
    expect(reloaded.status).toBe("ready");
    expect(reloaded.messages).toHaveLength(1); // the answer, rebuilt from the run's first event
    expect(reloaded.messages[0]).toEqual(c.messages[1]);
    expect(textOf(c.messages[1])).toMatch(/^w0 w1 .* w199 $/);
    const idle = chat("slow", { id: c.id });
    await idle.resumeStream();
    expect([idle.status, idle.messages]).toEqual(["ready", []]);
    const { base, fetch } = where();
    const res = await fetch(`${base}/ai-sdk/chat/${ids.slow}/${c.id}/stream`, { headers: as("alice") });
    expect(res.status).toBe(204);
  });

  it("answers what it cannot serve with an error part or a 4xx, and changes nothing", async () => {
    const { base, fetch } = where();
    const before = await snapshot();
    const post = (path: string, body: unknown, method = "POST") =>
      fetch(`${base}${path}`, { method, headers: { ...as("alice"), "content-type": "application/json" }, ...(method === "POST" ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}) });
    const errorPart = async (res: Response) => {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
      const text = await res.text();
      const events = text.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)) as UIMessageChunk);
      expect(events).toHaveLength(1);
      expect(events[0]!.type).toBe("error");
      return (events[0] as { errorText: string }).errorText;
    };
    const chatPath = `/ai-sdk/chat/${ids.agent}`;
    const user = (text: string, id = "m1"): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });
    expect(await errorPart(await post(chatPath, { messages: [user("x")] }))).toMatch(/^id must be/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [] }))).toMatch(/^messages must be/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [{ id: "m", role: "robot", parts: [] }] }))).toMatch(/^The last message is not a UI message/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [user("x")], trigger: "resume" }))).toMatch(/^trigger must be/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [user("x")], trigger: "regenerate-message" }))).toMatch(/not in this chat/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [{ id: "a", role: "assistant", parts: [{ type: "text", text: "hi" }] }] }))).toMatch(/not waiting for an answer/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [user("x")], config: "x" }))).toMatch(/^config must be an object/);
    expect(await errorPart(await post(chatPath, { id: "c", messages: [{ id: "m", role: "user", parts: [{ type: "step-start" }] }] }))).toMatch(/no text and no file/);
    expect((await post(`/ai-sdk/chat/${crypto.randomUUID()}`, { id: "c", messages: [user("x")] })).status).toBe(404);
    expect((await post("/ai-sdk/chat", {})).status).toBe(404);
    expect((await post(chatPath, undefined, "GET")).status).toBe(405);
    expect((await post(chatPath, "{not json")).status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });
});

describe("serve mounts the AI SDK endpoint when ai is installed", () => {
  it("serves /ai-sdk/chat by default and not with aiSdk: false", async () => {
    const runtime = await createRuntime({ graphs: { ask: lgAskGraph() } });
    const on = await serve(runtime, { port: 0 });
    const off = await serve(runtime, { port: 0, aiSdk: false });
    try {
      const c = new NodeChat({ id: "mounted", api: `${on.url}/ai-sdk/chat/ask` });
      await c.sendMessage({ text: "hi" });
      expect(partsOf(c.messages[1])).toEqual([{ tool: "interrupt", state: "approval-requested", input: "What is your name?" }]);
      const res = await fetch(`${off.url}/ai-sdk/chat/ask`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(404);
    } finally {
      await Promise.all([on.close(), off.close()]);
      await runtime.close();
    }
  });
});
