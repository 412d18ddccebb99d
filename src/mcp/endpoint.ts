/**
 * The MCP endpoint (D32, D100-D103): the runtime's assistants as tools over stateless Streamable
 * HTTP, on the official `@modelcontextprotocol/sdk` (loaded at the first request). Each request
 * gets its own SDK `Server` and transport bound to its caller, so any process serving the same
 * store answers any request: no session state, no affinity.
 */
import type { HttpEndpoint } from "../http/endpoints.js";
import { authRefusal, callerOf, faultReporter, jsonRpcError, readJsonBody, type BodyLimits } from "../http/endpoint-kit.js";
import type { HttpClient } from "../http/types.js";
import { GraphdockError } from "../errors.js";
import { UUID_RE } from "../ids.js";
import { isPlainObject } from "../json.js";
import { CALL_METADATA_KEY, callKey, CallsInFlight } from "./calls.js";
import { jsonOrStream } from "./framing.js";
import { originAllowed } from "./origin.js";
import { findTool, listTools, THREAD_ARGUMENT, toolError, toolResult, type ToolResult } from "./tools.js";
import { loadMcpSdk, type McpSdk } from "./sdk.js";

/** Options of {@link mcpEndpoint}. */
export interface McpEndpointOptions extends BodyLimits {
  /** Where it answers, below the handler's base path (default `/mcp`). */
  path?: string;
  /**
   * Origins a browser may call it from (`Origin` header; `"*"` allows any). Default: loopback
   * origins only (`http://localhost:<port>`, `127.0.0.1`, `[::1]`), the DNS-rebinding guard the
   * MCP specification asks for. Requests without `Origin` (not from a browser) are not affected.
   */
  allowedOrigins?: readonly string[];
  /** `serverInfo` of the `initialize` answer (default `{ name: "graphdock", version: "1.0.0" }`). */
  serverInfo?: { name: string; version: string };
  /** Called once for each internal fault (default: `console.error`), as the fetch handler's `onError`. */
  onError?: (error: unknown, request?: Request) => void;
}

/**
 * The MCP endpoint: mount it with `createFetchHandler(runtime, { endpoints: [mcpEndpoint()] })`
 * (or `serve`, which mounts it when `@modelcontextprotocol/sdk` is installed). Every assistant
 * the caller may see is a tool; a call runs it (on a fresh thread, or on the thread its
 * `thread_id` argument names) and answers its final values, the last AI message as text.
 */
export function mcpEndpoint(options: McpEndpointOptions = {}): HttpEndpoint {
  const path = options.path ?? "/mcp";
  const calls = new CallsInFlight();
  const report = faultReporter(options.onError);
  return {
    name: "mcp",
    paths: [path],
    async fetch(request, context) {
      if (request.method !== "POST") {
        // Stateless: no stream of server-initiated messages (GET) and no session to end (DELETE).
        return jsonRpcError(405, -32000, `Method ${request.method} is not allowed: this MCP server is stateless and answers POST only`, new Headers({ allow: "POST" }));
      }
      if (!originAllowed(request, options.allowedOrigins)) {
        return jsonRpcError(403, -32000, `Origin ${request.headers.get("origin")} is not allowed to call this MCP server`);
      }
      let client: HttpClient;
      try {
        client = await callerOf(request, context);
      } catch (err) {
        const refusal = authRefusal(err);
        if (!refusal) throw err;
        return jsonRpcError(refusal.status, -32001, refusal.message, refusal.headers);
      }
      const body = await readJsonBody(request, options);
      if ("refused" in body) return jsonRpcError(body.refused.status, body.refused.code, body.refused.message);
      const sdk = await loadMcpSdk();
      const invalid = invalidParams(sdk, body.value);
      if (invalid) return jsonRpcError(400, sdk.ErrorCode.InvalidParams, invalid);
      return serveOne(sdk, request, client, body.value, { calls, options, report: (err) => report(err, request) });
    },
  };
}

interface Shared {
  calls: CallsInFlight;
  options: McpEndpointOptions;
  report: (err: unknown) => void;
}

/** Answers one request with an SDK server of its own, bound to the request's caller. */
async function serveOne(sdk: McpSdk, request: Request, client: HttpClient, message: unknown, shared: Shared): Promise<Response> {
  const server = new sdk.Server(shared.options.serverInfo ?? { name: "graphdock", version: "1.0.0" }, {
    capabilities: { tools: { listChanged: false } },
    jsonSchemaValidator: sdk.validator,
  });
  /** Runtime faults become an opaque internal error (reported); what the caller did wrong is said. */
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof sdk.McpError) throw err;
      if (GraphdockError.is(err)) {
        const code = err.code === "invalid_input" || err.code === "not_found" ? sdk.ErrorCode.InvalidParams : sdk.ErrorCode.InvalidRequest;
        throw new sdk.McpError(code, err.message);
      }
      shared.report(err);
      throw new sdk.McpError(sdk.ErrorCode.InternalError, "Internal error");
    }
  };
  server.setRequestHandler(sdk.ListToolsRequestSchema, () =>
    guard(async () => ({ tools: (await listTools(client)).map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) })),
  );
  const session = request.headers.get("mcp-session-id") ?? undefined;
  server.setRequestHandler(sdk.CallToolRequestSchema, (call, extra) => guard(() => callTool(client, call.params, callKey(session, extra.requestId), shared)));
  // A cancellation names a call of another request (stateless), so it is looked up, not aborted here.
  server.setNotificationHandler(sdk.CancelledNotificationSchema, async (notification) => {
    const { requestId } = notification.params;
    if (requestId === undefined) return;
    try {
      await shared.calls.cancel(client, callKey(session, requestId));
    } catch (err) {
      shared.report(err);
    }
  });
  // The method is checked first: the SDK's check is a schema parse, which fails slowly for every other request.
  const initialize = isPlainObject(message) && message.method === "initialize" && sdk.isInitializeRequest(message);
  const transport = new sdk.Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const answer = transport.handleRequest(request, { parsedBody: message });
  const response = await (isToolCall(message) ? jsonOrStream(answer, shared.report) : answer);
  // A label for the client to echo, so its cancellations name its own calls; no state is kept.
  if (initialize && response.ok) response.headers.set("mcp-session-id", crypto.randomUUID());
  return response;
}

/**
 * Why a request's params do not fit its method, checked with the SDK's own schemas before the SDK
 * sees it (the SDK would answer an internal error for them); undefined when they fit. A batch with
 * one such request is refused whole, so none of it runs.
 */
function invalidParams(sdk: McpSdk, message: unknown): string | undefined {
  for (const m of Array.isArray(message) ? message : [message]) {
    if (!isPlainObject(m) || typeof m.method !== "string" || !("id" in m) || !Object.hasOwn(sdk.requestSchemas, m.method)) continue;
    const checked = sdk.requestSchemas[m.method]!.safeParse(m);
    if (!checked.success) {
      const problems = (checked.error?.issues ?? []).map((i) => `${i.path.map(String).join(".")}: ${i.message}`);
      return `Invalid params of ${m.method}: ${problems.join("; ")}`;
    }
  }
  return undefined;
}

/** A `tools/call` may take long: it streams once it outlasts the JSON answer's wait (src/mcp/framing.ts). */
const isToolCall = (message: unknown) => isPlainObject(message) && message.method === "tools/call";

async function callTool(client: HttpClient, params: { name: string; arguments?: Record<string, unknown> }, key: string, { calls }: Shared): Promise<ToolResult> {
  const tool = await findTool(client, params.name);
  if (!tool) throw new GraphdockError("not_found", `Unknown tool "${params.name}": tools/list names the tools you may call`);
  const { [THREAD_ARGUMENT]: threadArg, ...input } = params.arguments ?? {};
  const threadId = tool.threadArgument ? threadArg : undefined;
  const graphInput = tool.threadArgument ? input : (params.arguments ?? {});
  if (threadId !== undefined && (typeof threadId !== "string" || !UUID_RE.test(threadId))) return toolError(`${THREAD_ARGUMENT} must be a thread id (a UUID)`);
  const call = calls.start(key);
  let runId: string | undefined;
  try {
    const values = await client.runs.wait(threadId ?? null, tool.assistantId, {
      input: graphInput,
      metadata: { [CALL_METADATA_KEY]: key },
      ...(threadId ? { ifNotExists: "create" as const } : {}),
      raiseError: false,
      onRunCreated: ({ run_id, thread_id }) => {
        runId = run_id;
        if (thread_id) call.created({ threadId: thread_id, runId: run_id });
      },
    });
    return toolResult(values, { "graphdock/run_id": runId, ...(threadId ? { "graphdock/thread_id": threadId } : {}) });
  } catch (err) {
    // What the caller got wrong (an input the graph refuses, a thread it may not use) is the
    // tool's error, so a model can read it and try again (the MCP specification's advice).
    if (GraphdockError.is(err) && err.code !== "unauthenticated") return toolError(err.message);
    throw err;
  } finally {
    call.end();
  }
}
