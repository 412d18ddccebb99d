// The runtime contract suite run again with LangGraph.js versions of its graphs (D23): in process
// on the memory, JSON-file and IndexedDB stores, and through the official SDK client over HTTP.
import "fake-indexeddb/auto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createFetchHandler } from "../../src/http/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
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
  { inProcess: true, graphs: lgTestGraphs, breakpointsUnchecked: true },
);

runtimeContract(
  "LangGraph.js graphs, SDK Client over callerOptions.fetch",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs });
    const client = inProcessClient(createFetchHandler(runtime));
    return { client: client as unknown as ContractClient, close: () => runtime.close() };
  },
  { graphs: lgTestGraphs, breakpointsUnchecked: true },
);

const root = mkdtempSync(join(tmpdir(), "graphdock-lg-contract-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
for (const [name, make] of [
  ["JSON-file store", () => jsonFileStore(join(root, `c-${n++}`))],
  ["IndexedDB store (fake-indexeddb)", () => indexedDbStore(`lg-contract-${n++}`)],
] as const) {
  runtimeContract(
    `LangGraph.js graphs, in process, ${name}`,
    async ({ graphs }) => {
      const runtime = await createRuntime({ graphs, store: make() });
      return { client: runtime, close: () => runtime.close() };
    },
    { inProcess: true, graphs: lgTestGraphs, breakpointsUnchecked: true },
  );
}
