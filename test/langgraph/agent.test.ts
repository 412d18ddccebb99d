/**
 * LangGraph.js graphs hosted by graphdock (D23), beyond the contract suite: the offline
 * `createAgent` agent (token streaming, approval interrupt, resume, restart on the JSON-file
 * store), every stream mode, subgraphs and their namespaces, `Command` input, the auth user in
 * `config.configurable`, and the checkpoints in the store. In process and over HTTP with the
 * official SDK client.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage } from "@langchain/core/messages";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { echo, graph as agent } from "../../examples/node/agent-langgraph.js";
import type { AuthProvider } from "../../src/auth/types.js";
import { unauthenticated } from "../../src/errors.js";
import { createFetchHandler } from "../../src/http/index.js";
import { createRuntime, memoryStore } from "../../src/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { inProcessClient } from "../http/helpers.js";
import { graph as weather } from "../reference-server/graphs/agent.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const ask = (content: string) => ({ messages: [{ role: "user", content }] });

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the createAgent agent hosted by graphdock", () => {
  it("streams tokens, pauses at the approval interrupt, resumes and answers (in process)", async () => {
    const runtime = await createRuntime({ graphs: { agent, echo } });
    try {
      const t = await runtime.threads.create();
      const first = (await collect(runtime.runs.stream(t.thread_id, "agent", { input: ask("what is 6 * (3 + 4)?"), streamMode: ["messages-tuple", "updates", "values"] }))) as Loose[];
      const call = first.find((e) => e.event === "messages")!.data;
      expect(call[0]).toMatchObject({ type: "AIMessageChunk", tool_call_chunks: [{ name: "calculator", args: JSON.stringify({ expression: "6 * (3 + 4)" }) }] });
      expect(call[1]).toMatchObject({ langgraph_node: "model_request", thread_id: t.thread_id, graph_id: "agent" });
      const interrupted = first.filter((e) => e.event === "updates").at(-1)!.data;
      expect(interrupted.__interrupt__).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{32}$/), value: { question: "Run calculator(6 * (3 + 4))?" } }]);
      expect(await runtime.threads.get(t.thread_id)).toMatchObject({ status: "interrupted" });
      const state = await runtime.threads.getState(t.thread_id);
      expect(state.next).toEqual(["tools"]);
      expect((state.values as Loose).messages.map((m: Loose) => m.type)).toEqual(["human", "ai"]);
      expect((state.values as Loose).messages[1].tool_calls).toEqual([{ name: "calculator", args: { expression: "6 * (3 + 4)" }, id: "call-1", type: "tool_call" }]);

      const second = (await collect(runtime.runs.stream(t.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["messages-tuple", "values"] }))) as Loose[];
      const tokens = second.filter((e) => e.event === "messages" && e.data[0].type === "AIMessageChunk").map((e) => e.data[0]);
      // The answer arrives word by word, every chunk with the message's id.
      expect(tokens.length).toBeGreaterThan(2);
      expect(new Set(tokens.map((c) => c.id))).toEqual(new Set([tokens[0].id]));
      expect(tokens.map((c) => c.content).join("")).toBe("The answer is 42.");
      const final = second.filter((e) => e.event === "values").at(-1)!.data;
      expect(final.messages.map((m: Loose) => [m.type, m.content])).toEqual([
        ["human", "what is 6 * (3 + 4)?"],
        ["ai", ""],
        ["tool", "42"],
        ["ai", "The answer is 42."],
      ]);
      expect(final.messages[2]).toMatchObject({ tool_call_id: "call-1", name: "calculator", status: "success" });
      expect(await runtime.threads.get(t.thread_id)).toMatchObject({ status: "idle", interrupts: {} });

      // Declining: the tool reports it and the model answers with that.
      await runtime.runs.wait(t.thread_id, "agent", { input: ask("and 1 + 1?") });
      const declined = (await runtime.runs.wait(t.thread_id, "agent", { command: { resume: "no" } })) as Loose;
      expect(declined.messages.at(-1).content).toBe("The answer is the user declined to run the calculator.");
      expect(declined.messages).toHaveLength(8);
    } finally {
      await runtime.close();
    }
  });

  it("streams the legacy messages mode (metadata, accumulating partials, complete) and on_chat_model_stream events", async () => {
    const runtime = await createRuntime({ graphs: { agent } });
    try {
      const t = await runtime.threads.create();
      await runtime.runs.wait(t.thread_id, "agent", { input: ask("what is 6 * (3 + 4)?") });
      const events = (await collect(runtime.runs.stream(t.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["messages", "events"] }))) as Loose[];
      // The tool's message comes whole; the model's answer streams.
      const answerId = events.filter((e) => e.event === "messages/partial").at(-1)!.data[0].id;
      const partials = events.filter((e) => e.event === "messages/partial" && e.data[0].id === answerId).map((e) => e.data[0]);
      expect(partials.length).toBeGreaterThan(2);
      // Each partial holds the message accumulated so far; the last is the whole answer.
      expect(partials.map((m) => m.content).every((c: string, i: number, all: string[]) => i === 0 || c.startsWith(all[i - 1]!))).toBe(true);
      expect(partials.at(-1).content).toBe("The answer is 42.");
      expect(events.find((e) => e.event === "messages/metadata" && answerId in e.data)!.data[answerId].metadata).toMatchObject({ langgraph_node: "model_request" });
      const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data);
      expect(complete.map((m: Loose) => [m.type, m.content])).toContainEqual(["ai", "The answer is 42."]);
      const chunks = events.filter((e) => e.event === "events" && e.data.event === "on_chat_model_stream" && e.data.data.chunk.id === answerId).map((e) => e.data.data.chunk.content);
      expect(chunks.join("")).toBe("The answer is 42.");
    } finally {
      await runtime.close();
    }
  });

  it("streams LangChain's events as the reference server does: every run's start and end, model chunks in LangChain's form, each before its messages-tuple frame", async () => {
    const runtime = await createRuntime({ graphs: { weather } });
    try {
      const t = await runtime.threads.create();
      const input = { messages: [{ type: "human", content: "What is the weather in Paris?", id: "q1" }] };
      const events = (await collect(runtime.runs.stream(t.thread_id, "weather", { input, streamMode: ["events", "messages-tuple"] }))) as Loose[];
      const name = (e: Loose) => (e.event === "events" ? `${e.data.event} ${e.data.name}` : e.event);
      expect(events.filter((e) => e.event === "events").map(name)).toEqual([
        "on_chain_start LangGraph",
        "on_chain_start model",
        "on_chat_model_start ScriptedChatModel",
        "on_chat_model_stream ScriptedChatModel",
        "on_chat_model_stream ScriptedChatModel",
        "on_chat_model_stream ScriptedChatModel",
        "on_chat_model_end ScriptedChatModel",
        "on_chain_start RunnableLambda",
        "on_chain_end RunnableLambda",
        "on_chain_end model",
        "on_chain_start tools",
        "on_tool_start get_weather",
        "on_tool_error get_weather",
        "on_chain_end LangGraph",
      ]);
      const [root] = events.filter((e) => e.event === "events").map((e) => e.data);
      expect(root.run_id).toBe(events[0].data.run_id);
      // The chunk as LangChain's toDict() makes it: what the AG-UI adapter reads is there.
      const chunks = events.filter((e) => e.event === "events" && e.data.event === "on_chat_model_stream").map((e) => e.data.data.chunk);
      expect(chunks[0]).toEqual({
        content: "",
        additional_kwargs: {},
        response_metadata: {},
        tool_call_chunks: [{ type: "tool_call_chunk", name: "get_weather", args: '{"city": ', id: "call-1", index: 0 }],
        tool_calls: [{ name: "get_weather", args: {}, id: "call-1", type: "tool_call" }],
        invalid_tool_calls: [],
        id: "ai-1",
        type: "ai",
      });
      expect(chunks[2]!.response_metadata).toEqual({ finish_reason: "tool_calls", model_name: "scripted-1" });
      expect(events.find((e) => e.data?.event === "on_tool_start").data.data).toEqual({ input: { city: "Paris" } });
      // A chunk's events frame comes before its messages-tuple frame.
      const firstTuple = events.findIndex((e) => e.event === "messages");
      expect(events.slice(0, firstTuple).filter((e) => e.data?.event === "on_chat_model_stream").length).toBeGreaterThanOrEqual(1);

      const resumed = (await collect(runtime.runs.stream(t.thread_id, "weather", { command: { resume: "yes" }, streamMode: ["events"] }))) as Loose[];
      const toolEnd = resumed.find((e) => e.data?.event === "on_tool_end").data.data;
      expect(toolEnd.output).toMatchObject({ type: "tool", content: "sunny in Paris", tool_call_id: "call-1", name: "get_weather" });
    } finally {
      await runtime.close();
    }
  });

  it("ends a messages + values stream with messages/complete, after the values it comes from", async () => {
    const runtime = await createRuntime({ graphs: { weather } });
    try {
      const input = { messages: [{ type: "human", content: "Hello", id: "q1" }] };
      const events = (await collect(runtime.runs.stream(null, "weather", { input, streamMode: ["messages", "values"] }))) as Loose[];
      expect(events.map((e) => e.event)).toEqual([
        "metadata",
        "values",
        "messages/complete",
        "messages/metadata",
        ...Array(8).fill("messages/partial"),
        "values",
        "messages/complete",
      ]);
      expect(events.at(-1).data.map((m: Loose) => [m.type, m.content])).toEqual([["ai", "Hello! Ask me about the weather somewhere."]]);
      expect(events.filter((e) => e.event === "messages/partial").at(-1).data[0]).toMatchObject({
        type: "ai",
        content: "Hello! Ask me about the weather somewhere.",
        usage_metadata: { input_tokens: 1, output_tokens: 3, total_tokens: 4 },
      });
    } finally {
      await runtime.close();
    }
  });

  it("serves the agent to the official SDK client: streaming, interrupt, resume, history, copy", async () => {
    const runtime = await createRuntime({ graphs: { agent } });
    const client = inProcessClient(createFetchHandler(runtime));
    try {
      const t = await client.threads.create();
      const events = (await collect(client.runs.stream(t.thread_id, "agent", { input: ask("2 + 2"), streamMode: ["values", "messages-tuple"] }))) as Loose[];
      expect(events[0].event).toBe("metadata");
      expect(events.at(-1)).toMatchObject({ event: "values", data: { __interrupt__: [{ value: { question: "Run calculator(2 + 2)?" } }] } });
      const thread = await client.threads.get(t.thread_id);
      expect(thread.status).toBe("interrupted");
      const done = (await client.runs.wait(t.thread_id, "agent", { command: { resume: true } })) as Loose;
      expect(done.messages.at(-1)).toMatchObject({ type: "ai", content: "The answer is 4." });
      const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
      expect(history[0]!.next).toEqual([]);
      expect(history.some((s) => s.next.includes("tools") && s.tasks.some((task) => task.interrupts.length === 1))).toBe(true);
      const copy = await client.threads.copy(t.thread_id);
      expect(((await client.threads.getState(copy.thread_id)).values as Loose).messages).toHaveLength(4);
      // The copy goes on independently.
      await client.runs.wait(copy.thread_id, "agent", { input: ask("hello") });
      expect(((await client.threads.getState(copy.thread_id)).values as Loose).messages).toHaveLength(6);
      expect(((await client.threads.getState(t.thread_id)).values as Loose).messages).toHaveLength(4);
      const drawable = await client.assistants.getGraph("agent");
      expect(drawable.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["__start__", "model_request", "tools", "__end__"]));
      // createAgent's state is a StateSchema: its own JSON schema, messages marked as the agent server marks them.
      expect((await client.assistants.getSchemas("agent")).state_schema).toMatchObject({ properties: { messages: { langgraph_type: "messages" } } });
    } finally {
      await runtime.close();
    }
  });

  it("survives a restart on the JSON-file store: the paused thread resumes in a new runtime", async () => {
    const dir = mkdtempSync(join(tmpdir(), "graphdock-lg-"));
    dirs.push(dir);
    const path = join(dir, "data");
    const before = await createRuntime({ graphs: { agent }, store: jsonFileStore(path) });
    const t = await before.threads.create();
    await before.runs.wait(t.thread_id, "agent", { input: ask("what is 10 / 4?") });
    await before.close();

    const after = await createRuntime({ graphs: { agent }, store: jsonFileStore(path) });
    try {
      expect(await after.threads.get(t.thread_id)).toMatchObject({ status: "interrupted" });
      const state = await after.threads.getState(t.thread_id);
      expect(state.tasks[0]).toMatchObject({ name: "tools", interrupts: [{ value: { question: "Run calculator(10 / 4)?" } }] });
      const done = (await after.runs.wait(t.thread_id, "agent", { command: { resume: "yes" } })) as Loose;
      expect(done.messages.map((m: Loose) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect(done.messages.at(-1).content).toBe("The answer is 2.5.");
    } finally {
      await after.close();
    }
  });

  it("keeps the thread's checkpoints in the store as JSON, keyed by thread, namespace and id", async () => {
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: { echo }, store });
    try {
      const t = await runtime.threads.create();
      const out = (await runtime.runs.wait(t.thread_id, "echo", { input: ask("hello there") })) as Loose;
      expect(out.messages.at(-1).content).toMatch(/^I can do arithmetic\. .* You said: hello there$/);
      const checkpoints = await store.listCheckpoints(t.thread_id);
      expect(checkpoints.map((c) => c.metadata.step)).toEqual([1, 0, -1]);
      const head = checkpoints[0]!;
      expect(head.checkpoint_ns).toBe("");
      expect(head.parent_checkpoint_id).toBe(checkpoints[1]!.checkpoint.id);
      // Values are JSON (LangChain's serialized form), not class instances.
      expect(JSON.parse(JSON.stringify(head.checkpoint.channel_values))).toEqual(head.checkpoint.channel_values);
      expect(head.metadata).toMatchObject({ source: "loop", graph_id: "echo", thread_id: t.thread_id });
      const state = await runtime.threads.getState(t.thread_id);
      expect(state.checkpoint?.checkpoint_id).toBe(head.checkpoint.id);
    } finally {
      await runtime.close();
    }
  });
});

describe("LangGraph.js graphs: stream modes, subgraphs, commands, auth", () => {
  const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }) });
  const Note = Annotation.Root({ note: Annotation<string> });
  const inner = new StateGraph(Note)
    .addNode("step", (_s, config) => {
      config.writer?.({ inside: true });
      return { note: "inner" };
    })
    .addEdge(START, "step")
    .addEdge("step", END)
    .compile();
  const outer = new StateGraph(Annotation.Root({ ...Log.spec, ...Note.spec }))
    .addNode("before", (_s, config) => {
      config.writer?.({ before: true });
      return { log: ["before"] };
    })
    .addNode("inner", inner)
    .addNode("after", () => ({ log: ["after"] }))
    .addEdge(START, "before")
    .addEdge("before", "inner")
    .addEdge("inner", "after")
    .addEdge("after", END)
    .compile();

  it("streams every mode in the reference server's shapes", async () => {
    const runtime = await createRuntime({ graphs: { outer } });
    try {
      const events = (await collect(
        runtime.runs.stream(null, "outer", { input: { log: ["start"] }, streamMode: ["values", "updates", "custom", "debug", "tasks", "checkpoints"] }),
      )) as Loose[];
      const names = new Set(events.map((e) => e.event));
      expect([...names].sort()).toEqual(["checkpoints", "custom", "debug", "metadata", "tasks", "updates", "values"]);
      expect(events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data)[0])).toEqual(["before", "inner", "after"]);
      expect(events.filter((e) => e.event === "values").at(-1)!.data).toEqual({ log: ["start", "before", "after"], note: "inner" });
      // Without streamSubgraphs, LangGraph.js streams a subgraph's custom writes as the graph's own
      // (so does the reference server, which streams what LangGraph streams).
      expect(events.filter((e) => e.event === "custom").map((e) => e.data)).toEqual([{ before: true }, { inside: true }]);
      const checkpoint = events.find((e) => e.event === "checkpoints")!.data;
      expect(checkpoint).toMatchObject({ values: expect.any(Object), next: expect.any(Array), metadata: { source: "input" }, config: { configurable: { checkpoint_id: expect.any(String) } } });
      const task = events.find((e) => e.event === "tasks" && e.data.name === "before")!.data;
      expect(task).toMatchObject({ id: expect.any(String), name: "before", triggers: expect.any(Array) });
      expect(events.some((e) => e.event === "tasks" && e.data.name === "before" && "result" in e.data)).toBe(true);
      expect(new Set(events.filter((e) => e.event === "debug").map((e) => e.data.type))).toEqual(new Set(["checkpoint", "task", "task_result"]));
    } finally {
      await runtime.close();
    }
  });

  it("names subgraph events by namespace with streamSubgraphs, and describes subgraphs", async () => {
    const runtime = await createRuntime({ graphs: { outer } });
    const client = inProcessClient(createFetchHandler(runtime));
    try {
      const nested = (await collect(client.runs.stream(null, "outer", { input: { log: [] }, streamMode: ["updates"], streamSubgraphs: true }))) as Loose[];
      const innerEvents = nested.filter((e) => e.event.startsWith("updates|"));
      expect(innerEvents).toHaveLength(1);
      expect(innerEvents[0].event).toMatch(/^updates\|inner:[0-9a-f-]{36}$/);
      expect(innerEvents[0].data).toEqual({ step: { note: "inner" } });
      const flat = (await collect(client.runs.stream(null, "outer", { input: { log: [] }, streamMode: ["updates"] }))) as Loose[];
      expect(flat.filter((e) => e.event.includes("|"))).toEqual([]);
      const subgraphs = await client.assistants.getSubgraphs("outer");
      expect(Object.keys(subgraphs)).toEqual(["inner"]);
      expect(subgraphs.inner).toMatchObject({ state_schema: { properties: { note: {} } } });
    } finally {
      await runtime.close();
    }
  });

  it("pauses inside a subgraph: its checkpoints under their namespace, its state with subgraphs, resume", async () => {
    const asking = new StateGraph(Note)
      .addNode("ask", () => ({ note: `inner says ${String(interrupt("inner question?"))}` }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile();
    const parent = new StateGraph(Annotation.Root({ ...Log.spec, ...Note.spec }))
      .addNode("before", () => ({ log: ["before"] }))
      .addNode("inner", asking)
      .addEdge(START, "before")
      .addEdge("before", "inner")
      .addEdge("inner", END)
      .compile();
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: { parent }, store });
    const client = inProcessClient(createFetchHandler(runtime));
    try {
      const t = await client.threads.create();
      const paused = (await client.runs.wait(t.thread_id, "parent", { input: { log: [] } })) as Loose;
      expect(paused.__interrupt__).toEqual([{ id: expect.any(String), value: "inner question?" }]);
      const namespaces = await store.listCheckpointNamespaces(t.thread_id);
      expect(namespaces).toHaveLength(2);
      expect(namespaces).toContain("");
      const innerNs = namespaces.find((ns) => ns !== "")!;
      expect(innerNs).toMatch(/^inner:[0-9a-f-]{36}$/);
      const flat = await client.threads.getState(t.thread_id);
      expect(flat.tasks[0]).toMatchObject({ name: "inner", state: null, checkpoint: { checkpoint_ns: innerNs } });
      const nested = await client.threads.getState(t.thread_id, undefined, { subgraphs: true });
      const innerState = nested.tasks[0]!.state as Loose;
      expect(innerState).toMatchObject({ next: ["ask"], tasks: [{ name: "ask", interrupts: [{ value: "inner question?" }] }] });
      const done = await client.runs.wait(t.thread_id, "parent", { command: { resume: "yes" } });
      expect(done).toEqual({ log: ["before"], note: "inner says yes" });
    } finally {
      await runtime.close();
    }
  });

  it("rolls back a run that resumed a paused subgraph: its checkpoints and writes go, in every namespace", async () => {
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const inner = new StateGraph(Note)
      .addNode("ask", () => ({ note: `answer ${String(interrupt("inner question?"))}` }))
      .addNode("wait", async (state, config) => {
        if (state.note === "answer go") {
          arrive();
          await new Promise<void>((resolve, reject) => {
            void released.then(resolve);
            config.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          });
        }
        return { note: `${state.note}, done` };
      })
      .addEdge(START, "ask")
      .addEdge("ask", "wait")
      .addEdge("wait", END)
      .compile();
    const parent = new StateGraph(Annotation.Root({ ...Log.spec, ...Note.spec }))
      .addNode("before", () => ({ log: ["before"] }))
      .addNode("inner", inner)
      .addEdge(START, "before")
      .addEdge("before", "inner")
      .addEdge("inner", END)
      .compile();
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: { parent }, store });
    try {
      const t = await runtime.threads.create();
      await runtime.runs.wait(t.thread_id, "parent", { input: { log: [] } });
      /** Every checkpoint of the thread, in every namespace, with its writes. */
      const everything = async () => {
        const out: Record<string, unknown> = {};
        for (const ns of await store.listCheckpointNamespaces(t.thread_id)) {
          for (const c of await store.listCheckpoints(t.thread_id, { checkpoint_ns: ns })) out[`${ns}/${c.checkpoint.id}`] = c.pending_writes;
        }
        return out;
      };
      const paused = await everything();
      const resumed = await runtime.runs.create(t.thread_id, "parent", { command: { resume: "go" } });
      await arrived; // it answered the interrupt inside the subgraph (writes and checkpoints there) and blocks
      await runtime.runs.cancel(t.thread_id, resumed.run_id, true, "rollback");
      await expect(runtime.runs.get(t.thread_id, resumed.run_id)).rejects.toMatchObject({ code: "not_found" });
      // Exactly what the paused run left: same checkpoints in every namespace, same writes.
      expect(await everything()).toEqual(paused);
      expect((await runtime.threads.getState(t.thread_id)).interrupts).toEqual([{ id: expect.any(String), value: "inner question?" }]);
      expect(await runtime.runs.wait(t.thread_id, "parent", { command: { resume: "again" } })).toEqual({ log: ["before"], note: "answer again, done" });
    } finally {
      release();
      await runtime.close();
    }
  });

  it("runs a Command input (update and goto) and updates state as a node", async () => {
    const chain = new StateGraph(Log)
      .addNode("a", () => ({ log: ["a"] }))
      .addNode("b", () => ({ log: ["b"] }))
      .addNode("c", () => ({ log: ["c"] }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .addEdge("b", "c")
      .addEdge("c", END)
      .compile();
    const runtime = await createRuntime({ graphs: { chain } });
    try {
      const t = await runtime.threads.create();
      expect(await runtime.runs.wait(t.thread_id, "chain", { command: { update: { log: ["x"] }, goto: "c" } })).toEqual({ log: ["x", "c"] });
      await runtime.runs.wait(t.thread_id, "chain", { input: { log: ["y"] }, interruptAfter: ["a"] });
      expect((await runtime.threads.getState(t.thread_id)).next).toEqual(["b"]);
      await runtime.threads.updateState(t.thread_id, { values: { log: ["edited"] }, asNode: "b" });
      const state = await runtime.threads.getState(t.thread_id);
      expect(state.next).toEqual(["c"]);
      expect(state.values).toEqual({ log: ["x", "c", "y", "a", "edited"] });
      expect(state.metadata).toMatchObject({ source: "update" });
      expect(await runtime.runs.wait(t.thread_id, "chain", { input: null })).toEqual({ log: ["x", "c", "y", "a", "edited", "c"] });
    } finally {
      await runtime.close();
    }
  });

  it("gives nodes the authenticated user in config.configurable (D12)", async () => {
    const auth: AuthProvider = {
      async authenticate(request) {
        const identity = request.headers["x-user"];
        if (!identity) throw unauthenticated("missing x-user");
        return { identity, permissions: ["read"], is_authenticated: true, display_name: identity };
      },
      async authorize() {
        return undefined;
      },
    };
    const whoami = new StateGraph(MessagesAnnotation)
      .addNode("me", (_s, config) => {
        const user = config.configurable?.langgraph_auth_user as { identity?: string } | undefined;
        return { messages: [new AIMessage(`you are ${user?.identity ?? "nobody"}`)] };
      })
      .addEdge(START, "me")
      .addEdge("me", END)
      .compile();
    const runtime = await createRuntime({ graphs: { whoami }, auth });
    try {
      const client = inProcessClient(createFetchHandler(runtime), { "x-user": "alice" });
      const out = (await client.runs.wait(null, "whoami", { input: ask("who am I?") })) as Loose;
      expect(out.messages.at(-1).content).toBe("you are alice");
    } finally {
      await runtime.close();
    }
  });
});
