/**
 * A LangGraph.js graph hosted by graphdock in a browser tab, on real IndexedDB (D23): built with
 * `@langchain/langgraph/web` and the offline chat model, passed to `createRuntime` as is (this
 * page imports `graphdock/langgraph`, which registers the adapter). Browsers have no
 * AsyncLocalStorage, so the approval is a static breakpoint before `tools` and the model is
 * called with the node's config (LangGraph.js's rules for the web).
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph/web";
import { describe, expect, it } from "vitest";
import { calculate } from "../../../examples/node/agent";
import { ArithmeticChatModel } from "../../../examples/node/arithmetic-model";
import { createRuntime } from "../../../src/index";
import "../../../src/langgraph/index";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index";

const model = new ArithmeticChatModel();
const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addNode("tools", (state) => {
    const call = (state.messages[state.messages.length - 1] as AIMessage).tool_calls![0]!;
    return { messages: [new ToolMessage({ tool_call_id: call.id!, name: call.name, content: String(calculate(String(call.args.expression))) })] };
  })
  .addEdge(START, "model")
  .addConditionalEdges("model", (state) => ((state.messages[state.messages.length - 1] as AIMessage).tool_calls?.length ? "tools" : END), ["tools", END])
  .addEdge("tools", "model")
  .compile({ interruptBefore: ["tools"] });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

describe("a LangGraph.js graph on IndexedDB in Chromium", () => {
  it("streams tokens, pauses before the tool, survives a new runtime on the same database, resumes", async () => {
    const db = `lg-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const first = await createRuntime({ graphs: { agent: graph }, store: indexedDbStore(db) });
    const t = await first.threads.create();
    const events: Loose[] = [];
    for await (const e of first.runs.stream(t.thread_id, "agent", { input: { messages: [{ role: "user", content: "what is 6 * 7?" }] }, streamMode: ["messages-tuple", "values"] })) events.push(e);
    const call = events.find((e) => e.event === "messages").data[0];
    expect(call).toMatchObject({ type: "AIMessageChunk", tool_call_chunks: [{ name: "calculator" }] });
    expect(events.at(-1)).toMatchObject({ event: "values", data: { __interrupt__: [] } });
    expect((await first.threads.get(t.thread_id)).status).toBe("interrupted");
    await first.close();

    const second = await createRuntime({ graphs: { agent: graph }, store: indexedDbStore(db) });
    try {
      const state = await second.threads.getState(t.thread_id);
      expect(state.next).toEqual(["tools"]);
      expect((state.values as Loose).messages.map((m: Loose) => m.type)).toEqual(["human", "ai"]);
      const resumed: Loose[] = [];
      for await (const e of second.runs.stream(t.thread_id, "agent", { input: null, streamMode: ["messages-tuple", "values"] })) resumed.push(e);
      const tokens = resumed.filter((e) => e.event === "messages" && e.data[0].type === "AIMessageChunk").map((e) => e.data[0].content);
      expect(tokens.length).toBeGreaterThan(2);
      expect(tokens.join("")).toBe("The answer is 42.");
      const final = resumed.filter((e) => e.event === "values").at(-1).data;
      expect(final.messages.map((m: Loose) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect((await second.threads.getHistory(t.thread_id)).length).toBeGreaterThan(3);
    } finally {
      await second.close();
    }
  });
});
