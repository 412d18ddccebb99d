/**
 * The v2 streaming protocol (the Agent Streaming Protocol, D24) over a runtime's public API:
 * thread sessions with sequence-numbered, replayable events; the command dispatch; the HTTP
 * routes (mounted by `graphdock/http`); the connection logic of the WebSocket transport (mounted
 * by `graphdock/node`); and an in-process SDK transport. Core-safe: no Node built-ins.
 */
export { InProcessTransport, type InProcessTransportOptions, type InProcessEventStream } from "./in-process.js";
export { ProtocolConnection, type ProtocolConnectionOptions } from "./connection.js";
export { protocolV2Http, type ProtocolV2HttpOptions } from "./http.js";
export { dispatchCommand, filterOf, type CommandContext, type SubscriptionHost } from "./commands.js";
export {
  SessionRegistry,
  ThreadSession,
  matchesFilter,
  DEFAULT_REPLAY_BUFFER_SIZE,
  DEFAULT_IDLE_SESSION_MS,
  V2_STREAM_MODES,
  type ProtocolRuntime,
  type ProtocolV2Options,
} from "./session.js";
export { RunTranslator, channelOf } from "./translate.js";
export type * from "./types.js";
