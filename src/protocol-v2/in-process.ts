/**
 * The v2 protocol in process: an SDK `TransportAdapter` (`AgentServerAdapter`) that speaks to a
 * runtime directly, through the same sessions and command dispatch as the HTTP and WebSocket
 * transports, with no network. The official `ThreadStream` and `@langchain/react`'s
 * `useStream({ transport })` run on it unchanged:
 *
 * It has no `getState`/`getHistory`: `useStream` then reads state through its `client`, which
 * for a page with no network is the SDK `Client` over `createFetchHandler(runtime)` (the adapter's
 * `getState()` takes no thread id and is called before the adapter is bound to the hydrated
 * thread, so the client's `threads.getState(threadId)` is the reliable path).
 *
 * @example
 * const transport = new InProcessTransport(runtime);
 * const thread = client.threads.stream(threadId, { assistantId: "agent", transport });
 * // React, no network:
 * const handler = createFetchHandler(runtime);
 * const client = new Client({ apiUrl: "http://in-page", callerOptions: { fetch: (i, init) => handler(new Request(i, init)) } });
 * useStream({ assistantId: "agent", client, transport });
 */
import { GraphdockError } from "../errors.js";
import type { ClientRequest, RuntimeClient } from "../runtime/index.js";
import { dispatchCommand, filterOf } from "./commands.js";
import { type ProtocolRuntime, type ProtocolV2Options, SessionRegistry, wire } from "./session.js";
import type { CommandError, CommandSuccess, ProtocolCommand, ProtocolEvent, SubscribeFilter, WireMessage } from "./types.js";

export interface InProcessTransportOptions extends ProtocolV2Options {
  /** The thread to bind now (else the SDK binds one with `setThreadId`). */
  threadId?: string;
  /** The caller, as `runtime.client(request)` authenticates it (default: the runtime's default caller). */
  request?: ClientRequest;
}

/** A handle of one filtered event stream (the SDK's `EventStreamHandle`). */
export interface InProcessEventStream {
  events: AsyncIterable<WireMessage>;
  ready: Promise<void>;
  close(): void;
}

/** An unbounded async queue with one consumer. */
export class Queue<T> {
  private items: T[] = [];
  private waiters: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void }> = [];
  private ended = false;
  private failure: Error | undefined;
  push(item: T) {
    if (this.ended) return;
    const w = this.waiters.shift();
    if (w) w.resolve({ done: false, value: item });
    else this.items.push(item);
  }
  /** No more items; with `error`, the consumer's next read rejects with it (after the queued items). */
  end(error?: Error) {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    for (const w of this.waiters.splice(0)) (error ? w.reject(error) : w.resolve({ done: true, value: undefined }));
  }
  next(): Promise<IteratorResult<T>> {
    if (this.items.length) return Promise.resolve({ done: false, value: this.items.shift()! });
    if (this.ended) return this.failure ? Promise.reject(this.failure) : Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
  iterable(onReturn?: () => void): AsyncIterable<T> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => this.next(),
        return: async () => {
          onReturn?.();
          this.end();
          return { done: true, value: undefined };
        },
      }),
    };
  }
}

const withStatus = (err: unknown): Error => {
  const e = err instanceof Error ? err : new Error(String(err));
  if (GraphdockError.is(err)) {
    const status = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403, unavailable: 503 }[err.code];
    Object.assign(e, { status });
  }
  return e;
};

/** The in-process transport: commands and event streams straight to the runtime's sessions. */
export class InProcessTransport {
  threadId: string;
  private readonly registry: SessionRegistry;
  private client: Promise<RuntimeClient> | undefined;
  private readonly streams = new Set<() => void>();
  private main = new Queue<WireMessage>();

  constructor(
    private readonly runtime: ProtocolRuntime,
    private readonly options: InProcessTransportOptions = {},
  ) {
    this.threadId = options.threadId ?? "";
    this.registry = SessionRegistry.of(runtime, options);
  }

  private caller(): Promise<RuntimeClient> {
    return (this.client ??= this.runtime.client(this.options.request ?? {}));
  }

  private bound(): string {
    if (!this.threadId) throw new Error("InProcessTransport has no bound threadId: pass one or let client.threads.stream(threadId, { transport }) bind it.");
    return this.threadId;
  }

  setThreadId(threadId: string): void {
    this.threadId = threadId;
  }

  async open(): Promise<void> {}

  /**
   * Takes any command shape (the SDK's `Command` types its `params` per method, without an index
   * signature); `dispatchCommand` validates the params of each method itself.
   */
  async send(command: { id: number; method: string; params?: object }): Promise<CommandSuccess | CommandError> {
    const { params, ...rest } = command;
    const parsed: ProtocolCommand = { ...rest, ...(params !== undefined ? { params: { ...params } } : {}) };
    return dispatchCommand({ registry: this.registry, threadId: this.bound(), client: await this.caller() }, parsed);
  }

  /** The shared event channel of socket transports; unused here (events come from openEventStream). */
  events(): AsyncIterable<WireMessage> {
    return this.main.iterable();
  }

  openEventStream(params: SubscribeFilter & { since?: number }): InProcessEventStream {
    const threadId = this.bound();
    const queue = new Queue<WireMessage>();
    let sub: { close(): void } | undefined;
    let done = false;
    const close = () => {
      if (done) return;
      done = true;
      sub?.close();
      queue.end();
      this.streams.delete(close);
    };
    this.streams.add(close);
    // Each reader gets its own copy, as over the wire: run values are frozen and shared.
    const ready = (async () => {
      const filter = filterOf(params);
      const client = await this.caller();
      await client.threads.get(threadId);
      // As over HTTP: a stream opened while a command is handled starts after it.
      if (typeof params.since !== "number") await this.registry.settled(threadId);
      const session = await this.registry.ready(threadId, client, true);
      if (done) return;
      const copy = (e: ProtocolEvent) => JSON.parse(wire(e)) as ProtocolEvent;
      const replay: ProtocolEvent[] = [];
      let replaying = true;
      const s = session.subscribe({ filter, deliver: (e) => (replaying ? replay.push(e) : queue.push(copy(e))) }, typeof params.since === "number" ? params.since : undefined);
      sub = s;
      // The missed-events signal comes before what the buffer still holds.
      if (s.missed) queue.push(s.missed);
      for (const e of replay) queue.push(copy(e));
      replaying = false;
    })().catch((err) => {
      const e = withStatus(err);
      queue.end(e);
      this.streams.delete(close);
      throw e;
    });
    ready.catch(() => {});
    return { events: queue.iterable(close), ready, close };
  }

  /**
   * Ends the open event streams. The transport stays usable: `useStream` shares one adapter
   * across the thread streams it opens and closes (`setThreadId` rebinds it).
   */
  async close(): Promise<void> {
    for (const close of [...this.streams]) close();
    this.main.end();
    this.main = new Queue<WireMessage>();
  }
}
