/**
 * `graphdock/node`: Node-only helpers around the runtime: `serve` (the HTTP adapter on
 * `node:http`), `apiDocs` (its `GET /docs`), `serveConfig` (start from graph.json, as the `graphdock serve` command does) and
 * the graph.json loaders.
 */
export { serve, toNodeListener } from "./serve.js";
export { apiDocs } from "./docs.js";
export type { NodeListener, NodeListenerOptions, ServeHandle, ServeOptions } from "./serve.js";
export type { ProtocolOptions } from "./protocols.js";
export { serveConfig, loadGraphs, openStore, limitOptions, LIMIT_FLAGS } from "./config.js";
export type { ConfigServer, GraphConfig, ServeConfigOptions } from "./config.js";
export { loadExport, parseSpecifier } from "./load.js";
export { loadAuth } from "./auth-loader.js";
export type { AuthConfigFile } from "./auth-loader.js";
export { createMetrics } from "../metrics/index.js";
export { timedStore } from "../metrics/timed-store.js";
export type { Metrics, MetricsOptions } from "../metrics/index.js";
