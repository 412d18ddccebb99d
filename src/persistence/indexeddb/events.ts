/**
 * Run events of the IndexedDB store (D20), shared by every tab on the database.
 *
 * - A log's state (`resumable`, `ended`) is a record in `logs`, written by `open` and `end`, so
 *   a reader in any tab knows whether a log exists and has ended.
 * - Events of a resumable log are records `[run_id, seq]` in `events`, written in the background
 *   by one writer per store instance, in order, in batches (`publish` never waits); `end` waits
 *   for them and then writes the end marker. Events of other logs are not persisted.
 * - Live delivery: readers in the publishing instance get events from its memory at once; other
 *   tabs get them through the store's BroadcastChannel (`ev`, `end`, `drop`, and `flushed` when a
 *   batch is on disk). A reader in another tab replays what is persisted, then follows the
 *   channel; a gap between the two (events broadcast before they were flushed) is filled by
 *   reading again once the publisher reports the flush.
 */
import type { RunEventOpenOptions, RunEventPort, RunEventReadOptions, RunEventRecord } from "../types.js";

/** Messages about run events between tabs. */
export type EventMessage =
  | { t: "ev"; run: string; rec: RunEventRecord; resumable: boolean }
  | { t: "open"; run: string }
  | { t: "end"; run: string; last: number }
  | { t: "drop"; run: string }
  | { t: "flushed"; run: string; upTo: number }
  /** A reader in another tab follows the run (`on`) or stopped (`off`): events go on the channel only while one does. */
  | { t: "want"; run: string; reader: string; on: boolean };

/** What the port needs of the store: persistence and the channel. */
export interface EventBackend {
  /** Writes (or replaces) the log record. */
  putLog(run: string, log: { resumable: boolean; ended: boolean; last: number }): Promise<void>;
  getLog(run: string): Promise<{ resumable: boolean; ended: boolean; last: number } | undefined>;
  /** Appends events of one or more runs in one transaction. */
  putEvents(batch: Array<{ run: string; rec: RunEventRecord }>): Promise<void>;
  /** Persisted events of a run with `seq > after`, in order. */
  readEvents(run: string, after: number): Promise<RunEventRecord[]>;
  /** Deletes the log record and its events. */
  dropLog(run: string): Promise<void>;
  post(message: EventMessage): void;
  /** Listens to other tabs' messages; returns unsubscribe. */
  listen(fn: (message: EventMessage) => void): () => void;
}

/** A log published from this instance. */
interface LocalLog {
  resumable: boolean;
  next: number;
  ended: boolean;
  /** Events kept for readers of this instance (all of them while the log lives here). */
  events: RunEventRecord[];
  /** Readers of this instance that may still read it; an ended log is forgotten when none is left. */
  readers: number;
}

/** The index of the first of `events` (in increasing `seq` order) with `seq > after`. */
function firstAfter(events: readonly RunEventRecord[], after: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid]!.seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many ended logs of this instance are remembered as ended (non-resumable ones keep no record). */
const TOMBSTONES = 1024;

type Wake = () => void;

export class IdbRunEvents implements RunEventPort {
  private logs = new Map<string, LocalLog>();
  private queue: Array<{ run: string; rec: RunEventRecord }> = [];
  private flushing: Promise<void> | undefined;
  private flushError: unknown;
  /** Readers waiting for anything about a run (local publish or a message from another tab). */
  private waiters = new Map<string, Set<Wake>>();
  /** Live messages from other tabs, per run, for the readers attached to it. */
  private taps = new Map<string, Set<(m: EventMessage) => void>>();
  private unlisten: (() => void) | undefined;
  /** Readers started per run (they pin an ended log of this instance until they finish). */
  private interest = new Map<string, number>();
  /** Runs whose non-resumable log ended here: a later read ends at once. */
  private tombstones = new Set<string>();
  /** Readers in other tabs per run: only their runs' events are posted (a post clones the event). */
  private wanted = new Map<string, Set<string>>();
  private readerIds = 0;
  private readonly instance = Math.random().toString(36).slice(2);

  constructor(private backend: EventBackend) {}

  /** Starts listening to other tabs (called when the store opens). */
  attach(): void {
    this.unlisten ??= this.backend.listen((m) => {
      if (m.t === "want") {
        let set = this.wanted.get(m.run);
        if (m.on) {
          if (!set) this.wanted.set(m.run, (set = new Set()));
          set.add(m.reader);
        } else if (set) {
          set.delete(m.reader);
          if (set.size === 0) this.wanted.delete(m.run);
        }
        return;
      }
      for (const tap of this.taps.get(m.run) ?? []) tap(m);
      this.wake(m.run);
    });
  }

  /** Flushes pending events and stops listening. */
  async detach(): Promise<void> {
    await this.flush();
    this.unlisten?.();
    this.unlisten = undefined;
    for (const run of [...this.waiters.keys()]) this.wake(run);
  }

  private wake(run: string) {
    const set = this.waiters.get(run);
    if (!set) return;
    this.waiters.delete(run);
    for (const w of set) w();
  }

  private wait(run: string, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      let set = this.waiters.get(run);
      if (!set) this.waiters.set(run, (set = new Set()));
      const done = () => {
        signal?.removeEventListener("abort", done);
        set!.delete(done);
        resolve();
      };
      set.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async open(runId: string, options: RunEventOpenOptions): Promise<void> {
    const had = this.logs.get(runId);
    // Open here already (a run resumed by this instance): published after, past `from` (an
    // attempt in another tab may have published in between).
    if (had && !had.ended) {
      had.next = Math.max(had.next, options.from ?? 0);
      return;
    }
    // Numbered from `from` for a run resumed as a later attempt (D62): other tabs' readers take
    // the jump at its `metadata` event.
    const log: LocalLog = { resumable: options.resumable, next: Math.max(had?.next ?? 0, options.from ?? 0), ended: false, events: [], readers: 0 };
    this.logs.set(runId, log);
    // Only a resumable log is kept (its record tells a late reader it exists and when it ends);
    // other tabs learn of any log from the channel.
    if (options.resumable) await this.backend.putLog(runId, { resumable: true, ended: false, last: -1 });
    this.backend.post({ t: "open", run: runId });
    this.wake(runId);
  }

  publish(runId: string, event: string, data: unknown): void {
    let log = this.logs.get(runId);
    if (!log) {
      // Published without `open`: a non-resumable log of this instance.
      log = { resumable: false, next: 0, ended: false, events: [], readers: 0 };
      this.logs.set(runId, log);
    }
    if (log.ended) throw new Error(`graphdock indexeddb: run ${runId} published an event after its log ended`);
    const rec: RunEventRecord = { seq: log.next++, event, data };
    log.events.push(rec);
    if (this.wanted.has(runId)) this.backend.post({ t: "ev", run: runId, rec, resumable: log.resumable });
    if (log.resumable) {
      this.queue.push({ run: runId, rec });
      this.schedule();
    }
    this.wake(runId);
  }

  private schedule() {
    if (this.flushing) return;
    this.flushing = (async () => {
      // Let the publisher's synchronous burst collect into one batch.
      await new Promise<void>((r) => setTimeout(r, 0));
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.backend.putEvents(batch);
        } catch (err) {
          this.flushError = err;
          continue;
        }
        const upTo = new Map<string, number>();
        for (const { run, rec } of batch) upTo.set(run, rec.seq);
        for (const [run, seq] of upTo) this.backend.post({ t: "flushed", run, upTo: seq });
      }
    })().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.schedule();
    });
  }

  /** Resolves once every event published so far is persisted. */
  async flush(): Promise<void> {
    while (this.flushing || this.queue.length > 0) {
      if (!this.flushing) this.schedule();
      await this.flushing;
    }
    if (this.flushError) {
      const err = this.flushError;
      this.flushError = undefined;
      throw err;
    }
  }

  async end(runId: string): Promise<void> {
    const log = this.logs.get(runId);
    const last = log ? log.next - 1 : -1;
    if (log) log.ended = true;
    if (log?.resumable) {
      await this.flush();
      await this.backend.putLog(runId, { resumable: true, ended: true, last });
    }
    this.backend.post({ t: "end", run: runId, last });
    this.wanted.delete(runId);
    // Readers of this instance still draining it keep it; later ones read what is persisted, or,
    // for a log that kept nothing, end at once.
    if (log && !log.resumable) {
      this.tombstones.add(runId);
      for (const old of this.tombstones) {
        if (this.tombstones.size <= TOMBSTONES) break;
        this.tombstones.delete(old);
      }
    }
    if (log && !this.interest.get(runId) && this.logs.get(runId) === log) this.logs.delete(runId);
    this.wake(runId);
  }

  async drop(runId: string): Promise<void> {
    this.logs.delete(runId);
    this.tombstones.delete(runId);
    this.queue = this.queue.filter((q) => q.run !== runId);
    await this.flush().catch(() => undefined);
    await this.backend.dropLog(runId);
    this.backend.post({ t: "drop", run: runId });
    this.dropped.add(runId);
    this.wake(runId);
  }

  /** Runs dropped by this instance while a reader may still wait on them. */
  private dropped = new Set<string>();

  read(runId: string, options: RunEventReadOptions = {}): AsyncIterable<RunEventRecord> {
    return { [Symbol.asyncIterator]: () => this.reader(runId, options)[Symbol.asyncIterator]() };
  }

  private async *reader(runId: string, options: RunEventReadOptions): AsyncGenerator<RunEventRecord> {
    const { after, signal } = options;
    /** `end`: a log that is not open ends the read at once instead of being waited for. */
    const ifAbsent = (options as { ifAbsent?: "wait" | "end" }).ifAbsent ?? "wait";
    // Attach to the live messages first, so nothing published from now on is missed.
    const live: RunEventRecord[] = [];
    let ended: number | undefined; // last seq, once an end message arrived
    let dropped = false;
    let flushedUpTo = -1;
    let liveResumable: boolean | undefined;
    const readerId = `${this.instance}:${this.readerIds++}`;
    let announced = false;
    /** Tells the other tabs this reader follows the run (again after an `open`: a tab may have opened since). */
    const announce = () => {
      announced = true;
      this.backend.post({ t: "want", run: runId, reader: readerId, on: true });
    };
    const tap = (m: EventMessage) => {
      if (m.t === "open" && announced) announce();
      if (m.t === "ev") {
        live.push(m.rec);
        liveResumable = m.resumable;
      }
      else if (m.t === "end") ended = m.last;
      else if (m.t === "drop") dropped = true;
      else if (m.t === "flushed") flushedUpTo = Math.max(flushedUpTo, m.upTo);
    };
    let taps = this.taps.get(runId);
    if (!taps) this.taps.set(runId, (taps = new Set()));
    taps.add(tap);
    this.dropped.delete(runId);
    let attached: LocalLog | undefined;
    this.interest.set(runId, (this.interest.get(runId) ?? 0) + 1);
    try {
      let fromNow = after === undefined;
      let last = after ?? -1;
      const local = () => this.logs.get(runId);
      if (fromNow && local()) {
        last = local()!.next - 1;
        fromNow = false;
      }
      if (!local()) announce();
      let stored = local() ? undefined : await this.backend.getLog(runId);
      if (!local()) {
        // Nothing more will come to a log that ended (or kept nothing); an absent one may be ended at once.
        if (fromNow && (stored?.ended || this.tombstones.has(runId))) return;
        if (ifAbsent === "end" && stored === undefined) return;
      }
      let needRead = !fromNow;
      let readAfterEnd = false;
      /** The jump in the numbering up to which storage was read for what came before it. */
      let filled = -1;
      while (!signal?.aborted) {
        if (dropped || this.dropped.has(runId)) return;
        const mine = local();
        if (mine) {
          if (!attached) {
            attached = mine;
            mine.readers++;
          }
          if (fromNow) {
            last = mine.next - 1;
            fromNow = false;
          }
          // This instance publishes the log: events from memory. A jump in the numbering is a
          // resumed attempt (D62): what earlier attempts published elsewhere comes first, from
          // storage (a resumable log's).
          const events = mine.events;
          for (let i = firstAfter(events, last); i < events.length; i++) {
            if (signal?.aborted) return;
            const rec = events[i]!;
            if (rec.seq !== last + 1 && mine.resumable && filled < rec.seq) {
              filled = rec.seq;
              for (const earlier of await this.backend.readEvents(runId, last)) {
                if (earlier.seq >= rec.seq) break;
                if (signal?.aborted) return;
                last = earlier.seq;
                yield earlier;
              }
            }
            last = rec.seq;
            yield rec;
          }
          if (mine.ended) return;
          await this.wait(runId, signal);
          continue;
        }
        if (fromNow) {
          if (this.tombstones.has(runId)) return;
          if (live.length > 0) {
            last = live[0]!.seq - 1;
            fromNow = false;
            continue;
          }
          if (ended !== undefined) return;
          await this.wait(runId, signal);
          continue;
        }
        // A log of this instance that ended and kept nothing.
        if (!stored && this.tombstones.has(runId)) return;
        // Another tab's log, or one that ended: persisted events, then live ones.
        let progressed = false;
        while (live.length > 0 && live[0]!.seq <= last) live.shift();
        // A resumed attempt's `metadata` numbered past a gap (D62): taken once storage was read
        // for what came before it.
        const jump = live.length > 0 && live[0]!.seq > last + 1 && live[0]!.event === "metadata" ? live[0]!.seq : undefined;
        if (jump !== undefined && filled < jump && (stored?.resumable ?? liveResumable) !== false) {
          filled = jump;
          needRead = true;
        }
        while (live.length > 0 && (live[0]!.seq === last + 1 || (live[0]!.seq === jump && filled >= jump && !needRead))) {
          if (signal?.aborted) return;
          const rec = live.shift()!;
          last = rec.seq;
          progressed = true;
          yield rec;
        }
        if (progressed) continue;
        const resumable = stored?.resumable ?? liveResumable;
        if (needRead && resumable !== false) {
          needRead = false;
          for (const rec of await this.backend.readEvents(runId, last)) {
            if (signal?.aborted) return;
            // A gap is only ever before a resumed attempt's first event (D62).
            if (rec.seq !== last + 1 && rec.event !== "metadata") break;
            last = rec.seq;
            yield rec;
          }
          stored = await this.backend.getLog(runId);
          continue; // messages may have arrived meanwhile
        }
        if (live.length > 0 && resumable === false) {
          // Not retained: what was published before the first live event is gone.
          last = live[0]!.seq - 1;
          continue;
        }
        const end = ended ?? (stored?.ended ? stored.last : undefined);
        if (end !== undefined) {
          if (last >= end || resumable === false || readAfterEnd) return;
          readAfterEnd = true;
          needRead = true;
          continue;
        }
        await this.wait(runId, signal);
        if (flushedUpTo > last) needRead = true;
        if (!stored) {
          stored = await this.backend.getLog(runId);
          needRead = true;
        }
      }
    } finally {
      if (announced) this.backend.post({ t: "want", run: runId, reader: readerId, on: false });
      if (attached) attached.readers--;
      const left = (this.interest.get(runId) ?? 1) - 1;
      if (left > 0) this.interest.set(runId, left);
      else {
        this.interest.delete(runId);
        const log = this.logs.get(runId);
        if (log?.ended) this.logs.delete(runId);
      }
      taps.delete(tap);
      if (taps.size === 0 && this.taps.get(runId) === taps) this.taps.delete(runId);
    }
  }
}
