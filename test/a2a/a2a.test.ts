/**
 * A2A at /a2a/{assistant_id} (D32, D104, D105), judged by the official clients of both protocol
 * versions (`@a2a-js/sdk` 1.x for 1.0, 0.3.14 for 0.3), over a socket and through the fetch
 * handler: the card, send, stream, a follow-up in the same context, get, cancel of a slow run, an
 * interrupt answered through input-required; auth on every request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aEndpoint } from "../../src/a2a/index.js";
import { createRuntime } from "../../src/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import { echoGraph, gatedGraph } from "../http/graphs.js";
import { as, keyAuth, lgAskGraph, lgChatGraph, served, type Served } from "../http/protocol-fixtures.js";
import { v03Client, v1Client, withHeaders, type A2aTestClient, type SeenEvent } from "./clients.js";

const API_KEY = { schemes: { apiKey: { type: "apiKey" as const, name: "x-api-key", in: "header" as const } } };

describe("A2A with the official clients", () => {
  let s: Served;
  let gate: ReturnType<typeof gatedGraph>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    gate = gatedGraph();
    s = await served({ graphs: { echo: echoGraph(), chat: lgChatGraph(), ask: lgAskGraph(), gated: gate.graph }, auth: keyAuth() }, (onError) => [
      a2aEndpoint({ onError, security: API_KEY }),
    ]);
    const alice = await s.runtime.client({ headers: as("alice") });
    for (const [key, graphId, description] of [
      ["echo", "echo", "Adds an exclamation mark."],
      ["chat", "chat", "Repeats what you said."],
      ["ask", "ask", undefined],
      ["slow", "gated", undefined],
    ] as const) {
      ids[key] = (await alice.assistants.create({ graphId, name: `${key} agent`, ...(description ? { description } : {}) })).assistant_id;
    }
  });
  afterAll(async () => {
    gate.release();
    await s.close();
    expect(s.faults).toEqual([]);
  });

  const transports = [
    ["through the fetch handler", () => ({ base: "http://in-process", fetch: s.inProcess })],
    ["over a socket", () => ({ base: s.server.url, fetch: globalThis.fetch })],
  ] as const;
  const versions = [
    ["A2A 1.0", v1Client],
    ["A2A 0.3", v03Client],
  ] as const;
  const cardUrl = (base: string, key: string) => `${base}/.well-known/agent-card.json?assistant_id=${ids[key]}`;

  describe.each(transports)("%s", (_t, where) => {
    describe.each(versions)("%s", (version, make) => {
      const client = async (key: string, user: "alice" | "bob" = "alice"): Promise<A2aTestClient> => {
        const { base, fetch } = where();
        return make(cardUrl(base, key), withHeaders(as(user), fetch));
      };

      it("serves the card: the assistant's name and description, its JSON-RPC URL, streaming, the auth scheme", async () => {
        const { card } = await client("echo");
        const url = `${where().base}/a2a/${ids.echo}`;
        expect(card).toMatchObject({ name: "echo agent", description: "Adds an exclamation mark.", capabilities: { streaming: true, pushNotifications: false } });
        if (version === "A2A 1.0") {
          expect(card.supportedInterfaces).toEqual([
            { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
            { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
          ]);
          expect(card.securitySchemes).toEqual({ apiKey: { apiKeySecurityScheme: { location: "header", name: "x-api-key" } } });
          expect(card.securityRequirements).toEqual([{ schemes: { apiKey: {} } }]); // no scopes: an empty list, omitted
        } else {
          expect(card).toMatchObject({ url, protocolVersion: "0.3.0", preferredTransport: "JSONRPC" });
          expect(card.securitySchemes).toEqual(API_KEY.schemes);
          expect(card.security).toEqual([{ apiKey: [] }]);
        }
      });

      it("sends a message: data parts are the input, the result comes back as an artifact; get reads the same task", async () => {
        const c = await client("echo");
        const task = await c.send([{ data: { text: "hi" } }]);
        expect(task).toMatchObject({ state: "completed", artifacts: [[{ data: { text: "hi!" } }]] });
        expect(task.id.startsWith(`${task.contextId}:`)).toBe(true);
        expect(await c.get(task.id)).toEqual(task);
        // The task is the runtime's run, on the context's thread.
        const alice = await s.runtime.client({ headers: as("alice") });
        const [run] = await alice.runs.list(task.contextId);
        expect(task.id).toBe(`${task.contextId}:${run!.run_id}`);
        expect(run!.status).toBe("success");
      });

      it("answers text with the last AI message, and a follow-up in the same context continues its thread", async () => {
        const c = await client("chat");
        const first = await c.send([{ text: "hello" }]);
        expect(first.artifacts).toEqual([[{ text: "You said: hello" }]]);
        const second = await c.send([{ text: "again" }], { contextId: first.contextId });
        expect(second.contextId).toBe(first.contextId);
        expect(second.id).not.toBe(first.id);
        expect(second.artifacts).toEqual([[{ text: "You said: again" }]]);
        const state = await (await s.runtime.client({ headers: as("alice") })).threads.getState(first.contextId);
        expect((state.values as { messages: unknown[] }).messages).toHaveLength(4);
        // The first task still reads as it ended, from its own checkpoint.
        expect((await c.get(first.id)).artifacts).toEqual([[{ text: "You said: hello" }]]);
      });

      it("streams a run: the task, working, the reply token by token, the final artifact, completed", async () => {
        const c = await client("chat");
        const events: SeenEvent[] = [];
        for await (const e of c.stream([{ text: "stream me" }])) events.push(e);
        expect(events[0]).toMatchObject({ kind: "task", task: { state: expect.stringMatching(/submitted|working/) } });
        const chunks = events.filter((e): e is Extract<SeenEvent, { kind: "artifact" }> => e.kind === "artifact" && !e.lastChunk);
        expect(chunks.length).toBeGreaterThan(3);
        expect(chunks.map((e) => ("text" in e.parts[0]! ? e.parts[0].text : "")).join("")).toBe("You said: stream me");
        expect(chunks.slice(1).every((e) => e.append)).toBe(true);
        expect(events.at(-2)).toEqual({ kind: "artifact", parts: [{ text: "You said: stream me" }], append: false, lastChunk: true });
        expect(events.at(-1)).toMatchObject({ kind: "status", state: "completed", ...(version === "A2A 0.3" ? { final: true } : {}) });
      });

      it("cancels a slow task: the run is cancelled, and a task that ended cannot be", async () => {
        const c = await client("slow");
        const task = await c.send([{ data: {} }], { immediate: true });
        expect(task.state).toMatch(/submitted|working/);
        const cancelled = await c.cancel(task.id);
        expect(cancelled.state).toBe("canceled");
        expect((await c.get(task.id)).state).toBe("canceled");
        const alice = await s.runtime.client({ headers: as("alice") });
        const run = await alice.runs.get(task.contextId, task.id.split(":")[1]!);
        expect(run.status).toBe("interrupted");
        await expect(c.cancel(task.id)).rejects.toThrow(/cannot be canceled/);
      });

      it("asks for input through input-required and takes the answer in the next message of the task", async () => {
        const c = await client("ask");
        const asked = await c.send([{ text: "hi" }]);
        expect(asked).toMatchObject({ state: "input-required", status: [{ text: "What is your name?" }], artifacts: [] });
        const done = await c.send([{ text: "Ada" }], { taskId: asked.id, contextId: asked.contextId });
        expect(done).toMatchObject({ id: asked.id, contextId: asked.contextId, state: "completed", artifacts: [[{ text: "Hello, Ada!" }]] });
        expect(await c.get(asked.id)).toEqual(done);
        // A task that is over takes no more messages (UnsupportedOperation, which the 0.3 client words itself).
        await expect(c.send([{ text: "again" }], { taskId: asked.id })).rejects.toThrow(version === "A2A 1.0" ? /not waiting for input/ : /not supported/);
      });

      it("answers an interrupt with the next message of its context, streamed", async () => {
        const c = await client("ask");
        const asked = await c.send([{ text: "hi" }]);
        const events: SeenEvent[] = [];
        for await (const e of c.stream([{ text: "Grace" }], { contextId: asked.contextId })) events.push(e);
        expect(events[0]).toMatchObject({ kind: "task", task: { id: asked.id } });
        expect(events.at(-2)).toMatchObject({ kind: "artifact", parts: [{ text: "Hello, Grace!" }] });
        expect(events.at(-1)).toMatchObject({ kind: "status", state: "completed" });
      });

      it("keeps tasks to their owner: another user finds neither the task nor the agent", async () => {
        const c = await client("echo");
        const task = await c.send([{ data: { text: "secret" } }]);
        const { base, fetch } = where();
        // Bob cannot even read Alice's agent card.
        const card = await withHeaders(as("bob"), fetch)(cardUrl(base, "echo"));
        expect(card.status).toBe(404);
        // Through an agent of his own, her task is not found.
        const bobs = await (await s.runtime.client({ headers: as("bob") })).assistants.create({ graphId: "echo", name: "bob" });
        const bob = await make(`${base}/.well-known/agent-card.json?assistant_id=${bobs.assistant_id}`, withHeaders(as("bob"), fetch));
        await expect(bob.get(task.id)).rejects.toThrow(/not found/i);
        await expect(bob.cancel(task.id)).rejects.toThrow(/not found/i);
        await expect(bob.send([{ text: "x" }], { contextId: task.contextId })).rejects.toThrow();
        expect((await c.get(task.id)).artifacts).toEqual([[{ data: { text: "secret!" } }]]);
      });
    });

    it("refuses a caller without credentials with 401 and the auth handler's WWW-Authenticate, card and JSON-RPC alike", async () => {
      const { base, fetch } = where();
      const card = await fetch(cardUrl(base, "echo"));
      expect(card.status).toBe(401);
      expect(card.headers.get("www-authenticate")).toBe('ApiKey realm="graphdock-test"');
      const rpc = await fetch(`${base}/a2a/${ids.echo}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }),
      });
      expect(rpc.status).toBe(401);
      expect(rpc.headers.get("www-authenticate")).toBe('ApiKey realm="graphdock-test"');
      expect(await rpc.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001 } });
    });
  });
});

describe("the card's auth scheme without the security option", () => {
  it("declares none when anonymous callers are accepted, else the scheme the auth handler's challenge names", async () => {
    const open = await createRuntime({ graphs: { echo: echoGraph() } });
    const handler = createFetchHandler(open, { endpoints: [a2aEndpoint()] });
    const card = await (await handler(new Request("http://x/.well-known/agent-card.json?assistant_id=echo", { headers: { "A2A-Version": "1.0" } }))).json();
    expect(card.securitySchemes).toBeUndefined();
    await open.close();
    const guarded = await createRuntime({ graphs: { echo: echoGraph() }, auth: keyAuth() });
    const alice = await guarded.client({ headers: as("alice") });
    const { assistant_id } = await alice.assistants.create({ graphId: "echo" });
    const guardedHandler = createFetchHandler(guarded, { endpoints: [a2aEndpoint()] });
    const v03 = await (await guardedHandler(new Request(`http://x/.well-known/agent-card.json?assistant_id=${assistant_id}`, { headers: as("alice") }))).json();
    expect(v03.securitySchemes).toEqual({ apikey: { type: "http", scheme: "apikey" } });
    await guarded.close();
  });
});
