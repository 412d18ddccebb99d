/**
 * The v2 protocol on PostgreSQL: a session on one runtime sees the runs another runtime (another
 * store instance on the same schema, as another process) creates on its thread.
 */
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, inject, it } from "vitest";
import { echo } from "../../examples/node/agent.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { postgresStore } from "../../src/postgres/index.js";
import { createRuntime } from "../../src/runtime/index.js";

const url = inject("pgUrl");
const store = (schema: string) => postgresStore({ connectionString: url, schema, max: 4, eventPollMs: 200 });
const human = (content: string) => ({ messages: [{ type: "human", content }] });

describe("v2 sessions over PostgreSQL", () => {
  it("a ThreadStream on runtime A streams the runs runtime B creates on its thread", async () => {
    const schema = `v2_${process.pid}`;
    const a = await createRuntime({ graphs: { echo }, store: store(schema) });
    const b = await createRuntime({ graphs: { echo }, store: store(schema) });
    try {
      const threadId = crypto.randomUUID();
      await a.threads.create({ threadId });
      const client = new Client({ apiUrl: "http://unused" });
      const thread = client.threads.stream(threadId, { assistantId: "echo", transport: new InProcessTransport(a) });
      const sub = await thread.subscribe({ channels: ["lifecycle", "values"] });
      const got: Array<{ method: string; data: any }> = [];
      let completed = 0;
      // The SDK pauses a subscription at the end of each run and resumes it when the next one's
      // events come: read across runs as its own lifecycle watcher does.
      const reading = (async () => {
        while (completed < 2) {
          for await (const e of sub) {
            got.push({ method: e.method, data: e.params.data });
            if (e.method === "lifecycle" && (e.params.data as { event: string }).event === "completed" && ++completed === 2) break;
          }
          if (completed < 2) await sub.waitForResume();
        }
      })();
      // A resumable run is replayed whole to the session that joins it a moment later.
      const resumable = await b.runs.create(threadId, "echo", { input: human("one"), streamResumable: true, streamMode: ["values"] });
      await b.runs.join(threadId, resumable.run_id);
      // A run that is not resumable: joined from the notice on; its end is read from its record.
      await b.runs.wait(threadId, "echo", { input: human("two") });
      await reading;
      expect(got.filter((e) => e.method === "lifecycle").map((e) => e.data.event)).toEqual(["running", "completed", "running", "completed"]);
      const firstValues = got.findIndex((e) => e.method === "values");
      expect(firstValues).toBeGreaterThan(0);
      expect(got.find((e) => e.method === "values" && e.data.messages.length === 2)!.data.messages.map((m: { content: string }) => m.content)).toEqual(["one", "echo: one"]);
      await thread.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
