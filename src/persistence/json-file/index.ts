/**
 * `graphdock/json-file`: a durable store in a directory of JSON files, for Node services, CLIs and
 * demos. Node only. One writer per directory: one open store per directory in a process (a second
 * one's `open()` rejects with `conflict`), and one process (the `lock` file).
 *
 * ## Files (format 3)
 *
 * - `log.jsonl`: one line per commit, appended (and fsync'd with `fsync: true`) before `commit`
 *   resolves:
 *
 *       {"crc":"1c291ca3","seq":42,"ops":[{"op":"run.put","run_id":"r1","base":"r1","diff":{"set":{"status":"success"}}}, ...]}
 *
 *   `crc` is the CRC-32 (hex) of the line's bytes after `{"crc":"…",` up to the newline; `seq`
 *   numbers commits 1, 2, ... across the store's life; `ops` are the commit's `WriteOp`s as plain
 *   JSON, without `expect` and `notify`, where a thread, run or checkpoint put whose base is
 *   stored is written as a diff against it (a checkpoint against its parent: for a message list
 *   that grew, only the new messages). See ./codec.ts for the exact forms.
 * - `snapshot.json.gz`: the whole store as the ops that rebuild it (in the same forms, each
 *   thread's checkpoints as diffs against their parents and its runs against the run before),
 *   gzip'd JSON with one op per line, written through lowdb with an atomic replace (temp file,
 *   fsync when `fsync` is set, rename). `zcat snapshot.json.gz` shows:
 *
 *       {"format":3,"seq":41,"crc":"9a0b…","ops":[
 *       {"op":"assistant.put","assistant":{…}},
 *       …
 *       ]}
 *
 *   `seq` is the last commit folded in; `crc` is the CRC-32 of the text after `"ops":` (gzip
 *   checks its own bytes too). It is compressed because it holds the whole history: a 500-turn
 *   chat's snapshot is 0.3-0.8x its final state gzip'd, 7-10x as plain JSON.
 * - `lock`: the pid of the process that has the directory open. Taking it over from a process
 *   that died proves that process's leases dead: opening voids every stored lease (D64), so the
 *   runs it was executing are resumed at once rather than after their lease.
 *
 * Opening reads the snapshot and replays the log lines after its `seq`. When the log grows past
 * `max(compactBytes, the snapshot's uncompressed size)`, and on `close()`, it is folded into a
 * new snapshot and emptied (lines a crash left behind with `seq` <= the snapshot's are skipped).
 * All data is held in memory (the memory store's); reads never touch the disk.
 *
 * ## Damage
 *
 * A last log line that is incomplete or fails its checksum is a commit cut short by a crash (it
 * never resolved): it is dropped, with a warning naming the file, byte offset and byte count. Any
 * other damage (a bad line with lines after it, a missing commit, a truncated or empty snapshot,
 * `{}`, a checksum mismatch in the snapshot) refuses to open with a `conflict` error naming the
 * file and byte offset and how to recover: nothing starts with data silently missing.
 *
 * Directories written in formats 0, 1 and 2 (`snapshot.json` and compact JSON lines;
 * ./legacy.ts) are migrated on open: read, written as a format-3 snapshot, old files removed.
 */
import { SILENT, type DiagnosticsLogger } from "../../diagnostics.js";
import { mkdir, open, readFile, realpath, rename, rm, truncate, writeFile, type FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { Low, type Adapter } from "lowdb";
import { conflict } from "../../errors.js";
import { MemoryData, MemoryStore } from "../memory.js";
import type { Store, WriteOp } from "../types.js";
import { decodeOps, encodeOps, type LogOp, type StoredState } from "./codec.js";
import { damaged, FORMAT, isCurrentLine, logLine, readLog, readSnapshot, snapshotText, type SnapshotFile } from "./files.js";
import { decodeOld, LegacyReplay } from "./legacy.js";

export interface JsonFileStoreOptions {
  /**
   * fsync the log after every commit and the snapshot before it replaces the old one, so
   * acknowledged commits also survive power loss (not only a process crash). Default false.
   */
  fsync?: boolean;
  /** Compact the log into the snapshot once it exceeds max(this, the snapshot's uncompressed size). Default 4 MiB. */
  compactBytes?: number;
  /** Receives warnings (a torn last log line dropped on open). Default: the runtime's `diagnostics` (warn). */
  onWarning?: (message: string) => void;
}

/** Storage format of the files (see the top of this file); older formats are migrated on open. */
export const JSON_FILE_FORMAT = FORMAT;

const SNAPSHOT = "snapshot.json.gz";
/** The snapshot of formats 0-2 (read to migrate them). */
const LEGACY_SNAPSHOT = "snapshot.json";
const LOG = "log.jsonl";
/** Holds the pid of the process that has the directory open (one writer per directory). */
const LOCK = "lock";

/** Real paths of the directories open (or opening) in this process. */
const openDirs = new Set<string>();

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

interface SnapshotDoc {
  seq: number;
  ops: Iterable<LogOp>;
}

/**
 * lowdb adapter for the snapshot: gzip'd JSON (`snapshot.json.gz`), checked on read and replaced
 * atomically on write (temp file, optional fsync, rename). Reads a legacy `snapshot.json`
 * (formats 0-2) when there is no `snapshot.json.gz`, and removes it once a new snapshot is written.
 */
class SnapshotAdapter implements Adapter<SnapshotFile | SnapshotDoc | null> {
  /**
   * Size of the snapshot's JSON as last read or written (uncompressed: the log is compacted once
   * it outgrows this, so compaction work stays proportional to the log bytes written).
   */
  bytes = 0;
  readonly file: string;
  private readonly legacy: string;

  constructor(
    dir: string,
    private fsync: boolean,
  ) {
    this.file = join(dir, SNAPSHOT);
    this.legacy = join(dir, LEGACY_SNAPSHOT);
  }

  async read(): Promise<SnapshotFile | null> {
    const zipped = await readIfThere(this.file);
    if (zipped) {
      let text: string;
      try {
        text = (await gunzipAsync(zipped)).toString("utf8");
      } catch (err) {
        const truncated = /unexpected end/i.test((err as Error).message);
        throw damaged(
          this.file,
          truncated ? zipped.length : 0,
          truncated ? `it ends there, in the middle of its data (truncated or empty: ${zipped.length} bytes)` : `it is not gzip data as written (${(err as Error).message})`,
        );
      }
      this.bytes = Buffer.byteLength(text, "utf8");
      return readSnapshot(text, this.file);
    }
    const plain = await readIfThere(this.legacy);
    this.bytes = plain?.length ?? 0;
    return plain ? readSnapshot(plain.toString("utf8"), this.legacy) : null;
  }

  async write(data: SnapshotFile | SnapshotDoc | null): Promise<void> {
    if (!data) throw new Error("graphdock json-file: no snapshot to write");
    const text = snapshotText(data.seq, data.ops as Iterable<LogOp>);
    const zipped = await gzipAsync(text);
    const tmp = `${this.file}.tmp`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(zipped);
      if (this.fsync) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    if (this.fsync) {
      // The rename itself must survive power loss too.
      const dir = await open(dirname(this.file), "r");
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
    await rm(this.legacy, { force: true });
    this.bytes = Buffer.byteLength(text, "utf8");
  }
}

async function readIfThere(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

class JsonFileStore extends MemoryStore {
  override readonly kind = "json-file";
  override readonly capabilities = { persistent: true, shared: false };
  private snapshotFile: SnapshotAdapter;
  private snapshot: Low<SnapshotFile | SnapshotDoc | null>;
  private log: FileHandle | undefined;
  private logBytes = 0;
  private seq = 0;
  /** Real path of the directory while this store holds it. */
  private held: string | undefined;
  private opening: Promise<void> | undefined;
  /** Commits run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** thread id -> the run last put on it: what a new run of the thread is written as a diff against. */
  private lastRun = new Map<string, string>();
  private readonly fsync: boolean;
  private readonly compactBytes: number;
  private readonly warn: (message: string) => void;
  private diagnostics: DiagnosticsLogger = SILENT;
  private readonly state: StoredState = {
    getThread: (id) => this.data.threads.get(id),
    getRun: (id) => this.data.runs.get(id)?.run,
    getCheckpoint: (thread_id, checkpoint_ns, checkpoint_id) => this.data.getCheckpoint({ thread_id, checkpoint_ns, checkpoint_id }),
  };

  constructor(
    private dir: string,
    options: JsonFileStoreOptions,
  ) {
    super();
    this.fsync = options.fsync ?? false;
    this.compactBytes = options.compactBytes ?? 4 * 1024 * 1024;
    // Without onWarning: the runtime's diagnostics (useDiagnostics), silent until one is given.
    this.warn = options.onWarning ?? ((message) => this.diagnostics.warn({ dir: this.dir }, message));
    this.snapshotFile = new SnapshotAdapter(dir, this.fsync);
    this.snapshot = new Low<SnapshotFile | SnapshotDoc | null>(this.snapshotFile, null);
  }

  override useDiagnostics(log: DiagnosticsLogger): void {
    super.useDiagnostics(log);
    this.diagnostics = log;
  }

  private get logPath() {
    return join(this.dir, LOG);
  }

  override open(): Promise<void> {
    if (this.log) return Promise.resolve();
    this.opening ??= this.doOpen().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const real = await realpath(this.dir);
    if (openDirs.has(real)) {
      throw conflict(
        `graphdock json-file: ${this.dir} is already open in this process (another jsonFileStore on the same directory); ` +
          `close that store first or share it (one writer per directory)`,
      );
    }
    openDirs.add(real);
    try {
      await this.lock();
      try {
        const rewrite = await this.load();
        // One writer per directory: whoever held the leases stored here has closed or died (its
        // lock is ours now), so they are void and their runs can be resumed at once (D64).
        this.data.leases.clear();
        this.log = await open(this.logPath, "a");
        if (rewrite) await this.compact();
      } catch (err) {
        await rm(join(this.dir, LOCK), { force: true });
        throw err;
      }
    } catch (err) {
      openDirs.delete(real);
      throw err;
    }
    this.held = real;
  }

  /** Claims the directory for this process; a lock left by a process that died (a crash) is taken over. */
  private async lock(): Promise<void> {
    const file = join(this.dir, LOCK);
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = Number(await readFile(file, "utf8"));
    // Our own pid: left by a store of this process that was never closed (none is open: see openDirs).
    if (pid && pid !== process.pid && alive(pid)) {
      throw conflict(`graphdock json-file: ${this.dir} is open in process ${pid}; close it there first (one writer per directory)`);
    }
    await writeFile(file, String(process.pid));
  }

  /**
   * Rebuilds the memory image from the files. Returns true when they should be rewritten as a
   * new snapshot (nothing on disk yet, or data in an older format).
   */
  private async load(): Promise<boolean> {
    this.data = new MemoryData();
    this.lastRun.clear();
    await this.snapshot.read();
    const snap = this.snapshot.data as SnapshotFile | null;
    this.snapshot.data = null;
    const file = snap && snap.format < FORMAT ? join(this.dir, LEGACY_SNAPSHOT) : this.snapshotFile.file;
    if (snap && snap.format > FORMAT) {
      throw conflict(
        `graphdock json-file: ${file} has storage format ${snap.format} but this graphdock reads up to ` +
          `${FORMAT}; open it with a newer graphdock or use another path`,
      );
    }
    let buf: Buffer;
    try {
      buf = await readFile(this.logPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      buf = Buffer.alloc(0);
    }
    // Formats 0-2: an old snapshot, or (before the first compaction) only an old log.
    if (snap ? snap.format < FORMAT : buf.length > 0 && !isCurrentLine(buf, 0)) {
      this.loadLegacy(snap, buf);
      return true;
    }
    this.seq = snap?.seq ?? 0;
    snap?.ops.forEach((op, i) => this.replay([op as LogOp], file, `op ${i + 1} of the snapshot`, 0));
    const { entries, validBytes, torn } = readLog(buf, this.logPath);
    for (const entry of entries) {
      if (entry.seq <= this.seq) continue; // already in the snapshot (a crash between snapshot and log truncation)
      if (entry.seq !== this.seq + 1) {
        throw damaged(this.logPath, entry.offset, `it holds commit ${entry.seq} after commit ${this.seq}: commits are missing`);
      }
      this.replay(entry.ops, this.logPath, `commit ${entry.seq}`, entry.offset);
      this.seq = entry.seq;
    }
    if (torn) {
      this.warn(
        `graphdock json-file: dropped the torn last line of ${this.logPath} at byte ${torn.offset} (${torn.bytes} bytes): ` +
          `a commit cut short by a crash, which never completed`,
      );
      await truncate(this.logPath, validBytes);
    }
    this.logBytes = validBytes;
    return !snap;
  }

  /** Applies persisted ops to the image; a base that is missing or an op the image refuses means damage at `offset`. */
  private replay(logOps: LogOp[], file: string, what: string, offset: number): void {
    let ops: WriteOp[];
    try {
      ops = decodeOps(logOps, this.state);
      this.data.apply(ops, { replay: true });
    } catch (err) {
      throw damaged(file, offset, `${what} cannot be applied (${(err as Error).message})`);
    }
    this.noteRuns(ops);
  }

  /** Reads a directory written in format 0, 1 or 2 (rewritten in format 3 by `open`). */
  private loadLegacy(snap: SnapshotFile | null, buf: Buffer): void {
    const legacy = new LegacyReplay();
    const file = join(this.dir, LEGACY_SNAPSHOT);
    let seq = 0;
    if (snap) {
      const ops = decodeOld(snap.ops, snap.format) as Array<{ op: string }>;
      ops.forEach((op, i) => {
        try {
          legacy.apply(op, snap.format);
        } catch (err) {
          throw damaged(file, 0, `op ${i + 1} of the snapshot cannot be applied (${(err as Error).message})`);
        }
      });
      seq = snap.seq;
    }
    let pos = 0;
    while (pos < buf.length) {
      const nl = buf.indexOf(0x0a, pos);
      const end = nl === -1 ? buf.length : nl;
      let line: { f: number; s: number; o: Array<{ op: string }> } | undefined;
      try {
        line = JSON.parse(buf.toString("utf8", pos, end));
      } catch {
        line = undefined;
      }
      if (!line || typeof line.f !== "number") {
        if (nl === -1 || nl + 1 === buf.length) {
          this.warn(`graphdock json-file: dropped the torn last line of ${this.logPath} at byte ${pos} (${buf.length - pos} bytes)`);
          break;
        }
        throw damaged(this.logPath, pos, "a line in the middle of the log is not JSON");
      }
      if (line.f > FORMAT) {
        throw conflict(`graphdock json-file: ${this.logPath} has storage format ${line.f} but this graphdock reads up to ${FORMAT}`);
      }
      if (line.s > seq) {
        const ops = decodeOld(line, line.f).o;
        for (const op of ops) {
          try {
            legacy.apply(op, line.f);
          } catch (err) {
            throw damaged(this.logPath, pos, `commit ${line.s} cannot be applied (${(err as Error).message})`);
          }
        }
        seq = line.s;
      }
      pos = end + 1;
    }
    const ops = [...legacy.ops()];
    this.data.apply(ops, { replay: true });
    this.noteRuns(ops);
    this.seq = seq;
    this.logBytes = buf.length;
  }

  private noteRuns(ops: readonly WriteOp[]): void {
    for (const op of ops) {
      if (op.op === "run.put") this.lastRun.set(op.run.thread_id, op.run.run_id);
      else if (op.op === "thread.delete") this.lastRun.delete(op.thread_id);
    }
  }

  /** Waits for pending commits, folds the log into the snapshot (so the next open reads one file) and closes. */
  override async close(): Promise<void> {
    await this.opening?.catch(() => undefined);
    await this.queue;
    const log = this.log;
    if (!log) return;
    try {
      if (this.logBytes > 0) await this.compact();
    } finally {
      this.log = undefined;
      await log.close();
      await rm(join(this.dir, LOCK), { force: true });
      if (this.held) openDirs.delete(this.held);
      this.held = undefined;
    }
  }

  override commit(ops: readonly WriteOp[]): Promise<void> {
    const run = this.queue.then(() => this.write(ops));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(ops: readonly WriteOp[]): Promise<void> {
    const log = this.log;
    if (!log) throw new Error(`graphdock json-file: the store on ${this.dir} is not open; call open() first`);
    // What to persist is worked out against the state before the commit; then the image applies
    // the commit all or nothing (checking values and expectations): if it refuses, nothing is
    // changed and nothing is written.
    const logOps = encodeOps(ops, this.state, (threadId) => this.lastRun.get(threadId));
    this.data.apply(ops);
    if (logOps.length > 0) {
      let line: Buffer | undefined;
      try {
        line = logLine(this.seq + 1, logOps);
        let done = 0;
        if (this.fsync) {
          while (done < line.length) done += (await log.write(line, done)).bytesWritten;
          await log.datasync();
        } else {
          // Into the page cache: a few microseconds, cheaper than a round trip through the thread pool.
          while (done < line.length) done += writeSync(log.fd, line, done);
        }
      } catch (err) {
        // The image holds a commit the disk may not: cut the log back and rebuild from the files.
        await truncate(this.logPath, this.logBytes).catch(() => undefined);
        await this.load();
        throw err;
      }
      this.seq++;
      this.logBytes += line.length;
    }
    this.noteRuns(ops);
    this.deliver(ops);
    if (this.logBytes > Math.max(this.compactBytes, this.snapshotFile.bytes)) {
      // The commit is already durable in the log; a failed compaction is retried after the next commit.
      await this.compact().catch(() => undefined);
    }
  }

  /** Folds the log into a new snapshot, then empties the log. */
  private async compact(): Promise<void> {
    this.snapshot.data = { seq: this.seq, ops: this.snapshotOps() };
    try {
      await this.snapshot.write();
    } finally {
      this.snapshot.data = null;
    }
    // A crash before this truncate leaves lines with seq <= the snapshot's, which open() skips.
    await this.log!.truncate(0);
    this.logBytes = 0;
  }

  /**
   * The ops that rebuild the store, each thread's checkpoints as diffs against their parents and
   * its runs against the run before them (as in the log).
   */
  private *snapshotOps(): Generator<LogOp> {
    const d = this.data;
    const written = { cps: new Set<string>(), runs: new Set<string>() };
    const key = (threadId: string, ns: string, id: string) => JSON.stringify([threadId, ns, id]);
    const state: StoredState = {
      getThread: () => undefined,
      getRun: (id) => (written.runs.has(id) ? d.runs.get(id)?.run : undefined),
      getCheckpoint: (threadId, ns, id) => (written.cps.has(key(threadId, ns, id)) ? this.state.getCheckpoint(threadId, ns, id) : undefined),
    };
    const lastRun = new Map<string, string>();
    for (const assistant of d.assistants.values()) yield { op: "assistant.put", assistant };
    for (const list of d.versions.values()) for (const version of list) yield { op: "assistant_version.put", version };
    // Every thread holding checkpoints (root namespace or subgraphs), each namespace in put order.
    for (const threadId of new Set([...d.checkpoints.keys(), ...d.subCheckpoints.keys()])) {
      for (const ns of d.listCheckpointNamespaces(threadId)) {
        for (const checkpoint of d.listCheckpoints(threadId, { checkpoint_ns: ns }).reverse()) {
          yield* encodeOps([{ op: "checkpoint.put", checkpoint }], state, () => undefined);
          written.cps.add(key(threadId, ns, checkpoint.checkpoint.id));
        }
      }
    }
    for (const thread of d.threads.values()) yield { op: "thread.put", thread };
    for (const { run } of d.runs.values()) {
      yield* encodeOps([{ op: "run.put", run }], state, (threadId) => lastRun.get(threadId));
      written.runs.add(run.run_id);
      lastRun.set(run.thread_id, run.run_id);
    }
    for (const request of d.cancels.values()) yield { op: "cancel.put", request };
    for (const lease of d.leases.values()) yield { op: "lease.put", lease };
    for (const cron of d.crons.values()) yield { op: "cron.put", cron };
    for (const [collection, docs] of d.docs) {
      for (const { id, parent, doc } of docs.values()) yield { op: "doc.put", collection, id, parent, doc };
    }
    for (const group of d.items.values()) for (const item of group.items.values()) yield { op: "item.put", item };
  }
}

/**
 * A store persisted in the directory `path` (created if missing). Survives process crashes: a
 * commit resolves only after its log line is written, and a torn last line is dropped on open.
 * One writer per directory: a second store on the same directory, in this process or another,
 * cannot open it until the first is closed.
 */
export function jsonFileStore(path: string, options: JsonFileStoreOptions = {}): Store {
  return new JsonFileStore(path, options);
}
