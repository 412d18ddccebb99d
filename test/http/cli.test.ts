import { Client } from "@langchain/langgraph-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "graphdock-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `graphdock serve` (the bin's source, through tsx) and resolves its URL from the banner. */
function start(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; output: string; stop(): Promise<number | null> }> {
  const { GRAPHDOCK_API_KEY: _inherited, ...parentEnv } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/node/cli.ts", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...parentEnv, ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], child, output: out, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr!.on("data", (d: Buffer) => (err += d));
    void exited.then((code) => reject(new Error(`graphdock serve exited with ${code}: ${err || out}`)));
  });
}

describe("graphdock serve", () => {
  it("serves examples/graph.json on the JSON-file store and keeps threads across restarts", async () => {
    const args = ["serve", "--config", "examples/graph.json", "--port", "0", "--store", `json:${dataDir}`];
    const first = await start(args);
    let threadId: string;
    try {
      const client = new Client({ apiUrl: first.url, apiKey: null });
      const graphs = (await client.assistants.search({ metadata: { created_by: "system" } })).map((a) => a.graph_id).sort();
      expect(graphs).toEqual(["agent", "echo"]);
      const thread = await client.threads.create({ metadata: { kept: true } });
      threadId = thread.thread_id;
      const parts = [];
      for await (const part of client.runs.stream(threadId, "echo", { input: { messages: [{ role: "user", content: "hi" }] } })) parts.push(part);
      expect(parts[0].event).toBe("metadata");
      expect(parts.some((p) => p.event === "error")).toBe(false);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await start(args);
    try {
      const client = new Client({ apiUrl: second.url, apiKey: null });
      const thread = await client.threads.get(threadId);
      expect(thread.metadata).toMatchObject({ kept: true });
      expect(thread.status).toBe("idle");
    } finally {
      await second.stop();
    }
  });

  it("loads the auth handler named in graph.json: 401 without a key, each user sees only their own", async () => {
    const server = await start(["serve", "--config", "test/http/fixtures/auth-graph.json", "--port", "0"]);
    try {
      const as = (key?: string) => new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: key ? { "x-api-key": key } : {} });
      await expect(as().threads.search()).rejects.toMatchObject({ status: 401 });
      await expect(as("key-mallory").threads.search()).rejects.toThrow(/Invalid API key/);
      const thread = await as("key-alice").threads.create();
      expect(thread.metadata).toMatchObject({ owner: "alice" });
      const result = (await as("key-alice").runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] } })) as {
        messages: Array<{ content: string }>;
      };
      expect(result.messages.at(-1)?.content).toBe("echo: hi");
      await expect(as("key-bob").threads.get(thread.thread_id)).rejects.toMatchObject({ status: 404 });
      expect(await as("key-bob").threads.search()).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("warns at start-up that the upload endpoints are open only when neither an API key nor auth protects them", async () => {
    const open = /upload endpoints .* open to anyone/;
    const config = ["serve", "--config", "examples/graph.json", "--port", "0"];
    for (const [args, env, warns] of [
      [config, {}, true],
      [[...config, "--api-key", "k"], {}, false],
      [config, { GRAPHDOCK_API_KEY: "k" }, false],
      [["serve", "--config", "test/http/fixtures/auth-graph.json", "--port", "0"], {}, false],
    ] as const) {
      const server = await start([...args], env);
      await server.stop();
      expect(open.test(server.output), `${args.join(" ")} ${JSON.stringify(env)}`).toBe(warns);
    }
  });

  it("fails with a clear message for a missing config (one graphdock: prefix)", async () => {
    const failure = start(["serve", "--config", "does-not-exist.json", "--port", "0"]);
    await expect(failure).rejects.toThrow(/cannot read graph config/);
    await expect(failure).rejects.not.toThrow(/graphdock: graphdock:/);
  });

  it("takes the D25 limits as flags: --max-body-bytes, --max-depth, --sse-buffer-bytes", async () => {
    const server = await start(["serve", "--config", "examples/graph.json", "--port", "0", "--max-body-bytes", "1000", "--max-depth", "4", "--sse-buffer-bytes", "65536"]);
    try {
      const post = (body: string) => fetch(`${server.url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body });
      const big = await post(JSON.stringify({ metadata: { pad: "x".repeat(1000) } }));
      expect(big.status).toBe(413);
      expect((await big.json()).detail).toMatch(/1000 bytes/);
      expect((await post('{"metadata":{"a":{"b":{}}}}')).status).toBe(200);
      expect((await post('{"metadata":{"a":{"b":{"c":{}}}}}')).status).toBe(422);
    } finally {
      await server.stop();
    }
    await expect(start(["serve", "--config", "examples/graph.json", "--port", "0", "--max-depth", "deep"])).rejects.toThrow(/--max-depth must be a positive integer/);
  });
});

describe("serve() ports", () => {
  it("a port named is that port or an error; without strictPort the next free one is taken", async () => {
    const { createServer } = await import("node:net");
    const { serve } = await import("../../src/node/index.js");
    const { createRuntime } = await import("../../src/index.js");
    const { echoGraph } = await import("../runtime/graphs.js");
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const taken = (blocker.address() as { port: number }).port;
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    try {
      await expect(serve(runtime, { port: taken })).rejects.toThrow(`port ${taken} on 127.0.0.1 is in use; choose another port (0 picks a free one)`);
      const next = await serve(runtime, { port: taken, strictPort: false });
      expect(next.port).toBeGreaterThan(taken);
      await next.close();
    } finally {
      await runtime.close();
      await new Promise((r) => blocker.close(r));
    }
  });
});
