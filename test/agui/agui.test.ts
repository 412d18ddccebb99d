/**
 * The AG-UI adapter for LangGraph servers (`@ag-ui/langgraph`, CopilotKit's agent: a real client
 * of the LangGraph API nobody here wrote) driving a tool-calling agent with an interrupt against
 * graphdock over HTTP, end to end: the streamed tool call, the approval interrupt, the resume with
 * the tool's result and the streamed answer, a run abandoned mid-answer (abort), and the next
 * question on the same thread. Once for the LangGraph.js agent hosted as is
 * (test/reference-server/graphs/agent.ts), once for the same agent written with graphdock's
 * engine (./native-agent.ts). test/reference-server/compare.test.ts checks that the reference
 * server gives the adapter the same conversation.
 */
import { randomUUID } from "node:crypto";
import type { BaseEvent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { graph as hostedAgent } from "../reference-server/graphs/agent.js";
import { comparableTurns, converse, type AguiTurn } from "./conversation.js";
import { nativeAgent } from "./native-agent.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

let runtime: Runtime;
let server: ServeHandle;
beforeAll(async () => {
  runtime = await createRuntime({ graphs: { hosted: hostedAgent, native: nativeAgent } });
  server = await serve(runtime, { port: 0 });
});
afterAll(async () => {
  await server.close();
  await runtime.close();
});

const of = (turn: AguiTurn, type: string) => turn.events.filter((e) => e.type === type) as Loose[];
const types = (turn: AguiTurn) => turn.events.map((e: BaseEvent) => e.type);

const conversations = new Map<string, { threadId: string; turns: AguiTurn[] }>();
async function conversation(graph: string) {
  let c = conversations.get(graph);
  if (!c) {
    const threadId = randomUUID();
    conversations.set(graph, (c = { threadId, turns: await converse(server.url, graph, threadId) }));
  }
  return c;
}

describe.each(["hosted", "native"])("the AG-UI adapter with graphdock's %s agent", (graph) => {
  it("streams the tool call and stops at the approval interrupt", async () => {
    const [ask] = (await conversation(graph)).turns;
    expect(ask!.error).toBeUndefined();
    expect(of(ask!, "TOOL_CALL_START")).toEqual([expect.objectContaining({ toolCallId: "call-1", toolCallName: "get_weather", parentMessageId: "ai-1" })]);
    expect(of(ask!, "TOOL_CALL_ARGS").map((e) => e.delta)).toEqual(['"Paris"}']);
    expect(of(ask!, "TOOL_CALL_END")).toEqual([expect.objectContaining({ toolCallId: "call-1" })]);
    expect(of(ask!, "CUSTOM")).toEqual([expect.objectContaining({ name: "on_interrupt", value: JSON.stringify({ question: "Look up the weather in Paris?" }) })]);
    expect(types(ask!).at(-1)).toBe("RUN_FINISHED");
    expect(of(ask!, "TEXT_MESSAGE_START")).toEqual([]);
  });

  it("resumes with the approval: the tool's result, then the answer streamed once, word by word", async () => {
    const [, approve] = (await conversation(graph)).turns;
    expect(approve!.error).toBeUndefined();
    expect(of(approve!, "TOOL_CALL_RESULT")).toEqual([expect.objectContaining({ toolCallId: "call-1", content: "sunny in Paris", role: "tool" })]);
    expect(of(approve!, "TEXT_MESSAGE_START")).toEqual([expect.objectContaining({ messageId: "ai-3", role: "assistant" })]);
    // Each word once: a frame seen twice (the first token shown twice) would repeat it.
    expect(of(approve!, "TEXT_MESSAGE_CONTENT").map((e) => e.delta)).toEqual(["The ", "forecast: ", "sunny ", "in ", "Paris."]);
    expect(of(approve!, "TEXT_MESSAGE_END")).toEqual([expect.objectContaining({ messageId: "ai-3" })]);
    const [snapshot] = of(approve!, "MESSAGES_SNAPSHOT").slice(-1);
    expect(snapshot.messages.map((m: Loose) => [m.role, m.content])).toEqual([
      ["user", "What is the weather in Paris?"],
      ["assistant", ""],
      ["tool", "sunny in Paris"],
      ["assistant", "The forecast: sunny in Paris."],
    ]);
    expect(types(approve!).at(-1)).toBe("RUN_FINISHED");
  });

  it("a run abandoned mid-answer does not keep the thread busy: the next question is answered", async () => {
    const { threadId, turns } = await conversation(graph);
    const [, , abandoned, next] = turns;
    expect(of(abandoned!, "TEXT_MESSAGE_CONTENT").map((e) => e.delta)).toEqual(["Hello! "]);
    expect(next!.error).toBeUndefined();
    expect(of(next!, "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("")).toBe("Hello! Ask me about the weather somewhere.");
    expect(types(next!).at(-1)).toBe("RUN_FINISHED");
    // The adapter cancelled the abandoned run; nothing is left running on the thread.
    const runs = await runtime.runs.list(threadId);
    expect(runs.map((r) => r.status)).toEqual(["success", "interrupted", "success", "success"]);
    expect((await runtime.threads.get(threadId)).status).toBe("idle");
  });
});

it("the adapter sees the same conversation from both agents, but for raw frames and passing state snapshots", async () => {
  // Which frames of other modes fall between a LangGraph.js graph's events follows LangChain's
  // callback queues; the adapter mirrors frames as RAW events and sends a passing STATE_SNAPSHOT
  // as they come. Everything else is the same, down to the state of the last snapshot of each turn.
  const view = (turns: AguiTurn[]) =>
    comparableTurns(turns).map((t) => {
      const events = t.events.filter((e) => e.type !== "RAW");
      const lastSnapshot = events.map((e) => e.type).lastIndexOf("STATE_SNAPSHOT");
      return { ...t, events: events.filter((e, i) => e.type !== "STATE_SNAPSHOT" || i === lastSnapshot) };
    });
  expect(view((await conversation("native")).turns)).toEqual(view((await conversation("hosted")).turns));
});
