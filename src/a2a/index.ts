/**
 * `graphdock/a2a`: each assistant as an Agent2Agent agent (JSON-RPC at `/a2a/{assistant_id}`,
 * card at `/.well-known/agent-card.json?assistant_id=...`), speaking A2A 1.0 and 0.3, an
 * endpoint for `createFetchHandler(runtime, { endpoints: [a2aEndpoint()] })`. Needs the optional
 * peer `@a2a-js/sdk` (1.x), loaded at the first request. See docs/a2a.md.
 */
export { a2aEndpoint } from "./endpoint.js";
export type { A2aEndpointOptions } from "./endpoint.js";
export type { A2aSecurity, A2aSecurityScheme } from "./card.js";
export { a2aInstalled } from "./sdk.js";
