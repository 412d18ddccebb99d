/**
 * MCP at /mcp (D32, D100-D103), judged by the official client (`Client` +
 * `StreamableHTTPClientTransport` of @modelcontextprotocol/sdk), over a socket and through the
 * fetch handler: tools from assistants, calls on fresh or named threads, auth, cancellation (also
 * when the cancellation reaches another process), the Origin guard.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createRuntime, memoryStore, type RuntimeEvent } from "../../src/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import { mcpEndpoint } from "../../src/mcp/index.js";
import { serve } from "../../src/node/index.js";
import { echoGraph, gatedGraph } from "../http/graphs.js";
import { as, keyAuth, lgChatGraph, served, type Served } from "../http/protocol-fixtures.js";

async function connect(url: string, headers: Record<string, string>, fetchImpl?: typeof fetch): Promise<Client> {
  const client = new Client({ name: "graphdock-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, ...(fetchImpl ? { fetch: fetchImpl } : {}) }));
  return client;
}

/** The end of an id, as tool names carry it when assistants share a name. */
const short = (id: string) => id.replace(/-/g, "").slice(-8);
const text = (result: Awaited<ReturnType<Client["callTool"]>>) => (result.content as Array<{ type: string; text: string }>).map((c) => c.text);

describe("MCP with the official client", () => {
  let s: Served;
  let gate: ReturnType<typeof gatedGraph>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    gate = gatedGraph();
    s = await served({ graphs: { echo: echoGraph(), chat: lgChatGraph(), gated: gate.graph }, auth: keyAuth() }, (onError) => [mcpEndpoint({ onError })]);
    const alice = await s.runtime.client({ headers: as("alice") });
    // Two assistants with one name (tool names must still differ), one described, one slow.
    ids.helper1 = (await alice.assistants.create({ graphId: "echo", name: "helper", description: "Adds an exclamation mark." })).assistant_id;
    ids.helper2 = (await alice.assistants.create({ graphId: "echo", name: "helper" })).assistant_id;
    ids.chat = (await alice.assistants.create({ graphId: "chat", name: "chat bot" })).assistant_id;
    ids.slow = (await alice.assistants.create({ graphId: "gated", name: "slow" })).assistant_id;
    const bob = await s.runtime.client({ headers: as("bob") });
    ids.bobs = (await bob.assistants.create({ graphId: "echo", name: "bobs-echo" })).assistant_id;
  });
  afterAll(async () => {
    gate.release();
    await s.close();
    expect(s.faults).toEqual([]);
  });

  const transports = [
    ["through the fetch handler", () => ({ url: "http://in-process/mcp", fetch: s.inProcess })],
    ["over a socket", () => ({ url: `${s.server.url}/mcp`, fetch: undefined })],
  ] as const;

  describe.each(transports)("%s", (_name, where) => {
    it("lists one tool per assistant the caller may see, with unique names, the graph's input schema and a thread argument", async () => {
      const { url, fetch } = where();
      const client = await connect(url, as("alice"), fetch);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      expect(names).toEqual(["chat_bot", `helper_${short(ids.helper1!)}`, `helper_${short(ids.helper2!)}`, "slow"].sort());
      const helper1 = tools.find((t) => t.name === `helper_${short(ids.helper1!)}`)!;
      expect(helper1.description).toBe("Adds an exclamation mark.");
      expect(helper1.inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" }, thread_id: { type: "string", format: "uuid" } } });
      expect(tools.find((t) => t.name === "chat_bot")!.inputSchema.properties).toHaveProperty("messages");
      // Bob sees his own assistant only.
      const bob = await connect(url, as("bob"), fetch);
      expect((await bob.listTools()).tools.map((t) => t.name)).toEqual(["bobs-echo"]);
      await Promise.all([client.close(), bob.close()]);
    });

    it("calls a tool on a fresh thread: the final values as structured content, the last AI message as text, nothing left behind", async () => {
      const { url, fetch } = where();
      const client = await connect(url, as("alice"), fetch);
      const alice = await s.runtime.client({ headers: as("alice") });
      const threadsBefore = await alice.threads.count();
      const echo = await client.callTool({ name: `helper_${short(ids.helper1!)}`, arguments: { text: "hi" } });
      expect(echo.isError).toBeFalsy();
      expect(echo.structuredContent).toEqual({ text: "hi!" });
      expect(text(echo)).toEqual(['{"text":"hi!"}']);
      const chat = await client.callTool({ name: "chat_bot", arguments: { messages: [{ role: "user", content: "hello" }] } });
      expect(text(chat)).toEqual(["You said: hello"]);
      expect((chat.structuredContent as { messages: unknown[] }).messages).toHaveLength(2);
      expect(chat._meta?.["graphdock/run_id"]).toEqual(expect.any(String));
      expect(await alice.threads.count()).toBe(threadsBefore);
      await client.close();
    });

    it("calls a tool on the thread its thread_id names, created on first use and continued after", async () => {
      const { url, fetch } = where();
      const client = await connect(url, as("alice"), fetch);
      const threadId = crypto.randomUUID();
      await client.callTool({ name: "chat_bot", arguments: { thread_id: threadId, messages: [{ role: "user", content: "one" }] } });
      const second = await client.callTool({ name: "chat_bot", arguments: { thread_id: threadId, messages: [{ role: "user", content: "two" }] } });
      expect(text(second)).toEqual(["You said: two"]);
      expect((second.structuredContent as { messages: unknown[] }).messages).toHaveLength(4);
      expect(second._meta?.["graphdock/thread_id"]).toBe(threadId);
      const state = await (await s.runtime.client({ headers: as("alice") })).threads.getState(threadId);
      expect((state.values as { messages: unknown[] }).messages).toHaveLength(4);
      // Bob may not use Alice's thread: a tool error he can read, and her thread is unchanged.
      const bob = await connect(url, as("bob"), fetch);
      const refused = await bob.callTool({ name: "bobs-echo", arguments: { thread_id: threadId, text: "x" } });
      expect(refused.isError).toBe(true);
      expect((await (await s.runtime.client({ headers: as("alice") })).threads.getState(threadId)).values).toEqual(state.values);
      await Promise.all([client.close(), bob.close()]);
    });

    it("answers an unknown tool and a bad thread id with the protocol's errors", async () => {
      const { url, fetch } = where();
      const client = await connect(url, as("bob"), fetch);
      await expect(client.callTool({ name: "chat_bot", arguments: {} })).rejects.toMatchObject({ code: -32602 });
      const bad = await client.callTool({ name: "bobs-echo", arguments: { thread_id: "not a uuid", text: "x" } });
      expect(bad.isError).toBe(true);
      await client.close();
    });

    it("refuses a caller without credentials with 401 and the auth handler's WWW-Authenticate", async () => {
      const { url, fetch } = where();
      const error = await connect(url, {}, fetch).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect((error as StreamableHTTPError).code).toBe(401);
      const raw = await (fetch ?? globalThis.fetch)(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(raw.status).toBe(401);
      expect(raw.headers.get("www-authenticate")).toBe('ApiKey realm="graphdock-test"');
      expect(await raw.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Send a valid x-api-key" } });
    });
  });

  it("cancels the run when the client cancels the call", async () => {
    const finished = new Promise<Extract<RuntimeEvent, { type: "run.finished" }>>((resolve) => {
      const off = s.runtime.subscribe("run.finished", (e) => {
        if (e.run.assistant_id === ids.slow) {
          off();
          resolve(e);
        }
      });
    });
    const started = new Promise<void>((resolve) => {
      const off = s.runtime.subscribe("run.started", (e) => {
        if (e.run.assistant_id === ids.slow) {
          off();
          resolve();
        }
      });
    });
    const client = await connect(`${s.server.url}/mcp`, as("alice"));
    const abort = new AbortController();
    const call = client.callTool({ name: "slow", arguments: {} }, undefined, { signal: abort.signal });
    await started;
    abort.abort("the user changed their mind");
    await expect(call).rejects.toThrow();
    const { run } = await finished;
    expect(run.status).toBe("interrupted");
    expect(run.metadata).toMatchObject({ mcp_call: expect.stringMatching(/^[0-9a-f-]{36} \d+$/) });
    await client.close();
  });

  it("guards against DNS rebinding: a browser origin that is not loopback is refused unless allowed", async () => {
    const post = (origin: string, handler = s.handler) =>
      handler(
        new Request("http://localhost:2024/mcp", {
          method: "POST",
          headers: { origin, "content-type": "application/json", accept: "application/json, text/event-stream", ...as("alice") },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        }),
      );
    const evil = await post("http://evil.example:2024");
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: { code: -32000 } });
    expect((await post("http://localhost:6274")).status).toBe(200);
    expect((await post("http://127.0.0.1:3000")).status).toBe(200);
    const allowing = createFetchHandler(s.runtime, { endpoints: [mcpEndpoint({ allowedOrigins: ["https://app.example"] })] });
    expect((await post("https://app.example", allowing)).status).toBe(200);
    expect((await post("http://localhost:6274", allowing)).status).toBe(403);
  });

  it("answers GET and DELETE with 405: the server is stateless", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await s.handler(new Request("http://x/mcp", { method, headers: { accept: "text/event-stream", ...as("alice") } }));
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });
});

describe("MCP behind a load balancer without affinity", () => {
  it("cancels a call whose cancellation reaches another process on the same store", async () => {
    const store = memoryStore();
    const gate = gatedGraph();
    const a = await createRuntime({ graphs: { gated: gate.graph }, store });
    const b = await createRuntime({ graphs: { gated: gate.graph }, store });
    const handlers = [a, b].map((r) => createFetchHandler(r, { endpoints: [mcpEndpoint()] }));
    const seen: string[] = [];
    // The balancer: the cancellation goes to process b, everything else to process a.
    const balancer = (async (input: string | URL | Request, init?: RequestInit) => {
      const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
      const to = body.method === "notifications/cancelled" ? 1 : 0;
      seen.push(`${body.method ?? init?.method} -> ${to ? "b" : "a"}`);
      return handlers[to]!(new Request(input, init));
    }) as typeof fetch;
    const started = new Promise<{ thread_id: string; run_id: string }>((resolve) => a.subscribe("run.started", (e) => resolve(e.run)));
    const client = await connect("http://balanced/mcp", {}, balancer);
    const abort = new AbortController();
    const call = client.callTool({ name: "gated", arguments: {} }, undefined, { signal: abort.signal });
    const run = await started;
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(async () => (await b.runs.get(run.thread_id, run.run_id).catch(() => ({ status: "gone" }))).status, { timeout: 5000 }).not.toMatch(/pending|running/);
    expect(seen).toContain("notifications/cancelled -> b");
    await client.close();
    gate.release();
    await a.close();
    await b.close();
  });
});

describe("serve mounts MCP when its library is installed", () => {
  it("serves /mcp by default and not with mcp: false", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const on = await serve(runtime, { port: 0 });
    const off = await serve(runtime, { port: 0, mcp: false });
    try {
      const client = await connect(`${on.url}/mcp`, {});
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo"]);
      await client.close();
      const res = await fetch(`${off.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(404);
    } finally {
      await Promise.all([on.close(), off.close()]);
      await runtime.close();
    }
  });
});
