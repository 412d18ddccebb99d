/**
 * Fixtures of the v2 contract suite: a runtime with the offline example agent and a gated
 * talker, served over HTTP (SSE), WebSocket and in process, driven by the official SDK.
 */
import { Client } from "@langchain/langgraph-sdk";
import { spawn, type ChildProcess } from "node:child_process";
import WebSocket from "ws";
import { agent, echo } from "../../examples/node/agent.js";
import { END, START, StateGraph, messagesState, type CompiledGraph } from "../../src/graph/index.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";

/** Releases a talker run between its two halves. */
export class Gate {
  private waiters: Array<() => void> = [];
  private arrivals: Array<() => void> = [];
  private count = 0;
  arrive() {
    this.count++;
    this.arrivals.splice(0).forEach((r) => r());
  }
  async reached(n = 1) {
    while (this.count < n) await new Promise<void>((r) => this.arrivals.push(r));
  }
  wait(signal: AbortSignal) {
    return new Promise<void>((resolve, reject) => {
      this.waiters.push(resolve);
      signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    });
  }
  release() {
    this.waiters.splice(0).forEach((r) => r());
  }
}

export const FIRST = ["one ", "two ", "three "];
export const SECOND = ["four ", "five"];

/** talker: streams three words, waits for the gate, streams two more. */
export function talker(gate: Gate): CompiledGraph {
  return new StateGraph(messagesState)
    .addNode("talk", async (_s, ctx) => {
      const id = `talk-${String(ctx.config.configurable.run_id)}`;
      for (const w of FIRST) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
      gate.arrive();
      await gate.wait(ctx.signal);
      for (const w of SECOND) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
      return { messages: [{ id, type: "ai", content: [...FIRST, ...SECOND].join("") }] };
    })
    .addEdge(START, "talk")
    .addEdge("talk", END)
    .compile();
}

export type Kind = "sse" | "websocket" | "in-process";

export interface Fixture {
  runtime: Runtime;
  gate: Gate;
  server: ServeHandle;
  /** The official SDK client over HTTP. */
  client: Client;
  /** Client-side WebSockets opened by the websocket variant (to drop them). */
  sockets: WebSocket[];
  /** A ThreadStream on `threadId` over `kind`. */
  stream(kind: Kind, threadId: string, assistantId?: string, extra?: Record<string, unknown>): ReturnType<Client["threads"]["stream"]>;
  close(): Promise<void>;
}

export async function fixture(): Promise<Fixture> {
  const gate = new Gate();
  const runtime = await createRuntime({ graphs: { agent, echo, talker: talker(gate) } });
  const server = await serve(runtime, { port: 0, heartbeatMs: 0 });
  const client = new Client({ apiUrl: server.url });
  const sockets: WebSocket[] = [];
  const webSocketFactory = (url: string) => {
    const ws = new WebSocket(url);
    sockets.push(ws);
    return ws as unknown as globalThis.WebSocket;
  };
  return {
    runtime,
    gate,
    server,
    client,
    sockets,
    stream(kind, threadId, assistantId = "agent", extra = {}) {
      const options: Record<string, unknown> = { assistantId, reconnectDelayMs: () => 20, ...extra };
      if (kind === "websocket") Object.assign(options, { transport: "websocket", webSocketFactory });
      if (kind === "in-process") options.transport = new InProcessTransport(runtime);
      return client.threads.stream(threadId, options as never);
    },
    async close() {
      gate.release();
      await server.close();
      await runtime.close();
    },
  };
}

export const human = (content: string) => ({ messages: [{ type: "human", content }] });

/**
 * A raw WebSocket on a thread's v2 event stream (`baseUrl` is the server's http URL): `send`
 * resolves the answer to one command; every frame received is in `got`.
 */
export async function wsConnect(baseUrl: string, threadId: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${baseUrl.replace("http", "ws")}/threads/${threadId}/stream/events`, { headers });
  const got: Array<Record<string, any>> = [];
  ws.on("message", (d) => got.push(JSON.parse(d.toString())));
  await new Promise((ok, ko) => ws.once("open", ok).once("error", ko));
  let id = 0;
  const send = async (method: string, params: Record<string, unknown> = {}) => {
    const mine = ++id;
    ws.send(JSON.stringify({ id: mine, method, params }));
    for (let i = 0; i < 500; i++) {
      const r = got.find((m) => m.id === mine && m.type !== "event");
      if (r) return r;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no answer to ${method}`);
  };
  return { ws, got, send };
}

/** Resolves when `predicate` holds, polling. */
export async function until(predicate: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Starts `graphdock serve` (the bin's source, through tsx) and resolves its URL from the banner. */
export function startCli(args: string[]): Promise<{ url: string; stop(): Promise<number | null> }> {
  const root = new URL("../..", import.meta.url).pathname;
  const { GRAPHDOCK_API_KEY: _inherited, ...env } = process.env;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/node/cli.ts", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, stop: () => (child.kill("SIGTERM"), exited) });
    });
    child.stderr!.on("data", (d: Buffer) => (err += d));
    void exited.then((code) => reject(new Error(`graphdock serve exited with ${code}: ${err || out}`)));
  });
}
