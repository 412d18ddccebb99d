/**
 * Run events on PostgreSQL (D20): every run's log lives in `run_logs` / `run_events`, so a reader
 * on any process can replay and follow a run executing on another.
 *
 * - `publish` is synchronous and hot (token streaming): it numbers the event, keeps it in the
 *   publishing process's memory for local readers, and queues it; a background flusher writes
 *   the queue in order with one statement per batch (INSERT of every queued event, the `ended`
 *   marks, and a NOTIFY per run touched), so readers elsewhere are woken on commit.
 * - The memory copy holds a log's latest `maxBacklog` events (D74): a reader of this process that
 *   falls further behind reads the table when the log is written there, and otherwise fails as a
 *   reader of the memory store too far behind does.
 * - Readers in the publishing process read the memory copy; others read the table from their
 *   position and wait for a NOTIFY of the run (or a short poll as a fallback).
 * - A resumable log is always written to the table. A non-resumable one once a reader in another
 *   process asks for it (NOTIFY `r<run id>`): the publisher then writes every event it still
 *   holds and the following ones; a reader that finds the log ended before its request was heard
 *   (a quick run) asks again, and the publisher, which keeps an ended log a few seconds, writes it
 *   then and says so (NOTIFY `s<run id>`, D75). A log taken over from another process (its
 *   runtime stopped) is written to the table, where the readers of that process's log read; an
 *   `error` event always is (D73). Its end is always recorded.
 * - `end` flushes and marks the log ended in the same statement as its last events. A
 *   non-resumable log does not replay to readers that attach after its end; every ended log is
 *   pruned after its retention window (`resumable` logs: `resumableRetentionMs`).
 * - While the database cannot be reached, the flusher keeps the queue and tries again, and
 *   readers wait (D72).
 */
import { SILENT, type DiagnosticsLogger } from "../diagnostics.js";
import type { Pool } from "pg";
import { GraphdockError } from "../errors.js";
import type { RunEventOpenOptions, RunEventPort, RunEventReadOptions, RunEventRecord } from "../persistence/types.js";
import { WakeSignal } from "../persistence/common.js";
import { statementName } from "./core.js";

/** A fixed statement as a named prepared statement (parsed and planned once per connection). */
const prepared = (text: string, values: unknown[]) => ({ name: statementName(text), text, values });

/** A log this process publishes: its latest events (at most `keep` plus a chunk). */
class LocalLog {
  /** The events held, `events[i].seq === base + i`. */
  events: RunEventRecord[] = [];
  /** The seq of the first event held. */
  base: number;
  /** The seq of the next event. */
  next: number;
  /** The seq of the first event not queued for the table (all are, once the log goes there). */
  persisted: number;
  ended = false;
  dropped = false;
  /** Replaced by a newer copy (a resumed attempt found the log gone on elsewhere): readers go to the table. */
  superseded = false;
  private readonly signal = new WakeSignal();

  constructor(
    readonly resumable: boolean,
    /** The seq of the first event published here (events before it were published elsewhere). */
    readonly first: number,
    /** A non-resumable log a reader in another process reads: its events go to the table too. */
    public shared: boolean,
  ) {
    this.base = this.next = this.persisted = first;
  }

  /** Its events go to the table (resumable, or read elsewhere). */
  get toTable(): boolean {
    return this.resumable || this.shared;
  }

  at(seq: number): RunEventRecord {
    return this.events[seq - this.base]!;
  }

  /** Appends an event; once more than `keep` (plus a chunk, to trim rarely) are held, the oldest go. */
  push(event: RunEventRecord, keep: number): void {
    this.events.push(event);
    this.next++;
    if (this.events.length > keep + TRIM_CHUNK) {
      const drop = this.events.length - keep;
      this.events.splice(0, drop);
      this.base += drop;
    }
  }

  /** Resolves at the next publish or end. */
  changed(): Promise<void> {
    return this.signal.changed();
  }

  notify(): void {
    this.signal.notify();
  }
}

type Item = { kind: "event"; runId: string; seq: number; event: string; json: string } | { kind: "end"; runId: string };

export interface PgRunEventsOptions {
  /** How often a waiting reader polls when no notification arrives. Default 1000 ms. */
  pollMs: number;
  /** Events of a log held in memory for the readers of this process (D74). Default 10,000. */
  maxBacklog: number;
  /** How long ended resumable logs stay replayable. Default 15 minutes. */
  resumableRetentionMs: number;
  /** How long ended non-resumable logs stay for readers still draining them. Default 60 s. */
  retentionMs: number;
}

const MAX_BATCH = 2000;
const ENDED_GRACE_MS = 5000;
const READ_BATCH = 1000;
/** Events a log holds beyond its `maxBacklog` before the oldest are dropped (in one splice). */
const TRIM_CHUNK = 512;
/** Longest wait between two attempts to write queued events while the database cannot be reached. */
const MAX_RETRY_MS = 2000;

const isUnavailable = (err: unknown) => GraphdockError.is(err, "unavailable");

/** The key under which readers wait for the answer to a request for an ended log (not a run id: has a space). */
const ANSWER = "answer ";
const answerKey = (runId: string) => `${ANSWER}${runId}`;

/**
 * Whether a reader at `pos` reads `log` from this process's memory: a log published here, unless
 * the reader is before what memory holds of it and the table has it (`pos` undefined: not placed yet).
 */
const inMemory = (log: LocalLog | undefined, pos: number | undefined): log is LocalLog =>
  log !== undefined && (pos === undefined || (pos >= log.first && (pos >= log.base || !log.toTable)));

export class PgRunEvents implements RunEventPort {
  /** The runtime's diagnostics (the store's `useDiagnostics`): silent until one is given. */
  log: DiagnosticsLogger = SILENT;
  private readonly local = new Map<string, LocalLog>();
  private queue: Item[] = [];
  /** Items ever queued, and ever written (their counts). */
  private queued = 0;
  private written = 0;
  private flushing: Promise<void> | undefined;
  private readonly flushWaiters: Array<{ upTo: number; resolve: () => void }> = [];
  /** Readers waiting for a change of a run's log (in any process). */
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;
  /** `close()` was called: a write that fails is not tried again. */
  private closing = false;
  private warnedJson = false;

  constructor(
    private readonly pool: () => Pool,
    private readonly s: string,
    private readonly channel: string,
    private readonly options: PgRunEventsOptions,
  ) {}

  // -------------------------------------------------------------------------------------------
  // Wake-ups.

  /** A promise resolved at the next change of the run's log seen by this process. */
  private changed(runId: string): { promise: Promise<void>; cancel: () => void } {
    let set = this.waiters.get(runId);
    if (!set) this.waiters.set(runId, (set = new Set()));
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    const entry = () => resolve();
    set.add(entry);
    const s = set;
    return {
      promise,
      cancel: () => {
        s.delete(entry);
        if (s.size === 0 && this.waiters.get(runId) === s) this.waiters.delete(runId);
      },
    };
  }

  /** Called for a NOTIFY of the run's log (from any process), and locally. */
  wake(runId: string): void {
    const set = this.waiters.get(runId);
    if (!set) return;
    this.waiters.delete(runId);
    for (const w of set) w();
  }

  /** After a lost listener connection: notifications may have been missed. (An answer is not one: it is asked for again.) */
  wakeAll(): void {
    for (const key of [...this.waiters.keys()]) if (!key.startsWith(ANSWER)) this.wake(key);
  }

  // -------------------------------------------------------------------------------------------
  // Writing.

  /**
   * Opens the log; one open elsewhere (a run resumed as its next attempt: D62) continues after
   * the events its table holds, which are all that readers in other processes can have read,
   * so `options.from` is not needed here.
   */
  async open(runId: string, options: RunEventOpenOptions): Promise<void> {
    const had = this.local.get(runId);
    if (had && !had.ended) {
      // A resumed attempt on a log this process published before: another process may have
      // published an attempt since (this one's lease had lapsed), then it goes on after those.
      if (options.from === undefined) return;
      await this.flush();
      const { rows } = await this.pool().query<{ next: number }>(
        `SELECT COALESCE((SELECT max(seq) + 1 FROM ${this.s}.run_events WHERE run_id = $1), 0)::int AS next`,
        [runId],
      );
      const next = rows[0]?.next ?? 0;
      if (next <= had.next || this.local.get(runId) !== had) return;
      had.superseded = true;
      had.notify();
      // Taken over back from another process: to the table, where that process's readers read.
      this.local.set(runId, new LocalLog(options.resumable, next, true));
      this.wake(runId);
      return;
    }
    await this.flush();
    const s = this.s;
    // The common case in one statement: a log never opened before.
    const fast = await this.pool().query<{ inserted: boolean }>(
      prepared(
        `WITH ins AS (INSERT INTO ${s}.run_logs (run_id, resumable) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING RETURNING run_id)
       SELECT EXISTS (SELECT 1 FROM ins) AS inserted, pg_notify($3, $4)`,
        [runId, options.resumable, this.channel, `e${runId}`],
      ),
    );
    if (fast.rows[0]?.inserted) {
      const current = this.local.get(runId);
      if (current && !current.ended) return;
      this.local.set(runId, new LocalLog(options.resumable, 0, false));
      this.wake(runId);
      return;
    }
    const client = await this.pool().connect();
    let first = 0;
    let takenOver = false;
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<{ ended: boolean; next: number }>(
        `SELECT ended_at IS NOT NULL AS ended,
                COALESCE((SELECT max(seq) + 1 FROM ${s}.run_events WHERE run_id = $1), 0)::int AS next
           FROM ${s}.run_logs WHERE run_id = $1 FOR UPDATE`,
        [runId],
      );
      const row = rows[0];
      if (row && !row.ended) {
        // Open elsewhere (a runtime that stopped, or one ending its run): publish after its events,
        // to the table, where that runtime's readers (in other processes) read.
        first = row.next;
        takenOver = true;
      } else if (row) {
        await client.query(`DELETE FROM ${s}.run_events WHERE run_id = $1`, [runId]);
        await client.query(`UPDATE ${s}.run_logs SET resumable = $2, opened_at = now(), ended_at = NULL WHERE run_id = $1`, [runId, options.resumable]);
      } else {
        await client.query(
          `INSERT INTO ${s}.run_logs (run_id, resumable) VALUES ($1, $2)
             ON CONFLICT (run_id) DO UPDATE SET resumable = EXCLUDED.resumable, opened_at = now(), ended_at = NULL`,
          [runId, options.resumable],
        );
      }
      await client.query("SELECT pg_notify($1, $2)", [this.channel, `e${runId}`]);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    const current = this.local.get(runId);
    if (current && !current.ended) return;
    this.local.set(runId, new LocalLog(options.resumable, first, takenOver));
    this.wake(runId);
  }

  publish(runId: string, event: string, data: unknown): void {
    const log = this.local.get(runId);
    if (!log || log.ended) return;
    const record = { seq: log.next, event, data };
    log.push(record, this.options.maxBacklog);
    if (log.toTable) this.persist(runId, log);
    // A run's failure reaches every reader, whichever process it is in (D73).
    else if (event === "error") this.queueEvent(runId, record);
    log.notify();
  }

  /** Queues the log's events not queued yet (and still held) for the table. */
  private persist(runId: string, log: LocalLog): void {
    for (let seq = Math.max(log.persisted, log.base); seq < log.next; seq++) this.queueEvent(runId, log.at(seq));
    log.persisted = log.next;
  }

  private queueEvent(runId: string, { seq, event, data }: RunEventRecord): void {
    let json: string;
    try {
      json = JSON.stringify(data) ?? "null";
    } catch (err) {
      if (!this.warnedJson) {
        this.warnedJson = true;
        this.log.error({ err, run_id: runId }, "graphdock/postgres: an event of a run is not JSON; stored as null for other processes");
      }
      json = "null";
    }
    this.enqueue({ kind: "event", runId, seq, event, json });
  }

  /**
   * A reader in another process reads this non-resumable log (its NOTIFY): from now on its
   * events go to the table too, starting with every one this process still holds. A log that
   * ended meanwhile (kept a few seconds) is written as it is, and its readers are told.
   */
  share(runId: string): void {
    const log = this.local.get(runId);
    if (!log || log.resumable || (log.shared && !log.ended)) return;
    log.shared = true;
    this.persist(runId, log);
    if (log.ended) {
      void this.flush()
        .then(() => this.pool().query("SELECT pg_notify($1, $2)", [this.channel, `s${runId}`]))
        .catch(() => undefined); // the reader asks again
    }
  }

  /** The publisher of an ended log answered a reader's request (NOTIFY `s<run id>`): its events are written. */
  answered(runId: string): void {
    this.wake(answerKey(runId));
  }

  async end(runId: string): Promise<void> {
    const log = this.local.get(runId);
    if (log) {
      if (log.ended) return;
      log.ended = true;
      log.notify();
      const upTo = this.enqueue({ kind: "end", runId });
      await this.flushed(upTo);
      // Kept a moment for readers of this process that found the log open and have not switched
      // to reading it yet (a non-resumable log's events may exist only here).
      const timer = setTimeout(() => {
        if (this.local.get(runId) === log) this.local.delete(runId);
      }, ENDED_GRACE_MS);
      (timer as { unref?: () => void }).unref?.();
      return;
    }
    await this.flush();
    await this.pool().query(
      `WITH e AS (UPDATE ${this.s}.run_logs SET ended_at = now() WHERE run_id = $1 AND ended_at IS NULL RETURNING run_id)
       SELECT pg_notify($2, 'e' || run_id) FROM e`,
      [runId, this.channel],
    );
  }

  async drop(runId: string): Promise<void> {
    const log = this.local.get(runId);
    if (log) {
      log.ended = true;
      log.dropped = true;
      log.events = [];
      this.local.delete(runId);
      log.notify();
    }
    await this.flush();
    await this.pool().query(
      `WITH a AS (DELETE FROM ${this.s}.run_events WHERE run_id = $1), b AS (DELETE FROM ${this.s}.run_logs WHERE run_id = $1)
       SELECT pg_notify($2, $3)`,
      [runId, this.channel, `e${runId}`],
    );
    this.wake(runId);
  }

  private enqueue(item: Item): number {
    this.queue.push(item);
    const n = ++this.queued;
    if (!this.flushing) this.flushing = new Promise<void>((resolve) => setImmediate(() => void this.drain().finally(resolve)));
    return n;
  }

  /** Resolves once every item queued so far is written. */
  flush(): Promise<void> {
    return this.flushed(this.queued);
  }

  private flushed(upTo: number): Promise<void> {
    if (this.written >= upTo) return Promise.resolve();
    return new Promise<void>((resolve) => this.flushWaiters.push({ upTo, resolve }));
  }

  private async drain(): Promise<void> {
    let retryMs = 200;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, MAX_BATCH);
        try {
          await this.write(batch);
          retryMs = 200;
        } catch (err) {
          if (this.closing) {
            this.log.error({ err }, "graphdock/postgres: run events could not be written before close");
            this.queue = [];
            this.written = this.queued;
            break;
          }
          // An outage is logged once by the store; the queue waits for the database (D72).
          if (!isUnavailable(err)) this.log.error({ err }, "graphdock/postgres: writing run events failed; retrying");
          await new Promise((r) => setTimeout(r, retryMs));
          retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
          continue;
        }
        this.queue.splice(0, batch.length);
        this.written += batch.length;
        this.releaseWaiters();
      }
    } finally {
      this.flushing = undefined;
      this.releaseWaiters();
      if (this.queue.length > 0) this.enqueueDrain();
    }
  }

  private enqueueDrain(): void {
    if (!this.flushing) this.flushing = new Promise<void>((resolve) => setImmediate(() => void this.drain().finally(resolve)));
  }

  private releaseWaiters(): void {
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      const w = this.flushWaiters[i]!;
      if (this.written >= w.upTo) {
        this.flushWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** One statement: the events, the end marks and a NOTIFY per run, atomically. */
  private async write(batch: Item[]): Promise<void> {
    const runIds: string[] = [];
    const seqs: number[] = [];
    const names: string[] = [];
    const data: string[] = [];
    const ended: string[] = [];
    const touched = new Set<string>();
    for (const item of batch) {
      touched.add(item.runId);
      if (item.kind === "event") {
        runIds.push(item.runId);
        seqs.push(item.seq);
        names.push(item.event);
        data.push(item.json);
      } else ended.push(item.runId);
    }
    const s = this.s;
    if (runIds.length === 0 && touched.size === 1) {
      // The common batch: one run's end, none of its events for the table (a non-resumable log no
      // other process reads). A statement without arrays, whose generic plan PostgreSQL keeps
      // (for the arrays' one it plans every call again).
      const [runId] = touched;
      await this.pool().query(
        prepared(
          `WITH ended AS (UPDATE ${s}.run_logs SET ended_at = now() WHERE run_id = $1 AND ended_at IS NULL) SELECT pg_notify($2, 'e' || $1::text)`,
          [runId, this.channel],
        ),
      );
      return;
    }
    await this.pool().query(
      prepared(
        `WITH ins AS (
         INSERT INTO ${s}.run_events (run_id, seq, event, data)
         SELECT r, q, e, d::json FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS u(r, q, e, d)
         ON CONFLICT (run_id, seq) DO NOTHING),
       ended AS (UPDATE ${s}.run_logs SET ended_at = now() WHERE run_id = ANY($5::text[]) AND ended_at IS NULL)
       SELECT pg_notify($6, 'e' || r) FROM unnest($7::text[]) AS r`,
        [runIds, seqs, names, data, ended, this.channel, [...touched]],
      ),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Reading.

  read(runId: string, options: RunEventReadOptions = {}): AsyncIterable<RunEventRecord> {
    return this.reader(runId, options);
  }

  private async *reader(runId: string, options: RunEventReadOptions): AsyncGenerator<RunEventRecord, void, undefined> {
    const { signal } = options;
    if (signal?.aborted) return;
    let abortResolve!: () => void;
    const aborted = new Promise<void>((r) => (abortResolve = r));
    const onAbort = () => abortResolve();
    signal?.addEventListener("abort", onAbort, { once: true });
    let pos: number | undefined = options.after === undefined ? undefined : Math.max(0, options.after + 1);
    /** We saw the log open (attached); a log gone afterwards was dropped. */
    let attached = false;
    /** We found no log and waited for it (or were made before its run): read it from its first event. */
    let waitedForOpen = options.fromStart === true;
    /** Events this reader yielded. */
    let read = 0;
    /**
     * Until when we ask for a non-resumable log found ended without its events (its publisher
     * keeps an ended log that long), and whether the publisher answered (NOTIFY `s<run id>`, once
     * it has written what it holds).
     */
    let lateUntil: number | undefined;
    let answered = false;
    /** Waits for a change of the log, a poll or the abort. Returns whether the poll ended it. */
    const waitChange = async (change: Promise<void>) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let polled = false;
      const poll = new Promise<void>((r) => (timer = setTimeout(() => ((polled = true), r()), this.options.pollMs)));
      await Promise.race([change, poll, aborted]);
      clearTimeout(timer);
      return polled;
    };
    try {
      for (;;) {
        if (signal?.aborted || this.closed) return;
        const local = this.local.get(runId);
        if (inMemory(local, pos)) {
          if (!attached && !waitedForOpen && local.ended && !local.resumable) return;
          attached = true;
          if (pos === undefined) pos = waitedForOpen ? (local.toTable ? local.first : local.base) : local.next;
          const readHere = read;
          // Read the memory copy until it ends.
          for (;;) {
            if (signal?.aborted || local.dropped) return;
            if (local.superseded) break; // read on from the table, then the newer copy
            if (pos < local.base) {
              if (local.toTable) break; // read on from the table
              // Fell behind what is held (D74): as a slow reader of the memory store. Joined
              // behind it (an old `after`): from what is held.
              if (read > readHere) throw new Error(
                `graphdock: a reader of run ${runId}'s events fell more than ${this.options.maxBacklog} events behind and was stopped; ` +
                  `read again with \`after: ${pos - 1}\` if the run's stream is resumable`,
              );
              pos = local.base;
            }
            if (pos < local.next) {
              const event = local.at(pos);
              pos++;
              read++;
              yield event;
              continue;
            }
            if (local.ended) return;
            await Promise.race([local.changed(), aborted]);
          }
          continue;
        }
        // Read the table (a log published elsewhere, or what was published before this process took it over).
        const change = this.changed(runId);
        try {
          const from = pos ?? 2 ** 31 - 1;
          let row: { resumable: boolean; ended: boolean; next: number; events: Array<[number, string, unknown]> | null } | undefined;
          try {
            const { rows } = await this.pool().query<NonNullable<typeof row>>(
              `SELECT l.resumable, l.ended_at IS NOT NULL AS ended,
                    COALESCE((SELECT max(seq) + 1 FROM ${this.s}.run_events WHERE run_id = $1), 0)::int AS next,
                    (SELECT json_agg(json_build_array(e.seq, e.event, e.data) ORDER BY e.seq)
                       FROM (SELECT seq, event, data FROM ${this.s}.run_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${READ_BATCH}) e) AS events
               FROM ${this.s}.run_logs l WHERE l.run_id = $1`,
              [runId, from],
            );
            row = rows[0];
          } catch (err) {
            if (!isUnavailable(err)) throw err;
            // The database cannot be reached: wait for it (D72), reading again at each poll.
            await waitChange(change.promise);
            continue;
          }
          // Opened by this process meanwhile (its NOTIFY can arrive before open() returns): read the memory copy.
          if (inMemory(this.local.get(runId), pos)) continue;
          if (!row) {
            if (attached || options.ifAbsent === "end") return;
            if (this.local.has(runId)) continue;
            waitedForOpen = true;
          } else {
            if (!attached) {
              if (row.ended && !row.resumable && !waitedForOpen) return;
              attached = true;
              if (!row.resumable && !row.ended) void this.askShare(runId);
              if (pos === undefined) {
                pos = waitedForOpen ? 0 : row.next;
                continue;
              }
            }
            const events = row.events ?? [];
            for (const [seq, event, data] of events) {
              if (seq < pos!) continue;
              pos = seq + 1;
              read++;
              yield { seq, event, data };
              if (signal?.aborted) return;
            }
            if (events.length >= READ_BATCH) continue;
            if (row.ended) {
              // A non-resumable log ended before its publisher heard this reader ask for it (a
              // quick run): ask again until the publisher, which keeps it a few seconds, answers
              // by writing what it holds (or those seconds have passed: it is gone).
              if (row.resumable || read > 0 || !waitedForOpen || answered) return;
              lateUntil ??= Date.now() + ENDED_GRACE_MS;
              if (Date.now() >= lateUntil) return;
              const answer = this.changed(answerKey(runId));
              try {
                void this.askShare(runId);
                if (!(await waitChange(answer.promise))) answered = true;
              } finally {
                answer.cancel();
              }
              continue;
            } else if (inMemory(this.local.get(runId), pos)) {
              continue; // taken over by this process meanwhile: read its memory copy
            }
          }
          // Nothing arrived for a while: ask again (the publisher may have missed it, or changed).
          if ((await waitChange(change.promise)) && row && !row.resumable) void this.askShare(runId);
        } finally {
          change.cancel();
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Asks the process publishing a non-resumable log to write it to the table (NOTIFY `r<run id>`). */
  private async askShare(runId: string): Promise<void> {
    try {
      await this.pool().query("SELECT pg_notify($1, $2)", [this.channel, `r${runId}`]);
    } catch {
      // The poll asks again.
    }
  }

  // -------------------------------------------------------------------------------------------

  /** Deletes logs whose run ended longer ago than their retention window. */
  async prune(): Promise<number> {
    const s = this.s;
    const { rows } = await this.pool().query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM ${s}.run_logs
          WHERE ended_at IS NOT NULL
            -- The shorter window first: a range of the partial index on ended_at.
            AND ended_at < now() - make_interval(secs => LEAST($1::float8, $2::float8))
            AND ended_at < now() - make_interval(secs => CASE WHEN resumable THEN $1::float8 ELSE $2::float8 END)
         RETURNING run_id),
       ev AS (DELETE FROM ${s}.run_events e USING gone WHERE e.run_id = gone.run_id)
       SELECT count(*)::int AS n FROM gone`,
      [this.options.resumableRetentionMs / 1000, this.options.retentionMs / 1000],
    );
    return rows[0]?.n ?? 0;
  }

  reopen(): void {
    this.closed = false;
    this.closing = false;
  }

  /** Writes what is queued (unless the database cannot be reached: then it is dropped) and ends every reader. */
  async close(): Promise<void> {
    this.closing = true;
    await this.flush();
    this.closed = true;
    for (const log of this.local.values()) log.notify();
    this.wakeAll();
  }
}
