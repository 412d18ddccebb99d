// The auth isolation matrix (test/auth/isolation.ts) over HTTP: one official SDK client per header
// set, calling the fetch handler through callerOptions.fetch (D13: the adapter only passes headers).
import { Client } from "@langchain/langgraph-sdk";
import type { RuntimeClient } from "../../src/runtime/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import { serve } from "../../src/node/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { isolationMatrix } from "../auth/isolation.js";
import { inProcessClient } from "./helpers.js";

isolationMatrix("over HTTP (callerOptions.fetch)", async ({ graphs, auth }) => {
  const runtime = await createRuntime({ graphs, auth });
  const handler = createFetchHandler(runtime);
  return {
    clientFor: (headers) => inProcessClient(handler, headers) as unknown as RuntimeClient,
    close: () => runtime.close(),
  };
});

isolationMatrix("over HTTP (socket)", async ({ graphs, auth }) => {
  const runtime = await createRuntime({ graphs, auth });
  const server = await serve(runtime, { port: 0 });
  return {
    clientFor: (headers) =>
      new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: headers, callerOptions: { maxRetries: 0 } }) as unknown as RuntimeClient,
    close: async () => {
      await server.close();
      await runtime.close();
    },
  };
});
