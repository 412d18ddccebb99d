/**
 * Thread sessions of the v2 protocol (D24): per thread, one event log with sequence numbers, a
 * bounded replay buffer and the subscriptions (SSE connections, WebSocket subscriptions,
 * in-process streams) reading it. The log is fed by the runtime's public API: every run created
 * on a thread that has a session (through a v2 command or the legacy API, by this runtime or
 * another one on the store, seen through `runtime.subscribe`: `run.created`,
 * `run.created.external`) is joined with `runtime.runs.joinStream` and translated
 * (`translate.ts`). Sessions of one runtime are shared by every transport, so clients on SSE,
 * WebSocket and in process observe the same sequence numbers.
 */
import { SubgraphTrees } from "./tree.js";
import type { Run, Runtime, RuntimeClient } from "../runtime/index.js";
import { newToolBook, RunTranslator, channelOf, type RunOutcome, type ToolBook } from "./translate.js";
import type { CommandError, DraftEvent, Namespace, ProtocolEvent, SubscribeFilter } from "./types.js";

/** What the v2 layer needs from a runtime: its public API. */
export type ProtocolRuntime = Pick<Runtime, "client"> & Partial<Pick<Runtime, "subscribe">>;

/** Options of the v2 protocol layer. */
export interface ProtocolV2Options {
  /**
   * Events kept per thread for replay (`since`, reconnects, late subscribers). Default 10,000.
   * A `since` older than the oldest kept event gets the missed-events signal.
   */
  replayBufferSize?: number;
  /**
   * How long a thread session with no subscriber and no run in flight is kept (its replay buffer
   * with it), in ms. Default 300,000 (5 minutes).
   */
  idleSessionMs?: number;
}

export const DEFAULT_REPLAY_BUFFER_SIZE = 10_000;
export const DEFAULT_IDLE_SESSION_MS = 300_000;

/**
 * How long the end of a finished run is held back from a reader that subscribes without `since`
 * after other readers were given it (see `ThreadSession.subscribe`): long enough for the command
 * a client sends as it opens its stream to start its run.
 */
export const END_HOLD_MS = 250;

/** The stream modes requested for runs started through `run.start` (all the translator reads). */
export const V2_STREAM_MODES = ["values", "updates", "messages-tuple", "custom", "tasks", "checkpoints"] as const;

const normalizeSegment = (s: string) => {
  const i = s.indexOf(":");
  return i === -1 ? s : s.slice(0, i);
};

function isPrefixMatch(ns: Namespace, prefix: Namespace): boolean {
  if (prefix.length > ns.length) return false;
  return prefix.every((seg, i) => ns[i] === seg || (!seg.includes(":") && normalizeSegment(ns[i]!) === seg));
}

/** Whether `event` passes `filter` (channels, namespace prefixes, depth), as the SDK matches. */
export function matchesFilter(event: ProtocolEvent, filter: SubscribeFilter): boolean {
  const channel = channelOf(event.method, event.params.data);
  if (channel === undefined) return false;
  if (!(filter.channels.includes(channel) || (channel.startsWith("custom:") && filter.channels.includes("custom")))) return false;
  const prefixes = filter.namespaces;
  if (!prefixes || prefixes.length === 0) return filter.depth === undefined || event.params.namespace.length <= filter.depth;
  return prefixes.some((p) => isPrefixMatch(event.params.namespace, p) && (filter.depth === undefined || event.params.namespace.length - p.length <= filter.depth));
}

const serialized = new WeakMap<ProtocolEvent, string>();

/** The event's JSON text, computed once however many readers it has. */
export function wire(event: ProtocolEvent): string {
  let text = serialized.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    serialized.set(event, text);
  }
  return text;
}

/** A reader of a session: gets matching events, replayed then live. */
export interface Sink {
  filter: SubscribeFilter;
  deliver(event: ProtocolEvent): void;
}

/** The missed-events signal: an error message with `id: null` (the SDK surfaces it via `onError`). */
export function missedSignal(since: number, oldest: number | undefined, missed: number): CommandError {
  return {
    type: "error",
    id: null,
    error: "invalid_argument",
    message:
      `graphdock: events after seq ${since} are no longer buffered (${missed} missed; oldest kept is ` +
      `${oldest ?? "none"}). Reload the thread state (state.get or GET /threads/{id}/state) and subscribe again without since.`,
    missed_events: missed,
    ...(oldest !== undefined ? { oldest_seq: oldest } : {}),
  };
}

type Outcome = RunOutcome & { graph?: string };

/** A run a session reads. */
interface RunEntry {
  translator: RunTranslator;
  started: boolean;
  /** Its start came while an earlier run was still being read: published once that one ended. */
  startHeld?: boolean;
  /** Executed by another runtime on the store: its end is read from its record. */
  external: boolean;
  /** Settles when the runs attached before it have ended (absent: none was unfinished). */
  prior: Promise<void> | undefined;
  /** Marks this run's end as published. */
  done: () => void;
}

/** A root `completed` / `failed` / `interrupted` lifecycle event (what ends a run for the SDK). */
function endOfRun(event: ProtocolEvent): { runId: string | undefined } | undefined {
  if (event.method !== "lifecycle" || event.params.namespace.length !== 0) return undefined;
  const data = event.params.data as { event?: unknown; run_id?: unknown };
  if (data.event !== "completed" && data.event !== "failed" && data.event !== "interrupted") return undefined;
  return { runId: typeof data.run_id === "string" ? data.run_id : undefined };
}

/** A reader that throws (a transport torn down mid-write) must not stop the others. */
function deliver(sink: Sink, event: ProtocolEvent) {
  try {
    sink.deliver(event);
  } catch {
    // the transport closes that reader
  }
}

/** All sessions of one runtime. */
export class SessionRegistry {
  private static readonly byRuntime = new WeakMap<object, SessionRegistry>();

  /** The registry of `runtime` (one per runtime object, shared by every transport). */
  static of(runtime: ProtocolRuntime, options: ProtocolV2Options = {}): SessionRegistry {
    let r = SessionRegistry.byRuntime.get(runtime);
    if (!r) {
      r = new SessionRegistry(runtime, options);
      SessionRegistry.byRuntime.set(runtime, r);
    }
    return r;
  }

  readonly sessions = new Map<string, ThreadSession>();
  readonly bufferSize: number;
  readonly idleMs: number;
  private readonly outcomes = new Map<string, Outcome>();
  private readonly outcomeWaiters = new Map<string, Array<(o: Outcome) => void>>();
  /** Commands being handled, per thread (subscriptions without `since` wait for them). */
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();
  readonly live: boolean;

  private constructor(
    readonly runtime: ProtocolRuntime,
    options: ProtocolV2Options,
  ) {
    this.bufferSize = Math.max(1, options.replayBufferSize ?? DEFAULT_REPLAY_BUFFER_SIZE);
    this.idleMs = options.idleSessionMs ?? DEFAULT_IDLE_SESSION_MS;
    this.live = typeof runtime.subscribe === "function";
    if (runtime.subscribe) {
      runtime.subscribe((event) => {
        if (event.type === "run.created") this.sessions.get(event.run.thread_id)?.attachRun(event.run);
        // Another runtime on the store created it: joined from its first retained event.
        else if (event.type === "run.created.external") this.sessions.get(event.run.thread_id)?.attachRun(event.run, true, true);
        else if (event.type === "run.started") this.sessions.get(event.run.thread_id)?.runStarted(event.run.run_id);
        else if (event.type === "run.finished") this.finished(event.run, event.error);
      });
    }
  }

  /**
   * The session of `threadId`, made on first use. The session joins runs with the client of the
   * latest caller known to read the thread (`verified`); an unverified caller (a command on a
   * thread it may not see) never replaces it.
   */
  session(threadId: string, client: RuntimeClient, verified = false): ThreadSession {
    let s = this.sessions.get(threadId);
    if (!s) {
      s = new ThreadSession(this, threadId, client);
      this.sessions.set(threadId, s);
    } else if (verified) s.client = client;
    return s;
  }

  /**
   * The session of `threadId` once it has joined the runs already in flight on the thread
   * (started before the session existed, e.g. by the legacy API or before a reload). Such a run
   * is seen from the moment of the join on (from its start when it is `streamResumable`).
   */
  async ready(threadId: string, client: RuntimeClient, verified = false): Promise<ThreadSession> {
    const s = this.session(threadId, client, verified);
    await s.synced;
    return s;
  }

  private finished(run: Run, error?: { error: string; message: string }) {
    const session = this.sessions.get(run.thread_id);
    if (!session?.tracks(run.run_id)) return;
    const outcome: Outcome = { status: run.status, ...(error ? { error } : {}) };
    const waiters = this.outcomeWaiters.get(run.run_id);
    this.outcomeWaiters.delete(run.run_id);
    if (waiters) for (const w of waiters) w(outcome);
    else {
      this.outcomes.set(run.run_id, outcome);
      // Only kept until the run's join drains; bounded in case it never does.
      if (this.outcomes.size > 1000) this.outcomes.delete(this.outcomes.keys().next().value!);
    }
  }

  /**
   * How run `runId` ended: from `run.finished`, or the run record when that was missed or the run
   * executed elsewhere (`external`: its record is final once its event log ended).
   */
  outcome(threadId: string, runId: string, client: RuntimeClient, external = false): Promise<Outcome | undefined> {
    const known = this.outcomes.get(runId);
    if (known) {
      this.outcomes.delete(runId);
      return Promise.resolve(known);
    }
    const fromRecord = async () => {
      try {
        const run = await client.runs.get(threadId, runId);
        return run.status === "pending" || run.status === "running" ? undefined : { status: run.status };
      } catch {
        return undefined;
      }
    };
    if (!this.live || external) return fromRecord();
    return new Promise((resolve) => {
      const list = this.outcomeWaiters.get(runId) ?? [];
      this.outcomeWaiters.set(runId, list);
      let done = false;
      const settle = (o: Outcome | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(o);
      };
      list.push(settle);
      // The join drained but run.finished has not come yet: wait a little, then read the record.
      const timer = setTimeout(() => {
        const l = this.outcomeWaiters.get(runId);
        if (l) {
          const i = l.indexOf(settle);
          if (i >= 0) l.splice(i, 1);
          if (l.length === 0) this.outcomeWaiters.delete(runId);
        }
        void fromRecord().then(settle);
      }, 2000);
    });
  }

  /**
   * Runs `work` (one command on `threadId`) so that subscriptions opened meanwhile wait for it
   * (`settled`). The SDK's `input.respond` sends its command and opens its stream at the same
   * moment; a stream whose replay was computed before the command's run started would begin with
   * the end of the previous (interrupted) run, which `ThreadStream` takes for the end of the run
   * the answer starts (its `output` resolving with the state before the answer).
   */
  track<T>(threadId: string, work: Promise<T>): Promise<T> {
    let set = this.inFlight.get(threadId);
    if (!set) this.inFlight.set(threadId, (set = new Set()));
    set.add(work);
    const done = () => {
      set.delete(work);
      if (set.size === 0 && this.inFlight.get(threadId) === set) this.inFlight.delete(threadId);
    };
    work.then(done, done);
    return work;
  }

  /** Resolves once the commands on `threadId` being handled now have been answered. */
  async settled(threadId: string): Promise<void> {
    const set = this.inFlight.get(threadId);
    if (set) await Promise.allSettled([...set]);
  }

  drop(session: ThreadSession) {
    if (this.sessions.get(session.threadId) === session) this.sessions.delete(session.threadId);
  }
}

/** One thread's event log and readers. */
export class ThreadSession {
  /** Distinguishes this log's event ids from those of an earlier session of the same thread. */
  readonly epoch = Math.random().toString(36).slice(2, 8);
  seq = 0;
  private buffer: ProtocolEvent[] = [];
  /** Replays without `since` start here: the first event of the latest run. */
  private replayFrom = 1;
  /** The latest root end-of-run lifecycle event, and whether a reader was given it. */
  private lastEnd: { seq: number; runId: string | undefined; given: boolean } | undefined;
  /** The run a command started, until a reader without `since` comes after the command's answer. */
  private pickup: string | undefined;
  /** Runs attached so far (a held end of run is dropped once another run attaches). */
  private attached = 0;
  private readonly sinks = new Set<Sink>();
  private readonly runs = new Map<string, RunEntry>();
  /**
   * Settles when every run attached so far has published its end. A thread executes its runs one
   * at a time, so the log shows them one after the other: a run attached while an earlier one is
   * still being read (its end still to come from its record, say) publishes nothing until then.
   */
  private lastRunDone: Promise<void> = Promise.resolve();
  private unfinished = 0;
  readonly tools: ToolBook = newToolBook();
  /** The assistant of the latest run seen (for `input.respond`, which names none). */
  lastAssistantId: string | undefined;
  lastStatus: "idle" | "running" | "completed" | "failed" | "interrupted" = "idle";
  /** The run attached last (what `agent.getTree` describes without a `run_id`). */
  lastRunId: string | undefined;
  /** The subgraph namespaces each recent run opened (`agent.getTree`). */
  readonly trees = new SubgraphTrees();
  /** The thread's latest root values (from the log, or its state when the session was made). */
  private lastValues: unknown;
  private snapshots = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  /** Settles once the runs in flight when the session was made are joined. */
  readonly synced: Promise<void>;

  constructor(
    readonly registry: SessionRegistry,
    readonly threadId: string,
    public client: RuntimeClient,
  ) {
    this.scheduleIdle();
    this.synced = this.joinInFlight();
  }

  private async joinInFlight() {
    try {
      const [running, pending] = await Promise.all([
        this.client.runs.list(this.threadId, { status: "running", limit: 10 }),
        this.client.runs.list(this.threadId, { status: "pending", limit: 10 }),
      ]);
      for (const run of [...running, ...pending].reverse()) this.attachRun(run, true);
      if (running.length + pending.length > 0 || this.seq > 0) return;
      const state = await this.client.threads.getState(this.threadId);
      if (state.checkpoint?.checkpoint_id && this.lastValues === undefined) this.lastValues = state.values;
      // A thread waiting on a human: the new log starts with its pending interrupts, so readers
      // (and a resume from a client that reloaded) know what to answer.
      const interrupts = state.interrupts ?? [];
      if (interrupts.length === 0 || this.seq > 0) return;
      this.replayFrom = this.seq + 1;
      this.lastStatus = "interrupted";
      this.publish([
        ...interrupts.map((i): DraftEvent => ({ method: "input.requested", namespace: [], data: { interrupt_id: i.id, payload: i.value } })),
        { method: "lifecycle", namespace: [], data: { event: "interrupted" } } satisfies DraftEvent,
      ]);
    } catch {
      // no thread yet (run.start creates it) or not readable: nothing in flight to join
    }
  }

  tracks(runId: string) {
    return this.runs.has(runId);
  }

  get activeRunIds(): string[] {
    return [...this.runs.keys()];
  }

  /** The oldest sequence number still buffered. */
  get oldestSeq(): number | undefined {
    return this.buffer[0]?.seq;
  }

  eventId(seq: number) {
    return `${this.epoch}.${seq}`;
  }

  /** Parses an event id of this session into its seq (undefined: another session's or malformed). */
  seqOf(eventId: string): number | undefined {
    const [epoch, seq] = eventId.split(".");
    const n = Number(seq);
    return epoch === this.epoch && Number.isInteger(n) ? n : undefined;
  }

  /**
   * Joins the events of `run` (a run created on this thread; `external`: by another runtime on
   * the store, its end read from its record). Idempotent.
   */
  attachRun(run: Pick<Run, "run_id" | "assistant_id" | "status">, late = false, external = false) {
    if (this.runs.has(run.run_id)) return;
    const translator = new RunTranslator(run.run_id, this.tools);
    const prior = this.unfinished > 0 ? this.lastRunDone : undefined;
    let done!: () => void;
    this.lastRunDone = new Promise<void>((resolve) => (done = resolve));
    this.unfinished++;
    const entry: RunEntry = { translator, started: false, external, prior, done };
    this.runs.set(run.run_id, entry);
    this.attached++;
    this.lastAssistantId = run.assistant_id;
    this.lastRunId = run.run_id;
    this.cancelIdle();
    // Attach synchronously (joinStream attaches on its first next()), so no event is missed.
    const events = this.client.runs.joinStream(this.threadId, run.run_id, late ? { lastEventId: "-1" } : {});
    const first = events.next();
    this.replayFrom = this.seq + 1;
    if (run.status === "running") this.runStarted(run.run_id);
    void this.pump(run.run_id, first, events);
  }

  /** `runId` was started by a command that is being answered: its client subscribes next. */
  awaitPickup(runId: string) {
    this.pickup = runId;
  }

  runStarted(runId: string) {
    const entry = this.runs.get(runId);
    if (!entry || entry.started) return;
    if (entry.prior) {
      entry.startHeld = true;
      return;
    }
    entry.started = true;
    this.lastStatus = "running";
    this.publish(entry.translator.start());
  }

  private async pump(runId: string, first: Promise<IteratorResult<{ event: string; data: unknown }>>, events: AsyncGenerator<{ event: string; data: unknown }>) {
    const entry = this.runs.get(runId)!;
    if (entry.prior) {
      first.catch(() => undefined); // read below, once the earlier runs ended
      await entry.prior;
      entry.prior = undefined;
      if (entry.startHeld) this.runStarted(runId);
    }
    try {
      for (let r = await first; !r.done; r = await events.next()) {
        if (r.value.event === "metadata") continue;
        this.runStarted(runId);
        const drafts = entry.translator.translate(r.value.event, r.value.data);
        this.trees.note(runId, drafts);
        this.publish(drafts);
      }
    } catch {
      // The run vanished (deleted) or cannot be read: end it below from its record.
    }
    const outcome = await this.registry.outcome(this.threadId, runId, this.client, entry.external);
    this.runStarted(runId);
    const closing = entry.translator.finish(outcome);
    this.trees.note(runId, closing);
    const last = closing[closing.length - 1]?.data as { event?: string } | undefined;
    if (last?.event) this.lastStatus = last.event as ThreadSession["lastStatus"];
    this.publish(closing);
    this.runs.delete(runId);
    this.unfinished--;
    entry.done();
    this.scheduleIdle();
  }

  /** Stamps, buffers and fans out translated events. */
  publish(drafts: DraftEvent[]) {
    const timestamp = Date.now();
    for (const d of drafts) {
      const seq = ++this.seq;
      const event: ProtocolEvent = {
        type: "event",
        event_id: this.eventId(seq),
        seq,
        method: d.method,
        params: { namespace: d.namespace, timestamp, ...(d.node !== undefined ? { node: d.node } : {}), data: d.data },
      };
      if (d.method === "values" && d.namespace.length === 0) this.lastValues = d.data;
      this.buffer.push(event);
      if (this.buffer.length > this.registry.bufferSize) this.buffer.splice(0, this.buffer.length - this.registry.bufferSize);
      let given = false;
      for (const sink of this.sinks) if (matchesFilter(event, sink.filter)) (deliver(sink, event), (given = true));
      const end = endOfRun(event);
      if (end) this.lastEnd = { seq: event.seq, runId: end.runId, given };
    }
  }

  /**
   * Adds a reader. Replays buffered matching events first: after `since` when given, else from
   * the first event of the latest run. Returns the missed-events signal when `since` is older than
   * the buffer (the replay then starts at the oldest kept event), and the number replayed.
   */
  subscribe(sink: Sink, since?: number): { close: () => void; replayed: number; missed?: CommandError } {
    let missed: CommandError | undefined;
    let from = this.replayFrom;
    if (since !== undefined) {
      from = since + 1;
      const oldest = this.oldestSeq;
      if (since > this.seq) missed = missedSignal(since, oldest, 0);
      else if (oldest !== undefined && from < oldest) missed = missedSignal(since, oldest, oldest - from);
      else if (oldest === undefined && since < this.seq) missed = missedSignal(since, oldest, this.seq - since);
    }
    let replay = this.buffer.filter((e) => e.seq >= from && matchesFilter(e, sink.filter));
    let held: ProtocolEvent | undefined;
    if (since === undefined) {
      // The end of a finished run goes at once to the client that started the run and subscribes
      // once its command answered (`pickup`), and to the first reader after a run nobody watched.
      // Any other reader without `since` gets it only after END_HOLD_MS, and not at all when a
      // run starts meanwhile: a client that opens its stream as it answers an interrupt (the
      // SDK's `input.respond`) would otherwise take the interrupted run's end for the end of the
      // run its answer starts (ThreadStream resolves `output` on the first root end it sees). A
      // client reconnecting after its connection dropped as the run ended still gets it.
      const end = this.lastEnd;
      const picking = this.pickup !== undefined && this.pickup === end?.runId;
      if (end?.given && this.runs.size === 0 && !picking) {
        held = replay.find((e) => e.seq === end.seq);
        if (held) replay = replay.filter((e) => e !== held);
      }
      this.pickup = undefined;
      if (end && replay.some((e) => e.seq === end.seq)) end.given = true;
    }
    // `values` subscribers start from the current state (protocol 12) when the replay has none.
    if (since === undefined && this.lastValues !== undefined && !replay.some((e) => e.method === "values" && e.params.namespace.length === 0)) {
      const snapshot: ProtocolEvent = {
        type: "event",
        event_id: `${this.eventId(this.seq)}.s${++this.snapshots}`,
        seq: this.seq,
        method: "values",
        params: { namespace: [], timestamp: Date.now(), data: this.lastValues },
      };
      if (matchesFilter(snapshot, sink.filter)) replay.unshift(snapshot);
    }
    for (const event of replay) deliver(sink, event);
    const replayed = replay.length;
    this.sinks.add(sink);
    this.cancelIdle();
    let holdTimer: ReturnType<typeof setTimeout> | undefined;
    if (held) {
      const end = held;
      const attached = this.attached;
      holdTimer = setTimeout(() => {
        if (this.sinks.has(sink) && this.attached === attached) deliver(sink, end);
      }, END_HOLD_MS);
      (holdTimer as { unref?: () => void }).unref?.();
    }
    return {
      replayed,
      ...(missed ? { missed } : {}),
      close: () => {
        clearTimeout(holdTimer);
        this.sinks.delete(sink);
        this.scheduleIdle();
      },
    };
  }

  /** Replays buffered events after `seq` to `sink` (WebSocket `subscription.reconnect`). */
  replayAfter(sink: Sink, seq: number): number {
    let n = 0;
    for (const event of this.buffer) if (event.seq > seq && matchesFilter(event, sink.filter)) (deliver(sink, event), n++);
    return n;
  }

  get readerCount() {
    return this.sinks.size;
  }

  private cancelIdle() {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private scheduleIdle() {
    if (this.sinks.size > 0 || this.runs.size > 0) return;
    this.cancelIdle();
    const timer = setTimeout(() => {
      if (this.sinks.size === 0 && this.runs.size === 0) this.registry.drop(this);
    }, this.registry.idleMs);
    (timer as { unref?: () => void }).unref?.();
    this.idleTimer = timer;
  }
}
