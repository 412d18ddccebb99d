// The runtime contract suite run again with LangGraph.js versions of its graphs (D23): in process
// and through the official SDK client over HTTP.
import { createFetchHandler } from "../../src/http/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { inProcessClient } from "../http/helpers.js";
import { runtimeContract, type ContractClient } from "../runtime/contract.js";
import { lgTestGraphs } from "./graphs.js";

runtimeContract(
  "LangGraph.js graphs, in process, memory store",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs });
    return { client: runtime, close: () => runtime.close() };
  },
  { inProcess: true, graphs: lgTestGraphs },
);

runtimeContract(
  "LangGraph.js graphs, SDK Client over callerOptions.fetch",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs });
    const client = inProcessClient(createFetchHandler(runtime));
    return { client: client as unknown as ContractClient, close: () => runtime.close() };
  },
  { graphs: lgTestGraphs },
);
