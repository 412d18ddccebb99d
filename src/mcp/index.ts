/**
 * `graphdock/mcp`: the runtime's assistants as MCP tools at `/mcp` (stateless Streamable HTTP),
 * an endpoint for `createFetchHandler(runtime, { endpoints: [mcpEndpoint()] })`. Needs the
 * optional peer `@modelcontextprotocol/sdk`, loaded at the first request. See docs/mcp.md.
 */
export { mcpEndpoint } from "./endpoint.js";
export type { McpEndpointOptions } from "./endpoint.js";
export { mcpInstalled } from "./sdk.js";
