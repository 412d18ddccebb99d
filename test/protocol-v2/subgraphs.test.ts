/**
 * Subgraphs over the v2 protocol, driven by the official SDK's `client.threads.stream()`: the
 * lifecycle channel opens a namespace per subgraph task, so `thread.subgraphs` discovers it
 * and its values projection reads that namespace.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { END, START, StateGraph, messagesState } from "../../src/graph/index.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { Gate, until } from "./helpers.js";

const inner = new StateGraph(messagesState)
  .addNode("speak", (_s, ctx) => {
    for (const w of ["from ", "inside"]) ctx.emitMessage({ id: "inner-1", type: "AIMessageChunk", content: w });
    return { messages: [{ id: "inner-1", type: "ai", content: "from inside" }] };
  })
  .addEdge(START, "speak")
  .addEdge("speak", END)
  .compile();
const outer = new StateGraph(messagesState)
  .addNode("helper", inner)
  .addNode("finish", () => ({ messages: [{ id: "outer-1", type: "ai", content: "done" }] }))
  .addEdge(START, "helper")
  .addEdge("helper", "finish")
  .addEdge("finish", END)
  .compile();

/** `helper` wrapped once more: the tree nests `wrap:<id>` > `helper:<id>`. */
const wrapped = new StateGraph(messagesState)
  .addNode("wrap", outer)
  .addEdge(START, "wrap")
  .addEdge("wrap", END)
  .compile();

/** `helper`, then `finish` waits for the gate: the run is still streaming while the test looks. */
const gate = new Gate();
const held = new StateGraph(messagesState)
  .addNode("helper", inner)
  .addNode("finish", async (_s, ctx) => {
    gate.arrive();
    await gate.wait(ctx.signal);
    return { messages: [{ id: "held-1", type: "ai", content: "done" }] };
  })
  .addEdge(START, "helper")
  .addEdge("helper", "finish")
  .addEdge("finish", END)
  .compile();

/** `helper` asks a question (an interrupt inside the subgraph). */
const asking = new StateGraph(messagesState)
  .addNode(
    "helper",
    new StateGraph(messagesState)
      .addNode("ask", (_s, ctx) => ({ messages: [{ id: "asked-1", type: "ai", content: String(ctx.interrupt("why?")) }] }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile(),
  )
  .addEdge(START, "helper")
  .addEdge("helper", END)
  .compile();

let runtime: Runtime;
let server: ServeHandle;
let client: Client;
beforeAll(async () => {
  runtime = await createRuntime({ graphs: { outer, wrapped, held, asking } });
  server = await serve(runtime, { port: 0, heartbeatMs: 0 });
  client = new Client({ apiUrl: server.url });
});
afterAll(async () => {
  await server.close();
  await runtime.close();
});

describe("v2 protocol: subgraphs", () => {
  it("thread.subgraphs discovers a subgraph task by its lifecycle namespace; its output is the subgraph's values", async () => {
    const thread = client.threads.stream("00000000-0000-4000-8000-00000000a001", { assistantId: "outer" } as never);
    const found: Array<{ name: string; namespace: string[]; output: Promise<unknown> }> = [];
    const discovering = (async () => {
      for await (const sub of thread.subgraphs) {
        void sub.values; // opens the values projection that `output` resolves from
        found.push({ name: sub.name, namespace: [...sub.namespace], output: sub.output });
      }
    })();
    await thread.run.start({ input: { messages: [{ type: "human", content: "go" }] } });
    const output = (await thread.output) as { messages: Array<{ content: unknown }> };
    expect(output.messages.map((m) => m.content)).toEqual(["go", "from inside", "done"]);
    await until(() => found.length > 0);
    expect(found.map((f) => f.name)).toEqual(["helper"]);
    expect(found[0]!.namespace).toEqual([expect.stringMatching(/^helper:[0-9a-f-]+$/)]);
    const subOutput = (await found[0]!.output) as { messages: Array<{ content: unknown }> };
    expect(subOutput.messages.map((m) => m.content)).toEqual(["go", "from inside"]);
    await thread.close();
    void discovering;
  });
});

describe.each(["http", "in-process"] as const)("v2 protocol: subgraphs over %s", (kind) => {
  const open = (assistantId: string) =>
    client.threads.stream(crypto.randomUUID(), { assistantId, ...(kind === "in-process" ? { transport: new InProcessTransport(runtime) } : {}) } as never);

  it("agent.getTree reports the subgraphs a run opened, nested by namespace, with their status", async () => {
    const thread = open("wrapped");
    await thread.run.start({ input: { messages: [{ type: "human", content: "go" }] } });
    await thread.output;
    const { tree } = (await thread.agent.getTree()) as { tree: any };
    expect(tree).toMatchObject({ namespace: [], status: "completed", graph_name: "wrapped" });
    expect(tree.children).toHaveLength(1);
    const [wrap] = tree.children;
    expect(wrap).toMatchObject({ namespace: [expect.stringMatching(/^wrap:/)], status: "completed", graph_name: "wrap" });
    expect(wrap.children).toEqual([
      { namespace: [wrap.namespace[0], expect.stringMatching(/^helper:/)], status: "completed", graph_name: "helper", children: [] },
    ]);
    await thread.close();
  });

  it("agent.getTree: a subgraph paused by an interrupt is interrupted; a run_id names the run described", async () => {
    const thread = open("asking");
    const { run_id: runId } = (await thread.run.start({ input: { messages: [{ type: "human", content: "go" }] } })) as { run_id: string };
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    await until(async () => ((await thread.agent.getTree()) as { tree: any }).tree.status === "interrupted");
    const { tree } = (await thread.agent.getTree({ run_id: runId })) as { tree: any };
    expect(tree.children).toEqual([{ namespace: [expect.stringMatching(/^helper:/)], status: "interrupted", graph_name: "helper", children: [] }]);
    expect(((await thread.agent.getTree({ run_id: "00000000-0000-4000-8000-000000000000" })) as { tree: any }).tree.children).toEqual([]);
    await thread.close();
  });

  it("a subgraph handle's messages projection opened as the subgraph is discovered gets its streamed messages", async () => {
    const thread = open("held");
    const got: string[] = [];
    let projection: Promise<void> | undefined;
    const discovering = (async () => {
      for await (const sub of thread.subgraphs) {
        projection ??= (async () => {
          for await (const m of sub.messages as AsyncIterable<{ text: Promise<string> }>) got.push(await m.text);
        })();
      }
    })();
    await thread.run.start({ input: { messages: [{ type: "human", content: "go" }] } });
    // The subgraph's message reaches its projection while the run is still going (held at `finish`).
    await until(() => got.length > 0);
    expect(got).toEqual(["from inside"]);
    gate.release();
    const output = (await thread.output) as { messages: Array<{ content: unknown }> };
    expect(output.messages.map((m) => m.content)).toEqual(["go", "from inside", "done"]);
    await thread.close();
    await Promise.allSettled([projection, discovering]);
  });
});
