import { Client } from "@langchain/langgraph-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "agentdock-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `agentdock serve` (the bin's source, through tsx) and resolves its URL from the banner. */
function start(args: string[]): Promise<{ url: string; child: ChildProcess; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/node/cli.ts", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], child, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr!.on("data", (d: Buffer) => (err += d));
    void exited.then((code) => reject(new Error(`agentdock serve exited with ${code}: ${err || out}`)));
  });
}

describe("agentdock serve", () => {
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

  it("fails with a clear message for a missing config", async () => {
    await expect(start(["serve", "--config", "does-not-exist.json", "--port", "0"])).rejects.toThrow(/cannot read graph config/);
  });
});
