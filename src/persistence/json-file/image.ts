/**
 * The in-memory image of a JSON-file store: a `MemoryData` holding encoded checkpoints and
 * threads (see ../delta.ts) plus each thread's list logs. Every change to the image is a `LogOp`:
 * the same ops are appended to the log file, replayed on open, and written (compacted) as the
 * snapshot, so there is one way to build the image. A checkpoint whose parent is in the image is
 * persisted as `checkpoint.diff`: the keys of its encoded record that differ from the parent's
 * (run metadata, namespace and most versions repeat); a run as `run.diff` against its previous
 * version or the thread's previous run (kwargs repeat). The image itself holds full records, so
 * reads rebuild nothing, and a diff only ever refers to a record already applied before it.
 */
import { uuid4 } from "../../ids.js";
import { MemoryData } from "../memory.js";
import {
  decodeCheckpoint,
  decodeThread,
  diffCheckpoint,
  diffObject,
  patchObject,
  encodeCheckpoint,
  encodeThread,
  type EncodedCheckpoint,
  type ListLookup,
  type ObjectDiff,
  undiffCheckpoint,
} from "../delta.js";
import type { ListCheckpointsOptions, StoredCheckpoint, WriteOp } from "../types.js";
import type { RunRecord, ThreadRecord } from "../../types.js";

/**
 * A persisted change: a `WriteOp` with encoded values, items appended to a list log, or a
 * checkpoint or run put as a diff against a record the image holds when the op is applied.
 */
export type LogOp =
  | WriteOp
  | { op: "list.append"; thread_id: string; list: string; at: number; items: unknown[] }
  /** `base` omitted: the parent is the thread's latest checkpoint (the usual case). */
  | { op: "checkpoint.diff"; thread_id: string; base?: string; d?: ObjectDiff }
  /** A run put as a diff against run `base` (its previous version, or the thread's previous run). */
  | { op: "run.diff"; base: string; d?: ObjectDiff };

/** Persists `checkpoint` as a diff against `parent` when there is one. */
function putOp(checkpoint: EncodedCheckpoint, parent: EncodedCheckpoint | undefined, latest: EncodedCheckpoint | undefined): LogOp {
  if (!parent) return { op: "checkpoint.put", checkpoint };
  const d = diffCheckpoint(checkpoint, parent);
  const base = parent === latest ? {} : { base: parent.checkpoint.id };
  return { op: "checkpoint.diff", thread_id: checkpoint.thread_id, ...base, ...(d && { d }) };
}

/** Persists `run` as a diff against `base` when there is one. */
function runOp(run: RunRecord, base: RunRecord | undefined): LogOp {
  if (!base) return { op: "run.put", run };
  const d = diffObject(run as unknown as Record<string, unknown>, base as unknown as Record<string, unknown>);
  return { op: "run.diff", base: base.run_id, ...(d && { d }) };
}

export class Image {
  readonly data = new MemoryData();
  /** thread id -> list id -> items. */
  private lists = new Map<string, Map<string, unknown[]>>();
  /** thread id -> the run last put on it: the base of the thread's next new run. */
  private lastRun = new Map<string, string>();

  private lookup(threadId: string): ListLookup {
    return (id) => this.lists.get(threadId)?.get(id);
  }

  /** Applies one persisted op (live commit, log replay and snapshot load alike). */
  apply(op: LogOp): void {
    if (op.op === "list.append") {
      let byId = this.lists.get(op.thread_id);
      if (!byId) this.lists.set(op.thread_id, (byId = new Map()));
      const items = byId.get(op.list) ?? [];
      if (items.length !== op.at) {
        throw new Error(`agentdock json-file: list ${op.list} has ${items.length} items, append expected ${op.at} (corrupt log)`);
      }
      items.push(...op.items);
      byId.set(op.list, items);
      return;
    }
    if (op.op === "checkpoint.diff") {
      const parent = this.data.getCheckpoint(op.thread_id, op.base);
      if (!parent) throw new Error(`agentdock json-file: checkpoint diff against missing ${op.base ?? "latest"} of thread ${op.thread_id} (corrupt log)`);
      this.data.apply([{ op: "checkpoint.put", checkpoint: undiffCheckpoint(op.d, parent) }]);
      return;
    }
    if (op.op === "run.diff") {
      const base = this.data.runs.get(op.base);
      if (!base) throw new Error(`agentdock json-file: run diff against missing run ${op.base} (corrupt log)`);
      this.apply({ op: "run.put", run: patchObject(base as unknown as Record<string, unknown>, op.d) as unknown as RunRecord });
      return;
    }
    this.data.apply([op]);
    if (op.op === "run.put") this.lastRun.set(op.run.thread_id, op.run.run_id);
    if (op.op === "thread.delete") {
      this.lists.delete(op.thread_id);
      this.lastRun.delete(op.thread_id);
    }
  }

  /**
   * Encodes and applies `ops` in order (each sees the effect of the ones before it) and returns
   * what to persist. If an op throws, the image is left partly changed: the caller rebuilds it
   * from disk.
   */
  commit(ops: readonly WriteOp[]): LogOp[] {
    const out: LogOp[] = [];
    for (const op of ops) {
      for (const logOp of this.encode(op)) {
        this.apply(logOp);
        out.push(logOp);
      }
    }
    return out;
  }

  private encode(op: WriteOp): LogOp[] {
    if (op.op === "thread.put") {
      const latest = this.data.getCheckpoint(op.thread.thread_id);
      return [{ op: "thread.put", thread: encodeThread(op.thread, latest, this.lookup(op.thread.thread_id)) }];
    }
    if (op.op === "run.put") {
      const { run_id, thread_id } = op.run;
      const last = this.lastRun.get(thread_id);
      return [runOp(op.run, this.data.runs.get(run_id) ?? (last === undefined ? undefined : this.data.runs.get(last)))];
    }
    if (op.op !== "checkpoint.put") return [op];
    const { thread_id, parent_checkpoint_id } = op.checkpoint;
    const parent = parent_checkpoint_id === null ? undefined : this.data.getCheckpoint(thread_id, parent_checkpoint_id);
    const { checkpoint, appends } = encodeCheckpoint(op.checkpoint, parent, this.lookup(thread_id), uuid4);
    const latest = this.data.getCheckpoint(thread_id);
    return [...appends.map((a): LogOp => ({ op: "list.append", thread_id, ...a })), putOp(checkpoint, parent, latest)];
  }

  /** Ops that rebuild the whole image from empty (the compacted snapshot). */
  *snapshot(): Generator<LogOp> {
    const d = this.data;
    for (const assistant of d.assistants.values()) yield { op: "assistant.put", assistant };
    for (const list of d.versions.values()) for (const version of list) yield { op: "assistant_version.put", version };
    for (const thread of d.threads.values()) yield { op: "thread.put", thread };
    for (const [thread_id, byId] of this.lists) {
      for (const [list, items] of byId) yield { op: "list.append", thread_id, list, at: 0, items };
    }
    for (const [thread_id, tc] of d.checkpoints) {
      const done = new Set<string>();
      let latest: EncodedCheckpoint | undefined;
      for (const checkpoint of tc.list) {
        const p = checkpoint.parent_checkpoint_id;
        yield putOp(checkpoint, p !== null && done.has(p) ? d.getCheckpoint(thread_id, p) : undefined, latest);
        done.add(checkpoint.checkpoint.id);
        latest = checkpoint;
      }
    }
    const lastRun = new Map<string, RunRecord>();
    for (const run of d.runs.values()) {
      yield runOp(run, lastRun.get(run.thread_id));
      lastRun.set(run.thread_id, run);
    }
    for (const [collection, docs] of d.docs) {
      for (const { id, parent, doc } of docs.values()) yield { op: "doc.put", collection, id, parent, doc };
    }
  }

  // Reads (decoded).

  getThread(id: string): ThreadRecord | undefined {
    const t = this.data.threads.get(id);
    return t && decodeThread(t, this.lookup(id));
  }

  listThreads(): ThreadRecord[] {
    return [...this.data.threads.values()].map((t) => decodeThread(t, this.lookup(t.thread_id)));
  }

  getCheckpoint(threadId: string, checkpointId?: string): StoredCheckpoint | undefined {
    const cp: EncodedCheckpoint | undefined = this.data.getCheckpoint(threadId, checkpointId);
    return cp && decodeCheckpoint(cp, this.lookup(threadId));
  }

  listCheckpoints(threadId: string, options?: ListCheckpointsOptions): StoredCheckpoint[] {
    const lookup = this.lookup(threadId);
    return this.data.listCheckpoints(threadId, options).map((cp) => decodeCheckpoint(cp, lookup));
  }
}
