/**
 * LangGraph.js hosting on PostgreSQL (D23): the `GraphdockSaver` suite, and the runtime contract
 * suite with the LangGraph.js versions of its graphs.
 */
import { inject } from "vitest";
import { postgresStore } from "../../src/postgres/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { lgTestGraphs } from "../langgraph/graphs.js";
import { saverContract } from "../langgraph/saver-suite.js";
import { runtimeContract } from "../runtime/contract.js";

const url = inject("pgUrl");
let n = 0;
const store = () => postgresStore({ connectionString: url, schema: `lg_${process.pid}_${n++}`, max: 6, eventPollMs: 200 });

saverContract("postgres", store);

runtimeContract(
  "LangGraph.js graphs, in process, postgres store",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs, store: store() });
    return { client: runtime, close: () => runtime.close() };
  },
  { inProcess: true, graphs: lgTestGraphs, breakpointsUnchecked: true },
);
