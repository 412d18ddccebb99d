import type { Client } from "@langchain/langgraph-sdk";
import { createRuntime, memoryStore } from "../../src/index.js";
import { subgraphContract } from "./subgraphs-contract.js";

subgraphContract("in process", async (graphs) => {
  const store = memoryStore();
  const runtime = await createRuntime({ graphs, store });
  return { client: runtime as unknown as Client, store, close: () => runtime.close() };
});
