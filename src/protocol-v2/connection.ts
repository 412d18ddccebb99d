/**
 * One WebSocket connection of the v2 protocol, independent of the socket library: commands and
 * events share the connection; subscriptions are in-band (`subscription.subscribe` /
 * `unsubscribe` / `reconnect`), live across runs and end with the connection. `graphdock/node`
 * binds it to `ws`; any other WebSocket server can do the same with `receive`/`close`.
 */
import type { RuntimeClient } from "../runtime/index.js";
import { dispatchCommand, type SubscriptionHost } from "./commands.js";
import { missedSignal, wire, type SessionRegistry, type ThreadSession } from "./session.js";
import type { ProtocolEvent, ProtocolMessage, SubscribeFilter } from "./types.js";

export interface ProtocolConnectionOptions {
  registry: SessionRegistry;
  threadId: string;
  /** The connection's caller. */
  client: RuntimeClient;
  /**
   * Whether the caller may read the thread (false: the thread does not exist yet). Until a check
   * succeeds (it is retried after each command, e.g. once run.start created the thread), events
   * are held back, so a caller never sees events of a thread it cannot read.
   */
  verified: boolean;
  /** Sends one JSON text frame. */
  send(text: string): void;
}

export class ProtocolConnection {
  private readonly subs = new Map<string, { filter: SubscribeFilter; close(): void; lastSeq: number }>();
  private nextSub = 1;
  private closed = false;
  private session: ThreadSession | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private verified: boolean;
  private held: ProtocolEvent[] = [];

  constructor(private readonly o: ProtocolConnectionOptions) {
    this.verified = o.verified;
  }

  private write(message: ProtocolMessage) {
    if (this.closed) return;
    if (message.type === "event" && !this.verified) return void this.held.push(message);
    this.o.send(message.type === "event" ? wire(message) : JSON.stringify(message));
  }

  private async verify() {
    if (this.verified) return;
    try {
      await this.o.client.threads.get(this.o.threadId);
    } catch {
      return;
    }
    this.verified = true;
    if (this.session) this.session.client = this.o.client;
    for (const e of this.held.splice(0)) this.write(e);
  }

  private host(session: ThreadSession): SubscriptionHost {
    return {
      subscribe: (filter) => {
        const id = `sub-${this.nextSub++}`;
        const entry = { filter, close: () => {}, lastSeq: 0 };
        const deliver = (e: ProtocolEvent) => {
          entry.lastSeq = e.seq;
          this.write(e);
        };
        const s = session.subscribe({ filter, deliver });
        entry.close = s.close;
        this.subs.set(id, entry);
        return { subscription_id: id, replayed_events: s.replayed };
      },
      unsubscribe: (id) => {
        const entry = this.subs.get(id);
        if (!entry) return false;
        entry.close();
        this.subs.delete(id);
        return true;
      },
      reconnect: ({ last_event_id, subscriptions }) => {
        const since = last_event_id ? session.seqOf(last_event_id) : undefined;
        const oldest = session.oldestSeq;
        const restored = since !== undefined && (oldest === undefined ? since >= session.seq : since + 1 >= oldest);
        const ids = subscriptions ?? [...this.subs.keys()];
        let replayed = 0;
        for (const id of ids) {
          const entry = this.subs.get(id);
          if (entry) replayed += session.replayAfter({ filter: entry.filter, deliver: (e) => this.write(e) }, since ?? 0);
        }
        const missed = restored ? 0 : since === undefined ? session.seq : Math.max(0, (oldest ?? session.seq + 1) - since - 1);
        if (!restored) this.write(missedSignal(since ?? -1, oldest, missed));
        return {
          restored,
          missed_events: missed,
          replayed_events: replayed,
          current_namespaces: [{ namespace: [], status: session.activeRunIds.length ? "running" : session.lastStatus === "idle" ? "completed" : session.lastStatus }],
        };
      },
    };
  }

  /** Handles one text frame from the client. Commands are answered in order. */
  receive(text: string): void {
    let command: unknown;
    try {
      command = JSON.parse(text);
    } catch {
      this.write({ type: "error", id: null, error: "invalid_argument", message: "a frame must be one JSON command" });
      return;
    }
    this.chain = this.chain.then(async () => {
      if (this.closed) return;
      this.session ??= await this.o.registry.ready(this.o.threadId, this.o.client, this.verified);
      const response = await dispatchCommand(
        { registry: this.o.registry, threadId: this.o.threadId, client: this.o.client, subscriptions: this.host(this.session) },
        command,
      );
      await this.verify();
      this.write(response);
    });
  }

  /** The socket closed: every subscription of the connection ends. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.subs.values()) entry.close();
    this.subs.clear();
  }
}
