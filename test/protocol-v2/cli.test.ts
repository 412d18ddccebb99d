/**
 * The v2 protocol on `graphdock serve` (the CLI): the official ThreadStream over SSE and over the
 * WebSocket transport, and WebSocket auth (refused with 4401; users isolated).
 */
import { Client } from "@langchain/langgraph-sdk";
import WebSocket from "ws";
import { describe, expect, it } from "vitest";
import { human, startCli as start } from "./helpers.js";

type Msg = { content?: unknown };

describe("graphdock serve speaks the v2 protocol", () => {
  it("over SSE and WebSocket: a streamed reply, an interrupt and its answer", async () => {
    const server = await start(["serve", "--config", "examples/graph.json", "--port", "0"]);
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null });
      for (const transport of ["sse", "websocket"] as const) {
        const threadId = crypto.randomUUID();
        const options = { assistantId: "agent", transport, ...(transport === "websocket" ? { webSocketFactory: (u: string) => new WebSocket(u) as never } : {}) };
        const thread = client.threads.stream(threadId, options as never);
        const deltas: string[] = [];
        const reading = (async () => {
          for await (const m of thread.messages) for await (const d of m.text) deltas.push(d);
        })();
        await thread.run.start({ input: human("what is 7 * 8?") });
        await thread.output;
        expect(thread.interrupts).toHaveLength(1);
        await thread.close();
        void reading;
        const again = client.threads.stream(threadId, options as never);
        const texts: string[] = [];
        const readingAgain = (async () => {
          for await (const m of again.messages) texts.push(await m.text);
        })();
        await again.input.respond({ namespace: [], interrupt_id: thread.interrupts[0]!.interruptId, response: true } as never);
        // What the client saw: the resumed run's output and its streamed reply.
        const out = (await again.output) as { messages: Msg[] };
        expect(out.messages.at(-1)!.content).toBe("The answer is 56.");
        await readingAgain;
        expect(texts.at(-1)).toBe("The answer is 56.");
        await again.close();
      }
    } finally {
      await server.stop();
    }
  });

  it("authenticates WebSocket connections: 4401 without a key, and a user cannot watch another's thread", async () => {
    const server = await start(["serve", "--config", "test/http/fixtures/auth-graph.json", "--port", "0"]);
    try {
      const url = (id: string) => `${server.url.replace("http", "ws")}/threads/${id}/stream/events`;
      const anonymous = new WebSocket(url(crypto.randomUUID()));
      const code = await new Promise((resolve) => anonymous.once("close", (c) => resolve(c)));
      expect(code).toBe(4401);

      const alice = new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: { "x-api-key": "key-alice" } });
      const thread = await alice.threads.create();
      const bob = new WebSocket(url(thread.thread_id), { headers: { "x-api-key": "key-bob" } });
      const got: Array<Record<string, any>> = [];
      bob.on("message", (d) => got.push(JSON.parse(d.toString())));
      await new Promise((ok) => bob.once("open", ok));
      bob.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["values", "lifecycle", "messages"] } }));
      await alice.runs.wait(thread.thread_id, "echo", { input: human("secret") });
      await new Promise((r) => setTimeout(r, 200));
      expect(got.filter((m) => m.type === "event")).toEqual([]);
      bob.send(JSON.stringify({ id: 2, method: "run.start", params: { assistant_id: "echo", input: human("mine?") } }));
      await new Promise((r) => setTimeout(r, 300));
      expect(got.find((m) => m.id === 2)).toMatchObject({ type: "error" });
      expect(got.filter((m) => m.type === "event")).toEqual([]);
      // Bob's attempts do not break Alice's view of her thread.
      const mine = new WebSocket(url(thread.thread_id), { headers: { "x-api-key": "key-alice" } });
      const seen: Array<Record<string, any>> = [];
      mine.on("message", (d) => seen.push(JSON.parse(d.toString())));
      await new Promise((ok) => mine.once("open", ok));
      mine.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle", "messages"] } }));
      bob.send(JSON.stringify({ id: 3, method: "state.get", params: { namespace: [] } }));
      await new Promise((r) => setTimeout(r, 200));
      for await (const _ of alice.runs.stream(thread.thread_id, "echo", { input: human("again"), streamMode: ["messages-tuple"] }));
      for (let i = 0; i < 500 && !seen.some((m) => m.method === "lifecycle" && m.params.data.event === "completed"); i++) await new Promise((r) => setTimeout(r, 20));
      const lifecycle = seen.filter((m) => m.method === "lifecycle").map((m) => m.params.data.event);
      expect(lifecycle.slice(-2)).toEqual(["running", "completed"]);
      expect(seen.some((m) => m.method === "messages" && m.params.data.event === "content-block-delta")).toBe(true);
      expect(got.filter((m) => m.type === "event")).toEqual([]);
      expect(got.find((m) => m.id === 3)).toMatchObject({ type: "error" });
      mine.close();
      bob.close();
    } finally {
      await server.stop();
    }
  });
});
