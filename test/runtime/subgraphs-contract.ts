/**
 * Subgraphs and the extra stream modes through the SDK-shaped surface, written only
 * against methods and options of the official `@langchain/langgraph-sdk` `Client`: run in
 * process (`createRuntime`) and over HTTP (the SDK client on the fetch handler).
 */
import type { Client } from "@langchain/langgraph-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { END, START, StateGraph, messagesState, type CompiledGraph, type Message } from "../../src/graph/index.js";
import type { Store } from "../../src/persistence/types.js";
import { expectCode } from "./contract.js";

export interface SubgraphHarness {
  client: Client;
  store: Store;
  close(): Promise<void>;
}

// Records come back as the SDK types them; tests read values loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const logKey = {
  reducer: (a: readonly string[], b: string | readonly string[]) => [...a, ...(typeof b === "string" ? [b] : b)],
  default: (): string[] => [],
};

/** c1 -> ask -> c2; `ask` interrupts when `ask`, and the graph pauses before `c2` when `pause`. */
function child(o: { ask?: boolean; pause?: boolean }) {
  return new StateGraph({ log: logKey, answer: {} as { default?: () => unknown } })
    .addNode("c1", () => ({ log: "c1" }))
    .addNode("ask", (_s, ctx) => (o.ask ? { answer: ctx.interrupt({ q: "why?" }) } : { log: "ask" }))
    .addNode("c2", () => ({ log: "c2" }))
    .addEdge(START, "c1")
    .addEdge("c1", "ask")
    .addEdge("ask", "c2")
    .addEdge("c2", END)
    .compile(o.pause ? { interruptBefore: ["c2"] } : {});
}

/** p1 -> sub -> p2, `sub` being `inner`. */
function parent(inner: CompiledGraph) {
  return new StateGraph({ log: logKey, answer: {} as { default?: () => unknown } })
    .addNode("p1", () => ({ log: "p1" }))
    .addNode("sub", inner)
    .addNode("p2", (s) => ({ log: `p2:${String(s.answer)}` }))
    .addEdge(START, "p1")
    .addEdge("p1", "sub")
    .addEdge("sub", "p2")
    .addEdge("p2", END)
    .compile();
}

/** Streams a reply in three chunks (with `ctx.emitMessage`), then returns it whole. */
function talker() {
  return new StateGraph(messagesState)
    .addNode("talk", (s, ctx) => {
      const last = s.messages[s.messages.length - 1] as Message;
      for (const piece of ["Hel", "lo ", String(last.content)]) ctx.emitMessage({ type: "AIMessageChunk", id: "reply-1", content: piece });
      return { messages: [{ type: "ai", id: "reply-1", content: `Hello ${String(last.content)}` }] };
    })
    .addEdge(START, "talk")
    .addEdge("talk", END)
    .compile();
}

export function subgraphGraphs(): Record<string, CompiledGraph> {
  const middle = new StateGraph({ log: logKey, answer: {} as { default?: () => unknown } })
    .addNode("m", () => ({ log: "m" }))
    .addNode("leaf", child({ ask: true }))
    .addEdge(START, "m")
    .addEdge("m", "leaf")
    .compile();
  return {
    asks: parent(child({ ask: true })),
    pauses: parent(child({ pause: true })),
    plain: parent(child({})),
    nested: parent(middle),
    talker: talker(),
  };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function subgraphContract(name: string, create: (graphs: Record<string, CompiledGraph>) => Promise<SubgraphHarness>): void {
  describe(`subgraphs and stream modes: ${name}`, () => {
    let h: SubgraphHarness;
    let c: Client;
    beforeEach(async () => {
      h = await create(subgraphGraphs());
      c = h.client;
    });
    afterEach(() => h.close());

    const start = async (graph: string) => {
      const t = await c.threads.create();
      const out: Loose = await c.runs.wait(t.thread_id, graph, { input: {} });
      return { threadId: t.thread_id, out };
    };

    it("getState: a pending subgraph task points at its namespace (tasks[].checkpoint); with subgraphs: true it carries the subgraph's state", async () => {
      const { threadId, out } = await start("asks");
      expect(out.__interrupt__).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{32}$/), value: { q: "why?" } }]);
      const thread: Loose = await c.threads.get(threadId);
      expect(thread.status).toBe("interrupted");
      const state: Loose = await c.threads.getState(threadId);
      expect(state.next).toEqual(["sub"]);
      const task = state.tasks[0];
      expect(task.checkpoint).toEqual({ thread_id: threadId, checkpoint_ns: `sub:${task.id}` });
      expect(task.state).toBeNull();
      expect(task.interrupts).toEqual(out.__interrupt__);

      const nested: Loose = await c.threads.getState(threadId, undefined, { subgraphs: true });
      expect(nested.tasks[0].checkpoint).toBeNull();
      expect(nested.tasks[0].state.next).toEqual(["ask"]);
      expect(nested.tasks[0].state.values).toEqual({ log: ["p1", "c1"] });
      expect(nested.tasks[0].state.checkpoint.checkpoint_ns).toBe(`sub:${task.id}`);

      // The pointer reads the subgraph's own state and history.
      const sub: Loose = await c.threads.getState(threadId, task.checkpoint);
      expect(sub.next).toEqual(["ask"]);
      expect(sub.tasks[0].interrupts).toEqual(out.__interrupt__);
      expect(sub.metadata.parents).toEqual({ "": state.checkpoint.checkpoint_id });
      const history: Loose[] = await c.threads.getHistory(threadId, { checkpoint: { checkpoint_ns: task.checkpoint.checkpoint_ns } });
      expect(history.map((s) => s.metadata.step)).toEqual([1, 0, -1]);
      expect(history.every((s) => s.checkpoint.checkpoint_ns === task.checkpoint.checkpoint_ns)).toBe(true);
      await expectCode(c.threads.getState(threadId, { checkpoint_ns: "p1:nope" } as Loose), "invalid_input");
    });

    it("an interrupt inside a subgraph is answered from the parent with Command({ resume })", async () => {
      const { threadId } = await start("asks");
      const done: Loose = await c.runs.wait(threadId, "asks", { command: { resume: "because" } });
      expect(done.log).toEqual(["p1", "p1", "c1", "c2", "p2:because"]);
      expect(done.answer).toBe("because");
      expect(((await c.threads.get(threadId)) as Loose).status).toBe("idle");
    });

    it("an interrupt two subgraph levels down is answered from the root by its interrupt id", async () => {
      const { threadId, out } = await start("nested");
      const state: Loose = await c.threads.getState(threadId, undefined, { subgraphs: true });
      const leaf = state.tasks[0].state.tasks[0].state;
      expect(leaf.checkpoint.checkpoint_ns).toMatch(/^sub:[^|]+\|leaf:[^|]+$/);
      expect(leaf.next).toEqual(["ask"]);
      const done: Loose = await c.runs.wait(threadId, "nested", { command: { resume: { [out.__interrupt__[0].id]: "deep" } } });
      expect(done.answer).toBe("deep");
      expect(done.log.at(-1)).toBe("p2:deep");
    });

    it("a breakpoint inside a subgraph pauses the thread; a run with null input continues the subgraph", async () => {
      const { threadId, out } = await start("pauses");
      expect(out.__interrupt__).toBeUndefined();
      const state: Loose = await c.threads.getState(threadId, undefined, { subgraphs: true });
      expect(((await c.threads.get(threadId)) as Loose).status).toBe("interrupted");
      expect(state.next).toEqual(["sub"]);
      expect(state.tasks[0].state.next).toEqual(["c2"]);
      const done: Loose = await c.runs.wait(threadId, "pauses", { input: null });
      expect(done.log).toEqual(["p1", "p1", "c1", "ask", "c2", "p2:undefined"]);
    });

    it("updateState on a subgraph checkpoint (checkpoint_ns) edits the subgraph's state; resuming the parent continues from it", async () => {
      const { threadId } = await start("pauses");
      const state: Loose = await c.threads.getState(threadId);
      const pointer = state.tasks[0].checkpoint;
      const cfg: Loose = await c.threads.updateState(threadId, { values: { answer: "edited" }, asNode: "ask", checkpoint: pointer });
      expect(cfg.checkpoint.checkpoint_ns).toBe(pointer.checkpoint_ns);
      const sub: Loose = await c.threads.getState(threadId, pointer);
      expect(sub.metadata.source).toBe("update");
      expect(sub.values.answer).toBe("edited");
      expect(sub.next).toEqual(["c2"]);
      // The parent's state is unchanged by the subgraph's update.
      expect(((await c.threads.getState(threadId)) as Loose).checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
      // A run cannot start from the subgraph's checkpoint itself.
      await expectCode(c.runs.wait(threadId, "pauses", { input: null, checkpoint: pointer }), "invalid_input");
      const done: Loose = await c.runs.wait(threadId, "pauses", { input: null });
      expect(done.answer).toBe("edited");
      expect(done.log.at(-1)).toBe("p2:edited");
    });

    it("getSubgraphs lists subgraphs by namespace, recursively, or only the one asked for", async () => {
      const direct: Loose = await c.assistants.getSubgraphs("nested");
      expect(Object.keys(direct)).toEqual(["sub"]);
      expect(direct.sub).toMatchObject({ graph_id: "nested", state_schema: { properties: { log: {}, answer: {} } } });
      // The JS agent server's keys, the same schemas.
      expect(direct.sub.state).toEqual(direct.sub.state_schema);
      expect([direct.sub.input, direct.sub.output, direct.sub.config]).toEqual([direct.sub.input_schema, direct.sub.output_schema, direct.sub.config_schema]);
      expect(Object.keys(await c.assistants.getSubgraphs("nested", { recurse: true }))).toEqual(["sub", "sub|leaf"]);
      expect(Object.keys(await c.assistants.getSubgraphs("nested", { namespace: "sub" }))).toEqual(["sub"]);
      expect(Object.keys(await c.assistants.getSubgraphs("nested", { namespace: "sub|leaf", recurse: true }))).toEqual(["sub|leaf"]);
      expect(await c.assistants.getSubgraphs("talker")).toEqual({});
    });

    it("getGraph with xray expands subgraph nodes into their nodes (ids node:child), edges wired through; a depth limits the levels", async () => {
      const edges = (g: Loose) => g.edges.map((e: Loose) => `${e.source}->${e.target}${e.conditional ? "?" : ""}`).sort();
      const flat: Loose = await c.assistants.getGraph("nested");
      expect(flat.nodes.map((n: Loose) => n.id)).toEqual([START, "p1", "sub", "p2", END]);
      expect(edges(flat)).toEqual([`${START}->p1`, "p1->sub", `p2->${END}`, "sub->p2"]);
      expect(await c.assistants.getGraph("nested", { xray: false })).toEqual(flat);

      const deep: Loose = await c.assistants.getGraph("nested", { xray: true });
      expect(deep.nodes.map((n: Loose) => n.id)).toEqual([START, "p1", "sub:m", "sub:leaf:c1", "sub:leaf:ask", "sub:leaf:c2", "p2", END]);
      expect(deep.nodes.find((n: Loose) => n.id === "sub:leaf:ask")).toMatchObject({ type: "runnable", data: { name: "ask" } });
      expect(edges(deep)).toEqual([
        `${START}->p1`,
        "p1->sub:m",
        `p2->${END}`,
        "sub:leaf:ask->sub:leaf:c2",
        "sub:leaf:c1->sub:leaf:ask",
        "sub:leaf:c2->p2",
        "sub:m->sub:leaf:c1",
      ]);

      const one: Loose = await c.assistants.getGraph("nested", { xray: 1 });
      expect(one.nodes.map((n: Loose) => n.id)).toEqual([START, "p1", "sub:m", "sub:leaf", "p2", END]);
      expect(edges(one)).toEqual([`${START}->p1`, "p1->sub:m", `p2->${END}`, "sub:leaf->p2", "sub:m->sub:leaf"]);
      expect(await c.assistants.getGraph("nested", { xray: 2 })).toEqual(deep);

      // A subgraph paused by a breakpoint shows it on the expanded node.
      const paused: Loose = await c.assistants.getGraph("pauses", { xray: true });
      expect(paused.nodes.find((n: Loose) => n.id === "sub:c2").metadata).toEqual({ __interrupt: "before" });
      await expectCode(c.assistants.getGraph("nested", { xray: -1 }), "invalid_input");
      // A graph without subgraphs draws the same either way.
      expect(await c.assistants.getGraph("talker", { xray: true })).toEqual(await c.assistants.getGraph("talker"));
    });

    it("streamSubgraphs: subgraph events are named <mode>|<node>:<task id>; without it only root events are sent", async () => {
      const t = await c.threads.create();
      const events: Loose[] = await collect(c.runs.stream(t.thread_id, "plain", { input: {}, streamMode: ["values", "updates"], streamSubgraphs: true }));
      const state: Loose = (await c.threads.getHistory(t.thread_id, { limit: 10 })).find((s: Loose) => s.next.includes("sub"));
      const ns = `sub:${state.tasks[0].id}`;
      const names = events.map((e) => e.event);
      expect(names).toContain(`values|${ns}`);
      expect(events.filter((e) => e.event === `updates|${ns}`).map((e) => Object.keys(e.data)[0])).toEqual(["c1", "ask", "c2"]);
      expect(events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data)[0])).toEqual(["p1", "sub", "p2"]);
      // The subgraph's values: its input (the parent's state) after its __start__ step, then one per step.
      expect(events.filter((e) => e.event === `values|${ns}`).map((e) => e.data.log)).toEqual([
        ["p1"],
        ["p1", "c1"],
        ["p1", "c1", "ask"],
        ["p1", "c1", "ask", "c2"],
      ]);

      const t2 = await c.threads.create();
      const plain: Loose[] = await collect(c.runs.stream(t2.thread_id, "plain", { input: {}, streamMode: ["values", "updates"] }));
      expect(plain.filter((e) => e.event.includes("|"))).toEqual([]);
      expect(plain.filter((e) => e.event === "updates").map((e) => Object.keys(e.data)[0])).toEqual(["p1", "sub", "p2"]);
    });

    it("joinStream with a stream_mode filter keeps that mode's subgraph events (<mode>|<ns>) and drops the others", async () => {
      const t = await c.threads.create();
      const run = await c.runs.create(t.thread_id, "plain", { input: {}, streamMode: ["values", "updates"], streamSubgraphs: true, streamResumable: true });
      await c.runs.join(t.thread_id, run.run_id);
      const joined: Loose[] = await collect(c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1", streamMode: ["updates"] }));
      const names = joined.map((e) => e.event.split("|")[0]);
      expect(new Set(names)).toEqual(new Set(["metadata", "updates"]));
      expect(joined.filter((e) => e.event.startsWith("updates|")).map((e) => Object.keys(e.data)[0])).toEqual(["c1", "ask", "c2"]);
    });

    it("events mode: on_chain_start/end for the graph and each node, a chat model run for the emitted chunks", async () => {
      const t = await c.threads.create();
      const events: Loose[] = await collect(c.runs.stream(t.thread_id, "talker", { input: { messages: [{ role: "user", content: "Ann" }] }, streamMode: ["events"] }));
      expect(events[0].event).toBe("metadata");
      const data = events.filter((e) => e.event === "events").map((e) => e.data);
      expect(data.map((d) => `${d.event}:${d.name}`)).toEqual([
        "on_chain_start:LangGraph",
        "on_chain_start:talk",
        "on_chat_model_start:ChatModel",
        "on_chat_model_stream:ChatModel",
        "on_chat_model_stream:ChatModel",
        "on_chat_model_stream:ChatModel",
        "on_chat_model_end:ChatModel",
        "on_chain_end:talk",
        "on_chain_end:LangGraph",
      ]);
      const [graphStart, nodeStart, modelStart, chunk] = data;
      expect(graphStart.run_id).toBe(events[0].data.run_id);
      expect(graphStart.parent_ids).toEqual([]);
      expect(nodeStart.parent_ids).toEqual([graphStart.run_id]);
      expect(nodeStart.metadata).toMatchObject({ langgraph_node: "talk", langgraph_step: 1, thread_id: t.thread_id });
      expect(chunk.parent_ids).toEqual([graphStart.run_id, nodeStart.run_id]);
      const aiChunk = { additional_kwargs: {}, response_metadata: {}, tool_call_chunks: [], tool_calls: [], invalid_tool_calls: [], type: "ai" };
      expect(chunk.data.chunk).toEqual({ ...aiChunk, id: "reply-1", content: "Hel" });
      // The chat model run: start before the first chunk, end after the last with the whole message.
      const modelEnd = data.find((d: Loose) => d.event === "on_chat_model_end");
      expect(modelStart.parent_ids).toEqual([graphStart.run_id, nodeStart.run_id]);
      expect(modelStart.data.input.messages[0].map((m: Loose) => m.content)).toEqual(["Ann"]);
      expect(new Set(data.filter((d: Loose) => d.name === "ChatModel").map((d: Loose) => d.run_id)).size).toBe(1);
      expect(modelEnd.data.output).toEqual({ ...aiChunk, id: "reply-1", content: "Hello Ann" });
      for (const d of data) expect(Object.keys(d).sort()).toEqual(["data", "event", "metadata", "name", "parent_ids", "run_id", "tags"]);
      expect(data.at(-1).data.output.messages.map((m: Loose) => m.content)).toEqual(["Ann", "Hello Ann"]);
    });

    it("legacy messages mode: messages/metadata once, messages/partial accumulating, messages/complete per new message; messages-tuple next to it", async () => {
      const t = await c.threads.create();
      const events: Loose[] = await collect(
        c.runs.stream(t.thread_id, "talker", { input: { messages: [{ role: "user", content: "Ann", id: "u1" }] }, streamMode: ["messages", "messages-tuple"] as Loose }),
      );
      const names = events.map((e) => e.event).filter((n) => n !== "metadata");
      expect(names.filter((n) => n.startsWith("messages/"))).toEqual([
        "messages/complete",
        "messages/metadata",
        "messages/partial",
        "messages/partial",
        "messages/partial",
        "messages/complete",
      ]);
      const legacy = events.filter((e) => e.event.startsWith("messages/"));
      expect(legacy[0].data.map((m: Loose) => [m.id, m.type])).toEqual([["u1", "human"]]);
      expect(Object.keys(legacy[1].data)).toEqual(["reply-1"]);
      expect(legacy[1].data["reply-1"].metadata).toMatchObject({ langgraph_node: "talk" });
      expect(legacy.slice(2, 5).map((e) => e.data[0].content)).toEqual(["Hel", "Hello ", "Hello Ann"]);
      expect(legacy[5].data.map((m: Loose) => [m.id, m.content])).toEqual([["reply-1", "Hello Ann"]]);
      // The tuple mode's events are still there, and no values event was asked for.
      expect(events.filter((e) => e.event === "messages").map((e) => e.data[0].content)).toEqual(["Hel", "lo ", "Ann"]);
      expect(names).not.toContain("values");
    });

    it("a debug stream that continues from a checkpoint first re-sends the checkpoint it starts from", async () => {
      const { threadId } = await start("asks");
      const paused: Loose = await c.threads.getState(threadId);
      const events: Loose[] = await collect(c.runs.stream(threadId, "asks", { command: { resume: "ok" }, streamMode: ["debug"] }));
      const debug = events.filter((e) => e.event === "debug").map((e) => e.data);
      expect(debug[0].type).toBe("checkpoint");
      expect(debug[0].payload.checkpoint.checkpoint_id).toBe(paused.checkpoint.checkpoint_id);
      expect(debug[0].payload.next).toEqual(["sub"]);
      expect(debug.at(-1).type).toBe("checkpoint");
      expect(debug.at(-1).payload.next).toEqual([]);
    });

    it("copying a thread copies every checkpoint namespace; deleting a thread removes them all", async () => {
      const { threadId } = await start("asks");
      const namespaces = await h.store.listCheckpointNamespaces(threadId);
      expect(namespaces).toHaveLength(2);
      const copy = await c.threads.copy(threadId);
      expect(await h.store.listCheckpointNamespaces(copy.thread_id)).toEqual(namespaces);
      const pointer = ((await c.threads.getState(copy.thread_id)) as Loose).tasks[0].checkpoint;
      const sub: Loose = await c.threads.getState(copy.thread_id, pointer);
      expect(sub.next).toEqual(["ask"]);
      // The copy resumes on its own; the original stays paused.
      const done: Loose = await c.runs.wait(copy.thread_id, "asks", { command: { resume: "copy" } });
      expect(done.answer).toBe("copy");
      expect(((await c.threads.getState(threadId)) as Loose).next).toEqual(["sub"]);
      await c.threads.delete(threadId);
      expect(await h.store.listCheckpointNamespaces(threadId)).toEqual([]);
      expect(await h.store.listCheckpoints(threadId, { checkpoint_ns: namespaces[1] })).toEqual([]);
    });
  });
}
