/**
 * The parts of `@modelcontextprotocol/sdk` the MCP endpoint uses, imported at the first request
 * (D101): the SDK is an optional peer dependency, so neither the core nor `graphdock/http` loads
 * it, and a page or server that never mounts the endpoint never pays for it.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type * as Types from "@modelcontextprotocol/sdk/types.js";
import type { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { loads } from "../http/endpoint-kit.js";

export interface McpSdk {
  Server: typeof Server;
  Transport: typeof WebStandardStreamableHTTPServerTransport;
  McpError: typeof Types.McpError;
  ErrorCode: typeof Types.ErrorCode;
  ListToolsRequestSchema: typeof Types.ListToolsRequestSchema;
  CallToolRequestSchema: typeof Types.CallToolRequestSchema;
  CancelledNotificationSchema: typeof Types.CancelledNotificationSchema;
  /** The request schemas of the methods this server answers, by method (checked before the SDK sees a request). */
  requestSchemas: Record<string, { safeParse(value: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } } }>;
  isInitializeRequest: typeof Types.isInitializeRequest;
  /** One validator for every server (building one per request would compile Ajv each time). */
  validator: AjvJsonSchemaValidator;
}

let loading: Promise<McpSdk> | undefined;

/** The SDK, loaded once; rejects with the install command when it is not installed. */
export function loadMcpSdk(): Promise<McpSdk> {
  return (loading ??= (async () => {
    try {
      const [server, transport, types, ajv] = await Promise.all([
        import("@modelcontextprotocol/sdk/server/index.js"),
        import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
        import("@modelcontextprotocol/sdk/types.js"),
        import("@modelcontextprotocol/sdk/validation/ajv-provider.js"),
      ]);
      return {
        Server: server.Server,
        Transport: transport.WebStandardStreamableHTTPServerTransport,
        McpError: types.McpError,
        ErrorCode: types.ErrorCode,
        ListToolsRequestSchema: types.ListToolsRequestSchema,
        CallToolRequestSchema: types.CallToolRequestSchema,
        CancelledNotificationSchema: types.CancelledNotificationSchema,
        requestSchemas: {
          initialize: types.InitializeRequestSchema,
          ping: types.PingRequestSchema,
          "tools/list": types.ListToolsRequestSchema,
          "tools/call": types.CallToolRequestSchema,
        },
        isInitializeRequest: types.isInitializeRequest,
        validator: new ajv.AjvJsonSchemaValidator(),
      };
    } catch (err) {
      loading = undefined;
      throw new Error("graphdock/mcp needs the MCP SDK: npm install @modelcontextprotocol/sdk", { cause: err });
    }
  })());
}

/** True when `@modelcontextprotocol/sdk` can be loaded (what `serve` checks before mounting the endpoint). */
export const mcpInstalled = (): Promise<boolean> => loads(loadMcpSdk);
