/** Subgraphs on PostgreSQL: namespaced checkpoints kept, copied, rolled back and deleted. */
import type { Client } from "@langchain/langgraph-sdk";
import { inject } from "vitest";
import { postgresStore } from "../../src/postgres/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { subgraphContract } from "../runtime/subgraphs-contract.js";

const url = inject("pgUrl");
let n = 0;

subgraphContract("in process, postgres store", async (graphs) => {
  const store = postgresStore({ connectionString: url, schema: `sub_${process.pid}_${n++}`, max: 6, eventPollMs: 200 });
  const runtime = await createRuntime({ graphs, store });
  return { client: runtime as unknown as Client, store, close: () => runtime.close() };
});
