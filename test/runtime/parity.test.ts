// The parity contract (./parity-contract.ts) in process (the same suite runs over HTTP in
// test/http/parity.test.ts), plus what only createRuntime itself can show.
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime/index.js";
import { assistantDefaultsFromEnv, mergeAssistantDefaults } from "../../src/runtime/index.js";
import { Gate, chainGraph, slowGraph } from "./graphs.js";
import { parityContract, type ParityClient } from "./parity-contract.js";

parityContract("in process (createRuntime)", async ({ graphs, assistantDefaults }) => {
  const runtime = await createRuntime({ graphs, ...(assistantDefaults ? { assistantDefaults } : {}) });
  return { client: runtime as unknown as ParityClient, close: () => runtime.close() };
});

describe("createRuntime graph entries and defaults", () => {
  it("refuses assistantDefaults naming a graph it does not have, and entries that are not graphs", async () => {
    await expect(createRuntime({ graphs: { chain: chainGraph() }, assistantDefaults: { nope: { config: {} } } })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(createRuntime({ graphs: { chain: chainGraph() }, assistantDefaults: { chain: { config: { recursion_limit: -1 } } } })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(createRuntime({ graphs: { bad: { not: "a graph" } as never } })).rejects.toThrow(/bad are not compiled graphs/);
    await expect(createRuntime({ graphs: { bad: Promise.resolve(42) as never } })).rejects.toThrow(/bad are not compiled graphs/);
  });

  it("a factory that returns no graph fails the run with a message naming the graph", async () => {
    const runtime = await createRuntime({ graphs: { broken: (() => ({})) as never } });
    try {
      const t = await runtime.threads.create();
      await expect(runtime.runs.wait(t.thread_id, "broken", { input: {} })).rejects.toThrow(/graph "broken".*factory/);
    } finally {
      await runtime.close();
    }
  });

  it("an open thread stream ends when its runtime closes or its signal aborts, idle or in the middle of a run", async () => {
    const gate = new Gate();
    const runtime = await createRuntime({ graphs: { chain: chainGraph(), slow: slowGraph(gate) } });
    try {
      const t = await runtime.threads.create();
      // Aborted while a run it streams waits for its next event.
      const abort = new AbortController();
      const watching = runtime.threads.joinStream(t.thread_id, { signal: abort.signal });
      await watching.ready;
      await runtime.runs.create(t.thread_id, "slow", { input: {}, streamMode: ["custom"] });
      expect((await watching.next()).value).toMatchObject({ event: "metadata" });
      const pending = watching.next();
      abort.abort();
      expect(await pending).toEqual({ done: true, value: undefined });
      // Idle, when the runtime closes.
      const idle = runtime.threads.joinStream((await runtime.threads.create()).thread_id);
      await idle.ready;
      const next = idle.next();
      gate.release();
      await runtime.close();
      expect(await next).toEqual({ done: true, value: undefined });
    } finally {
      gate.release();
      await runtime.close();
    }
  });

  it("LANGGRAPH_CONFIG is read as {graph: {...config, context}} and layered over other defaults", () => {
    const env = assistantDefaultsFromEnv(JSON.stringify({ agent: { configurable: { model: "env" }, context: { tone: "env" } } }));
    expect(env).toEqual({ agent: { config: { configurable: { model: "env" } }, context: { tone: "env" } } });
    expect(assistantDefaultsFromEnv(undefined)).toEqual({});
    expect(() => assistantDefaultsFromEnv("[1]")).toThrow(/LANGGRAPH_CONFIG must be a JSON object/);
    expect(() => assistantDefaultsFromEnv("{nope")).toThrow(/LANGGRAPH_CONFIG is not JSON/);
    const merged = mergeAssistantDefaults({ agent: { config: { configurable: { model: "file", temp: 1 }, tags: ["f"] }, context: { tone: "file", lang: "en" } } }, env);
    expect(merged).toEqual({ agent: { config: { configurable: { model: "env", temp: 1 }, tags: ["f"] }, context: { tone: "env", lang: "en" } } });
  });
});
