/** Subgraphs on the persistent stores: their namespaced checkpoints are kept, copied and deleted. */
import "fake-indexeddb/auto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll } from "vitest";
import { createRuntime } from "../../src/runtime/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import type { Store } from "../../src/persistence/types.js";
import { subgraphContract } from "../runtime/subgraphs-contract.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-sub-"));
afterAll(() => rm(root, { recursive: true, force: true }));
let n = 0;

const stores: Array<[string, () => Store]> = [
  ["json-file store", () => jsonFileStore(join(root, `subgraphs-${n++}`))],
  ["indexeddb store", () => indexedDbStore(`subgraphs-${n++}`)],
];

for (const [name, make] of stores) {
  subgraphContract(`in process, ${name}`, async (graphs) => {
    const store = make();
    const runtime = await createRuntime({ graphs, store });
    return { client: runtime as unknown as Client, store, close: () => runtime.close() };
  });
}
