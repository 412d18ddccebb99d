// Issue 17's contract through the official SDK Client: over callerOptions.fetch (no socket) and
// over a real socket (serve on 127.0.0.1, port 0).
import { Client } from "@langchain/langgraph-sdk";
import { createFetchHandler } from "../../src/http/index.js";
import { serve } from "../../src/node/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { parityContract, type ParityClient } from "../runtime/parity-contract.js";
import { inProcessClient } from "./helpers.js";

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
