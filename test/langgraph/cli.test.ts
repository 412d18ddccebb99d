/**
 * The CLI serving the LangGraph.js agent named in examples/langgraph.json (`./node/agent-langgraph.ts:graph`)
 * on the JSON-file store: the official client streams its tokens, it pauses at the approval
 * interrupt, and after a restart the paused thread resumes and answers.
 */
import { Client } from "@langchain/langgraph-sdk";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "graphdock-lg-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `graphdock serve` (the bin's source, through tsx) and resolves its URL from the banner. */
function start(args: string[]): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/node/cli.ts", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr.on("data", (d: Buffer) => (out += d));
    void exited.then((code) => reject(new Error(`graphdock serve exited with ${code}: ${out}`)));
  });
}

it("serves the LangGraph.js agent from graph.json: tokens, interrupt, restart, resume", async () => {
  const args = ["serve", "--config", "examples/langgraph.json", "--port", "0", "--store", `json:${dataDir}`];
  const first = await start(args);
  let threadId: string;
  try {
    const client = new Client({ apiUrl: first.url, apiKey: null });
    const thread = await client.threads.create();
    threadId = thread.thread_id;
    const hello = [];
    for await (const part of client.runs.stream(null, "echo", { input: { messages: [{ role: "user", content: "hello" }] }, streamMode: "messages-tuple" })) hello.push(part);
    const tokens = hello.filter((p) => p.event === "messages").map((p) => (p.data as [{ content: string }, unknown])[0].content);
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.join("")).toBe(`I can do arithmetic. Ask me something like "what is 12 * (3 + 4)?" You said: hello`);
    const paused = (await client.runs.wait(threadId, "agent", { input: { messages: [{ role: "user", content: "what is 12 * (3 + 4)?" }] } })) as { __interrupt__?: unknown };
    expect(paused.__interrupt__).toEqual([{ id: expect.any(String), value: { question: "Run calculator(12 * (3 + 4))?" } }]);
  } finally {
    expect(await first.stop()).toBe(0);
  }
  const second = await start(args);
  try {
    const client = new Client({ apiUrl: second.url, apiKey: null });
    expect((await client.threads.get(threadId)).status).toBe("interrupted");
    const done = (await client.runs.wait(threadId, "agent", { command: { resume: "yes" } })) as { messages: Array<{ type: string; content: string }> };
    expect(done.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(done.messages.at(-1)!.content).toBe("The answer is 84.");
  } finally {
    await second.stop();
  }
}, 60_000);
