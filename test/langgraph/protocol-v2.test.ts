/**
 * The v2 streaming protocol serves LangGraph.js graphs too: the official SDK's
 * `client.threads.stream()` (ThreadStream) over SSE and in process, against the `createAgent`
 * agent and the `StateGraph` echo (tokens, tool calls, an interrupt answered with input.respond).
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echo, graph as agent } from "../../examples/node/agent-langgraph.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { human, until } from "../protocol-v2/helpers.js";

let runtime: Runtime;
let server: ServeHandle;
let client: Client;
beforeAll(async () => {
  runtime = await createRuntime({ graphs: { agent, echo } });
  server = await serve(runtime, { port: 0, heartbeatMs: 0 });
  client = new Client({ apiUrl: server.url });
});
afterAll(async () => {
  await server.close();
  await runtime.close();
});

type Msg = { type?: string; content?: unknown; getType?: () => string };
const typeOf = (m: Msg) => (typeof m.getType === "function" ? m.getType() : m.type);
let n = 0;
const newThread = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;

for (const kind of ["sse", "in-process"] as const) {
  const stream = (threadId: string, assistantId: string) =>
    client.threads.stream(threadId, { assistantId, ...(kind === "in-process" ? { transport: new InProcessTransport(runtime) } : {}) } as never);

  describe(`ThreadStream over ${kind}, LangGraph.js graphs`, () => {
    it("streams the model's tokens as message deltas", async () => {
      const thread = stream(newThread(), "echo");
      const deltas: string[] = [];
      const texts: string[] = [];
      const reading = (async () => {
        for await (const msg of thread.messages) {
          for await (const d of msg.text) deltas.push(d);
          texts.push(await msg.text);
        }
      })();
      await thread.run.start({ input: human("hello there") });
      const output = (await thread.output) as { messages: Msg[] };
      expect(output.messages.map(typeOf)).toEqual(["human", "ai"]);
      await until(() => texts.length === 1);
      expect(texts[0]).toContain("You said: hello there");
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join("")).toBe(texts[0]);
      await thread.close();
      void reading;
    });

    it("reports the tool call and the approval interrupt, and resumes with input.respond", async () => {
      const threadId = newThread();
      const thread = stream(threadId, "agent");
      await thread.run.start({ input: human("what is 6 * 7?") });
      await thread.output;
      expect(thread.interrupted).toBe(true);
      const interrupt = thread.interrupts[0]!;
      expect(interrupt.payload).toEqual({ question: "Run calculator(6 * 7)?" });
      await thread.input.respond({ namespace: [], interrupt_id: interrupt.interruptId, response: "yes" } as never);
      await until(async () => (await runtime.threads.get(threadId)).status === "idle");
      const state = await runtime.threads.getState<{ messages: Array<{ type: string; content: string }> }>(threadId);
      expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect(state.values.messages[3]!.content).toBe("The answer is 42.");
      await thread.close();
    });
  });
}
