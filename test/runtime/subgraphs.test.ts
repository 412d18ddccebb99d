import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { START, StateGraph, createRuntime, memoryStore } from "../../src/index.js";
import { Gate } from "./graphs.js";
import { subgraphContract } from "./subgraphs-contract.js";

subgraphContract("in process", async (graphs) => {
  const store = memoryStore();
  const runtime = await createRuntime({ graphs, store });
  return { client: runtime as unknown as Client, store, close: () => runtime.close() };
});

describe("subgraphs in the runtime", () => {
  it("a run rolled back (multitask rollback) removes the checkpoints it wrote in every namespace", async () => {
    const gate = new Gate();
    const slowChild = new StateGraph({ log: { reducer: (a: string[], b: string | string[]) => [...a, ...(Array.isArray(b) ? b : [b])], default: (): string[] => [] } })
      .addNode("first", () => ({ log: "first" }))
      .addNode("wait", async (_s, ctx) => {
        gate.arrived();
        await new Promise<void>((resolve, reject) => {
          gate.waiters.push(resolve);
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
        return { log: "waited" };
      })
      .addEdge(START, "first")
      .addEdge("first", "wait")
      .compile();
    const outer = new StateGraph({ log: { reducer: (a: string[], b: string | string[]) => [...a, ...(Array.isArray(b) ? b : [b])], default: (): string[] => [] } })
      .addNode("sub", slowChild)
      .addEdge(START, "sub")
      .compile();
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: { outer }, store });
    try {
      const t = await runtime.threads.create();
      const first = runtime.runs.wait(t.thread_id, "outer", { input: { log: ["before"] } });
      await gate.reached(1);
      gate.release();
      expect((await first).log).toEqual(["before", "before", "first", "waited"]);
      const kept = await store.listCheckpointNamespaces(t.thread_id);
      const keptCounts = await Promise.all(kept.map(async (ns) => (await store.listCheckpoints(t.thread_id, { checkpoint_ns: ns })).length));
      const run = await runtime.runs.create(t.thread_id, "outer", { input: { log: ["again"] } });
      await gate.reached(2);
      // The second run wrote checkpoints at the root and in a new subgraph namespace.
      expect((await store.listCheckpointNamespaces(t.thread_id)).length).toBe(kept.length + 1);
      await runtime.runs.cancel(t.thread_id, run.run_id, true, "rollback");
      expect(await store.listCheckpointNamespaces(t.thread_id)).toEqual(kept);
      const counts = await Promise.all(kept.map(async (ns) => (await store.listCheckpoints(t.thread_id, { checkpoint_ns: ns })).length));
      expect(counts).toEqual(keptCounts);
    } finally {
      gate.release();
      await runtime.close();
    }
  });

  it("nodes inside a subgraph get the runtime's long-term memory (ctx.store)", async () => {
    const inner = new StateGraph({ seen: {} as { default?: () => unknown } })
      .addNode("remember", async (_s, ctx) => {
        await ctx.store.putItem(["sub"], "k", { from: "inside" });
        return { seen: (await ctx.store.getItem(["sub"], "k"))?.value ?? null };
      })
      .addEdge(START, "remember")
      .compile();
    const outer = new StateGraph({ seen: {} as { default?: () => unknown } }).addNode("inner", inner).addEdge(START, "inner").compile();
    const runtime = await createRuntime({ graphs: { outer } });
    try {
      const out = await runtime.runs.wait(null, "outer", { input: {} });
      expect(out.seen).toEqual({ from: "inside" });
    } finally {
      await runtime.close();
    }
  });
});
