/**
 * `GraphdockSaver` used as LangGraph's own checkpointer tests use a saver: put / getTuple, list
 * with filter, before and limit, putWrites (special channels replaced, regular writes kept once),
 * namespaces, deleteThread; LangChain messages come back as the same objects. Then a graph
 * compiled with the saver as its checkpointer, as a user of LangGraph.js would use it. Run on
 * every store (test/langgraph/saver.test.ts, test/postgres/langgraph.test.ts).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, emptyCheckpoint, END, interrupt, MessagesAnnotation, START, StateGraph, type Checkpoint } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GraphdockSaver } from "../../src/langgraph/index.js";
import type { Store } from "../../src/persistence/types.js";

/** A checkpoint as LangGraph's loop makes one: a fresh id (ids sort by time), some channels. */
function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  const cp = emptyCheckpoint();
  return { ...cp, channel_values: values, channel_versions: versions, versions_seen: { node: { ...versions } } };
}
const tick = () => new Promise((r) => setTimeout(r, 2));

/** The saver suite on one store kind: `makeStore` returns a new, unopened store. */
export function saverContract(name: string, makeStore: () => Store): void {
  describe(`GraphdockSaver on the ${name} store`, () => {
    let store: Store;
    let saver: GraphdockSaver;
    beforeEach(async () => {
      store = makeStore();
      await store.open();
      saver = new GraphdockSaver(store);
    });
    afterEach(() => store.close());

    it("puts and gets checkpoints, latest or by id, with parents, metadata and messages revived", async () => {
      const thread = { configurable: { thread_id: "t1", checkpoint_ns: "" } };
      expect(await saver.getTuple(thread)).toBeUndefined();
      const first = checkpoint({ messages: [new HumanMessage({ content: "hi", id: "h1" })] }, { messages: 1 });
      const c1 = await saver.put(thread, first, { source: "input", step: -1, parents: {} }, {});
      expect(c1).toEqual({ configurable: { thread_id: "t1", checkpoint_ns: "", checkpoint_id: first.id } });
      await tick();
      const second = checkpoint({ messages: [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "hello", id: "a1", tool_calls: [] })] }, { messages: 2 });
      const c2 = await saver.put(c1, second, { source: "loop", step: 0, parents: {} }, {});

      const latest = (await saver.getTuple(thread))!;
      expect(latest.config.configurable).toEqual({ thread_id: "t1", checkpoint_ns: "", checkpoint_id: second.id });
      expect(latest.parentConfig?.configurable).toEqual({ thread_id: "t1", checkpoint_ns: "", checkpoint_id: first.id });
      expect(latest.metadata).toEqual({ source: "loop", step: 0, parents: {} });
      expect(latest.checkpoint).toMatchObject({ id: second.id, ts: second.ts, channel_versions: { messages: 2 }, versions_seen: { node: { messages: 2 } } });
      const [human, ai] = latest.checkpoint.channel_values.messages as [HumanMessage, AIMessage];
      expect(human).toBeInstanceOf(HumanMessage);
      expect(ai).toBeInstanceOf(AIMessage);
      expect([human.content, human.id, ai.content, ai.id]).toEqual(["hi", "h1", "hello", "a1"]);

      const byId = (await saver.getTuple({ configurable: { ...c1.configurable } }))!;
      expect(byId.checkpoint.id).toBe(first.id);
      expect(byId.parentConfig).toBeUndefined();
      expect(await saver.getTuple({ configurable: { thread_id: "t1", checkpoint_id: "1ef00000-0000-6000-8000-000000000000" } })).toBeUndefined();
      expect(c2.configurable?.checkpoint_id).toBe(second.id);
    });

    it("lists newest first, with limit, before, metadata filter, one checkpoint id, and per namespace", async () => {
      const ids: string[] = [];
      let parent = { configurable: { thread_id: "t", checkpoint_ns: "" } } as { configurable: Record<string, unknown> };
      for (let step = -1; step < 4; step++) {
        const cp = checkpoint({ n: step }, { n: step + 2 });
        parent = (await saver.put(parent, cp, { source: step < 0 ? "input" : "loop", step, parents: {}, ...(step % 2 === 0 ? { even: true } : {}) }, {})) as typeof parent;
        ids.push(cp.id);
        await tick();
      }
      const inner = checkpoint({ n: 100 }, { n: 1 });
      await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "child:1" } }, inner, { source: "loop", step: 0, parents: { "": ids[0]! } }, {});
      await saver.put({ configurable: { thread_id: "other", checkpoint_ns: "" } }, checkpoint({ n: 0 }, { n: 1 }), { source: "input", step: -1, parents: {} }, {});

      const list = async (config: Record<string, unknown>, options?: Parameters<GraphdockSaver["list"]>[1]) => {
        const out: string[] = [];
        for await (const t of saver.list({ configurable: config }, options)) out.push(t.checkpoint.id);
        return out;
      };
      const newestFirst = [...ids].reverse();
      expect(await list({ thread_id: "t", checkpoint_ns: "" })).toEqual(newestFirst);
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { limit: 2 })).toEqual(newestFirst.slice(0, 2));
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { before: { configurable: { checkpoint_id: ids[2] } } })).toEqual([ids[1], ids[0]]);
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { before: { configurable: { checkpoint_id: ids[4] } }, limit: 1 })).toEqual([ids[3]]);
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { filter: { even: true } })).toEqual([ids[3], ids[1]]);
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { filter: { source: "input" } })).toEqual([ids[0]]);
      expect(await list({ thread_id: "t", checkpoint_ns: "" }, { filter: { step: 99 } })).toEqual([]);
      expect(await list({ thread_id: "t", checkpoint_ns: "", checkpoint_id: ids[1] })).toEqual([ids[1]]);
      expect(await list({ thread_id: "t", checkpoint_ns: "child:1" })).toEqual([inner.id]);
      // Without a namespace: every namespace of the thread.
      expect((await list({ thread_id: "t" })).sort()).toEqual([...ids, inner.id].sort());
      expect(await list({ thread_id: "other" })).toHaveLength(1);
      await expect(list({})).rejects.toThrow(/thread_id/);

      const child = (await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "child:1" } }))!;
      expect(child.checkpoint.channel_values).toEqual({ n: 100 });
      expect(child.metadata?.parents).toEqual({ "": ids[0] });
      expect((await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "" } }))!.checkpoint.id).toBe(ids[4]);
    });

    it("records writes per task: special channels replaced, regular writes kept once, other tasks untouched", async () => {
      const cp = checkpoint({}, {});
      const config = await saver.put({ configurable: { thread_id: "w", checkpoint_ns: "" } }, cp, { source: "loop", step: 0, parents: {} }, {});
      await saver.putWrites(config, [["messages", new AIMessage({ content: "one", id: "m1" })], ["count", 1]], "task-a");
      await saver.putWrites(config, [["__interrupt__", [{ id: "i1", value: "first?" }]]], "task-b");
      // A retried task writes the same regular writes again: they are not duplicated.
      await saver.putWrites(config, [["messages", new AIMessage({ content: "two", id: "m2" })], ["count", 2]], "task-a");
      await saver.putWrites(config, [["__interrupt__", [{ id: "i2", value: "second?" }]]], "task-b");
      // A fresh saver (another process) reads what is stored.
      const reader = new GraphdockSaver(store);
      const tuple = (await reader.getTuple(config))!;
      const writes = tuple.pendingWrites!;
      expect(writes.map(([task, channel]) => `${task}:${channel}`)).toEqual(["task-a:messages", "task-a:count", "task-b:__interrupt__"]);
      const message = writes[0]![2] as AIMessage;
      expect(message).toBeInstanceOf(AIMessage);
      expect(message.content).toBe("one");
      expect(writes[1]![2]).toBe(1);
      expect(writes[2]![2]).toEqual([{ id: "i2", value: "second?" }]);
      // Writes against the same checkpoint from another saver object are merged the same way.
      await reader.putWrites(config, [["__error__", { message: "boom" }]], "task-c");
      expect((await saver.getTuple(config))!.pendingWrites!.map(([t, c]) => `${t}:${c}`)).toEqual(["task-a:messages", "task-a:count", "task-b:__interrupt__", "task-c:__error__"]);
    });

    it("stores a task's writes as LangGraph's serializer writes them: messages alone or in lists, and values that are not plain JSON", async () => {
      const cp = checkpoint({}, {});
      const config = await saver.put({ configurable: { thread_id: "s", checkpoint_ns: "" } }, cp, { source: "loop", step: 0, parents: {} }, {});
      const when = new Date("2024-05-06T07:08:09.000Z");
      const writes: Array<[string, unknown]> = [
        ["messages", [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "hello", id: "a1", tool_calls: [{ id: "c1", name: "look", args: { q: "x" } }] })]],
        ["last", new AIMessage({ content: "alone", id: "a2", additional_kwargs: { extra: { n: 1 } } })],
        ["plain", { n: 1, list: ["a", null, true] }],
      ];
      await saver.putWrites(config, writes, "task-plain");
      await saver.putWrites(config, [["messages", [new AIMessage({ content: "x", id: "a3" })]], ["maybe", { at: when, gone: undefined }]], "task-mixed");
      const serde = new JsonPlusSerializer();
      const serdeForm = async (value: unknown) => JSON.parse(new TextDecoder().decode((await serde.dumpsTyped(value))[1] as Uint8Array)) as unknown;
      const stored = (await store.getCheckpoint({ thread_id: "s", checkpoint_id: cp.id }))!.pending_writes;
      const expected = [...writes.map(([c, v]) => ["task-plain", c, v] as const), ["task-mixed", "messages", [new AIMessage({ content: "x", id: "a3" })]] as const, ["task-mixed", "maybe", { at: when, gone: undefined }] as const];
      expect(stored.map(([task, channel]) => `${task}:${channel}`)).toEqual(expected.map(([task, channel]) => `${task}:${channel}`));
      for (const [i, [, , value]] of expected.entries()) expect(stored[i]![2]).toEqual(await serdeForm(value));
      // And they come back as LangGraph's objects.
      const back = (await new GraphdockSaver(store).getTuple(config))!.pendingWrites!;
      const [human, ai] = back[0]![2] as [HumanMessage, AIMessage];
      expect(human).toBeInstanceOf(HumanMessage);
      expect(ai).toBeInstanceOf(AIMessage);
      expect(ai.tool_calls).toEqual([expect.objectContaining({ id: "c1", name: "look", args: { q: "x" } })]);
      expect((back[1]![2] as AIMessage).additional_kwargs).toEqual({ extra: { n: 1 } });
      // As LangGraph's serializer does: a Date comes back as its ISO string, undefined as undefined.
      expect(back[4]![2]).toEqual({ at: when.toISOString(), gone: undefined });
    });

    it("deletes a thread's checkpoints in every namespace, and no other thread's", async () => {
      await saver.put({ configurable: { thread_id: "gone", checkpoint_ns: "" } }, checkpoint({}, {}), { source: "input", step: -1, parents: {} }, {});
      await saver.put({ configurable: { thread_id: "gone", checkpoint_ns: "sub:1" } }, checkpoint({}, {}), { source: "input", step: -1, parents: {} }, {});
      await saver.put({ configurable: { thread_id: "kept", checkpoint_ns: "" } }, checkpoint({}, {}), { source: "input", step: -1, parents: {} }, {});
      await saver.deleteThread("gone");
      expect(await saver.getTuple({ configurable: { thread_id: "gone" } })).toBeUndefined();
      expect(await saver.getTuple({ configurable: { thread_id: "gone", checkpoint_ns: "sub:1" } })).toBeUndefined();
      expect(await saver.getTuple({ configurable: { thread_id: "kept" } })).toBeDefined();
    });

    it("is a LangGraph.js checkpointer: a compiled graph pauses, resumes, and replays its history", async () => {
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("ask", () => ({ messages: [new AIMessage({ content: `approved: ${String(interrupt("ok?"))}`, id: "ai-1" })] }))
        .addEdge(START, "ask")
        .addEdge("ask", END)
        .compile({ checkpointer: saver });
      const config = { configurable: { thread_id: "g" } };
      await graph.invoke({ messages: [new HumanMessage("go")] }, config);
      const paused = await graph.getState(config);
      expect(paused.next).toEqual(["ask"]);
      expect(paused.tasks[0]!.interrupts[0]).toMatchObject({ value: "ok?" });
      // A graph compiled with a fresh saver over the same store resumes it (a restarted process).
      const again = new StateGraph(MessagesAnnotation)
        .addNode("ask", () => ({ messages: [new AIMessage({ content: `approved: ${String(interrupt("ok?"))}`, id: "ai-1" })] }))
        .addEdge(START, "ask")
        .addEdge("ask", END)
        .compile({ checkpointer: new GraphdockSaver(store) });
      const done = await again.invoke(new Command({ resume: "yes" }), config);
      expect(done.messages.map((m) => m.content)).toEqual(["go", "approved: yes"]);
      const history = [];
      for await (const s of again.getStateHistory(config)) history.push(s.metadata?.step);
      expect(history).toEqual([1, 0, -1]);
    });
  });
}
