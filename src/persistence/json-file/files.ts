/**
 * The two files of a JSON-file store as text, with their integrity checks (format 3; see the top
 * of ./index.ts). Node only (zlib's CRC-32).
 */
import { crc32 } from "node:zlib";
import { conflict } from "../../errors.js";
import type { GraphdockError } from "../../errors.js";
import type { LogOp } from "./codec.js";

export const FORMAT = 3;

const hex8 = (n: number) => n.toString(16).padStart(8, "0");

/** `{"crc":"<8 hex>",` opens every log line; the CRC-32 covers the line's bytes after it, up to (not including) the newline. */
const CRC_HEAD = '{"crc":"';
const HEAD_LEN = CRC_HEAD.length + 8 + 2;

const NEWLINE = Buffer.from("\n");

/** One log line as UTF-8 (with its newline): commit number `seq` and its ops. */
export function logLine(seq: number, ops: readonly LogOp[]): Buffer {
  const rest = Buffer.from(JSON.stringify({ seq, ops }), "utf8").subarray(1);
  return Buffer.concat([Buffer.from(`${CRC_HEAD}${hex8(crc32(rest))}",`, "latin1"), rest, NEWLINE]);
}

export interface LogEntry {
  seq: number;
  ops: LogOp[];
  /** Byte offset of the line in the file. */
  offset: number;
}

/** How to get out of a damaged store, for error messages. */
const RECOVER =
  "Nothing was changed. To recover, move the damaged file aside (keep it for inspection) and restore the directory from a backup";

/** The error for damage at byte `offset` of `file`. */
export function damaged(file: string, offset: number, what: string, howToRecover = RECOVER): GraphdockError {
  return conflict(`graphdock json-file: ${file} is damaged at byte ${offset}: ${what}. ${howToRecover}.`);
}

/** Whether the bytes of a line look like a line of this format (and not of an older one). */
export const isCurrentLine = (buf: Buffer, start: number) => buf.toString("latin1", start, start + CRC_HEAD.length) === CRC_HEAD;

/**
 * Reads log lines from `buf` (the whole file). A damaged last line, with no complete line after
 * it, is a commit cut short by a crash: it is reported through `torn` and not returned. Damage
 * anywhere else throws (`damaged`): the data after it would silently go missing.
 */
export function readLog(buf: Buffer, file: string): { entries: LogEntry[]; validBytes: number; torn?: { offset: number; bytes: number } } {
  const entries: LogEntry[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl === -1 ? buf.length : nl;
    // A line is written with its newline in one write: without it, the write was cut short.
    const problem = nl === -1 ? "has no newline" : checkLine(buf, pos, end);
    if (typeof problem === "string") {
      if (nl === -1 || nl + 1 === buf.length) return { entries, validBytes: pos, torn: { offset: pos, bytes: buf.length - pos } };
      throw damaged(
        file,
        pos,
        `line ${entries.length + 1} (${end - pos} bytes) ${problem}, and ${buf.length - nl - 1} bytes of later commits follow it`,
        `${RECOVER}; or, to keep only the commits before it, cut the log there (\`truncate -s ${pos} ${file}\`), losing every later commit`,
      );
    }
    entries.push({ ...problem, offset: pos });
    pos = nl + 1;
  }
  return { entries, validBytes: pos };
}

function checkLine(buf: Buffer, start: number, end: number): { seq: number; ops: LogOp[] } | string {
  if (end - start < HEAD_LEN || !isCurrentLine(buf, start)) return "does not start with its checksum";
  const want = buf.toString("latin1", start + CRC_HEAD.length, start + CRC_HEAD.length + 8);
  if (hex8(crc32(buf.subarray(start + HEAD_LEN, end))) !== want) return "fails its checksum";
  try {
    const line = JSON.parse(buf.toString("utf8", start, end)) as { seq?: unknown; ops?: unknown };
    if (typeof line.seq !== "number" || !Array.isArray(line.ops)) return "has no seq or ops";
    return { seq: line.seq, ops: line.ops as LogOp[] };
  } catch {
    return "is not JSON";
  }
}

/**
 * The snapshot file: `{"format":3,"seq":<n>,"crc":"<8 hex>","ops":[` then one op per line and
 * `]}`. The CRC-32 covers everything after `"ops":` (the op array).
 */
export function snapshotText(seq: number, ops: Iterable<LogOp>): string {
  const parts: string[] = [];
  for (const op of ops) parts.push(JSON.stringify(op));
  const body = parts.length ? `[\n${parts.join(",\n")}\n]` : "[]";
  return `{"format":${FORMAT},"seq":${seq},"crc":"${hex8(crc32(body))}","ops":${body}}\n`;
}

export interface SnapshotFile {
  format: number;
  seq: number;
  ops: unknown[];
}

const SNAPSHOT_HEAD = /^\{"format":(\d+),"seq":(\d+),"crc":"([0-9a-f]{8})","ops":/;

/** Parses and checks a snapshot (any format; older ones have no checksum). Throws `damaged` on damage. */
export function readSnapshot(text: string, file: string): SnapshotFile {
  const bytes = Buffer.byteLength(text, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message);
    const offset = at ? Buffer.byteLength(text.slice(0, Number(at[1])), "utf8") : bytes;
    const what =
      offset >= bytes - 1
        ? `it ends there in the middle of its JSON (truncated or empty: ${bytes} bytes)`
        : `it is not valid JSON there (${(err as Error).message})`;
    throw damaged(file, offset, what);
  }
  const snap = raw as Partial<SnapshotFile>;
  if (typeof raw !== "object" || raw === null || typeof snap.format !== "number" || typeof snap.seq !== "number" || !Array.isArray(snap.ops)) {
    throw damaged(file, 0, "it is JSON but not a snapshot (no format, seq and ops)");
  }
  const head = SNAPSHOT_HEAD.exec(text);
  if (snap.format === FORMAT) {
    if (!head) throw damaged(file, 0, "its header (format, seq, checksum) is not as written");
    const bodyStart = head[0].length;
    const body = text.slice(bodyStart, text.trimEnd().length - 1);
    if (hex8(crc32(body)) !== head[3]) {
      throw damaged(file, Buffer.byteLength(text.slice(0, bodyStart), "utf8"), "its ops fail their checksum");
    }
  }
  return snap as SnapshotFile;
}
