import { describe, expect, test } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { Command, END, START, StateGraph, messagesState, type CompiledStateGraph, type EngineStreamMode } from "../../src/graph/index.js";
import { hash32 } from "../../src/ids.js";
import { harness, logKey } from "./helpers.js";

type Ev = [EngineStreamMode, unknown, readonly string[] | undefined];

/** A child graph: `c1` appends, `ask` interrupts (when `ask`), `c2` appends; it shares `log` with the parent. */
function childGraph(o: { ask?: boolean; before?: string[] } = {}) {
  const calls = { c1: 0, ask: 0, c2: 0 };
  const g = new StateGraph({ log: logKey, answer: {} as { default?: () => unknown }, inner: {} as { default?: () => unknown } })
    .addNode("c1", () => {
      calls.c1++;
      return { log: "c1", inner: "only in the child" };
    })
    .addNode("ask", (_s, ctx) => {
      calls.ask++;
      return o.ask ? { answer: ctx.interrupt({ q: "why?" }) } : { log: "ask" };
    })
    .addNode("c2", () => {
      calls.c2++;
      return { log: "c2" };
    })
    .addEdge(START, "c1")
    .addEdge("c1", "ask")
    .addEdge("ask", "c2")
    .addEdge("c2", END)
    .compile(o.before ? { interruptBefore: o.before } : {});
  return { g, calls };
}

/** p1 -> sub (the child graph as a node) -> p2. */
function parentGraph(child: CompiledStateGraph) {
  return new StateGraph({ log: logKey, answer: {} as { default?: () => unknown } })
    .addNode("p1", () => ({ log: "p1" }))
    .addNode("sub", child)
    .addNode("p2", (s) => ({ log: `p2:${String(s.answer)}` }))
    .addEdge(START, "p1")
    .addEdge("p1", "sub")
    .addEdge("sub", "p2")
    .addEdge("p2", END)
    .compile();
}

/** A harness that also records each event's namespace. */
/** An AI chunk as stream events carry it (LangChain's `toDict()` form). */
const chunkOf = (fields: Record<string, unknown>) => ({ additional_kwargs: {}, response_metadata: {}, tool_call_chunks: [], tool_calls: [], invalid_tool_calls: [], ...fields, type: "ai" });

function nsHarness(graph: CompiledStateGraph) {
  const h = harness(graph);
  const events: Ev[] = [];
  const run = (input: unknown, modes?: EngineStreamMode[]) =>
    h.run(input, { emit: (mode, data, ns) => events.push([mode, data, ns]), ...(modes ? { streamModes: new Set(modes) } : {}) });
  return { ...h, events, run };
}

describe("subgraphs", () => {
  test("a compiled graph as a node gets the state, its final values become the node's update, and its checkpoints live under node:task_id", async () => {
    const { g: child } = childGraph();
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    const r = await h.run({});
    expect(r.status).toBe("done");
    // The child's key the parent lacks ("inner") is dropped; its log writes reach the parent.
    expect(r.values).toEqual({ log: ["p1", "p1", "c1", "ask", "c2", "p2:undefined"] });
    const namespaces = await h.store.listCheckpointNamespaces(h.threadId);
    expect(namespaces).toHaveLength(2);
    const ns = namespaces[1]!;
    const hist = await parent.getHistory(h.store, h.threadId);
    const subTask = hist.find((s) => s.next.includes("sub"))!.tasks.find((t) => t.name === "sub")!;
    expect(ns).toBe(`sub:${subTask.id}`);
    const subCheckpoints = await h.store.listCheckpoints(h.threadId, { checkpoint_ns: ns });
    expect(subCheckpoints.map((c) => [c.metadata.step, c.metadata.source])).toEqual([
      [3, "loop"],
      [2, "loop"],
      [1, "loop"],
      [0, "loop"],
      [-1, "input"],
    ]);
    // metadata.parents names the parent checkpoint the subgraph task started from.
    const parentCheckpoint = hist.find((s) => s.next.includes("sub"))!;
    for (const c of subCheckpoints) expect(c.metadata.parents).toEqual({ "": parentCheckpoint.checkpoint_id });
  });

  test("ctx.invoke runs a compiled graph from a node function under the task's namespace; a second subgraph in one task is refused", async () => {
    const { g: child } = childGraph();
    const parent = new StateGraph({ log: logKey })
      .addNode("call", async (s, ctx) => {
        const out = await ctx.invoke<{ log: string[] }>(child, { log: ["from call"] });
        return { log: `call saw ${out.log.join(",")} (parent had ${s.log.length})` };
      }, { subgraphs: [child] })
      .addEdge(START, "call")
      .addEdge("call", END)
      .compile();
    const h = nsHarness(parent);
    const r = await h.run({ log: ["start"] });
    expect(r.values.log).toEqual(["start", "call saw from call,c1,ask,c2 (parent had 1)"]);
    const [, ns] = await h.store.listCheckpointNamespaces(h.threadId);
    expect(ns).toMatch(/^call:/);
    expect(Object.keys(await parent.getSubgraphs())).toEqual(["call"]);

    const twice = new StateGraph({ log: logKey })
      .addNode("twice", async (_s, ctx) => {
        await ctx.invoke(child, {});
        await ctx.invoke(child, {});
      })
      .addEdge(START, "twice")
      .compile();
    await expect(harness(twice).run({})).rejects.toMatchObject({ lc_error_code: "MULTIPLE_SUBGRAPHS" });
  });

  test("only graphdock compiled graphs can be subgraphs", () => {
    const foreign = { execute: async () => ({}), nodeNames: [] };
    expect(() => new StateGraph({ log: logKey }).addNode("x", foreign as never)).toThrow(GraphdockError);
  });

  test("an interrupt inside a subgraph pauses the parent; getState shows the subgraph task's checkpoint pointer, or its nested state with subgraphs: true", async () => {
    const { g: child } = childGraph({ ask: true });
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    const r = await h.run({});
    expect(r.status).toBe("interrupted");
    const state = await parent.getState(h.store, h.threadId);
    expect(state.next).toEqual(["sub"]);
    const task = state.tasks[0]!;
    const ns = `sub:${task.id}`;
    // The interrupt id hashes the full task namespace inside the subgraph.
    const subState = await parent.getState(h.store, h.threadId, { checkpointNs: ns });
    expect(subState.next).toEqual(["ask"]);
    expect(subState.checkpoint!.checkpoint_ns).toBe(ns);
    expect(subState.checkpoint!.checkpoint_map).toEqual({ "": state.checkpoint_id, [ns]: subState.checkpoint_id });
    const askTask = subState.tasks[0]!;
    const iid = hash32(`${ns}|ask:${askTask.id}`);
    expect(task.interrupts).toEqual([{ id: iid, value: { q: "why?" } }]);
    expect(r.interrupts).toEqual([{ id: iid, value: { q: "why?" } }]);
    expect(r.values.__interrupt__).toEqual([{ id: iid, value: { q: "why?" } }]);
    expect(task.checkpoint).toEqual({ thread_id: h.threadId, checkpoint_ns: ns });
    expect(task.state).toBeNull();

    const nested = await parent.getState(h.store, h.threadId, { subgraphs: true });
    const nestedTask = nested.tasks[0]!;
    expect(nestedTask.checkpoint).toBeNull();
    const inner = nestedTask.state as typeof subState;
    expect(inner.next).toEqual(["ask"]);
    expect(inner.values).toEqual({ log: ["p1", "c1"], inner: "only in the child" });
    expect(inner.tasks[0]!.interrupts).toEqual([{ id: iid, value: { q: "why?" } }]);
  });

  test("Command({ resume }) from the parent answers the interrupt inside the subgraph; finished subgraph nodes do not run again", async () => {
    const { g: child, calls } = childGraph({ ask: true });
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    await h.run({});
    const r = await h.run(new Command({ resume: "because" }));
    expect(r.status).toBe("done");
    expect(r.values.log).toEqual(["p1", "p1", "c1", "c2", "p2:because"]);
    expect(calls).toEqual({ c1: 1, ask: 2, c2: 1 });
    const state = await parent.getState(h.store, h.threadId);
    expect(state.next).toEqual([]);
    // The answer was recorded in the subgraph's namespace, on its own task.
    const [, ns] = await h.store.listCheckpointNamespaces(h.threadId);
    const subHistory = await parent.getHistory(h.store, h.threadId, { checkpointNs: ns });
    expect(subHistory[0]!.values).toMatchObject({ answer: "because" });
  });

  test("a resume map keyed by the subgraph's interrupt id reaches the subgraph; an unknown id is refused", async () => {
    const { g: child } = childGraph({ ask: true });
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    const first = await h.run({});
    const iid = first.interrupts[0]!.id;
    await expect(h.run(new Command({ resume: { ["0".repeat(32)]: "x" } }))).rejects.toThrow(/Unknown interrupt id/);
    const r = await h.run(new Command({ resume: { [iid]: "mapped" } }));
    expect(r.values.log).toEqual(["p1", "p1", "c1", "c2", "p2:mapped"]);
  });

  test("a static breakpoint inside a subgraph pauses the parent with no interrupts; a null-input run continues the subgraph", async () => {
    const { g: child, calls } = childGraph({ before: ["c2"] });
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    const r = await h.run({}, ["values"]);
    expect(r.status).toBe("interrupted");
    expect(r.interrupts).toEqual([]);
    expect(h.events.filter(([m, , ns]) => m === "values" && ns === undefined).at(-1)![1]).toEqual({ __interrupt__: [] });
    const state = await parent.getState(h.store, h.threadId, { subgraphs: true });
    expect(state.next).toEqual(["sub"]);
    expect(state.tasks[0]!.interrupts).toEqual([]);
    expect((state.tasks[0]!.state as { next: string[] }).next).toEqual(["c2"]);
    const done = await h.run(null);
    expect(done.status).toBe("done");
    expect(done.values.log).toEqual(["p1", "p1", "c1", "ask", "c2", "p2:undefined"]);
    expect(calls).toEqual({ c1: 1, ask: 1, c2: 1 });
  });

  test("nested subgraphs: namespaces join with |, getSubgraphs recurses, and an interrupt two levels down is resumed from the root", async () => {
    const { g: leaf } = childGraph({ ask: true });
    const middle = new StateGraph({ log: logKey, answer: {} as { default?: () => unknown } })
      .addNode("m", () => ({ log: "m" }))
      .addNode("leaf", leaf)
      .addEdge(START, "m")
      .addEdge("m", "leaf")
      .addEdge("leaf", END)
      .compile();
    const root = parentGraph(middle);
    expect(Object.keys(await root.getSubgraphs())).toEqual(["sub"]);
    expect(Object.keys(await root.getSubgraphs({ recurse: true }))).toEqual(["sub", "sub|leaf"]);
    expect(Object.keys(await root.getSubgraphs({ namespace: "sub|leaf", recurse: true }))).toEqual(["sub|leaf"]);
    expect(await root.getSubgraphs({ namespace: "nope" })).toEqual({});
    expect((await root.getSubgraphs({ recurse: true }))["sub|leaf"]!.state_schema).toMatchObject({ properties: { log: {}, answer: {}, inner: {} } });

    const h = nsHarness(root);
    const r = await h.run({}, ["updates"]);
    expect(r.status).toBe("interrupted");
    const namespaces = await h.store.listCheckpointNamespaces(h.threadId);
    expect(namespaces).toHaveLength(3);
    const deepest = namespaces.find((n) => n.includes("|"))!;
    expect(deepest).toMatch(/^sub:[0-9a-f-]+\|leaf:[0-9a-f-]+$/);
    // Events of the leaf carry both levels of the namespace.
    expect(h.events.some(([m, d, ns]) => m === "updates" && ns?.join("|") === deepest && "c1" in (d as object))).toBe(true);
    const nested = await root.getState(h.store, h.threadId, { subgraphs: true });
    const leafState = (nested.tasks[0]!.state as { tasks: Array<{ state: { next: string[]; checkpoint: { checkpoint_ns: string } } }> }).tasks[0]!.state;
    expect(leafState.next).toEqual(["ask"]);
    expect(leafState.checkpoint.checkpoint_ns).toBe(deepest);
    const done = await h.run(new Command({ resume: "deep" }));
    expect(done.status).toBe("done");
    // Each level appends its subgraph's whole log to its own (the log reducer concatenates).
    expect(done.values.log).toEqual(["p1", "p1", "m", "p1", "m", "c1", "c2", "p2:deep"]);
  });

  test("updateState on a subgraph checkpoint writes in its namespace, and the parent's resume continues from it", async () => {
    const { g: child, calls } = childGraph({ before: ["c2"] });
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    await h.run({});
    const [, ns] = await h.store.listCheckpointNamespaces(h.threadId);
    const before = await parent.getState(h.store, h.threadId, { checkpointNs: ns! });
    const cfg = await parent.bulkUpdateState(h.store, h.threadId, [{ updates: [{ values: { answer: "edited" }, as_node: "ask" }] }], {
      checkpointNs: ns!,
      ids: h.ids,
      clock: h.clock,
    });
    expect(cfg.checkpoint_ns).toBe(ns);
    const after = await parent.getState(h.store, h.threadId, { checkpointNs: ns! });
    expect(after.metadata!.source).toBe("update");
    expect(after.parent_checkpoint!.checkpoint_id).toBe(before.checkpoint_id);
    expect(after.values).toMatchObject({ answer: "edited" });
    expect(after.next).toEqual(["c2"]);
    // The root graph's history is untouched by the subgraph update.
    expect((await parent.getHistory(h.store, h.threadId)).length).toBe(3);
    const done = await h.run(null);
    expect(done.values).toMatchObject({ answer: "edited" });
    expect(done.values.log).toEqual(["p1", "p1", "c1", "ask", "c2", "p2:edited"]);
    expect(calls.c2).toBe(1);
    // A namespace naming no subgraph node is refused.
    await expect(parent.getState(h.store, h.threadId, { checkpointNs: "p1:x" })).rejects.toThrow(/not a subgraph/);
    await expect(parent.getState(h.store, h.threadId, { checkpointNs: "nope:x" })).rejects.toThrow(/has no node "nope"/);
  });

  test("an error inside a subgraph fails the run; a retry re-runs only the failed subgraph task", async () => {
    let fail = true;
    const calls = { ok: 0, flaky: 0 };
    const child = new StateGraph({ log: logKey })
      .addNode("ok", () => {
        calls.ok++;
        return { log: "ok" };
      })
      .addNode("flaky", () => {
        calls.flaky++;
        if (fail) throw new Error("boom");
        return { log: "flaky" };
      })
      .addEdge(START, "ok")
      .addEdge("ok", "flaky")
      .compile();
    const parent = new StateGraph({ log: logKey }).addNode("sub", child).addEdge(START, "sub").compile();
    const h = nsHarness(parent);
    await expect(h.run({})).rejects.toThrow("boom");
    const state = await parent.getState(h.store, h.threadId);
    expect(state.tasks[0]!.error).toBe("boom");
    fail = false;
    const r = await h.run(null);
    expect(r.values.log).toEqual(["ok", "flaky"]);
    expect(calls).toEqual({ ok: 1, flaky: 2 });
  });

  test("subgraph events carry their namespace; root events have none", async () => {
    const { g: child } = childGraph();
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    await h.run({}, ["values", "updates", "checkpoints", "tasks"]);
    const [, ns] = await h.store.listCheckpointNamespaces(h.threadId);
    const sub = h.events.filter(([, , n]) => n !== undefined);
    expect(sub.length).toBeGreaterThan(0);
    for (const [, , n] of sub) expect(n).toEqual([ns]);
    expect(sub.filter(([m]) => m === "updates").map(([, d]) => Object.keys(d as object)[0])).toEqual(["c1", "ask", "c2"]);
    const rootUpdates = h.events.filter(([m, , n]) => m === "updates" && n === undefined).map(([, d]) => Object.keys(d as object)[0]);
    expect(rootUpdates).toEqual(["p1", "sub", "p2"]);
    const subCheckpoint = sub.find(([m]) => m === "checkpoints")![1] as { config: { configurable: { checkpoint_ns: string } }; metadata: { parents: Record<string, string> } };
    expect(subCheckpoint.config.configurable.checkpoint_ns).toBe(ns);
  });
});

describe("stream modes", () => {
  test("messages (tuple): a message is sent once per run: not again when a subgraph node returns it, nor when a node returns its input", async () => {
    const inner = new StateGraph(messagesState)
      .addNode("speak", (_s, ctx) => {
        ctx.emitMessage({ type: "AIMessageChunk", id: "r1", content: "hi" });
        return { messages: [{ type: "ai", id: "r1", content: "hi" }, { type: "ai", id: "r2", content: "whole" }] };
      })
      .addEdge(START, "speak")
      .compile();
    const outer = new StateGraph(messagesState).addNode("helper", inner).addEdge(START, "helper").compile();
    const h = nsHarness(outer);
    await h.run({ messages: [{ role: "user", content: "go", id: "u1" }] }, ["messages"]);
    const sent = h.events.map(([, d, ns]) => [((d as [{ id: string }])[0]).id, ns === undefined ? "root" : "sub"]);
    expect(sent).toEqual([
      ["r1", "sub"],
      ["r2", "sub"],
    ]);
  });


  test("events: on_chain_start/end for the graph and each node, a chat model run for emitted chunks (LangChain's chunk form), with run ids and parent_ids", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("talk", (_s, ctx) => {
        ctx.emitMessage({ type: "AIMessageChunk", id: "m1", content: "he" });
        ctx.emitMessage({ type: "AIMessageChunk", id: "m1", content: "llo" });
        return { log: "talk" };
      })
      .addEdge(START, "talk")
      .compile({ name: "talker" });
    const h = nsHarness(g);
    await h.run({ log: ["in"] }, ["events"]);
    const events = h.events.map(([, d]) => d as { event: string; name: string; run_id: string; parent_ids: string[]; tags: string[]; metadata: Record<string, unknown>; data: Record<string, unknown> });
    expect(h.events.every(([m]) => m === "events")).toBe(true);
    expect(events.map((e) => [e.event, e.name])).toEqual([
      ["on_chain_start", "talker"],
      ["on_chain_start", "talk"],
      ["on_chat_model_start", "ChatModel"],
      ["on_chat_model_stream", "ChatModel"],
      ["on_chat_model_stream", "ChatModel"],
      ["on_chat_model_end", "ChatModel"],
      ["on_chain_end", "talk"],
      ["on_chain_end", "talker"],
    ]);
    const [start, node, modelStart, chunk1, chunk2, modelEnd, nodeEnd, end] = events as [typeof events[0], ...typeof events];
    expect(modelStart!.run_id).toBe(chunk1!.run_id);
    expect(modelStart!.data).toEqual({ input: { messages: [[]] } });
    expect(modelEnd!.run_id).toBe(chunk1!.run_id);
    expect(modelEnd!.parent_ids).toEqual([start.run_id, node!.run_id]);
    expect(modelEnd!.data).toEqual({ input: { messages: [[]] }, output: chunkOf({ id: "m1", content: "hello" }) });
    expect(start.data).toEqual({ input: { log: ["in"] } });
    expect(start.parent_ids).toEqual([]);
    expect(end!.run_id).toBe(start.run_id);
    expect(end!.data.output).toEqual({ log: ["in", "talk"] });
    expect(node!.parent_ids).toEqual([start.run_id]);
    expect(node!.tags).toEqual(["graph:step:1"]);
    expect(node!.metadata).toMatchObject({ langgraph_node: "talk", langgraph_step: 1, langgraph_triggers: ["branch:to:talk"] });
    // The model runs' tags are the run's (the node's step tag is the node's own).
    expect(modelStart!.tags).toEqual([]);
    expect(chunk1!.data.chunk).toEqual(chunkOf({ id: "m1", content: "he" }));
    expect(chunk1!.parent_ids).toEqual([start.run_id, node!.run_id]);
    expect(chunk2!.run_id).toBe(chunk1!.run_id);
    expect(nodeEnd!.data).toEqual({ input: { log: ["in"] }, output: { log: "talk" } });
    expect(end!.data).toEqual({ output: { log: ["in", "talk"] } });
    expect(new Set(events.map((e) => e.run_id)).size).toBe(3);
  });

  test("events: each streamed message is its own chat model run (a new message ends the one before); a node that fails after streaming still ends them", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("talk", (_s, ctx) => {
        ctx.emitMessage({ type: "AIMessageChunk", id: "a", content: "one" });
        ctx.emitMessage({ type: "AIMessageChunk", id: "b", content: "tw", tool_call_chunks: [{ index: 0, name: "f", args: "{\"x\"" }] });
        ctx.emitMessage({ type: "AIMessageChunk", id: "b", content: "o", tool_call_chunks: [{ index: 0, args: ":1}" }] });
        throw new Error("boom");
      })
      .addEdge(START, "talk")
      .compile();
    const h = nsHarness(g);
    await h.run({}, ["events"]).catch(() => undefined);
    const events = h.events.map(([, d]) => d as { event: string; run_id: string; data: Record<string, unknown> });
    const model = events.filter((e) => e.event.startsWith("on_chat_model"));
    expect(model.map((e) => e.event)).toEqual([
      "on_chat_model_start",
      "on_chat_model_stream",
      "on_chat_model_end",
      "on_chat_model_start",
      "on_chat_model_stream",
      "on_chat_model_stream",
      "on_chat_model_end",
    ]);
    expect(model[0]!.run_id).not.toBe(model[3]!.run_id);
    expect([model[2], model[6]].map((e) => [e!.run_id, e!.data.output])).toEqual([
      [model[0]!.run_id, chunkOf({ id: "a", content: "one" })],
      // A tool call chunk without an id is an invalid tool call (as LangChain reads it).
      [
        model[3]!.run_id,
        chunkOf({
          id: "b",
          content: "two",
          tool_call_chunks: [{ index: 0, name: "f", args: '{"x":1}' }],
          invalid_tool_calls: [{ name: "f", args: '{"x":1}', id: undefined, error: "Malformed args.", type: "invalid_tool_call" }],
        }),
      ],
    ]);
  });

  test("events: a subgraph's nodes are children of the subgraph node", async () => {
    const { g: child } = childGraph();
    const parent = parentGraph(child);
    const h = nsHarness(parent);
    await h.run({}, ["events"]);
    const events = h.events.map(([, d]) => d as { event: string; name: string; run_id: string; parent_ids: string[] });
    const root = events[0]!;
    const subNode = events.find((e) => e.event === "on_chain_start" && e.name === "sub")!;
    const c1 = events.find((e) => e.event === "on_chain_start" && e.name === "c1")!;
    expect(subNode.parent_ids).toEqual([root.run_id]);
    expect(c1.parent_ids).toEqual([root.run_id, subNode.run_id]);
    expect(events.filter((e) => e.event === "on_chain_start").map((e) => e.name)).toEqual(["LangGraph", "p1", "sub", "c1", "ask", "c2", "p2"]);
  });

  test("debug and checkpoints: a run that continues from a checkpoint first re-sends the checkpoint it starts from", async () => {
    const g = new StateGraph({ log: logKey })
      .addNode("a", () => ({ log: "a" }))
      .addNode("b", () => ({ log: "b" }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile({ interruptBefore: ["b"] });
    const h = nsHarness(g);
    await h.run({});
    const paused = await g.getState(h.store, h.threadId);
    h.events.length = 0;
    await h.run(null, ["debug", "checkpoints"]);
    const debug = h.events.filter(([m]) => m === "debug").map(([, d]) => d as { type: string; step: number; payload: { config: { configurable: { checkpoint_id: string } }; next: string[] } });
    expect(debug[0]).toMatchObject({ type: "checkpoint", step: paused.metadata!.step });
    expect(debug[0]!.payload.config.configurable.checkpoint_id).toBe(paused.checkpoint_id);
    expect(debug[0]!.payload.next).toEqual(["b"]);
    expect(debug.map((d) => d.type)).toEqual(["checkpoint", "task", "task_result", "checkpoint"]);
    const cps = h.events.filter(([m]) => m === "checkpoints").map(([, d]) => (d as { config: { configurable: { checkpoint_id: string } } }).config.configurable.checkpoint_id);
    expect(cps[0]).toBe(paused.checkpoint_id);
    expect(cps).toHaveLength(2);
  });
});
