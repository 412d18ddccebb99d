// The parity contract (test/runtime/parity-contract.ts) through the official SDK Client: over
// callerOptions.fetch (no socket) and over a real socket (serve on 127.0.0.1, port 0).
import { Client } from "@langchain/langgraph-sdk";
import { createFetchHandler } from "../../src/http/index.js";
import { serve } from "../../src/node/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { parityContract, type ParityClient } from "../runtime/parity-contract.js";
import { describe, expect, it } from "vitest";
import { chainGraph } from "../runtime/graphs.js";
import { call, inProcessClient, readSse } from "./helpers.js";

parityContract("SDK Client over callerOptions.fetch (no socket)", async ({ graphs, assistantDefaults }) => {
  const runtime = await createRuntime({ graphs, ...(assistantDefaults ? { assistantDefaults } : {}) });
  return { client: inProcessClient(createFetchHandler(runtime)) as unknown as ParityClient, close: () => runtime.close() };
});

parityContract("SDK Client over HTTP (socket)", async ({ graphs, assistantDefaults }) => {
  const runtime = await createRuntime({ graphs, ...(assistantDefaults ? { assistantDefaults } : {}) });
  const server = await serve(runtime, { port: 0 });
  const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
  return {
    client: client as unknown as ParityClient,
    close: async () => {
      await server.close();
      await runtime.close();
    },
  };
});

describe("GET /threads/{id}/stream over HTTP", () => {
  it("answers its SSE headers at once on an idle thread, then sends each new run's events", async () => {
    const runtime = await createRuntime({ graphs: { chain: chainGraph() } });
    try {
      const handler = createFetchHandler(runtime);
      const client = inProcessClient(handler);
      const t = await client.threads.create();
      const abort = new AbortController();
      // Nothing runs on the thread yet: the response (headers) must not wait for a first event.
      const response = await handler(new Request(`http://in-process/threads/${t.thread_id}/stream`, { signal: abort.signal }));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const run = await client.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["updates"] });
      const { events } = await readSse(response, 4);
      abort.abort();
      expect(events.map((e) => [e.id, e.event])).toEqual([
        [`${run.run_id}:0`, "metadata"],
        [`${run.run_id}:1`, "updates"],
        [`${run.run_id}:2`, "updates"],
        [`${run.run_id}:3`, "updates"],
      ]);
    } finally {
      await runtime.close();
    }
  });

  it("refuses a bad Last-Event-ID or stream_mode with 422 and an unknown thread with 404, before any stream", async () => {
    const runtime = await createRuntime({ graphs: { chain: chainGraph() } });
    try {
      const handler = createFetchHandler(runtime);
      const t = await inProcessClient(handler).threads.create();
      expect((await call(handler, "GET", `/threads/${t.thread_id}/stream`, undefined, { "last-event-id": "nope" })).status).toBe(422);
      expect((await call(handler, "GET", `/threads/${t.thread_id}/stream?stream_mode=lifecycle`)).status).toBe(422);
      expect((await call(handler, "GET", "/threads/00000000-0000-4000-8000-0000000000ff/stream")).status).toBe(404);
    } finally {
      await runtime.close();
    }
  });
});
