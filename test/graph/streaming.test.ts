import { describe, expect, test } from "vitest";
import { END, GraphAbortError, START, StateGraph, messagesState, type EngineStreamMode } from "../../src/graph/index.js";
import { echoGraph, harness } from "./helpers.js";

const ALL = new Set<EngineStreamMode>(["values", "updates", "messages", "custom", "tasks", "checkpoints", "debug"]);
const of = (events: Array<[EngineStreamMode, unknown]>, mode: EngineStreamMode) => events.filter(([m]) => m === mode).map(([, d]) => d);

describe("stream hooks", () => {
  test("values after each step but not the input checkpoint; updates per node; checkpoints and debug per checkpoint; tasks start and finish", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run({ messages: ["hi"] }, { streamModes: ALL });
    // As LangGraph: the input checkpoint only fills __start__, so the first values event follows the __start__ step.
    const values = of(h.events, "values") as Array<{ messages: unknown[] }>;
    expect(values.map((v) => v.messages.length)).toEqual([1, 2]);
    expect(of(h.events, "updates")).toEqual([{ echo: { messages: [expect.objectContaining({ type: "ai", content: "echo: hi" })] } }]);
    const cps = of(h.events, "checkpoints") as Array<{ config: { configurable: { checkpoint_id: string } }; parent_config: unknown; next: string[]; metadata: { step: number } }>;
    expect(cps.map((c) => [c.metadata.step, c.next])).toEqual([
      [-1, ["__start__"]],
      [0, ["echo"]],
      [1, []],
    ]);
    expect(cps[0]!.parent_config).toBeNull();
    const hist = await g.getHistory(h.store, h.threadId);
    expect(cps.map((c) => c.config.configurable.checkpoint_id)).toEqual(hist.map((s) => s.checkpoint_id).reverse());
    const tasks = of(h.events, "tasks") as Array<Record<string, unknown>>;
    expect(tasks).toHaveLength(2);
    expect(tasks[0]).toMatchObject({ name: "echo", triggers: ["branch:to:echo"], interrupts: [] });
    expect(tasks[1]).toMatchObject({ name: "echo", result: { messages: [expect.objectContaining({ type: "ai" })] }, interrupts: [] });
    expect(tasks[0]!.id).toBe(tasks[1]!.id);
    const debug = of(h.events, "debug") as Array<{ type: string; step: number }>;
    expect(debug.map((d) => [d.type, d.step])).toEqual([
      ["checkpoint", -1],
      ["checkpoint", 0],
      ["task", 1],
      ["task_result", 1],
      ["checkpoint", 1],
    ]);
  });

  test("a second run on a thread does not replay the previous final state as its first values event", async () => {
    const h = harness(echoGraph().compile());
    await h.run({ messages: ["hi"] });
    h.events.length = 0;
    await h.run({ messages: ["again"] }, { streamModes: ALL });
    const values = of(h.events, "values") as Array<{ messages: Array<{ content: string }> }>;
    expect(values.map((v) => v.messages.map((m) => m.content))).toEqual([
      ["hi", "echo: hi", "again"],
      ["hi", "echo: hi", "again", "echo: again"],
    ]);
  });

  test("only requested modes are produced", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run({ messages: ["hi"] }, { streamModes: new Set(["updates"]) });
    expect(new Set(h.events.map(([m]) => m))).toEqual(new Set(["updates"]));
  });

  test("messages: chunks from emitMessage with tuple metadata, and whole returned messages once unless streamed", async () => {
    const g = new StateGraph(messagesState)
      .addNode("talk", (_s, ctx) => {
        ctx.emitMessage({ type: "AIMessageChunk", id: "m1", content: "Hel" });
        ctx.emitMessage({ type: "AIMessageChunk", id: "m1", content: "lo" });
        ctx.writer({ progress: 1 });
        return { messages: [{ role: "assistant", content: "Hello", id: "m1" }, { role: "assistant", content: "Bye" }] };
      })
      .addEdge(START, "talk")
      .addEdge("talk", END)
      .compile();
    const h = harness(g);
    await h.run({ messages: ["hi"] }, { streamModes: ALL, config: { configurable: { run_id: "r1", assistant_id: "a1", graph_id: "g1", __secret: "x" }, tags: ["t"] } });
    const msgs = of(h.events, "messages") as Array<[Record<string, unknown>, Record<string, unknown>]>;
    expect(msgs.map(([m]) => m.content)).toEqual(["Hel", "lo", "Bye"]);
    const meta = msgs[0]![1];
    expect(meta).toMatchObject({
      langgraph_node: "talk",
      langgraph_step: 1,
      langgraph_triggers: ["branch:to:talk"],
      langgraph_path: ["__pregel_pull", "talk"],
      thread_id: h.threadId,
      run_id: "r1",
      assistant_id: "a1",
      graph_id: "g1",
      tags: ["t"],
    });
    expect(meta.langgraph_checkpoint_ns).toMatch(/^talk:[0-9a-f-]{36}$/);
    expect(meta.checkpoint_ns).toBe(meta.langgraph_checkpoint_ns);
    expect(meta).not.toHaveProperty("__secret");
    expect(of(h.events, "custom")).toEqual([{ progress: 1 }]);
  });

  test("a dynamic interrupt ends the values stream with { __interrupt__ } and reports it in tasks", async () => {
    const g = new StateGraph(messagesState)
      .addNode("ask", (_s, ctx) => ({ messages: [String(ctx.interrupt("name?"))] }))
      .addEdge(START, "ask")
      .compile();
    const h = harness(g);
    const r = await h.run({ messages: ["hi"] }, { streamModes: ALL });
    expect(of(h.events, "values").at(-1)).toEqual({ __interrupt__: r.interrupts });
    expect(of(h.events, "tasks").at(-1)).toMatchObject({ name: "ask", interrupts: r.interrupts });
  });
});

describe("abort", () => {
  test("aborting rejects with GraphAbortError; committed checkpoints stay, nothing half-written, and the node saw the signal", async () => {
    const controller = new AbortController();
    let sawAbort = false;
    const g = new StateGraph(messagesState)
      .addNode("slow", (_s, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve({ messages: ["late"] });
          });
          controller.abort();
        }),
      )
      .addEdge(START, "slow")
      .compile();
    const h = harness(g);
    const err = await h.run({ messages: ["hi"] }, { signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GraphAbortError);
    expect((err as Error).name).toBe("GraphAbortError");
    expect(sawAbort).toBe(true);
    const hist = await g.getHistory(h.store, h.threadId);
    expect(hist.map((s) => s.metadata!.step)).toEqual([0, -1]);
    const state = await g.getState(h.store, h.threadId);
    expect(state.next).toEqual(["slow"]);
    expect(state.tasks[0]!.result).toBeNull();
    // An already aborted signal writes nothing at all.
    const h2 = harness(g, "t2");
    await expect(h2.run({ messages: ["hi"] }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(GraphAbortError);
    expect(await h2.store.getCheckpoint({ thread_id: "t2" })).toBeUndefined();
  });
});

describe("graph description", () => {
  test("getGraph draws __start__, nodes, __end__ and conditional edges; getSchemas describes the state keys", async () => {
    const g = new StateGraph({ ...messagesState, count: { default: () => 0 } })
      .addNode("a", () => undefined)
      .addNode("b", () => undefined)
      .addEdge(START, "a")
      .addConditionalEdges("a", () => END, { more: "b", stop: END })
      .addEdge("b", END)
      .compile();
    const drawn = g.getGraph();
    expect(drawn.nodes.map((n) => [n.id, n.type])).toEqual([
      ["__start__", "schema"],
      ["a", "runnable"],
      ["b", "runnable"],
      ["__end__", "schema"],
    ]);
    expect(drawn.edges).toEqual([
      { source: "__start__", target: "a", conditional: false },
      { source: "b", target: "__end__", conditional: false },
      { source: "a", target: "b", conditional: true, data: "more" },
      { source: "a", target: "__end__", conditional: true, data: "stop" },
    ]);
    const schemas = await g.getSchemas();
    expect(schemas.state_schema).toMatchObject({ type: "object", properties: { messages: { type: "array", langgraph_type: "messages" }, count: { type: "number" } } });
    expect(schemas.input_schema).toEqual(schemas.state_schema);
  });

  test("invalid graphs are refused at declaration or compile time", () => {
    expect(() => new StateGraph({ __start__: {} })).toThrow(/reserved/);
    expect(() => new StateGraph({}).addNode("__end__", () => undefined)).toThrow(/reserved/);
    expect(() => new StateGraph({}).addNode("a", () => undefined).addNode("a", () => undefined)).toThrow(/already/);
    expect(() => new StateGraph({}).addNode("a", () => undefined).compile()).toThrow(/entry point/);
    expect(() => new StateGraph({}).addNode("a", () => undefined).addEdge(START, "b").compile()).toThrow(/"b" is not a node/);
    expect(() => new StateGraph({}).addNode("a", () => undefined).addEdge(START, "a").compile({ interruptBefore: ["zz"] })).toThrow(/zz/);
  });

  test("a node returning a non-object fails with InvalidUpdateError; unknown keys are dropped", async () => {
    const g = new StateGraph({ n: { default: () => 0 } })
      .addNode("a", () => ({ n: 1, junk: true }) as never)
      .addNode("b", () => 5 as never)
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile();
    const h = harness(g);
    await expect(h.run({})).rejects.toMatchObject({ name: "InvalidUpdateError" });
    expect((await g.getState(h.store, h.threadId)).values).toEqual({ n: 1 });
  });
});
