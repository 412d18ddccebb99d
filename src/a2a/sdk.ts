/**
 * The parts of `@a2a-js/sdk` (1.x) the A2A endpoint uses, imported at the first request (D101):
 * the SDK is an optional peer dependency, so neither the core nor `graphdock/http` loads it. Its
 * JSON-RPC transport handlers speak A2A 1.0 and, through its v0.3 compatibility layer, 0.3.
 */
import type * as Root from "@a2a-js/sdk";
import type * as Server from "@a2a-js/sdk/server";
import type * as Legacy from "@a2a-js/sdk/compat/v0_3/server";
import type * as Compat from "@a2a-js/sdk/compat/v0_3";
import type * as Errors from "@a2a-js/sdk/errors";
import { loads } from "../http/endpoint-kit.js";

export interface A2aSdk {
  TaskState: typeof Root.TaskState;
  Role: typeof Root.Role;
  AgentCard: typeof Root.AgentCard;
  JsonRpcTransportHandler: typeof Server.JsonRpcTransportHandler;
  LegacyJsonRpcTransportHandler: typeof Legacy.LegacyJsonRpcTransportHandler;
  ServerCallContext: typeof Server.ServerCallContext;
  isLegacyJsonRpcMethod: typeof Compat.isLegacyJsonRpcMethod;
  isV1JsonRpcMethod: typeof Compat.isV1JsonRpcMethod;
  errors: Pick<
    typeof Errors,
    | "TaskNotFoundError"
    | "TaskNotCancelableError"
    | "UnsupportedOperationError"
    | "ContentTypeNotSupportedError"
    | "RequestMalformedError"
    | "PushNotificationNotSupportedError"
    | "ExtendedAgentCardNotConfiguredError"
    | "VersionNotSupportedError"
    | "A2AError"
  >;
}

let loading: Promise<A2aSdk> | undefined;

/** The SDK, loaded once; rejects with the install command when it is not installed. */
export function loadA2aSdk(): Promise<A2aSdk> {
  return (loading ??= (async () => {
    try {
      const [root, server, legacy, compat, errors] = await Promise.all([
        import("@a2a-js/sdk"),
        import("@a2a-js/sdk/server"),
        import("@a2a-js/sdk/compat/v0_3/server"),
        import("@a2a-js/sdk/compat/v0_3"),
        import("@a2a-js/sdk/errors"),
      ]);
      return {
        TaskState: root.TaskState,
        Role: root.Role,
        AgentCard: root.AgentCard,
        JsonRpcTransportHandler: server.JsonRpcTransportHandler,
        LegacyJsonRpcTransportHandler: legacy.LegacyJsonRpcTransportHandler,
        ServerCallContext: server.ServerCallContext,
        isLegacyJsonRpcMethod: compat.isLegacyJsonRpcMethod,
        isV1JsonRpcMethod: compat.isV1JsonRpcMethod,
        errors,
      };
    } catch (err) {
      loading = undefined;
      throw new Error("graphdock/a2a needs the A2A SDK: npm install @a2a-js/sdk", { cause: err });
    }
  })());
}

/** True when `@a2a-js/sdk` can be loaded (what `serve` checks before mounting the endpoint). */
export const a2aInstalled = (): Promise<boolean> => loads(loadA2aSdk);
