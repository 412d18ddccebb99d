/**
 * How the JSON-file store writes a commit's ops (format 3; see the top of ./index.ts): plain
 * `WriteOp` JSON, without `expect` (it held when the commit was accepted) and without `notify`
 * (not persisted), except that a thread, run or checkpoint put whose *base* is stored is written
 * as a diff against it, so a line costs O(what changed):
 *
 * - `{"op":"thread.put","thread_id":…,"diff":…}`: against the stored thread of that id;
 * - `{"op":"run.put","run_id":…,"base":…,"diff":…}`: against the stored run `base` (the run's
 *   previous version, or the thread's previous run);
 * - `{"op":"checkpoint.put","thread_id":…,"checkpoint_ns":…,"base":…,"diff":…,"pending_writes":…}`:
 *   against the stored checkpoint `base` of the same thread and namespace (its parent, so its
 *   `parent_checkpoint_id` is `base` unless the diff says otherwise), without its pending writes
 *   (the new checkpoint's own are written in full, omitted when empty).
 *
 * A diff (`RecordDiff`) names the keys that changed: `set` (new values), `del` (removed keys),
 * `sub` (both values are objects: a diff of them) and `add` (the value is the base's array with
 * these items appended; a chat's message list costs only its new messages). Values are opaque
 * JSON: nothing here knows what the engine puts in them.
 *
 * The base of an op is looked up as the state is when the op applies: the stored state before
 * the commit, plus the effect of the commit's earlier ops (`Overlay`). Writing and reading use
 * the same lookup, so both always resolve the same base.
 */
import { isPlainObject, jsonEqual } from "../../json.js";
import type { RunRecord, ThreadRecord } from "../../types.js";
import type { PendingWrite, StoredCheckpoint, WriteOp } from "../types.js";

export interface RecordDiff {
  set?: Record<string, unknown>;
  del?: string[];
  sub?: Record<string, RecordDiff>;
  add?: Record<string, unknown[]>;
}

type Obj = Record<string, unknown>;

/** Sets an own key (`__proto__` included) without touching the prototype. */
function setOwn(obj: Obj, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Whether `v` starts with the items of `b` (a pointer compare per item, JSON equality where they are not the same object). */
function extends_(v: readonly unknown[], b: readonly unknown[]): boolean {
  const n = b.length;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    const y = b[i];
    if (x !== y && !jsonEqual(x, y)) return false;
  }
  return true;
}

/** How `value` differs from `base`; undefined when they are equal JSON. Cost: O(what differs), plus a pointer compare per shared array item. */
export function diffRecord(value: Obj, base: Obj): RecordDiff | undefined {
  let diff: RecordDiff | undefined;
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (v === undefined) continue;
    const b = Object.hasOwn(base, k) ? base[k] : undefined;
    if (v === b) continue;
    if (Array.isArray(v) && Array.isArray(b) && v.length >= b.length && b.length > 0) {
      if (extends_(v, b)) {
        if (v.length > b.length) setOwn(((diff ??= {}).add ??= {}), k, v.slice(b.length));
        continue;
      }
    } else if (isPlainObject(v) && isPlainObject(b)) {
      const sub = diffRecord(v, b);
      if (sub) setOwn(((diff ??= {}).sub ??= {}), k, sub);
      continue;
    } else if (b !== undefined && jsonEqual(v, b)) {
      continue;
    }
    setOwn(((diff ??= {}).set ??= {}), k, v);
  }
  for (const k of Object.keys(base)) {
    if (base[k] !== undefined && (!Object.hasOwn(value, k) || value[k] === undefined)) ((diff ??= {}).del ??= []).push(k);
  }
  return diff;
}

/** `base` with `diff` applied (a new object; `base` is unchanged). Throws on a diff that does not fit its base. */
export function patchRecord(base: Obj, diff: RecordDiff | undefined): Obj {
  const out: Obj = {};
  for (const k of Object.keys(base)) setOwn(out, k, base[k]);
  if (!diff) return out;
  for (const k of diff.del ?? []) delete out[k];
  if (diff.set) for (const k of Object.keys(diff.set)) setOwn(out, k, diff.set[k]);
  if (diff.sub) {
    for (const k of Object.keys(diff.sub)) {
      const b = out[k];
      if (!isPlainObject(b)) throw new Error(`the diff patches key "${k}", which is not an object in its base`);
      setOwn(out, k, patchRecord(b, diff.sub[k]));
    }
  }
  if (diff.add) {
    for (const k of Object.keys(diff.add)) {
      const b = out[k];
      if (!Array.isArray(b)) throw new Error(`the diff appends to key "${k}", which is not an array in its base`);
      setOwn(out, k, b.concat(diff.add[k]));
    }
  }
  return out;
}

/** A persisted op (one element of a log line's `ops`, or of the snapshot's). */
export type LogOp =
  | Exclude<WriteOp, { op: "notify" } | { op: "thread.put" } | { op: "run.put" } | { op: "checkpoint.put" }>
  | { op: "thread.put"; thread: ThreadRecord }
  | { op: "thread.put"; thread_id: string; diff?: RecordDiff }
  | { op: "run.put"; run: RunRecord }
  | { op: "run.put"; run_id: string; base: string; diff?: RecordDiff }
  | { op: "checkpoint.put"; checkpoint: StoredCheckpoint }
  | {
      op: "checkpoint.put";
      thread_id: string;
      checkpoint_ns: string;
      base: string;
      diff?: RecordDiff;
      pending_writes?: readonly PendingWrite[];
    };

/** Read access to the stored state a commit applies to. */
export interface StoredState {
  getThread(id: string): ThreadRecord | undefined;
  getRun(id: string): RunRecord | undefined;
  getCheckpoint(threadId: string, ns: string, id: string): StoredCheckpoint | undefined;
}

const cpKey = (threadId: string, ns: string, id: string) => JSON.stringify([threadId, ns, id]);

/**
 * The stored state as seen by the op being written or read: the state before the commit plus the
 * commit's earlier ops. It only needs to agree with itself (writer and reader use it alike); it
 * models deletes conservatively (a base touched by an earlier delete is treated as missing).
 */
class Overlay implements StoredState {
  private threads = new Map<string, ThreadRecord | null>();
  private runs = new Map<string, RunRecord | null>();
  private checkpoints = new Map<string, StoredCheckpoint | null>();
  /** Threads deleted (or whose checkpoints were deleted) earlier in the commit. */
  private gone = new Set<string>();

  constructor(private stored: StoredState) {}

  getThread(id: string) {
    const t = this.threads.get(id);
    return t === null ? undefined : (t ?? this.stored.getThread(id));
  }
  getRun(id: string) {
    const r = this.runs.get(id);
    if (r !== undefined) return r ?? undefined;
    const s = this.stored.getRun(id);
    return s && this.gone.has(s.thread_id) ? undefined : s;
  }
  getCheckpoint(threadId: string, ns: string, id: string) {
    const c = this.checkpoints.get(cpKey(threadId, ns, id));
    if (c !== undefined) return c ?? undefined;
    return this.gone.has(threadId) ? undefined : this.stored.getCheckpoint(threadId, ns, id);
  }

  /** Records the effect of `op` (as far as bases are concerned). */
  note(op: WriteOp): void {
    switch (op.op) {
      case "thread.put":
        this.threads.set(op.thread.thread_id, op.thread);
        return;
      case "thread.delete":
        this.threads.set(op.thread_id, null);
        this.gone.add(op.thread_id);
        for (const [id, r] of this.runs) if (r?.thread_id === op.thread_id) this.runs.set(id, null);
        for (const [key, c] of this.checkpoints) if (c?.thread_id === op.thread_id) this.checkpoints.set(key, null);
        return;
      case "run.put":
        this.runs.set(op.run.run_id, op.run);
        return;
      case "run.delete":
        this.runs.set(op.run_id, null);
        return;
      case "checkpoint.put": {
        const c = op.checkpoint;
        this.checkpoints.set(cpKey(c.thread_id, c.checkpoint_ns ?? "", c.checkpoint.id), c);
        return;
      }
      case "checkpoint.delete":
        // Conservative: every stored checkpoint of the thread stops being a base in this commit.
        this.gone.add(op.thread_id);
        for (const [key, c] of this.checkpoints) if (c?.thread_id === op.thread_id) this.checkpoints.set(key, null);
        return;
      default:
        return;
    }
  }
}

type Rec = Obj;
const rec = (x: object) => x as Rec;

/** A checkpoint record without its pending writes (they are the checkpoint's own, never diffed). */
function withoutWrites(c: StoredCheckpoint): Rec {
  const { pending_writes: _, ...rest } = c;
  return rest;
}

/** What a child's record is diffed against: its parent's, with the parent as parent (a diff need not name it again). */
const childOf = (parent: StoredCheckpoint): Rec => ({ ...withoutWrites(parent), parent_checkpoint_id: parent.checkpoint.id });

/**
 * The ops to persist for `ops` applied to `stored` (which must not change while this runs).
 * `lastRun` names a run of the thread to diff a new run against (the thread's previous run).
 */
export function encodeOps(ops: readonly WriteOp[], stored: StoredState, lastRun: (threadId: string) => string | undefined): LogOp[] {
  const state = new Overlay(stored);
  const out: LogOp[] = [];
  for (const op of ops) {
    const logged = encodeOne(op, state, lastRun);
    if (logged) out.push(logged);
    state.note(op);
  }
  return out;
}

function encodeOne(op: WriteOp, state: StoredState, lastRun: (threadId: string) => string | undefined): LogOp | undefined {
  switch (op.op) {
    case "notify":
      return undefined;
    case "thread.put": {
      const base = state.getThread(op.thread.thread_id);
      if (!base) return { op: "thread.put", thread: op.thread };
      const diff = diffRecord(rec(op.thread), rec(base));
      return { op: "thread.put", thread_id: op.thread.thread_id, ...(diff && { diff }) };
    }
    case "run.put": {
      const { run_id, thread_id } = op.run;
      let base = state.getRun(run_id);
      if (!base) {
        const last = lastRun(thread_id);
        base = last === undefined ? undefined : state.getRun(last);
      }
      if (!base) return { op: "run.put", run: op.run };
      const diff = diffRecord(rec(op.run), rec(base));
      return { op: "run.put", run_id, base: base.run_id, ...(diff && { diff }) };
    }
    case "checkpoint.put": {
      const c = op.checkpoint;
      const ns = c.checkpoint_ns ?? "";
      const base = c.parent_checkpoint_id === null ? undefined : state.getCheckpoint(c.thread_id, ns, c.parent_checkpoint_id);
      if (!base) return { op: "checkpoint.put", checkpoint: c };
      const diff = diffRecord(withoutWrites(c), childOf(base));
      return {
        op: "checkpoint.put",
        thread_id: c.thread_id,
        checkpoint_ns: ns,
        base: base.checkpoint.id,
        ...(diff && { diff }),
        ...(c.pending_writes.length > 0 && { pending_writes: c.pending_writes }),
      };
    }
    case "thread.delete":
    case "run.delete": {
      const { expect: _, ...plain } = op;
      return plain;
    }
    case "lease.put": {
      const { expect: _, ...plain } = op;
      return plain;
    }
    case "cron.put":
    case "cron.delete": {
      const { expect: _, ...plain } = op;
      return plain;
    }
    default:
      return op;
  }
}

/** The `WriteOp`s that `logOps` stand for, applied to `stored`. Throws when a base is missing or a diff does not fit it (a damaged file). */
export function decodeOps(logOps: readonly LogOp[], stored: StoredState): WriteOp[] {
  const state = new Overlay(stored);
  const out: WriteOp[] = [];
  for (const logged of logOps) {
    const op = decodeOne(logged, state);
    out.push(op);
    state.note(op);
  }
  return out;
}

function decodeOne(op: LogOp, state: StoredState): WriteOp {
  if (op.op === "thread.put" && "thread_id" in op) {
    const base = state.getThread(op.thread_id);
    if (!base) throw new Error(`thread.put diff against thread ${op.thread_id}, which is not stored`);
    return { op: "thread.put", thread: patchRecord(rec(base), op.diff) as unknown as ThreadRecord };
  }
  if (op.op === "run.put" && "base" in op) {
    const base = state.getRun(op.base);
    if (!base) throw new Error(`run.put diff against run ${op.base}, which is not stored`);
    return { op: "run.put", run: patchRecord(rec(base), op.diff) as unknown as RunRecord };
  }
  if (op.op === "checkpoint.put" && "base" in op) {
    const base = state.getCheckpoint(op.thread_id, op.checkpoint_ns, op.base);
    if (!base) throw new Error(`checkpoint.put diff against checkpoint ${op.base} of thread ${op.thread_id}, which is not stored`);
    const record = patchRecord(childOf(base), op.diff) as unknown as StoredCheckpoint;
    return { op: "checkpoint.put", checkpoint: { ...record, pending_writes: op.pending_writes ?? [] } };
  }
  if (op.op === "checkpoint.put" && !("checkpoint" in op)) throw new Error("checkpoint.put without a checkpoint or a base");
  return op as WriteOp;
}
