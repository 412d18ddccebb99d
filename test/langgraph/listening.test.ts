/**
 * A hosted LangGraph.js graph converts an event's data to the wire form only when someone can
 * receive it (`ExecuteOptions.listening`, the memory port's `listening`): a run nobody streams
 * (`runs.wait`, `runs.create`) skips the whole-state conversion per step, while every reader,
 * including one that joins a run already under way or replays a resumable run, gets the events
 * with their data as before.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ExecuteOptions } from "../../src/graph/types.js";
import { createIds, createRuntime, memoryStore, systemClock } from "../../src/index.js";
import { fromLangGraph } from "../../src/langgraph/index.js";
import { MemoryRunEvents } from "../../src/persistence/memory-events.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** reply -> hold (waits for `release`) -> END; `arrived` resolves when a run reaches hold. */
function heldGraph() {
  let release!: () => void;
  let arrive!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const arrived = new Promise<void>((r) => (arrive = r));
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({ messages: [new AIMessage({ id: "a1", content: `re: ${String((state.messages.at(-1) as BaseMessage).content)}` })] }))
    .addNode("hold", async () => {
      arrive();
      await held;
      return {};
    })
    .addEdge(START, "reply")
    .addEdge("reply", "hold")
    .addEdge("hold", END)
    .compile();
  return { graph, release, arrived };
}

const ask = { messages: [{ role: "user", content: "hi", id: "h1" }] };

describe("events of a hosted LangGraph.js graph that nobody receives", () => {
  it("the memory port tells whether an event published now reaches anyone", async () => {
    const port = new MemoryRunEvents();
    expect(port.listening("r1")).toBe(false); // not open
    port.open("r1", { resumable: false });
    expect(port.listening("r1")).toBe(false); // nobody attached: the event would be dropped
    const reader = port.read("r1")[Symbol.asyncIterator]();
    expect(port.listening("r1")).toBe(true);
    await reader.return?.();
    expect(port.listening("r1")).toBe(false);
    port.open("r2", { resumable: true });
    expect(port.listening("r2")).toBe(true); // retained for later readers
    await port.end("r2");
    expect(port.listening("r2")).toBe(false);
  });

  it("the adapter emits every event, with its data converted only while listened to", async () => {
    const adapter = fromLangGraph(
      new StateGraph(MessagesAnnotation)
        .addNode("reply", () => ({ messages: [new AIMessage({ id: "a1", content: "hello" })] }))
        .addEdge(START, "reply")
        .addEdge("reply", END)
        .compile(),
    );
    const run = async (listening: boolean, threadId: string) => {
      const events: Array<[string, unknown]> = [];
      const options: ExecuteOptions = {
        store: memoryStore(),
        threadId,
        input: ask,
        config: { configurable: {} },
        ids: createIds(),
        clock: systemClock,
        streamModes: new Set(["values", "updates"]),
        emit: (mode, data) => events.push([mode, data]),
        listening: () => listening,
      };
      const result = await adapter.execute(options);
      return { events, result };
    };
    const heard = await run(true, "t1");
    const unheard = await run(false, "t2");
    // The same events in the same order (the run's event numbering does not change) ...
    expect(unheard.events.map(([mode]) => mode)).toEqual(heard.events.map(([mode]) => mode));
    expect(heard.events.map(([mode]) => mode)).toEqual(["values", "updates", "values"]);
    // ... with data only where someone receives it.
    expect(unheard.events.every(([, data]) => data === undefined)).toBe(true);
    expect(heard.events.at(-1)![1]).toMatchObject({ messages: [{ type: "human", content: "hi" }, { type: "ai", content: "hello", id: "a1" }] });
    // The run's result is the same either way.
    expect(unheard.result.values).toEqual(heard.result.values);
    expect((unheard.result.values as Loose).messages.map((m: Loose) => [m.type, m.content])).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
    ]);
  });

  it("a reader joining a run nobody streamed gets the values that follow in wire form", async () => {
    const { graph, release, arrived } = heldGraph();
    const runtime = await createRuntime({ graphs: { held: graph } });
    try {
      const t = await runtime.threads.create();
      const run = await runtime.runs.create(t.thread_id, "held", { input: ask });
      await arrived; // the run's first values events were published to nobody
      const joined = runtime.runs.joinStream(t.thread_id, run.run_id);
      const first = joined.next(); // attaches the reader
      await new Promise((r) => setTimeout(r, 0));
      release();
      const events: Loose[] = [];
      for (let e = await first; !e.done; e = await joined.next()) events.push(e.value);
      const values = events.filter((e) => e.event === "values");
      expect(values.length).toBeGreaterThan(0);
      expect(values.at(-1).data.messages).toEqual([
        expect.objectContaining({ type: "human", content: "hi", id: "h1" }),
        expect.objectContaining({ type: "ai", content: "re: hi", id: "a1" }),
      ]);
      expect(await runtime.runs.join(t.thread_id, run.run_id)).toMatchObject({ messages: [{ type: "human" }, { type: "ai", content: "re: hi" }] });
    } finally {
      release();
      await runtime.close();
    }
  });

  it("a resumable run's events replay with their data after it ended", async () => {
    const { graph, release } = heldGraph();
    release();
    const runtime = await createRuntime({ graphs: { held: graph } });
    try {
      const t = await runtime.threads.create();
      const run = await runtime.runs.create(t.thread_id, "held", { input: ask, streamResumable: true });
      await runtime.runs.join(t.thread_id, run.run_id);
      const events: Loose[] = [];
      for await (const e of runtime.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" })) events.push(e);
      const values = events.filter((e) => e.event === "values");
      expect(values.map((e) => e.data.messages.length)).toEqual([1, 2]); // the input, then reply (hold changes nothing)
      expect(values.every((e) => e.data.messages.every((m: Loose) => typeof m.type === "string"))).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
