/**
 * What the protocols add to a run (`npm run bench -- protocols`): the same echo run over loopback
 * HTTP through `runs.wait` (the LangGraph SDK's client), an MCP tool call (the MCP SDK's client,
 * stateless Streamable HTTP) and an A2A `message/send` (the A2A SDK's client, 1.0 and 0.3); and a
 * first chat turn through the AI SDK's transport against `runs.stream` of the same run on a new
 * thread (the stream modes the chat reads); each client connected once, in alternating rounds of
 * sequential calls. The verdict (each protocol within 1.5x of its baseline) is on CPU per call,
 * which other processes' load disturbs far less than wall time; both are printed.
 */
import { Client as LangGraphClient } from "@langchain/langgraph-sdk";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Role } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { ClientFactory as ClientFactory03, ClientFactoryOptions as Options03, DefaultAgentCardResolver as Resolver03, JsonRpcTransportFactory as Transport03 } from "a2a-sdk-v03/client";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { cpus, loadavg } from "node:os";
import { createRuntime } from "../src/runtime/index.js";
import { serve } from "../src/node/index.js";
import { echo } from "../examples/node/agent.js";

const input = { messages: [{ role: "user", content: "hi" }] };
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => sorted(xs)[xs.length - 1]!;

/** Wall and CPU (this process: client and server) milliseconds per call over `n` sequential calls. */
async function measure(n: number, one: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) await one();
  const used = process.cpuUsage(cpu);
  return { wall: (performance.now() - start) / n, cpu: (used.user + used.system) / 1000 / n };
}

export default async function (): Promise<void> {
  const runtime = await createRuntime({ graphs: { echo } });
  const server = await serve(runtime, { port: 0 });
  const card = `${server.url}/.well-known/agent-card.json?assistant_id=echo`;
  const sdk = new LangGraphClient({ apiUrl: server.url });
  const mcp = new McpClient({ name: "bench", version: "1" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  const a2a = await new ClientFactory({ transports: [new JsonRpcTransportFactory()], cardResolver: new DefaultAgentCardResolver() }).createFromUrl(card, "");
  const a2a03 = await new ClientFactory03(Options03.createFrom(Options03.default, { transports: [new Transport03()], cardResolver: new Resolver03() })).createFromUrl(card, "");
  const chat = new DefaultChatTransport<UIMessage>({ api: `${server.url}/ai-sdk/chat/echo` });
  const said: UIMessage[] = [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }];
  const calls: Record<string, () => Promise<unknown>> = {
    "runs.wait (LangGraph SDK)": () => sdk.runs.wait(null, "echo", { input }),
    "MCP tools/call": async () => {
      const result = await mcp.callTool({ name: "echo", arguments: input });
      if (result.isError) throw new Error(JSON.stringify(result.content));
    },
    "A2A 1.0 SendMessage": () =>
      a2a.sendMessage({
        tenant: "",
        metadata: undefined,
        configuration: undefined,
        message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: "hi" }, metadata: undefined, filename: "", mediaType: "" }], contextId: "", taskId: "", metadata: undefined, extensions: [], referenceTaskIds: [] },
      }),
    "A2A 0.3 message/send": () => a2a03.sendMessage({ message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }] } }),
    "runs.stream, new thread": async () => {
      for await (const _ of sdk.runs.stream(crypto.randomUUID(), "echo", { input, streamMode: ["messages-tuple", "updates"], ifNotExists: "create" }));
    },
    "AI SDK chat turn": async () => {
      const stream = await chat.sendMessages({ chatId: crypto.randomUUID().slice(0, 16), messages: said, trigger: "submit-message", messageId: undefined, abortSignal: undefined });
      let answer: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream })) answer = message;
      if (answer?.parts.at(-1)?.type !== "text") throw new Error(`no answer: ${JSON.stringify(answer)}`);
    },
  };
  /** What each call is compared with: the run it makes, through the LangGraph API. */
  const baseline = (name: string) => (name === "AI SDK chat turn" ? "runs.stream, new thread" : "runs.wait (LangGraph SDK)");
  const names = Object.keys(calls);
  try {
    for (const name of names) await measure(200, calls[name]!); // warm-up
    const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < 8; round++) {
      for (const name of names) {
        const m = await measure(100, calls[name]!);
        wall[name]!.push(m.wall);
        cpu[name]!.push(m.cpu);
      }
    }
    for (const name of names) {
      const base = baseline(name);
      const ratio = median(cpu[name]!) / median(cpu[base]!);
      const wallRatio = median(wall[name]!) / median(wall[base]!);
      const verdict = name.startsWith("runs.") ? "" : `   ${ratio.toFixed(2)}x ${base} CPU, ${wallRatio.toFixed(2)}x wall (target <= 1.5x: ${ratio <= 1.5 ? "met" : "MISSED"})`;
      console.log(`${name.padEnd(27)} ${median(cpu[name]!).toFixed(3)} ms CPU, ${median(wall[name]!).toFixed(2).padStart(6)} ms wall per call (median of 8 rounds, worst round ${p90(wall[name]!).toFixed(2)} ms)${verdict}`);
    }
    console.log(`(echo graph, loopback; client and server in this process, so CPU is both ends; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)`);
  } finally {
    await mcp.close();
    await server.close();
    await runtime.close();
  }
}
