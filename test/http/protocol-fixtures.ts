/**
 * What the protocol endpoint tests (test/mcp, test/a2a) share: LangGraph.js graphs (a chat whose
 * model streams its tokens, one that asks a question through `interrupt()`), an API-key auth that
 * stamps and filters owners, and a runtime served both through the fetch handler and a socket.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Auth, createRuntime, HTTPException, memoryStore, type CreateRuntimeOptions, type Runtime } from "../../src/index.js";
import { createFetchHandler, type FetchHandler, type HttpEndpoint } from "../../src/http/index.js";
import { serve, type ServeHandle, type ServeOptions } from "../../src/node/index.js";

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/** chat: a model answers `You said: <last message>`, streaming it token by token. */
export function lgChatGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", async (state, config) => {
      const model = new FakeListChatModel({ responses: [`You said: ${textOf(state.messages.at(-1))}`] });
      return { messages: [await model.invoke(state.messages, config)] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile();
}

/** ask: asks "What is your name?" (interrupt) and greets the answer. */
export function lgAskGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => {
      const name = interrupt("What is your name?");
      return { messages: [new AIMessage(`Hello, ${String(name)}!`)] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile();
}

/** API keys of the tests' users. */
export const KEYS = { alice: "alice-key", bob: "bob-key" } as const;
export const as = (user: keyof typeof KEYS) => ({ "x-api-key": KEYS[user] });

/** `x-api-key` auth: a missing or unknown key is a 401 with a challenge; everything is its owner's. */
export function keyAuth() {
  const users = new Map<string, string>(Object.entries(KEYS).map(([user, key]) => [key, user]));
  return new Auth()
    .authenticate(({ headers }) => {
      const identity = users.get(headers["x-api-key"] ?? "");
      if (!identity) throw new HTTPException(401, { message: "Send a valid x-api-key", headers: { "www-authenticate": 'ApiKey realm="graphdock-test"' } });
      return { identity };
    })
    .on("*", ({ user, value }) => {
      if (value && typeof value === "object" && "metadata" in value) value.metadata = { ...(value.metadata as object), owner: user.identity };
      return { owner: user.identity };
    });
}

/** A runtime with its fetch handler and a socket server, both mounting `endpoints`. */
export interface Served {
  runtime: Runtime;
  handler: FetchHandler;
  server: ServeHandle;
  faults: unknown[];
  /** A `fetch` that goes through the fetch handler, without a network. */
  inProcess: typeof fetch;
  close(): Promise<void>;
}

export async function served(options: CreateRuntimeOptions, endpoints: (onError: (err: unknown) => void) => HttpEndpoint[], serveOptions: ServeOptions = {}): Promise<Served> {
  const runtime = await createRuntime({ store: memoryStore(), ...options });
  const faults: unknown[] = [];
  const onError = (err: unknown) => faults.push(err);
  const mounted = endpoints(onError);
  const handler = createFetchHandler(runtime, { endpoints: mounted, onError });
  const server = await serve(runtime, { port: 0, onError, mcp: false, a2a: false, aiSdk: false, endpoints: mounted, ...serveOptions });
  return {
    runtime,
    handler,
    server,
    faults,
    inProcess: (async (input: string | URL | Request, init?: RequestInit) => handler(new Request(input, init))) as typeof fetch,
    async close() {
      await server.close();
      await runtime.close();
    },
  };
}
