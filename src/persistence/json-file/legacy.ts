/**
 * Reading directories written by earlier graphdock releases (formats 0, 1 and 2), so `open`
 * can migrate them to format 3. Read only: nothing here is written any more.
 *
 * - Format 0: plain `WriteOp`s (`{ f: 0, s, o }` log lines, `{ format: 0, seq, ops }` snapshot).
 * - Format 1: format 0 plus compact-JSON markers (objects `$r`, `$s`/`$v`, `$k`/`$i`/`$o`, `$t`/`$o`,
 *   `$e`; ./shared-json.ts `decodeLegacy`), checkpoint values as list references (`{ l, n }` into
 *   per-thread list logs filled by `list.append` ops, or `{ v }` inline), threads likewise.
 * - Format 2: format 1 with array markers (`decodeShared`), `checkpoint.diff` (a checkpoint as an
 *   object diff `{ s, p, d }` against its parent) and `run.diff` (a run against another run).
 *
 * Old stores had one checkpoint namespace (`""`); records are rebuilt in full and returned as the
 * plain ops that recreate them. Lists the old engine kept as `{ $chunks }` (stored as list logs
 * with a chunk size) come back as plain arrays, the form the engine uses now.
 */
import { isPlainObject } from "../../json.js";
import type { RunRecord, ThreadRecord } from "../../types.js";
import type { StoredCheckpoint, StoredDoc, WriteOp } from "../types.js";
import { decodeLegacy, decodeShared } from "./shared-json.js";

type Obj = Record<string, unknown>;
type OldOp = { op: string } & Obj;

interface ObjectDiff {
  s?: Obj;
  p?: Record<string, ObjectDiff>;
  d?: string[];
}

function setKey(obj: Obj, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function patch(base: Obj, diff: ObjectDiff | undefined): Obj {
  const out: Obj = { ...base };
  if (!diff) return out;
  for (const k of diff.d ?? []) delete out[k];
  for (const [k, v] of Object.entries(diff.s ?? {})) setKey(out, k, v);
  for (const [k, sub] of Object.entries(diff.p ?? {})) {
    const b = out[k];
    if (!isPlainObject(b)) throw new Error(`a diff patches key "${k}", which is not an object in its base`);
    setKey(out, k, patch(b, sub));
  }
  return out;
}

/** A stored channel value of formats 1-2: inline, or the first `n` items of list log `l` (`c`: chunk size of the old engine's `{ $chunks }` form). */
type Encoded = { v: unknown } | { l: string; n: number; c?: number };

/** The parsed ops of a format 0, 1 or 2 file or line, markers resolved. */
export function decodeOld<T>(raw: T, format: number): T {
  if (format >= 2) return decodeShared<T>(raw);
  if (format === 1) return decodeLegacy<T>(raw);
  return raw;
}

/** Replays old ops in order; `ops()` then gives plain ops rebuilding the same state. */
export class LegacyReplay {
  private assistants = new Map<string, Obj>();
  private versions = new Map<string, Map<number, Obj>>();
  /** Threads and checkpoints as stored: values encoded when format >= 1. */
  private threads = new Map<string, { record: Obj; encoded: boolean }>();
  private checkpoints = new Map<string, Map<string, { record: StoredCheckpoint; encoded: boolean }>>();
  private runs = new Map<string, RunRecord>();
  private docs = new Map<string, Map<string, StoredDoc>>();
  private lists = new Map<string, Map<string, unknown[]>>();

  apply(op: OldOp, format: number): void {
    const encoded = format >= 1;
    switch (op.op) {
      case "assistant.put": {
        const a = op.assistant as Obj;
        this.assistants.set(a.assistant_id as string, a);
        return;
      }
      case "assistant.delete":
        this.assistants.delete(op.assistant_id as string);
        this.versions.delete(op.assistant_id as string);
        return;
      case "assistant_version.put": {
        const v = op.version as Obj;
        const id = v.assistant_id as string;
        if (!this.versions.has(id)) this.versions.set(id, new Map());
        this.versions.get(id)!.set(v.version as number, v);
        return;
      }
      case "thread.put": {
        const t = op.thread as Obj;
        this.threads.set(t.thread_id as string, { record: t, encoded });
        return;
      }
      case "thread.delete": {
        const id = op.thread_id as string;
        this.threads.delete(id);
        this.checkpoints.delete(id);
        this.lists.delete(id);
        for (const [runId, r] of this.runs) if (r.thread_id === id) this.runs.delete(runId);
        return;
      }
      case "checkpoint.put": {
        const c = op.checkpoint as StoredCheckpoint;
        this.putCheckpoint(c, encoded);
        return;
      }
      case "checkpoint.diff": {
        const threadId = op.thread_id as string;
        const byId = this.checkpoints.get(threadId);
        const parent = op.base === undefined ? [...(byId?.values() ?? [])].at(-1) : byId?.get(op.base as string);
        if (!parent) throw new Error(`checkpoint diff against missing ${String(op.base ?? "latest")} of thread ${threadId}`);
        const record = patch(parent.record as unknown as Obj, op.d as ObjectDiff) as unknown as StoredCheckpoint;
        this.putCheckpoint({ ...record, parent_checkpoint_id: parent.record.checkpoint.id }, parent.encoded);
        return;
      }
      case "checkpoint.delete": {
        const byId = this.checkpoints.get(op.thread_id as string);
        for (const id of op.checkpoint_ids as string[]) byId?.delete(id);
        return;
      }
      case "writes.put": {
        const entry = this.checkpoints.get(op.thread_id as string)?.get(op.checkpoint_id as string);
        if (!entry) throw new Error(`writes for unknown checkpoint ${String(op.checkpoint_id)}`);
        const kept = entry.record.pending_writes.filter((w) => w[0] !== op.task_id);
        entry.record = { ...entry.record, pending_writes: [...kept, ...(op.writes as StoredCheckpoint["pending_writes"])] };
        return;
      }
      case "run.put": {
        const r = op.run as RunRecord;
        this.runs.set(r.run_id, r);
        return;
      }
      case "run.diff": {
        const base = this.runs.get(op.base as string);
        if (!base) throw new Error(`run diff against missing run ${String(op.base)}`);
        const r = patch(base as unknown as Obj, op.d as ObjectDiff) as unknown as RunRecord;
        this.runs.set(r.run_id, r);
        return;
      }
      case "run.delete":
        this.runs.delete(op.run_id as string);
        return;
      case "doc.put": {
        const c = op.collection as string;
        if (!this.docs.has(c)) this.docs.set(c, new Map());
        this.docs.get(c)!.set(op.id as string, { id: op.id as string, parent: op.parent as string | null, doc: op.doc });
        return;
      }
      case "doc.delete":
        this.docs.get(op.collection as string)?.delete(op.id as string);
        return;
      case "list.append": {
        const threadId = op.thread_id as string;
        if (!this.lists.has(threadId)) this.lists.set(threadId, new Map());
        const byId = this.lists.get(threadId)!;
        const items = byId.get(op.list as string) ?? [];
        if (items.length !== op.at) throw new Error(`list ${String(op.list)} has ${items.length} items, an append expects ${String(op.at)}`);
        items.push(...(op.items as unknown[]));
        byId.set(op.list as string, items);
        return;
      }
      default:
        throw new Error(`unknown op ${JSON.stringify(op.op)}`);
    }
  }

  private putCheckpoint(c: StoredCheckpoint, encoded: boolean) {
    if (!this.checkpoints.has(c.thread_id)) this.checkpoints.set(c.thread_id, new Map());
    this.checkpoints.get(c.thread_id)!.set(c.checkpoint.id, { record: c, encoded });
  }

  private values(threadId: string, values: Obj): Obj {
    const out: Obj = {};
    for (const [channel, enc] of Object.entries(values as Record<string, Encoded>)) {
      if ("v" in enc) {
        setKey(out, channel, enc.v);
        continue;
      }
      const items = this.lists.get(threadId)?.get(enc.l);
      if (!items || items.length < enc.n) throw new Error(`list ${enc.l} of channel "${channel}" is missing or short`);
      // A list the old engine kept as `{ $chunks }` (`c` set) comes back as the plain list it
      // stood for: the engine now keeps checkpoint values as plain arrays.
      setKey(out, channel, items.slice(0, enc.n));
    }
    return out;
  }

  /** Plain ops that rebuild the replayed state. */
  *ops(): Generator<WriteOp> {
    for (const a of this.assistants.values()) yield { op: "assistant.put", assistant: a as never };
    for (const byVersion of this.versions.values()) {
      for (const v of [...byVersion.values()].sort((x, y) => (x.version as number) - (y.version as number))) {
        yield { op: "assistant_version.put", version: v as never };
      }
    }
    for (const [threadId, byId] of this.checkpoints) {
      for (const { record, encoded } of byId.values()) {
        const channel_values = encoded ? this.values(threadId, record.checkpoint.channel_values) : record.checkpoint.channel_values;
        yield {
          op: "checkpoint.put",
          checkpoint: { ...record, checkpoint_ns: record.checkpoint_ns ?? "", checkpoint: { ...record.checkpoint, channel_values } },
        };
      }
    }
    for (const [threadId, { record, encoded }] of this.threads) {
      const values = encoded ? this.values(threadId, (record.values ?? {}) as Obj) : record.values;
      yield { op: "thread.put", thread: { ...record, values } as unknown as ThreadRecord };
    }
    for (const run of this.runs.values()) yield { op: "run.put", run };
    for (const [collection, docs] of this.docs) {
      for (const d of docs.values()) yield { op: "doc.put", collection: collection as never, id: d.id, parent: d.parent, doc: d.doc };
    }
  }
}
