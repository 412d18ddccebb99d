/**
 * langgraph.json's keys (D93), each through `serveConfig` (what `graphdock serve` runs) and the
 * official SDK client over HTTP: `store.index` (a file's function, a provider's LangChain class),
 * `store.ttl`, `checkpointer.ttl` and `POST /threads/prune`, `http.cors`, `http.disable_*`,
 * `http.mount_prefix`, and warnings naming the keys graphdock does not honour or does not know.
 */
import { Client } from "@langchain/langgraph-sdk";
import { OpenAIEmbeddings } from "@langchain/openai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { serveConfig, type ConfigServer } from "../../src/node/index.js";
import { resolveEmbed } from "../../src/node/embeddings.js";

const root = new URL("../..", import.meta.url).pathname;
const graphs = { ok: join(root, "test/node/fixtures/ops-graphs.ts:ok"), headers: join(root, "test/node/fixtures/ops-graphs.ts:headers") };
const dirs: string[] = [];
const servers: ConfigServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lines logged at each level. */
function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, fields, msg });
  return { lines, log: { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") } };
}

/** Serves `config` (written as langgraph.json in a folder with `files`), with a log recorder. */
async function start(config: Record<string, unknown>, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "graphdock-lgjson-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs, ...config }));
  const { lines, log } = recorder();
  const server = await serveConfig({ config: join(dir, "langgraph.json"), port: 0, log });
  servers.push(server);
  return { server, lines, dir, client: new Client({ apiUrl: server.url, apiKey: null }) };
}
const refusal = (config: Record<string, unknown>, files?: Record<string, string>) => start(config, files).then(() => "started", (err: Error) => err.message);

describe("langgraph.json keys", () => {
  it("warns about unknown keys and unsupported ones by name, notes build keys once, refuses encryption", async () => {
    const { server, lines } = await start({
      colour: "blue",
      http: { cors: { allow_origins: ["*"], allow_methods: ["GET"] }, tls: true, logging_headers: { includes: ["x-user-*"] } },
      ui: { widget: "./ui.tsx" },
      node_version: "20",
      dockerfile_lines: [],
    });
    expect(server.warnings).toEqual([
      expect.stringMatching(/^unknown key "colour" \(not in langgraph\.json's schema, langgraph-cli [\d.]+\): ignored$/),
      expect.stringMatching(/^"http\.cors\.allow_methods" is not supported: /),
      expect.stringMatching(/^unknown key "http\.tls"/),
      expect.stringMatching(/^"http\.logging_headers" is not supported: /),
      expect.stringMatching(/^"ui" is not supported: /),
    ]);
    expect(lines.filter((l) => l.level === "warn").map((l) => l.msg)).toEqual(server.warnings.map((w) => `graphdock: ${w}`));
    expect(lines.find((l) => /langgraph build/.test(l.msg))?.fields.keys).toEqual(["node_version", "dockerfile_lines"]);
    expect(await refusal({ encryption: { path: "./enc.ts:enc" } })).toMatch(/"encryption": graphdock does not encrypt data at rest/);
  });

  it("refuses a bad value naming its key, before serving", async () => {
    expect(await refusal({ checkpointer: { ttl: { strategy: "forget" } } })).toMatch(/"checkpointer\.ttl\.strategy" in ".*langgraph\.json" must be "delete" or "keep_latest"/);
    expect(await refusal({ store: { ttl: { default_ttl: -5 } } })).toMatch(/"store\.ttl\.default_ttl" .* must be a number of minutes > 0/);
    expect(await refusal({ http: { mount_prefix: "api/" } })).toMatch(/"http\.mount_prefix" .* must be a path such as "\/api"/);
    expect(await refusal({ http: { disable_runs: "yes" } })).toMatch(/"http\.disable_runs" .* must be true or false/);
    expect(await refusal({ store: { index: { dims: 3 } } })).toMatch(/"store\.index\.embed" in .* must be "<file>:<export>" or "<provider>:<model>"/);
  });

  it("store.index with a file's function: items are embedded on put and searched by meaning", async () => {
    // A toy embedding: counts of three words, so "cats" is nearest to the item about cats.
    const embed = `export const embed = async (texts) => texts.map((t) => ["cat", "dog", "fish"].map((w) => t.split(w).length - 1 + 0.01));\n`;
    const { client } = await start({ store: { index: { dims: 3, embed: "./embed.mjs:embed", fields: ["text"] } } }, { "embed.mjs": embed });
    await client.store.putItem(["notes"], "a", { text: "a dog and a dog" });
    await client.store.putItem(["notes"], "b", { text: "the cat sat on the cat" });
    await client.store.putItem(["notes"], "c", { text: "fish" });
    const found = await client.store.searchItems(["notes"], { query: "cat", limit: 2 });
    expect(found.items.map((i) => i.key)).toEqual(["b", expect.any(String)]);
    expect(found.items[0]!.score).toBeGreaterThan(found.items[1]!.score!);
  });

  it("store.index with a provider string resolves to the provider's LangChain class; a missing package or key is a clear error", async () => {
    const embed = await resolveEmbed("openai:text-embedding-3-small", root, "langgraph.json", { OPENAI_API_KEY: "sk-test" });
    const embeddings = (embed as unknown as { embeddings: OpenAIEmbeddings }).embeddings;
    expect(embeddings).toBeInstanceOf(OpenAIEmbeddings);
    expect(embeddings.model).toBe("text-embedding-3-small");
    await expect(resolveEmbed("openai:text-embedding-3-small", root, "langgraph.json", {})).rejects.toThrow(/needs OPENAI_API_KEY in the environment/);
    await expect(resolveEmbed("cohere:embed-english-v3.0", root, "langgraph.json", { COHERE_API_KEY: "x" })).rejects.toThrow(/needs @langchain\/cohere: npm install @langchain\/cohere/);
    await expect(resolveEmbed("acme:v1", root, "langgraph.json", {})).rejects.toThrow(/expected "<provider>:<model>" with a provider among openai, /);
  });

  it("store.ttl: items put without a ttl expire after default_ttl; refresh_on_read: false leaves reads alone", async () => {
    const { client } = await start({ store: { ttl: { default_ttl: 0.01, refresh_on_read: false, sweep_interval_minutes: 0.005 } } });
    await client.store.putItem(["notes"], "short", { text: "x" });
    await client.store.putItem(["notes"], "kept", { text: "y" }, { ttl: null });
    await sleep(300);
    expect(await client.store.getItem(["notes"], "short")).not.toBeNull();
    await sleep(500);
    expect(await client.store.getItem(["notes"], "short")).toBeNull();
    expect(await client.store.getItem(["notes"], "kept")).not.toBeNull();
  });

  it("checkpointer.ttl deletes idle threads; POST /threads/prune applies a strategy at once", async () => {
    const { client } = await start({ checkpointer: { ttl: { strategy: "delete", default_ttl: 0.01, sweep_interval_minutes: 0.002 } } });
    const expiring = await client.threads.create();
    await client.runs.wait(expiring.thread_id, "ok", { input: {} });
    await expect.poll(() => client.threads.get(expiring.thread_id).then(() => "there", () => "gone"), { timeout: 5000, interval: 100 }).toBe("gone");

    const a = await client.threads.create({ ttl: { strategy: "delete", ttl: 60 } });
    const b = await client.threads.create({ ttl: { strategy: "delete", ttl: 60 } });
    for (let i = 0; i < 2; i++) await client.runs.wait(a.thread_id, "ok", { input: {} });
    expect(await client.threads.prune([a.thread_id], { strategy: "keep_latest" })).toEqual({ pruned_count: 1 });
    expect(await client.threads.getHistory(a.thread_id)).toHaveLength(1);
    expect((await client.threads.getState(a.thread_id)).values).toEqual({ n: 2 });
    expect(await client.threads.prune([b.thread_id, "00000000-0000-4000-8000-000000000000"])).toEqual({ pruned_count: 1 });
    await expect(client.threads.get(b.thread_id)).rejects.toMatchObject({ status: 404 });
  });

  it("http.configurable_headers: the headers matching includes and not excludes reach the run's configurable, never credentials; without the key, the agent servers' default", async () => {
    const sent = { "x-user-id": "u-1", "x-user-secret": "s-1", "x-other": "o-1", "user-agent": "agent/1", authorization: "Bearer t-1", "x-api-key": "k-1", cookie: "c=1" };
    const { server } = await start({ http: { configurable_headers: { includes: ["x-user-*", "user-agent", "authorization", "x-api-*"], excludes: ["x-user-secret"] } } });
    const client = new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: sent });
    expect(await client.runs.wait(null, "headers", { input: {}, config: { configurable: { "x-user-id": "from the body" } } })).toEqual({
      seen: { "x-user-id": "u-1", "user-agent": "agent/1" },
    });
    const thread = await client.threads.create();
    const streamed = [];
    for await (const part of client.runs.stream(thread.thread_id, "headers", { input: {}, streamMode: "values" })) streamed.push(part);
    expect(streamed.at(-1)?.data).toEqual({ seen: { "x-user-id": "u-1", "user-agent": "agent/1" } });

    // Without the key (or with no includes): the agent servers' set, x-* and user-agent (credentials never).
    const everything = { seen: { "x-user-id": "u-1", "x-user-secret": "s-1", "x-other": "o-1", "user-agent": "agent/1" } };
    for (const config of [{ http: { configurable_headers: {} } }, {}]) {
      const other = await start(config);
      expect(await new Client({ apiUrl: other.server.url, apiKey: null, defaultHeaders: sent }).runs.wait(null, "headers", { input: {} }), JSON.stringify(config)).toEqual(everything);
    }
  });

  it("http.cors: allow_origins and max_age", async () => {
    const { server } = await start({ http: { cors: { allow_origins: ["https://app.example"], max_age: 600 } } });
    const allowed = await fetch(`${server.url}/ok`, { headers: { origin: "https://app.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await fetch(`${server.url}/ok`, { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${server.url}/threads`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-max-age")).toBe("600");
  });

  it("http.disable_*: the groups and endpoints named are gone, the rest served", async () => {
    const { server, client } = await start({
      http: { disable_assistants: true, disable_store: true, disable_mcp: true, disable_studio: true, disable_meta: true, disable_threads: false },
    });
    const status = async (method: string, path: string, body?: unknown) =>
      (await fetch(`${server.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) })).status;
    expect(await status("POST", "/assistants/search", {})).toBe(404);
    expect(await status("POST", "/store/items/search", {})).toBe(404);
    expect(await status("POST", "/mcp", {})).toBe(404);
    expect(await status("GET", "/studio")).toBe(404);
    expect(await status("GET", "/ok")).toBe(404);
    expect(await status("GET", "/docs")).toBe(404);
    expect((await client.threads.create()).thread_id).toEqual(expect.any(String));
    // Not disabled: served.
    expect(await status("GET", "/.well-known/agent-card.json")).not.toBe(404);

    const second = await start({ http: { disable_runs: true, disable_crons: true, disable_a2a: true, disable_ai_sdk: true, disable_ui: true } });
    const at = (path: string, method = "GET") => fetch(`${second.server.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(method === "POST" ? { body: "{}" } : {}) }).then((r) => r.status);
    const thread = await second.client.threads.create();
    expect(await at(`/threads/${thread.thread_id}/runs/wait`, "POST")).toBe(404);
    expect(await at("/runs/crons/search", "POST")).toBe(404);
    expect(await at("/.well-known/agent-card.json")).toBe(404);
    expect(await at("/a2a/x", "POST")).toBe(404);
    expect(await at("/ai-sdk/chat/x", "POST")).toBe(404);
    expect(await at(`/threads/${thread.thread_id}`)).toBe(200);
  });

  it("http.disable_webhooks: a run naming a webhook is accepted and nothing is sent", async () => {
    const received: string[] = [];
    const hook = createServer((req, res) => (received.push(req.url ?? ""), res.end()));
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    try {
      // Without the key, such a run is refused (this server allows no webhook URL).
      const plain = await start({});
      await expect(plain.client.runs.wait(null, "ok", { input: {}, webhook: url })).rejects.toMatchObject({ status: 422 });
      const { client } = await start({ http: { disable_webhooks: true } });
      expect(await client.runs.wait(null, "ok", { input: {}, webhook: url })).toEqual({ n: 1 });
      await sleep(200);
      expect(received).toEqual([]);
    } finally {
      hook.close();
    }
  });

  it("http.mount_prefix: the API, the studio, the protocols, /docs and /metrics under the prefix", async () => {
    const { server } = await start({ http: { mount_prefix: "/agents" } });
    const client = new Client({ apiUrl: `${server.url}/agents`, apiKey: null });
    const thread = await client.threads.create();
    expect((await client.runs.wait(thread.thread_id, "ok", { input: {} })) as unknown).toEqual({ n: 1 });
    for (const path of ["/ok", "/studio/session", "/docs", "/metrics"]) expect((await fetch(`${server.url}/agents${path}`)).status, path).toBe(200);
    // The document names the prefix as its server, so tools reading it call the prefixed URLs.
    const document = (await (await fetch(`${server.url}/agents/openapi.json`)).json()) as { servers?: Array<{ url: string }> };
    expect(document.servers?.[0]?.url).toMatch(/\/agents$/);
    expect(await (await fetch(`${server.url}/agents/studio/session`)).json()).toEqual({ authenticated: true });
    const mcp = await fetch(`${server.url}/agents/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    expect(mcp.status).toBe(200);
  });
});
