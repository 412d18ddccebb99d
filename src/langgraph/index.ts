/**
 * `graphdock/langgraph`: hosts compiled LangGraph.js graphs (D23). Needs the optional peers
 * `@langchain/langgraph` and `@langchain/core`.
 *
 * - `fromLangGraph(graph)`: the graph as a runtime `CompiledGraph` (`createRuntime` does this
 *   itself for a LangGraph.js graph passed as is).
 * - `GraphdockSaver`: a `BaseCheckpointSaver` over an graphdock `Store`.
 * - `GraphdockItemStore`: a LangGraph `BaseStore` over an graphdock item store.
 * - `LANGGRAPH_RANGE`: the `@langchain/langgraph` releases hosted (D41); others are refused.
 *
 * Importing this module registers the adapter for the core entry (see src/runtime/graph-port.ts),
 * which is how a browser bundle hosts LangGraph.js graphs passed as is, and the SDK logger graphs
 * reach with `getLogger()` (src/runtime/sdk-logger.ts): imported before an app's graph modules, it
 * lets a graph call `getLogger()` as its module loads.
 */
import { LANGGRAPH_HOST_KEY, type LangGraphHost } from "../runtime/graph-port.js";
import { registerSdkLogger } from "../runtime/sdk-logger.js";
import { fromLangGraph } from "./adapter.js";
import { checkInstalledLangGraph, installedLangGraph } from "./installed.js";

export { fromLangGraph, LangGraphAdapter } from "./adapter.js";
export type { FromLangGraphOptions, LangGraphPregel } from "./adapter.js";
export type { RawSchemas, TypeSchemasSource } from "./schemas.js";
export { LANGGRAPH_RANGE, LOWEST_LANGGRAPH } from "./version.js";
export { GraphdockItemStore } from "./item-store.js";
export type { ItemStoreLike, StoredItemLike } from "./item-store.js";
export { GraphdockSaver } from "./saver.js";
export type { GraphdockSaverOptions } from "./saver.js";
export { messageToDict, toWire } from "./wire.js";
export type { LangGraphGraph, HostedGraph } from "../runtime/graph-port.js";

// The host refuses a LangGraph.js release graphdock does not host before wrapping a graph (D41).
const host: LangGraphHost = {
  fromLangGraph: async (graph, options) => {
    await checkInstalledLangGraph();
    return fromLangGraph(graph, options);
  },
};
Reflect.set(globalThis, LANGGRAPH_HOST_KEY, host);
registerSdkLogger();
void installedLangGraph();
