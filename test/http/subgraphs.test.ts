import { createFetchHandler } from "../../src/http/index.js";
import { createRuntime, memoryStore } from "../../src/index.js";
import { subgraphContract } from "../runtime/subgraphs-contract.js";
import { inProcessClient } from "./helpers.js";

subgraphContract("SDK Client over HTTP", async (graphs) => {
  const store = memoryStore();
  const runtime = await createRuntime({ graphs, store });
  return { client: inProcessClient(createFetchHandler(runtime)), store, close: () => runtime.close() };
});
