/**
 * Runs created by another runtime on the same store appear in a v2 session: two runtimes over
 * one memory store, a ThreadStream on runtime A, runs created on runtime B (legacy API and v2).
 */
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { echo } from "../../examples/node/agent.js";
import { createRuntime, memoryStore, type RuntimeEvent } from "../../src/index.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { human } from "./helpers.js";

type Msg = { content?: unknown };
type Seen = { method: string; data: any };

/**
 * Reads `sub` until `n` root `completed` lifecycle events were seen. The SDK pauses a
 * subscription at the end of each run and resumes it when the next one's events come: read
 * across runs as its own lifecycle watcher does.
 */
async function untilCompleted(sub: AsyncIterable<{ method: string; params: { data: unknown } }> & { waitForResume(): Promise<void> }, n: number, got: Seen[]) {
  let completed = 0;
  while (completed < n) {
    for await (const e of sub) {
      got.push({ method: e.method, data: e.params.data });
      if (e.method === "lifecycle" && (e.params.data as { event: string }).event === "completed" && ++completed === n) break;
    }
    if (completed < n) await sub.waitForResume();
  }
}

describe("a v2 session sees runs created by other runtimes on its store", () => {
  it("reports them as run.created.external, and a ThreadStream on A streams runs created on B", async () => {
    const store = memoryStore();
    const a = await createRuntime({ graphs: { echo }, store });
    const b = await createRuntime({ graphs: { echo }, store });
    try {
      const external: RuntimeEvent[] = [];
      a.subscribe("run.created.external", (e) => external.push(e));
      const threadId = crypto.randomUUID();
      await a.threads.create({ threadId });
      const client = new Client({ apiUrl: "http://unused" });
      const thread = client.threads.stream(threadId, { assistantId: "echo", transport: new InProcessTransport(a) });
      const sub = await thread.subscribe({ channels: ["lifecycle", "values", "messages"] });
      const got: Seen[] = [];
      const reading = untilCompleted(sub, 2, got);

      // The legacy API on B.
      const legacy = await b.runs.wait(threadId, "echo", { input: human("from b"), streamMode: ["values", "messages-tuple"] });
      expect((legacy as { messages: Msg[] }).messages.at(-1)!.content).toBe("echo: from b");
      // A v2 run.start through B's own transport.
      const onB = client.threads.stream(threadId, { assistantId: "echo", transport: new InProcessTransport(b) });
      await onB.run.start({ input: human("again from b") });
      await onB.output;
      await reading;

      const runs = await b.runs.list(threadId);
      expect(external.map((e) => (e as { run: { run_id: string } }).run.run_id).sort()).toEqual(runs.map((r) => r.run_id).sort());
      const lifecycle = got.filter((e) => e.method === "lifecycle").map((e) => e.data.event);
      expect(lifecycle).toEqual(["running", "completed", "running", "completed"]);
      const values = got.filter((e) => e.method === "values").map((e) => (e.data.messages as Msg[]).map((m) => m.content));
      expect(values.at(-1)).toEqual(["from b", "echo: from b", "again from b", "echo: again from b"]);
      expect(values).toContainEqual(["from b", "echo: from b"]);
      const deltas = got.filter((e) => e.method === "messages" && e.data.event === "content-block-delta");
      expect(deltas.length).toBeGreaterThanOrEqual(2); // token chunks of both runs, executed on B
      await onB.close();
      await thread.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
