/**
 * Thousands of seeded hostile requests at /mcp over a socket (D3, D25 applied to MCP): malformed,
 * too deep or broken JSON-RPC, unknown methods and tools, arguments of the wrong type, hostile
 * thread ids, cancellations of nothing, odd headers and methods. No answer is 5xx or an internal
 * JSON-RPC error, and the store's contents read back unchanged.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { mcpEndpoint } from "../../src/mcp/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { echoGraph } from "../http/graphs.js";
import { jsonValue, prng, snapshot, type Rng } from "../http/hostile.js";
import { barrage, body, envelope, hostileString, quote, type ProtocolRequest } from "../http/protocol-hostile.js";
import { lgAskGraph } from "../http/protocol-fixtures.js";

let runtime: Runtime;
let server: ServeHandle;
const faults: unknown[] = [];

beforeAll(async () => {
  runtime = await createRuntime({ graphs: { echo: echoGraph(), ask: lgAskGraph() } });
  server = await serve(runtime, { port: 0, mcp: false, a2a: false, aiSdk: false, endpoints: [mcpEndpoint({ onError: (e) => faults.push(e) })], onError: (e) => faults.push(e) });
  // Seed through MCP itself: a call on a named thread, and one left waiting on an interrupt.
  const client = new Client({ name: "seed", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  await client.callTool({ name: "echo", arguments: { thread_id: crypto.randomUUID(), text: "seed" } });
  await client.callTool({ name: "ask", arguments: { thread_id: crypto.randomUUID(), messages: [{ role: "user", content: "hi" }] } });
  await client.close();
});
afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

const TOOLS = ["echo", "ask", "echo_", "ECHO", "", "tools/list", "../echo"];
const NOT_UUIDS = ['"not-a-uuid"', "1", "{}", "[]", "null", "true", '""', '"00000000-0000-0000-0000-00000000000g"', '"__proto__"'];

/** tools/call params that cannot run: an unknown tool, or arguments or a thread id of the wrong kind. */
function callParams(r: Rng): string {
  const x = r.int(4);
  if (x === 0) return r.pick(["1", '"x"', "[]", "null", "true"]);
  if (x === 1) return `{"name":${r.chance(0.5) ? hostileString(r) : r.pick(["1", "null", "{}"])},"arguments":${jsonValue(r)}}`;
  const name = quote(r.pick(TOOLS.slice(0, 2)));
  if (x === 2) return `{"name":${name},"arguments":${r.pick(["1", '"x"', "[]", "true", "[{}]"])}}`;
  return `{"name":${name},"arguments":{"thread_id":${r.pick(NOT_UUIDS)},"text":${jsonValue(r)},${quote(r.pick(["messages", "__proto__", "constructor", "text"]))}:${jsonValue(r)}}}`;
}

function request(r: Rng): ProtocolRequest {
  const valid = () => {
    const kind = r.int(7);
    switch (kind) {
      case 0:
        return envelope(r, "tools/call", callParams(r));
      case 1:
        return envelope(r, "tools/list", r.chance(0.5) ? jsonValue(r) : undefined);
      case 2:
        return envelope(r, "initialize", r.chance(0.3) ? `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}` : jsonValue(r));
      case 3:
        return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${r.pick(["1", '"1"', "0", "null", "{}", hostileString(r)])},"reason":${jsonValue(r)}}}`;
      case 4:
        return envelope(r, r.pick(["resources/list", "prompts/get", "completion/complete", "logging/setLevel", "ping", "tasks/get", "tasks/cancel", "sampling/createMessage", "__proto__", "constructor"]), r.chance(0.6) ? jsonValue(r) : undefined);
      case 5:
        return `{"jsonrpc":"2.0","id":1,"result":${jsonValue(r)}}`;
      default:
        return `{"jsonrpc":"2.0","id":${r.int(9)},"error":{"code":${r.pick(["1", '"x"', "-32603"])},"message":${jsonValue(r)}}}`;
    }
  };
  const { text, label } = body(r, valid);
  const headers: Record<string, string> = {
    accept: r.chance(0.85) ? "application/json, text/event-stream" : r.pick(["application/json", "text/event-stream", "*/*", "text/html"]),
    "content-type": r.chance(0.9) ? "application/json" : r.pick(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16"]),
  };
  if (r.chance(0.1)) headers["mcp-protocol-version"] = r.pick(["1999-01-01", "x", "2025-06-18", ""]);
  if (r.chance(0.1)) headers["mcp-session-id"] = r.pick(["__proto__", "x".repeat(3000), "-", "a b"]);
  if (r.chance(0.05)) headers.origin = r.pick(["http://evil.example", "null", "http://localhost:1"]);
  const method = r.chance(0.93) ? "POST" : r.pick(["GET", "DELETE", "PUT", "PATCH"]);
  return { method, path: r.chance(0.97) ? "/mcp" : r.pick(["/mcp/", "/mcp/x", "/mcp?x=1"]), headers, body: Buffer.isBuffer(text) ? text : Buffer.from(text), label: `${method} ${label}` };
}

it("answers 2,500 seeded hostile MCP requests with no 5xx and no internal error, and changes nothing", { timeout: 240_000 }, async () => {
  const before = await snapshot(server.url);
  const r = prng(29_100);
  const result = await barrage(new URL(server.url), 2_500, () => request(r));
  console.log(`hostile MCP requests: ${JSON.stringify({ sent: result.sent, statuses: result.statuses, codes: result.codes })}`);
  expect(result.failures.slice(0, 20)).toEqual([]);
  expect(faults.map(String)).toEqual([]);
  expect(result.sent).toBe(2_500);
  expect(await snapshot(server.url)).toEqual(before);
});
