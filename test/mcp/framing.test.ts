/**
 * How tool calls are answered (D102, src/mcp/framing.ts): a quick call as JSON, a call that
 * outlasts the JSON wait as an SSE stream with keep-alive comments; the official client reads both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StateGraph, END, START } from "../../src/graph/index.js";
import { mcpEndpoint } from "../../src/mcp/index.js";
import { JSON_WITHIN_MS, jsonOrStream } from "../../src/mcp/framing.js";
import { echoGraph } from "../http/graphs.js";
import { served, type Served } from "../http/protocol-fixtures.js";

/** `{ text }` -> `{ text: text + "." }`, answered after `ms` milliseconds. */
const sleepyGraph = (ms: number) =>
  new StateGraph({ text: { default: () => "" } })
    .addNode("sleep", async (s) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { text: `${s.text}.` };
    })
    .addEdge(START, "sleep")
    .addEdge("sleep", END)
    .compile();

describe("tool call answers through the official client", () => {
  let s: Served;
  let client: Client;
  const contentTypes: string[] = [];
  beforeAll(async () => {
    s = await served({ graphs: { echo: echoGraph(), sleepy: sleepyGraph(JSON_WITHIN_MS + 300) } }, (onError) => [mcpEndpoint({ onError })]);
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (typeof init?.body === "string" && init.body.includes('"tools/call"')) contentTypes.push(response.headers.get("content-type") ?? "");
      return response;
    };
    client = new Client({ name: "graphdock-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.server.url}/mcp`), { fetch: recording }));
  });
  afterAll(async () => {
    await client.close();
    await s.close();
    expect(s.faults).toEqual([]);
  });

  it("answers a quick call as JSON and a call that outlasts the wait as an SSE stream, with the same result shape", async () => {
    const quick = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    const slow = await client.callTool({ name: "sleepy", arguments: { text: "hi" } });
    expect(quick.structuredContent).toEqual({ text: "hi!" });
    expect(slow.structuredContent).toEqual({ text: "hi." });
    expect(slow.isError).toBeFalsy();
    expect(contentTypes).toEqual(["application/json", "text/event-stream"]);
  });
});

describe("jsonOrStream", () => {
  const fail = (err: unknown) => expect.unreachable(String(err));
  const answer = (body: unknown, ms: number) =>
    new Promise<Response>((resolve) => setTimeout(() => resolve(new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } })), ms));

  it("passes an answer that comes within the wait through unchanged", async () => {
    const response = await jsonOrStream(answer({ jsonrpc: "2.0", id: 1, result: {} }, 5), fail, 200, 20);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("streams a late answer: keep-alive comments while waiting, then each message as a `message` event", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, result: { a: 1 } },
      { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "no" } },
    ];
    const response = await jsonOrStream(answer(batch, 150), fail, 20, 40);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const text = await response.text();
    expect(text).toMatch(/^(: keepalive\n\n)+event: message\n/);
    const events = text.split("\n\n").filter((e) => e.startsWith("event: message\n"));
    expect(events.map((e) => JSON.parse(e.slice("event: message\ndata: ".length)) as unknown)).toEqual(batch);
  });

  it("ends the stream with an error and reports the fault when a late answer fails", async () => {
    const faults: unknown[] = [];
    const late = new Promise<Response>((_, reject) => setTimeout(() => reject(new Error("lost")), 60));
    const response = await jsonOrStream(late, (err) => faults.push(err), 20, 1000);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await expect(response.text()).rejects.toThrow();
    expect(faults).toEqual([new Error("lost")]);
  });
});
