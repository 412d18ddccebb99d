/**
 * Run events in memory (D20): the `RunEventPort` of the memory store, shared by every runtime
 * that uses the same store instance, and reused by the JSON-file store (events are not persisted
 * there either). Core-safe.
 *
 * - Each run has one log numbered from 0. `publish` is on the hot path of token streaming: it
 *   never awaits and never serializes; it appends (only when someone can still read the event)
 *   and wakes the readers waiting on the log.
 * - A non-resumable log keeps only what its attached readers have not read yet; with no reader
 *   attached it keeps nothing. A reader that falls more than `maxBacklog` events behind fails
 *   with an error (it can read again from where it stopped with `after`) instead of growing
 *   memory without limit.
 * - A resumable log keeps every event while live. Once ended it stays replayable in an LRU of
 *   ended logs bounded by count (`maxEndedLogs`) and by an estimate of its size (`maxEndedBytes`,
 *   the `JSON.stringify` length of its events, computed once when the log ends); the most
 *   recently ended log is always kept. Evicted logs and ended non-resumable logs are remembered
 *   as ended (a bounded set of ids), so their readers end instead of waiting for an open.
 * - `drop` frees the log and ends its attached readers.
 */
import type { RunEventOpenOptions, RunEventPort, RunEventReadOptions, RunEventRecord } from "./types.js";
import { WakeSignal } from "./common.js";
import { RecentIds } from "./recent-ids.js";

export interface MemoryRunEventsOptions {
  /** Ended resumable logs kept for replay. Default 256. */
  maxEndedLogs?: number;
  /** Estimated size of the ended resumable logs kept for replay, in bytes. Default 64 MiB. */
  maxEndedBytes?: number;
  /** Unread events a reader of a non-resumable log may fall behind before it fails. Default 10,000. */
  maxBacklog?: number;
  /** Ids of ended, evicted or forgotten-at-end logs remembered as ended. Default 4,096. */
  maxEndedIds?: number;
}

export const RUN_EVENT_DEFAULTS: Readonly<Required<MemoryRunEventsOptions>> = Object.freeze({
  maxEndedLogs: 256,
  maxEndedBytes: 64 * 1024 * 1024,
  maxBacklog: 10_000,
  maxEndedIds: 4096,
});

/** How often (in events read) a reader of a non-resumable log lets the log drop what every reader has read. */
const TRIM_EVERY = 64;

class EventLog {
  /** Retained events; `events[i].seq === first + i`. */
  events: RunEventRecord[] = [];
  first = 0;
  /** The seq of the next event. */
  next = 0;
  ended = false;
  bytes = 0;
  readonly readers = new Set<LogReader>();
  private readonly signal = new WakeSignal();

  constructor(readonly resumable: boolean) {}

  /** Resolves at the next publish or end. */
  changed(): Promise<void> {
    return this.signal.changed();
  }

  notify(): void {
    this.signal.notify();
  }

  /** Drops the events every attached reader has read (non-resumable logs). */
  trim(): void {
    if (this.resumable) return;
    let min = this.next;
    for (const r of this.readers) if (r.pos < min) min = r.pos;
    const drop = min - this.first;
    if (drop <= 0) return;
    if (drop >= this.events.length) this.events = [];
    else this.events.splice(0, drop);
    this.first = min;
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true }) as IteratorReturnResult<undefined>;

class LogReader implements AsyncIterableIterator<RunEventRecord> {
  /** The seq of the next event to yield. */
  pos = 0;
  private log: EventLog | undefined;
  private done = false;
  private error: Error | undefined;
  private sinceTrim = 0;
  private opened: { promise: Promise<void>; resolve: () => void } | undefined;
  private onAbort: (() => void) | undefined;

  constructor(
    private readonly port: MemoryRunEvents,
    readonly runId: string,
    private readonly after: number | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    if (signal?.aborted) {
      this.done = true;
      return;
    }
    if (signal) {
      this.onAbort = () => this.finish();
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  /** Starts reading `log`; `openedNow` when the log opened after the reader asked for it. */
  attach(log: EventLog, openedNow: boolean): void {
    if (this.done) return;
    this.log = log;
    const from = this.after === undefined ? (openedNow ? 0 : log.next) : this.after + 1;
    this.pos = Math.max(from, log.first);
    if (log.ended && log.events.length === 0) return;
    log.readers.add(this);
    if (this.opened) {
      this.opened.resolve();
      this.opened = undefined;
    }
  }

  /** The log is known to have ended long ago (or was evicted): nothing to read. */
  endNow(): void {
    this.finish();
  }

  /** Fails the reader at its next read (too far behind). */
  fail(error: Error): void {
    this.error = error;
    this.log?.readers.delete(this);
  }

  async next(): Promise<IteratorResult<RunEventRecord, undefined>> {
    for (;;) {
      if (this.error) {
        const err = this.error;
        this.error = undefined;
        this.finish();
        throw err;
      }
      if (this.done) return DONE;
      const log = this.log;
      if (log) {
        if (this.pos < log.first) this.pos = log.first;
        if (this.pos < log.next) {
          const event = log.events[this.pos - log.first]!;
          this.pos++;
          if (!log.resumable && ++this.sinceTrim >= TRIM_EVERY) {
            this.sinceTrim = 0;
            log.trim();
          }
          return { value: event, done: false };
        }
        if (log.ended) {
          this.finish();
          return DONE;
        }
        // An abort finishes the reader, which wakes both waits: no race with the signal needed.
        await log.changed();
      } else {
        this.opened ??= withResolvers();
        await this.opened.promise;
      }
    }
  }

  async return(): Promise<IteratorResult<RunEventRecord, undefined>> {
    this.finish();
    return DONE;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.signal && this.onAbort) this.signal.removeEventListener("abort", this.onAbort);
    this.port.forget(this);
    const log = this.log;
    if (log && log.readers.delete(this)) {
      if (log.readers.size === 0) log.trim();
    }
    if (this.opened) {
      this.opened.resolve();
      this.opened = undefined;
    }
    log?.notify();
  }
}

function withResolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function estimateBytes(e: RunEventRecord): number {
  try {
    return (JSON.stringify(e.data)?.length ?? 4) + e.event.length + 32;
  } catch {
    return 1024;
  }
}

/** The in-memory `RunEventPort`. */
export class MemoryRunEvents implements RunEventPort {
  private readonly options: Required<MemoryRunEventsOptions>;
  /** Live logs and ended resumable logs kept for replay. */
  private readonly logs = new Map<string, EventLog>();
  /** Ended resumable logs, least recently used first. */
  private readonly endedLogs = new Map<string, EventLog>();
  private endedBytes = 0;
  /** Ids of logs that ended and are no longer kept (insertion order, bounded). */
  private readonly endedIds: RecentIds;
  /** Readers waiting for a log to open. */
  private readonly pending = new Map<string, Set<LogReader>>();

  constructor(options: MemoryRunEventsOptions = {}) {
    this.options = { ...RUN_EVENT_DEFAULTS, ...options };
    this.endedIds = new RecentIds(this.options.maxEndedIds);
  }

  open(runId: string, options: RunEventOpenOptions): void {
    const had = this.logs.get(runId);
    if (had && !had.ended) return;
    if (had) this.forgetLog(runId, had);
    this.endedIds.delete(runId);
    const log = new EventLog(options.resumable);
    // Numbered on after what it held, or from `from` for a resumed attempt whose earlier
    // attempts' log did not survive (D62).
    log.first = log.next = Math.max(had?.next ?? 0, options.from ?? 0);
    this.logs.set(runId, log);
    const waiting = this.pending.get(runId);
    if (waiting) {
      this.pending.delete(runId);
      for (const r of waiting) r.attach(log, true);
    }
  }

  publish(runId: string, event: string, data: unknown): void {
    const log = this.logs.get(runId);
    // Not open (never, or dropped): nobody can read it.
    if (!log || log.ended) return;
    const seq = log.next++;
    if (log.resumable) {
      log.events.push({ seq, event, data });
    } else if (log.readers.size > 0) {
      log.events.push({ seq, event, data });
      const max = this.options.maxBacklog;
      for (const r of log.readers) {
        if (seq - r.pos >= max) {
          r.fail(
            new Error(
              `graphdock: a reader of run ${runId}'s events fell more than ${max} events behind and was stopped; ` +
                `read again with \`after: ${r.pos - 1}\` if the run's stream is resumable`,
            ),
          );
          log.trim();
        }
      }
    } else {
      log.first = log.next;
    }
    log.notify();
  }

  listening(runId: string): boolean {
    const log = this.logs.get(runId);
    return log !== undefined && !log.ended && (log.resumable || log.readers.size > 0);
  }

  end(runId: string): void {
    const log = this.logs.get(runId);
    if (!log || log.ended) return;
    log.ended = true;
    log.notify();
    if (!log.resumable) {
      // Attached readers keep the log object until they drain; new readers just end.
      this.logs.delete(runId);
      this.endedIds.add(runId);
      return;
    }
    let bytes = 0;
    for (const e of log.events) bytes += estimateBytes(e);
    log.bytes = bytes;
    this.endedLogs.set(runId, log);
    this.endedBytes += bytes;
    const { maxEndedLogs, maxEndedBytes } = this.options;
    while (this.endedLogs.size > 1 && (this.endedLogs.size > maxEndedLogs || this.endedBytes > maxEndedBytes)) {
      const [oldId, old] = this.endedLogs.entries().next().value as [string, EventLog];
      this.forgetLog(oldId, old);
      this.endedIds.add(oldId);
    }
  }

  read(runId: string, options: RunEventReadOptions = {}): AsyncIterable<RunEventRecord> {
    const reader = new LogReader(this, runId, options.after, options.signal);
    if (options.signal?.aborted) return reader;
    const log = this.logs.get(runId);
    if (log) {
      if (log.ended && this.endedLogs.delete(runId)) this.endedLogs.set(runId, log);
      reader.attach(log, false);
    } else if (this.endedIds.has(runId) || options.ifAbsent === "end") {
      reader.endNow();
    } else {
      let set = this.pending.get(runId);
      if (!set) this.pending.set(runId, (set = new Set()));
      set.add(reader);
    }
    return reader;
  }

  drop(runId: string): void {
    const log = this.logs.get(runId);
    this.endedIds.delete(runId);
    if (!log) return;
    this.forgetLog(runId, log);
    log.ended = true;
    log.events = [];
    log.first = log.next;
    for (const r of [...log.readers]) r.finish();
    log.notify();
  }

  /** @internal A reader finished: stop waiting for its log to open. */
  forget(reader: LogReader): void {
    const set = this.pending.get(reader.runId);
    if (set?.delete(reader) && set.size === 0) this.pending.delete(reader.runId);
  }

  private forgetLog(runId: string, log: EventLog): void {
    this.logs.delete(runId);
    if (this.endedLogs.get(runId) === log) {
      this.endedLogs.delete(runId);
      this.endedBytes -= log.bytes;
    }
  }
}
