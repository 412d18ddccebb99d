// The runtime's contract suite, run twice more through the official SDK Client (D1): over a real
// socket (serve on 127.0.0.1, port 0), and through callerOptions.fetch with no socket at all.
import { Client } from "@langchain/langgraph-sdk";
import { createFetchHandler } from "../../src/http/index.js";
import { serve } from "../../src/node/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { runtimeContract, type ContractClient } from "../runtime/contract.js";
import { inProcessClient } from "./helpers.js";

runtimeContract("SDK Client over HTTP (socket)", async ({ graphs }) => {
  const runtime = await createRuntime({ graphs });
  const server = await serve(runtime, { port: 0 });
  const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
  return {
    client: client as unknown as ContractClient,
    close: async () => {
      await server.close();
      await runtime.close();
    },
  };
});

runtimeContract("SDK Client over callerOptions.fetch (no socket)", async ({ graphs }) => {
  const runtime = await createRuntime({ graphs });
  const client = inProcessClient(createFetchHandler(runtime));
  return { client: client as unknown as ContractClient, close: () => runtime.close() };
});
