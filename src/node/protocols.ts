/**
 * The protocol endpoints `serve` mounts (D32): MCP, A2A and the AI SDK chat stream, each when its
 * library is installed, unless turned off (`mcp: false`, as langgraph.json's `http.disable_mcp` says).
 */
import type { HttpEndpoint } from "../http/endpoints.js";
import { a2aEndpoint, a2aInstalled, type A2aEndpointOptions } from "../a2a/index.js";
import { aiSdkEndpoint, aiSdkInstalled, type AiSdkEndpointOptions } from "../ai-sdk/index.js";
import { mcpEndpoint, mcpInstalled, type McpEndpointOptions } from "../mcp/index.js";

/** Which protocol endpoints to mount: each `false` (off), `true` (on: its library must be installed) or its options (on). */
export interface ProtocolOptions {
  /** MCP at `/mcp` (graphdock/mcp). Default: on when `@modelcontextprotocol/sdk` is installed. */
  mcp?: boolean | McpEndpointOptions;
  /** A2A at `/a2a/{assistant_id}` (graphdock/a2a). Default: on when `@a2a-js/sdk` is installed. */
  a2a?: boolean | A2aEndpointOptions;
  /** The AI SDK chat stream at `/ai-sdk/chat/{assistant_id}` (graphdock/ai-sdk). Default: on when `ai` is installed. */
  aiSdk?: boolean | AiSdkEndpointOptions;
}

type Shared = Pick<McpEndpointOptions, "maxBodyBytes" | "maxDepth" | "onError">;

/** The endpoints `options` ask for; rejects when one asked for explicitly has no library. */
export async function protocolEndpoints(options: ProtocolOptions, shared: Shared): Promise<HttpEndpoint[]> {
  const protocols = [
    { name: "mcp", option: options.mcp, installed: mcpInstalled, make: mcpEndpoint, library: "@modelcontextprotocol/sdk" },
    { name: "a2a", option: options.a2a, installed: a2aInstalled, make: a2aEndpoint, library: "@a2a-js/sdk" },
    { name: "aiSdk", option: options.aiSdk, installed: aiSdkInstalled, make: aiSdkEndpoint, library: "ai" },
  ] as const;
  const endpoints: HttpEndpoint[] = [];
  for (const p of protocols) {
    if (p.option === false) continue;
    if (!(await p.installed())) {
      if (p.option === undefined) continue;
      throw new Error(`graphdock: the ${p.name} endpoint needs ${p.library}: npm install ${p.library} (or leave ${p.name} off)`);
    }
    endpoints.push(p.make({ ...shared, ...(typeof p.option === "object" ? p.option : {}) }));
  }
  return endpoints;
}
