/**
 * What the AI SDK endpoint tests share: a LangChain `createAgent` agent on a scripted model (a
 * weather tool it runs, an email tool that needs a human's approval through LangChain's
 * human-in-the-loop middleware), a graph that asks a free question, a slow streaming graph, and
 * the AI SDK's own chat (`AbstractChat` from `ai`, the logic `useChat` runs) with the state a
 * Node program would keep.
 */
import { tool } from "@langchain/core/tools";
import { AbstractChat, DefaultChatTransport, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { z } from "zod";
import { END, START, StateGraph, messagesState, type RuntimeClient } from "../../src/index.js";
import { ScriptedChatModel } from "./model.js";

/** The agent: `weather in <city>` runs get_weather; `email <name>` asks before send_email runs. */
export function chatAgent() {
  const weather = tool(async ({ city }) => `sunny in ${city}`, { name: "get_weather", description: "The weather in a city", schema: z.object({ city: z.string() }) });
  const email = tool(async ({ to }) => `sent to ${to}`, { name: "send_email", description: "Sends an email", schema: z.object({ to: z.string() }) });
  return createAgent({ model: new ScriptedChatModel({}), tools: [weather, email], middleware: [humanInTheLoopMiddleware({ interruptOn: { send_email: true } })] });
}

/** Streams `words` words, one every `ms` ms, honouring cancellation; then answers. */
export function slowGraph(words = 200, ms = 20) {
  return new StateGraph(messagesState)
    .addNode("talk", async (_s, ctx) => {
      const id = `slow-${String(ctx.config.configurable.run_id)}`;
      for (let i = 0; i < words; i++) {
        if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error("cancelled");
        ctx.emitMessage({ id, type: "AIMessageChunk", content: `w${i} ` });
        await new Promise((r) => setTimeout(r, ms));
      }
      return { messages: [{ id, type: "ai", content: "done" }] };
    })
    .addEdge(START, "talk")
    .addEdge("talk", END)
    .compile();
}

class NodeChatState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: M[];
  constructor(messages: M[] = []) {
    this.messages = messages;
  }
  pushMessage = (message: M) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: M) => void (this.messages = [...this.messages.slice(0, index), this.snapshot(message), ...this.messages.slice(index + 1)]);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's chat (what `useChat` wraps) with its state in memory. */
export class NodeChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor(init: Omit<ChatInit<M>, "transport"> & { api: string; fetch?: typeof fetch; headers?: Record<string, string>; body?: object }) {
    const { api, fetch, headers, body, messages, ...rest } = init;
    super({ ...rest, state: new NodeChatState<M>(messages), transport: new DefaultChatTransport<M>({ api, ...(fetch ? { fetch } : {}), ...(headers ? { headers } : {}), ...(body ? { body } : {}) }) });
  }
}

/** The text of a UI message's text parts. */
export const textOf = (m: UIMessage | undefined) => (m?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");

/** A UI message's parts without the step markers, reduced to what the tests compare. */
export function partsOf(m: UIMessage | undefined) {
  return (m?.parts ?? []).flatMap((p): unknown[] => {
    if (p.type === "step-start") return [];
    if (p.type === "text") return [{ text: p.text }];
    if ("toolCallId" in p) {
      const name = p.type === "dynamic-tool" ? p.toolName : p.type.slice("tool-".length);
      return [{ tool: name, state: p.state, input: p.input, ...(p.state === "output-available" ? { output: p.output } : {}) }];
    }
    return [{ type: p.type }];
  });
}

/** Everything `clients` can read (assistants, threads with their state, history and runs), to compare before and after. */
export async function contents(clients: readonly RuntimeClient[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const client of clients) {
    out.push(await client.assistants.search({ limit: 1000 }));
    for (const thread of await client.threads.search({ limit: 1000 })) {
      const id = thread.thread_id;
      out.push(thread, await client.threads.getState(id), await client.threads.getHistory(id, { limit: 1000 }), await client.runs.list(id, { limit: 1000 }));
    }
  }
  return out;
}
