/**
 * `agentdock/json-file`: a durable store in a directory of JSON files, for Node services, CLIs and
 * demos. Node only.
 *
 * Layout of the directory:
 * - `snapshot.json`: the compacted store, `{ format, seq, ops }`, written through lowdb with an
 *   atomic replace (temp file + rename, fsync'd when `fsync` is set).
 * - `log.jsonl`: one line per commit since the snapshot, `{ f, s, o }` (format, sequence number,
 *   ops), appended before `commit` resolves.
 * - `lock`: the pid of the process that has the directory open.
 * Both JSON files are JSON in which a value shared by several records is written once (./shared-json.ts).
 * Opening loads the snapshot, replays the log lines newer than it and drops a torn last line (a
 * crash in the middle of an append). When the log outgrows the snapshot it is compacted into a
 * new snapshot, so the cost of a commit is O(its change) amortized, and bytes on disk stay within
 * about twice the live data. All data is kept in memory (checkpoint values delta-encoded, see
 * ../delta.ts); reads never touch the disk.
 */
import { mkdir, open, readFile, rename, rm, truncate, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Low, type Adapter } from "lowdb";
import { conflict } from "../../errors.js";
import { MemoryStore } from "../memory.js";
import type { ListCheckpointsOptions, Store, WriteOp } from "../types.js";
import { Image, type LogOp } from "./image.js";
import { decodeLegacy, decodeShared, stringifyShared } from "./shared-json.js";

/** Size on disk of a text written as UTF-8 (the log counts bytes; compare like with like). */
const utf8Length = (text: string) => Buffer.byteLength(text, "utf8");

export interface JsonFileStoreOptions {
  /**
   * fsync the log after every commit and the snapshot before it replaces the old one, so
   * acknowledged commits also survive power loss (not only a process crash). Default false.
   */
  fsync?: boolean;
  /** Compact the log into the snapshot once it exceeds max(this, snapshot size). Default 4 MiB. */
  compactBytes?: number;
}

/**
 * Storage format of the files. 2: checkpoints with a parent are written as diffs against it
 * (`checkpoint.diff`). 1: every checkpoint written in full; a subset of format 2, read as is and
 * compacted into format 2 on open.
 */
export const JSON_FILE_FORMAT = 2;

/**
 * Format 0 is the plain form: ops exactly as given to `commit` (checkpoint values not encoded).
 * It is migrated on open by re-encoding, then compacted into the current format.
 */
const PLAIN_FORMAT = 0;

interface Snapshot {
  format: number;
  /** Sequence number of the last log line folded into `ops`. */
  seq: number;
  ops: LogOp[];
}

interface LogLine {
  f: number;
  s: number;
  o: LogOp[];
}

const emptySnapshot = (): Snapshot => ({ format: JSON_FILE_FORMAT, seq: 0, ops: [] });

const SNAPSHOT = "snapshot.json";
const LOG = "log.jsonl";
/** Holds the pid of the process that has the directory open (one writer per directory). */
const LOCK = "lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** lowdb adapter writing the snapshot atomically: temp file, optional fsync, rename. */
class AtomicJsonFile implements Adapter<Snapshot> {
  /** Size of the file as last read or written. */
  bytes = 0;

  constructor(
    private file: string,
    private fsync: boolean,
  ) {}

  async read(): Promise<Snapshot | null> {
    try {
      const text = await readFile(this.file, "utf8");
      this.bytes = utf8Length(text);
      const raw = JSON.parse(text) as Snapshot;
      checkFormat(raw.format, this.file);
      return decodeFile(raw, raw.format);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        this.bytes = 0;
        return null;
      }
      throw err;
    }
  }

  async write(data: Snapshot): Promise<void> {
    const tmp = `${this.file}.tmp`;
    const text = stringifyShared(data);
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(text);
      if (this.fsync) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    this.bytes = utf8Length(text);
  }
}

/** Resolves the compact-JSON markers of a parsed file or line written in `format`. */
const decodeFile = <T>(raw: T, format: number): T => (format >= 2 ? decodeShared<T>(raw) : decodeLegacy<T>(raw));

function checkFormat(format: number, where: string): void {
  if (format > JSON_FILE_FORMAT) {
    throw conflict(
      `agentdock json-file: ${where} has storage format ${format} but this agentdock reads up to ` +
        `${JSON_FILE_FORMAT}; open it with a newer agentdock or use another path`,
    );
  }
}

class JsonFileStore extends MemoryStore {
  override readonly kind = "json-file";
  override readonly capabilities = { persistent: true, shared: false };
  private image = new Image();
  private snapshotFile: AtomicJsonFile;
  private snapshot: Low<Snapshot>;
  private log: FileHandle | undefined;
  private logBytes = 0;
  private seq = 0;
  /** Commits run one at a time, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly fsync: boolean;
  private readonly compactBytes: number;

  constructor(
    private dir: string,
    options: JsonFileStoreOptions,
  ) {
    super();
    this.fsync = options.fsync ?? false;
    this.compactBytes = options.compactBytes ?? 4 * 1024 * 1024;
    this.snapshotFile = new AtomicJsonFile(join(dir, SNAPSHOT), this.fsync);
    this.snapshot = new Low<Snapshot>(this.snapshotFile, emptySnapshot());
    this.data = this.image.data;
  }

  override async open(): Promise<void> {
    if (this.log) return;
    await mkdir(this.dir, { recursive: true });
    await this.lock();
    try {
      const migrated = await this.load();
      this.log = await open(join(this.dir, LOG), "a");
      if (migrated) await this.compact();
    } catch (err) {
      await rm(join(this.dir, LOCK), { force: true });
      throw err;
    }
  }

  /** Claims the directory; a lock left by a process that died (a crash) is taken over. */
  private async lock(): Promise<void> {
    const file = join(this.dir, LOCK);
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = Number(await readFile(file, "utf8"));
    if (pid && pid !== process.pid && alive(pid)) {
      throw conflict(`agentdock json-file: ${this.dir} is open in process ${pid}; close it there first (one writer per directory)`);
    }
    await writeFile(file, String(process.pid));
  }

  /** Rebuilds the image from disk; returns true if older-format data was migrated. */
  private async load(): Promise<boolean> {
    const image = new Image();
    let migrated = false;
    const replay = (format: number, ops: readonly LogOp[]) => {
      if (format === PLAIN_FORMAT) image.commit(ops as WriteOp[]);
      else for (const op of ops) image.apply(op);
      if (format < JSON_FILE_FORMAT) migrated = true;
    };
    await this.snapshot.read();
    const snap = this.snapshot.data;
    replay(snap.format, snap.ops);
    this.seq = snap.seq;
    this.snapshot.data = emptySnapshot();

    const logPath = join(this.dir, LOG);
    let buf: Buffer;
    try {
      buf = await readFile(logPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      buf = Buffer.alloc(0);
    }
    let pos = 0;
    while (pos < buf.length) {
      const nl = buf.indexOf(0x0a, pos);
      let line: LogLine | undefined;
      try {
        line = JSON.parse(buf.toString("utf8", pos, nl === -1 ? buf.length : nl)) as LogLine;
      } catch {
        line = undefined;
      }
      if (nl === -1 || !line) {
        // A torn last line: the commit it held never resolved. Anything after a bad line that
        // is not the last one means the file was damaged, which we refuse to paper over.
        if (nl !== -1 && nl + 1 < buf.length) {
          throw new Error(`agentdock json-file: ${logPath} is damaged at byte ${pos} (not a torn tail); restore it from a backup`);
        }
        break;
      }
      checkFormat(line.f, logPath);
      if (line.s > this.seq) {
        replay(line.f, decodeFile(line, line.f).o);
        this.seq = line.s;
      }
      pos = nl + 1;
    }
    if (pos < buf.length) await truncate(logPath, pos);
    this.logBytes = pos;
    this.image = image;
    this.data = image.data;
    return migrated;
  }

  /** Waits for pending commits, folds the log into the snapshot (so the next open reads one file) and closes. */
  override async close(): Promise<void> {
    await this.queue;
    const log = this.log;
    if (!log) return;
    try {
      if (this.logBytes > 0) await this.compact();
    } finally {
      this.log = undefined;
      await log.close();
      await rm(join(this.dir, LOCK), { force: true });
    }
  }

  override commit(ops: readonly WriteOp[]): Promise<void> {
    const run = this.queue.then(() => this.write(ops));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(ops: readonly WriteOp[]): Promise<void> {
    const log = this.log;
    if (!log) throw new Error("agentdock json-file: the store is not open; call open() first");
    let bytes: Buffer;
    try {
      const logOps = this.image.commit(ops);
      if (logOps.length === 0) return;
      const line: LogLine = { f: JSON_FILE_FORMAT, s: this.seq + 1, o: logOps };
      bytes = Buffer.from(stringifyShared(line) + "\n", "utf8");
      await log.write(bytes);
      if (this.fsync) await log.datasync();
    } catch (err) {
      // The image may hold part of this commit: rebuild it from what is on disk.
      await this.load();
      throw err;
    }
    this.seq++;
    this.logBytes += bytes.length;
    if (this.logBytes > Math.max(this.compactBytes, this.snapshotFile.bytes)) {
      // The commit is already durable in the log; a failed compaction is retried after the next one.
      await this.compact().catch(() => undefined);
    }
  }

  /** Folds the log into a new snapshot, then empties the log. */
  private async compact(): Promise<void> {
    const snap: Snapshot = { format: JSON_FILE_FORMAT, seq: this.seq, ops: [...this.image.snapshot()] };
    this.snapshot.data = snap;
    try {
      await this.snapshot.write();
    } finally {
      // Do not keep the op list alive until the next compaction.
      this.snapshot.data = emptySnapshot();
    }
    // A crash before this truncate leaves lines with seq <= snap.seq, which open() skips.
    await this.log!.truncate(0);
    this.logBytes = 0;
  }

  override async getThread(id: string) {
    return this.image.getThread(id);
  }
  override async listThreads() {
    return this.image.listThreads();
  }
  override async getCheckpoint(threadId: string, checkpointId?: string) {
    return this.image.getCheckpoint(threadId, checkpointId);
  }
  override async listCheckpoints(threadId: string, options?: ListCheckpointsOptions) {
    return this.image.listCheckpoints(threadId, options);
  }
}

/**
 * A store persisted in the directory `path` (created if missing). Survives process crashes: a
 * commit resolves only after its log line is written, and a torn last line is dropped on open.
 * Single writer: open one store per directory at a time.
 */
export function jsonFileStore(path: string, options: JsonFileStoreOptions = {}): Store {
  return new JsonFileStore(path, options);
}
