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
   * Whether the caller may read the thread (false: the thread does not exist yet, or the caller
   * may not see it). Until a check succeeds (it is made again around each command, e.g. once
   * run.start created the thread), the connection answers as for a thread that does not exist
   * (no replay, no counts), and the events of a command's run are held back until its check
   * (dropped if it fails), so a caller never sees events of a thread it cannot read, nor how many.
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
  /** A command is being handled (events of a thread not verified yet are held meanwhile). */
  private busy = false;

  constructor(private readonly o: ProtocolConnectionOptions) {
    this.verified = o.verified;
  }

  private write(message: ProtocolMessage) {
    if (this.closed) return;
    if (message.type === "event" && !this.verified) {
      if (this.busy) this.held.push(message);
      return;
    }
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
        // Not verified: as on a thread with no events yet (nothing replayed; live ones held as above).
        const s = session.subscribe({ filter, deliver }, this.verified ? undefined : session.seq);
        entry.close = s.close;
        this.subs.set(id, entry);
        return { subscription_id: id, replayed_events: this.verified ? s.replayed : 0 };
      },
      unsubscribe: (id) => {
        const entry = this.subs.get(id);
        if (!entry) return false;
        entry.close();
        this.subs.delete(id);
        return true;
      },
      reconnect: ({ last_event_id, subscriptions }) => {
        if (!this.verified) {
          // As for a thread that does not exist: a fresh session, which knows no event id.
          this.write(missedSignal(-1, undefined, 0));
          return { restored: false, missed_events: 0, replayed_events: 0, current_namespaces: [{ namespace: [], status: "completed" }] };
        }
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
      this.busy = true;
      try {
        this.session ??= await this.o.registry.ready(this.o.threadId, this.o.client, this.verified);
        // Checked before (the thread may have been created meanwhile) and after (this command may create it).
        await this.verify();
        const response = await dispatchCommand(
          { registry: this.o.registry, threadId: this.o.threadId, client: this.o.client, subscriptions: this.host(this.session) },
          command,
        );
        await this.verify();
        this.write(response);
      } finally {
        this.busy = false;
        // Still not readable: what was held is of a thread this caller may not see.
        if (!this.verified) this.held = [];
      }
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
