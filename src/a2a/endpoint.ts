/**
 * The A2A endpoint (D32, D104, D105): JSON-RPC 2.0 at `/a2a/{assistant_id}` and the agent card
 * at `/.well-known/agent-card.json?assistant_id=...`, on the official `@a2a-js/sdk` (loaded at
 * the first request). The SDK's transport handlers parse and answer both protocol versions (1.0
 * with `A2A-Version: 1.0`, else 0.3) and call a handler bound to the request's caller.
 */
import type { EndpointContext, HttpEndpoint } from "../http/endpoints.js";
import { authRefusal, callerOf, faultReporter, jsonRpcError, readJsonBody, segmentAfter, type BodyLimits } from "../http/endpoint-kit.js";
import type { HttpClient } from "../http/types.js";
import { GraphdockError } from "../errors.js";
import { isPlainObject } from "../json.js";
import type { Assistant } from "../runtime/types.js";
import { agentCard, agentCardV03, securityFromChallenge, type A2aSecurity } from "./card.js";
import { requestHandler } from "./handler.js";
import { loadA2aSdk, type A2aSdk } from "./sdk.js";

/** Options of {@link a2aEndpoint}. */
export interface A2aEndpointOptions extends BodyLimits {
  /**
   * How the agent cards say callers authenticate. Default: nothing when the runtime accepts
   * anonymous callers, else the scheme its auth handler's `WWW-Authenticate` names (`Bearer`
   * when it names none).
   */
  security?: A2aSecurity;
  /**
   * The public origin the cards point at (e.g. `https://agents.example.com`), when the server is
   * reached through a proxy under another name. Default: the origin of the card's request.
   */
  publicUrl?: string;
  /** Called once for each internal fault (default: `console.error`), as the fetch handler's `onError`. */
  onError?: (error: unknown, request?: Request) => void;
}

const CARD_PATH = "/.well-known/agent-card.json";
const RPC_PATH = "/a2a";

/**
 * The A2A endpoint: mount it with `createFetchHandler(runtime, { endpoints: [a2aEndpoint()] })`
 * (or `serve`, which mounts it when `@a2a-js/sdk` is installed). Each assistant the caller may
 * see is an agent with its own card; its tasks are the runtime's runs, its contexts the threads.
 */
export function a2aEndpoint(options: A2aEndpointOptions = {}): HttpEndpoint {
  let anonymousSecurity: Promise<A2aSecurity | undefined> | undefined;
  /** The security the cards declare: the option, else what refusing an anonymous caller says (asked once). */
  const security = (context: EndpointContext) =>
    options.security
      ? Promise.resolve(options.security)
      : (anonymousSecurity ??= context.runtime.client({ headers: {} }).then(
          () => undefined,
          (err) => (authRefusal(err) ? securityFromChallenge(authRefusal(err)!.headers.get("www-authenticate")) : undefined),
        ));
  const report = faultReporter(options.onError);
  const rpcUrl = (request: Request, context: EndpointContext, assistantId: string) =>
    `${(options.publicUrl ?? new URL(request.url).origin).replace(/\/+$/, "")}${context.basePath}${RPC_PATH}/${encodeURIComponent(assistantId)}`;

  return {
    name: "a2a",
    paths: [RPC_PATH, CARD_PATH],
    async fetch(request, context) {
      const card = context.path === CARD_PATH;
      const assistantId = card ? new URL(request.url).searchParams.get("assistant_id") : segmentAfter(context.path, RPC_PATH);
      const expected = card ? "GET" : "POST";
      if (request.method !== expected && !(card && request.method === "HEAD")) {
        return answer(405, { error: `Method ${request.method} is not allowed here; use ${expected}` }, card, new Headers({ allow: expected }));
      }
      if (!assistantId) {
        const what = card ? "the assistant_id query parameter" : "an assistant id in the path: /a2a/{assistant_id}";
        return answer(card ? 400 : 404, { error: `The agent is named by ${what}` }, card);
      }
      let client: HttpClient;
      let assistant: Assistant;
      try {
        client = await callerOf(request, context);
        assistant = await client.assistants.get(assistantId);
      } catch (err) {
        const refusal = authRefusal(err);
        if (refusal) return answer(refusal.status, { error: refusal.message }, card, refusal.headers);
        if (GraphdockError.is(err, "not_found") || GraphdockError.is(err, "invalid_input")) return answer(404, { error: `No agent ${assistantId} here` }, card);
        throw err;
      }
      const sdk = await loadA2aSdk();
      const url = rpcUrl(request, context, assistant.assistant_id);
      const cardOf = async () => agentCard(assistant, url, await security(context));
      if (card) {
        const v1 = request.headers.get("a2a-version")?.trim().startsWith("1");
        const body = v1 ? sdk.AgentCard.toJSON(await cardOf()) : agentCardV03(assistant, url, await security(context));
        return Response.json(body, { headers: { vary: "A2A-Version" } });
      }
      const body = await readJsonBody(request, options);
      if ("refused" in body) return jsonRpcError(body.refused.status, body.refused.code, body.refused.message);
      let faulted = false;
      const handler = requestHandler({
        sdk,
        client,
        assistantId: assistant.assistant_id,
        card: cardOf,
        report: (err) => {
          faulted = true;
          report(err, request);
        },
      });
      return rpc(sdk, request, body.value, handler, () => faulted);
    },
  };
}

/**
 * An internal error that no fault of ours caused is the SDK failing to read params of the wrong
 * shape (it reads before it checks): the caller's error, answered as invalid params.
 */
function paramsError<E extends { code: number; message: string }>(error: E, method: unknown, faulted: boolean): E | { code: number; message: string } {
  if (error.code !== -32603 || faulted) return error;
  return { code: -32602, message: `Invalid params: they do not have the shape ${typeof method === "string" ? method.slice(0, 100) : "the method"} takes` };
}

/** A card request's refusal is plain JSON; an RPC request's is a JSON-RPC error. */
function answer(status: number, body: { error: string }, card: boolean, headers?: Headers): Response {
  if (!card) return jsonRpcError(status, status === 401 || status === 403 ? -32001 : -32600, body.error, headers);
  const out = new Headers(headers);
  out.set("content-type", "application/json");
  return new Response(JSON.stringify(body), { status, headers: out });
}

type Handler = ReturnType<typeof requestHandler>;

/**
 * Answers one JSON-RPC request with the SDK's transport of the protocol version asked for:
 * `A2A-Version: 1.0` (or, without the header, a 1.0 method name) is 1.0, else 0.3. A streaming
 * method answers SSE, unless it fails before its first event (then a JSON-RPC error).
 */
async function rpc(sdk: A2aSdk, request: Request, message: unknown, handler: Handler, faulted: () => boolean): Promise<Response> {
  const header = request.headers.get("a2a-version")?.trim();
  const method = isPlainObject(message) ? message.method : undefined;
  const v1 = header ? /^1(\.\d+)?$/.test(header) : sdk.isV1JsonRpcMethod(method) && !sdk.isLegacyJsonRpcMethod(method);
  const id = isPlainObject(message) && (typeof message.id === "string" || typeof message.id === "number") ? message.id : null;
  const mapped = v1 ? sdk.JsonRpcTransportHandler.mapToJSONRPCError : sdk.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError;
  const mapError = (err: unknown) => paramsError(mapped(err), method, faulted());
  if (header && !v1 && !/^0\.3(\.\d+)?$/.test(header)) {
    const error = mapError(new sdk.errors.VersionNotSupportedError(`A2A version ${header} is not supported: this agent speaks 1.0 and 0.3`));
    return Response.json({ jsonrpc: "2.0", id, error });
  }
  const transport = v1 ? new sdk.JsonRpcTransportHandler(handler) : new sdk.LegacyJsonRpcTransportHandler(handler);
  const context = new sdk.ServerCallContext({ requestedVersion: v1 ? "1.0" : "0.3" });
  const result = await transport.handle(message as Record<string, unknown>, context);
  if (!(Symbol.asyncIterator in result)) {
    return Response.json(result.error ? { ...result, error: paramsError(result.error as { code: number; message: string }, method, faulted()) } : result);
  }
  const events = result[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await events.next();
  } catch (err) {
    return Response.json({ jsonrpc: "2.0", id, error: mapError(err) });
  }
  const encoder = new TextEncoder();
  const line = (event: unknown) => encoder.encode(`data: ${JSON.stringify(event)}\n\n`);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) controller.enqueue(line(first.value));
    },
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(line(next.value));
      } catch (err) {
        controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: mapError(err) })}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      // The client went away: stop following the run (it goes on; tasks/resubscribe or tasks/get find it).
      await events.return?.(undefined);
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
}
