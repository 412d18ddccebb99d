/**
 * The runtime's contract suites on PostgreSQL (D20, D22): in process, over HTTP through the
 * official SDK Client, and two runtimes on two store instances over one schema (as two
 * processes on one database), durable runs included.
 */
import { Client } from "@langchain/langgraph-sdk";
import { inject } from "vitest";
import { serve } from "../../src/node/index.js";
import { postgresStore } from "../../src/postgres/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { runtimeContract, type ContractClient } from "../runtime/contract.js";
import { durableRunsContract } from "../runtime/durable.js";
import { sharedStoreContract, type StorePair } from "../runtime/shared.js";

const url = inject("pgUrl");
let n = 0;
const fresh = () => `rt_${process.pid}_${n++}`;
const store = (schema: string) => postgresStore({ connectionString: url, schema, max: 6, eventPollMs: 200 });

runtimeContract(
  "in process, postgres store",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs, store: store(fresh()) });
    return { client: runtime, close: () => runtime.close() };
  },
  { inProcess: true },
);

runtimeContract("SDK Client over HTTP (socket), postgres store", async ({ graphs }) => {
  const runtime = await createRuntime({ graphs, store: store(fresh()) });
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

const pgPair: StorePair = async () => {
  const schema = fresh();
  return [store(schema), store(schema)];
};
sharedStoreContract("two postgres store instances on one schema (two processes)", pgPair);
durableRunsContract("two postgres store instances on one schema (two processes)", pgPair);
