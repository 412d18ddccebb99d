/**
 * Wire types of the Agent Streaming Protocol ("v2", docs/protocol-v2.md), as the official SDK's
 * `client.threads.stream()` sends and reads them (snake_case fields). Only what graphdock
 * produces or accepts is typed here; payloads the protocol leaves open stay `unknown`.
 */

export type Namespace = string[];

/** A client -> server command. */
export interface ProtocolCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

export type ProtocolErrorCode =
  | "invalid_argument"
  | "unknown_command"
  | "unknown_error"
  | "no_such_run"
  | "no_such_subscription"
  | "no_such_namespace"
  | "no_such_interrupt"
  | "no_such_checkpoint"
  | "permission_denied"
  | "not_supported";

export interface CommandSuccess {
  type: "success";
  id: number;
  result: Record<string, unknown>;
  meta?: { applied_through_seq?: number };
}

export interface CommandError {
  type: "error";
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  /** graphdock extension on the missed-events signal (`id: null`): how many events were lost. */
  missed_events?: number;
  /** graphdock extension on the missed-events signal: the oldest sequence number still buffered. */
  oldest_seq?: number;
}

export type Channel = string;

/** The kinds of server -> client events graphdock sends (the protocol's event methods). */
export type EventMethod = "lifecycle" | "messages" | "tools" | "input.requested" | "input.answered" | "values" | "updates" | "checkpoints" | "tasks" | "custom";

/** One server -> client event, with its per-thread sequence number and id. */
export interface ProtocolEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: EventMethod;
  params: {
    namespace: Namespace;
    timestamp: number;
    node?: string;
    data: unknown;
  };
}

export type ProtocolMessage = CommandSuccess | CommandError | ProtocolEvent;

/**
 * An event as transports hand it to a client: a `ProtocolEvent` whose `data` is the channel's
 * payload typed as loosely as the protocol's own extensible payloads (`any`), so that it is
 * assignable to the SDK's precise event union (`Message` of `@langchain/protocol`), which
 * discriminates on `method`.
 */
export type WireEvent = Omit<ProtocolEvent, "params"> & {
  params: Omit<ProtocolEvent["params"], "data"> & {
    // `any`: the SDK types each channel's payload precisely; graphdock's are checked by the contract tests.
    data: any;
  };
};

/** What a transport delivers to a client: command answers and events. */
export type WireMessage = CommandSuccess | CommandError | WireEvent;

/** A subscription filter (`subscription.subscribe` params; the SSE request body adds `since`). */
export interface SubscribeFilter {
  channels: Channel[];
  namespaces?: Namespace[];
  depth?: number;
}

/** An event before it gets a sequence number: what the translator produces. */
export interface DraftEvent {
  method: EventMethod;
  namespace: Namespace;
  node?: string;
  data: unknown;
}
