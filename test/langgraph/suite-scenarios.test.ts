/**
 * The agent server's own suite (libs/langgraph-api/tests of langchain-ai/langgraphjs), the
 * scenarios graphdock depends on, with real LangGraph.js graphs loaded from graph.json as
 * `graphdock serve` loads them (test/langgraph/fixtures/suite) and the official SDK client over
 * HTTP: schemas (StateSchema, zod registry, plain zod, TypeScript types of Annotation graphs and
 * their subgraphs), LANGGRAPH_CONFIG defaults, human in the loop inside a subgraph, streamed debug
 * checkpoints against the thread's history, and a graph that takes the SDK logger as its module
 * loads.
 */
import { Client } from "@langchain/langgraph-sdk";
import { getLogger } from "@langchain/langgraph-sdk/logging";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadGraphs, serveConfig, type ConfigServer } from "../../src/node/index.js";
import { createRuntime, type SdkLogger } from "../../src/runtime/index.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const CONFIG = "test/langgraph/fixtures/suite/graph.json";
const human = (content: string, id?: string) => ({ messages: [{ role: "human", content, ...(id ? { id } : {}) }] });

async function gather<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

let server: ConfigServer;
let client: Client;

beforeAll(async () => {
  // As a fresh process has it: no logger registered, no LANGGRAPH_CONFIG.
  Reflect.deleteProperty(globalThis, Symbol.for("langgraph.api.sdk-logger"));
  delete process.env.LANGGRAPH_CONFIG;
  server = await serveConfig({ config: CONFIG, port: 0 });
  client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
});
afterAll(async () => {
  await server?.close();
  delete process.env.LANGGRAPH_CONFIG;
});

describe("schemas of hosted graphs, as the agent server extracts them", () => {
  it("StateSchema: its own JSON schema, MessagesValue marked langgraph_type messages", async () => {
    const schemas = await client.assistants.getSchemas("state_schema");
    expect(schemas.state_schema).toMatchObject({ type: "object", properties: { messages: { langgraph_type: "messages" }, count: expect.any(Object) } });
  });

  it("zod registered with withLangGraph: its jsonSchemaExtra; plain zod: its properties, nothing added", async () => {
    const registered = await client.assistants.getSchemas("zod_registry");
    expect(registered.state_schema).toMatchObject({ type: "object", properties: { messages: { langgraph_type: "messages" }, count: expect.any(Object) } });
    const plain: Loose = await client.assistants.getSchemas("plain_zod");
    expect(plain.state_schema).toMatchObject({ type: "object", properties: { items: expect.any(Object), counter: expect.any(Object) } });
    expect(plain.state_schema.properties.items).not.toHaveProperty("langgraph_type");
  });

  // Type checking the graphs takes seconds of CPU (more on a loaded machine): a longer timeout.
  it("Annotation graphs: state and config / context schemas from their TypeScript types, literal unions as sorted enums", { timeout: 180_000 }, async () => {
    const schemas: Loose = await client.assistants.getSchemas("runtime");
    const model = { type: "string", enum: ["anthropic", "openai", "unknown"] };
    expect(schemas.config_schema).toMatchObject({ type: "object", properties: { model }, $schema: "http://json-schema.org/draft-07/schema#" });
    expect(schemas.context_schema).toEqual(schemas.config_schema);
    expect(schemas.state_schema).toMatchObject({ type: "object", properties: { message: { type: "string" }, model } });
    // The output: every key required.
    expect(schemas.output_schema.required).toEqual(["message", "model"]);
  });

  it("subgraphs by namespace, recursively, with their typed state under the JS server's key `state`", { timeout: 180_000 }, async () => {
    expect(Object.keys(await client.assistants.getSubgraphs("nested"))).toEqual(["gp_two"]);
    const subgraphs: Loose = await client.assistants.getSubgraphs("nested", { recurse: true });
    expect(Object.keys(subgraphs)).toEqual(["gp_two", "gp_two|p_two"]);
    expect(subgraphs).toMatchObject({
      gp_two: { state: { type: "object", properties: { parent: { type: "string", enum: ["parent_one", "parent_two"] }, messages: { type: "array" } } } },
      "gp_two|p_two": { state: { type: "object", properties: { child: { type: "string", enum: ["child_one", "child_two"] }, messages: { type: "array" } } } },
    });
    expect(subgraphs.gp_two.state_schema).toEqual(subgraphs.gp_two.state);
  });
});

it("LANGGRAPH_CONFIG of graph.json env gives the default assistant its context", async () => {
  expect(await client.runs.wait(null, "runtime", { input: { message: "hi" } })).toEqual({ message: "hi", model: "unknown" });
  expect(await client.runs.wait(null, "runtime", { input: { message: "hi" }, context: { model: "openai" } })).toEqual({ message: "hi", model: "openai" });
});

describe("human in the loop inside a subgraph", () => {
  it("pauses at the subgraph's breakpoint, names the subgraph's namespace, edits its state there and resumes with it", async () => {
    const thread = await client.threads.create();
    // A run breakpoint naming no node of the graph is LangGraph's to ignore (D40).
    const chunks = await gather(client.runs.stream(thread.thread_id, "weather", { input: human("SF", "initial-message"), interruptBefore: ["tool"] }));
    expect(chunks.map((c) => c.event)).toEqual(["metadata", "values", "values", "values"]);
    expect(chunks.at(-1)!.data).toEqual({ __interrupt__: [] });
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["weather_graph"]);
    // The subgraph's namespace, as the JS server names it: thread and namespace only.
    expect(state.tasks).toEqual([
      {
        id: expect.any(String),
        name: "weather_graph",
        path: ["__pregel_pull", "weather_graph"],
        error: null,
        interrupts: [],
        checkpoint: { thread_id: thread.thread_id, checkpoint_ns: expect.stringMatching(/^weather_graph:/) },
        state: null,
        result: null,
      },
    ]);
    expect(Object.keys(state.tasks[0]!.checkpoint!).sort()).toEqual(["checkpoint_ns", "thread_id"]);
    const nested: Loose = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    expect(nested.tasks[0]).toMatchObject({ checkpoint: null, state: { values: { city: "San Francisco" }, next: ["weather_node"] } });

    await client.threads.updateState(thread.thread_id, { values: { city: "LA" }, checkpoint: state.tasks[0]!.checkpoint! });
    const inner: Loose = await client.threads.getState(thread.thread_id, state.tasks[0]!.checkpoint!);
    expect(inner.values.city).toBe("LA");
    expect(inner.next).toEqual(["weather_node"]);
    expect(inner.tasks).toMatchObject([{ name: "weather_node", checkpoint: null, state: null }]);
    // The root is still where it paused.
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["weather_graph"]);

    const done: Loose = await client.runs.wait(thread.thread_id, "weather", { input: null });
    expect(done.messages.at(-1)).toMatchObject({ type: "ai", content: "It's sunny in LA!" });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("a namespace that names no subgraph is refused", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "weather", { input: human("SF") });
    await expect(client.threads.getState(thread.thread_id, { thread_id: thread.thread_id, checkpoint_ns: "nowhere:1" } as never)).rejects.toMatchObject({ status: 422 });
  });
});

describe("debug checkpoints match the thread's history", () => {
  const shape = (i: Loose) => ({ step: i.metadata?.step, checkpoint: i.checkpoint, parent_checkpoint: i.parent_checkpoint });

  it("every streamed debug checkpoint names itself and its parent as getHistory does (stream debug checkpoint)", async () => {
    const thread = await client.threads.create();
    const stream: Loose[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "weather", { input: human("What's the weather in SF?"), streamMode: "debug" })) {
      const data = chunk.data as Loose;
      if (chunk.event === "debug" && data.type === "checkpoint") stream.push(data.payload);
    }
    expect(stream.length).toBeGreaterThan(1);
    const history = (await client.threads.getHistory(thread.thread_id, { limit: stream.length })).reverse();
    expect(stream.map(shape)).toEqual(history.map(shape));
    // LangGraph's internals stay out of the streamed configs.
    for (const payload of stream) expect(Object.keys(payload.config.configurable).filter((k) => k.startsWith("__"))).toEqual([]);
    expect(stream[1]).toHaveProperty("parent_config");
    expect(stream[1]).not.toHaveProperty("parentConfig");
  });

  it("a run continued from the checkpoint it paused at extends the same history (continue after interrupt must have checkpoint present)", async () => {
    const thread = await client.threads.create();
    const first = await gather(client.runs.stream(thread.thread_id, "weather", { input: human("What's weather in SF?"), streamMode: "debug", interruptBefore: ["router_node"] }));
    const checkpoints = (chunks: Loose[]) => chunks.filter((c) => c.event === "debug" && c.data?.type === "checkpoint").map((c) => c.data.payload);
    const history = (await client.threads.getHistory(thread.thread_id)).reverse();
    const next = await gather(client.runs.stream(thread.thread_id, "weather", { streamMode: "debug", checkpoint: history.at(-1)!.checkpoint }));
    const full = (await client.threads.getHistory(thread.thread_id)).reverse();
    expect([...checkpoints(first), ...checkpoints(next).slice(1)].map(shape)).toEqual(full.map(shape));
  });
});

describe("the SDK logger of graphs written for the agent server", () => {
  it("a graph that takes its logger as its module loads runs when served from graph.json", async () => {
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, "logging", { input: human("hi") })).toMatchObject({ messages: [{ content: "hi" }] });
  });

  it("the logger it took forwards to the logger of the runtime created later", async () => {
    const lines: unknown[][] = [];
    const logger = {} as SdkLogger;
    for (const level of ["error", "warn", "help", "data", "info", "debug", "prompt", "http", "verbose", "input", "silly"] as const) {
      logger[level] = (message, ...meta) => {
        lines.push([level, message, ...meta]);
        return logger;
      };
    }
    // The module was imported above (with the console logger registered first); it kept what getLogger() gave it.
    const taken = getLogger();
    const { graphs } = await loadGraphs(CONFIG);
    const runtime = await createRuntime({ graphs: { logging: graphs.logging! }, logger });
    try {
      await runtime.runs.wait(null, "logging", { input: human("one") });
      expect(lines).toEqual([["warn", "working", { messages: 1 }]]);
      expect(getLogger()).toBe(taken);
    } finally {
      await runtime.close();
    }
  });
});
