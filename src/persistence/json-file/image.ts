/**
 * The in-memory image of a JSON-file store: a `MemoryData` holding encoded checkpoints and
 * threads (see ../delta.ts) plus each thread's list logs. Every change to the image is a `LogOp`:
 * the same ops are appended to the log file, replayed on open, and written (compacted) as the
 * snapshot, so there is one way to build the image.
 */
import { uuid4 } from "../../ids.js";
import { MemoryData } from "../memory.js";
import {
  decodeCheckpoint,
  decodeThread,
  encodeCheckpoint,
  encodeThread,
  type EncodedCheckpoint,
  type ListLookup,
} from "../delta.js";
import type { ListCheckpointsOptions, StoredCheckpoint, WriteOp } from "../types.js";
import type { ThreadRecord } from "../../types.js";

/** A persisted change: a `WriteOp` with encoded values, or items appended to a list log. */
export type LogOp =
  | WriteOp
  | { op: "list.append"; thread_id: string; list: string; at: number; items: unknown[] };

export class Image {
  readonly data = new MemoryData();
  /** thread id -> list id -> items. */
  private lists = new Map<string, Map<string, unknown[]>>();

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
    this.data.apply([op]);
    if (op.op === "thread.delete") this.lists.delete(op.thread_id);
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
    if (op.op !== "checkpoint.put") return [op];
    const { thread_id, parent_checkpoint_id } = op.checkpoint;
    const parent = parent_checkpoint_id === null ? undefined : this.data.getCheckpoint(thread_id, parent_checkpoint_id);
    const { checkpoint, appends } = encodeCheckpoint(op.checkpoint, parent, this.lookup(thread_id), uuid4);
    return [
      ...appends.map((a): LogOp => ({ op: "list.append", thread_id, ...a })),
      { op: "checkpoint.put", checkpoint },
    ];
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
    for (const tc of d.checkpoints.values()) for (const checkpoint of tc.list) yield { op: "checkpoint.put", checkpoint };
    for (const run of d.runs.values()) yield { op: "run.put", run };
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
