/**
 * `graphdock/langgraph`: hosts compiled LangGraph.js graphs (D23). Needs the optional peers
 * `@langchain/langgraph` and `@langchain/core`.
 *
 * - `fromLangGraph(graph)`: the graph as a runtime `CompiledGraph` (`createRuntime` does this
 *   itself for a LangGraph.js graph passed as is).
 * - `GraphdockSaver`: a `BaseCheckpointSaver` over an graphdock `Store`.
 * - `GraphdockItemStore`: a LangGraph `BaseStore` over an graphdock item store.
 *
 * Importing this module registers the adapter for the core entry (see src/runtime/graph-port.ts),
 * which is how a browser bundle hosts LangGraph.js graphs passed as is.
 */
import { LANGGRAPH_HOST_KEY, type LangGraphHost } from "../runtime/graph-port.js";
import { fromLangGraph } from "./adapter.js";

export { fromLangGraph, LangGraphAdapter } from "./adapter.js";
export type { FromLangGraphOptions, LangGraphPregel } from "./adapter.js";
export { GraphdockItemStore } from "./item-store.js";
export type { ItemStoreLike, StoredItemLike } from "./item-store.js";
export { GraphdockSaver } from "./saver.js";
export type { GraphdockSaverOptions } from "./saver.js";
export { messageToDict, toWire } from "./wire.js";
export type { LangGraphGraph, HostedGraph } from "../runtime/graph-port.js";

const host: LangGraphHost = { fromLangGraph };
Reflect.set(globalThis, LANGGRAPH_HOST_KEY, host);
