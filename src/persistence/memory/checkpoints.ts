/**
 * The checkpoints of a memory store (./data.ts), by thread and checkpoint namespace.
 *
 * Checkpoint values are opaque JSON, but long growing arrays (a chat's messages) are stored
 * compactly: a top-level channel value that extends the same channel's array in the parent
 * checkpoint is kept as a reference `{log, n}` into an append-only log, so consecutive
 * checkpoints share their common prefix and a checkpoint costs memory for its new items only.
 * Reads materialize `log.slice(0, n)` (frozen); the last reads of each namespace are cached.
 * Metadata, pending writes and ids are kept in the compact forms of ./entry-forms.ts.
 */
import { notFound } from "../../errors.js";
import { MAX_DEPTH, checkJson, contains, jsonEqual } from "../../json.js";
import type { ThreadRecord } from "../../types.js";
import type { CheckpointKey, ListCheckpointsOptions, StoredCheckpoint, WriteOp } from "../types.js";
import { checkRecord, frozenCopy, setIn } from "./records.js";
import { exactObject } from "../../exact-objects.js";
import {
  compactUuid,
  expandUuid,
  isoMs,
  isoTime,
  metadataOn,
  onBase,
  packWrites,
  replaceTaskWrites,
  unpackWrites,
  type PackedWrites,
} from "./entry-forms.js";

/** A stored channel value: the first `n` items of an append-only log shared with other checkpoints. */
class ArrayRef {
  constructor(
    readonly log: unknown[],
    readonly n: number,
  ) {}
}

const sameItem = (a: unknown, b: unknown) => a === b || jsonEqual(a, b);
const noCheck = () => {};
const isCheckpointKey = (key: string) => key === "checkpoint";
const isChannelValuesKey = (key: string) => key === "channel_values";
const CHANNEL_VALUES = "checkpoint.checkpoint.channel_values.";

/**
 * The stored form of `value` (a channel value of a checkpoint whose parent stored `parent` for
 * the same channel), checking with `check` every item it did not find among what is stored
 * already; pushes an undo for any append to a shared log.
 */
function pack(value: unknown[], parent: unknown, check: (item: unknown, index: number) => void, undo: Array<() => void>): unknown {
  if (parent instanceof ArrayRef) {
    const { log, n } = parent;
    let i = 0;
    if (value.length >= n) while (i < n && sameItem(value[i], log[i])) i++;
    if (i < n) {
      for (let k = 0; k < value.length; k++) check(value[k], k);
      return value;
    }
    // The value extends the parent's items; does it also agree with what the log holds after them?
    const common = Math.min(value.length, log.length);
    while (i < common && sameItem(value[i], log[i])) i++;
    if (i === common) {
      // The same items as the parent's: its reference serves (a checkpoint that adds nothing to
      // the channel, such as the input checkpoint of the next turn, costs no reference).
      if (value.length === n) return parent;
      if (value.length > log.length) {
        const before = log.length;
        for (let k = before; k < value.length; k++) check(value[k], k);
        for (let k = before; k < value.length; k++) log.push(value[k]);
        undo.push(() => {
          log.length = before;
        });
      }
      return new ArrayRef(log, value.length);
    }
    // A fork whose items differ from the log after the parent's: a new log.
    for (let k = n; k < value.length; k++) check(value[k], k);
    return new ArrayRef(value.slice(), value.length);
  }
  if (Array.isArray(parent) && parent.length > 0 && value.length > parent.length) {
    let i = 0;
    while (i < parent.length && sameItem(value[i], parent[i])) i++;
    if (i === parent.length) {
      for (let k = i; k < value.length; k++) check(value[k], k);
      return new ArrayRef(value.slice(), value.length);
    }
  }
  if (value !== parent) for (let k = 0; k < value.length; k++) check(value[k], k);
  return value;
}

function hasRefs(values: Record<string, unknown>): boolean {
  for (const key in values) if (values[key] instanceof ArrayRef) return true;
  return false;
}

function unpackValues(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(values)) {
    const v = values[key];
    out[key] = v instanceof ArrayRef ? Object.freeze(v.log.slice(0, v.n)) : v;
  }
  return Object.freeze(out);
}

/** A checkpoint is ready to hand out as the engine gave it when everything read back is frozen. */
function frozenValues(values: Record<string, unknown>): boolean {
  if (!Object.isFrozen(values)) return false;
  for (const key in values) {
    const v = values[key];
    if (typeof v === "object" && v !== null && !Object.isFrozen(v)) return false;
  }
  return true;
}

export interface NamespaceCheckpoints {
  threadId: string;
  ns: string;
  /** The checkpoints in put order; the last is the latest. */
  list: Entry[];
  /**
   * True while every checkpoint id put is a canonical UUID (the engine's): entries keep ids in 8
   * code units (`compactUuid`: 32 bytes instead of 56), which sort as the UUIDs do. The first
   * other id turns the namespace's entries to ids as given, for good.
   */
  compact: boolean;
  /**
   * Epoch ms of the first checkpoint time kept as a number: times are kept as milliseconds from
   * it (`timeKey`), undefined until then.
   */
  epoch: number | undefined;
  /**
   * checkpoint id -> index in `list`, once a put broke the ascending order of ids. Until then
   * (the engine's ids ascend: they are time-ordered) `find` searches `list` by id, and a
   * checkpoint costs no index entry.
   */
  index: Map<string, number> | undefined;
  /** The last reads, newest first (at most `READ_CACHE`). */
  cache: CachedRead[];
}

type Checkpoint = StoredCheckpoint["checkpoint"];

/**
 * A stored checkpoint as kept: one object with the record's fields and the checkpoint's inline
 * (the record and the checkpoint as handed out are built on read), `channel_values` in stored
 * form (channel arrays may be `ArrayRef`s into shared logs), metadata and pending writes in the
 * compact forms of ./entry-forms.ts. A checkpoint whose keys are not the engine's six in the
 * engine's order, or whose `v` is not the engine's 1, is a `WholeEntry`.
 */
export class Entry {
  constructor(
    /** The id: compact in a `compact` namespace. */
    readonly id: string,
    /** The time: a string as given, or (`timeKey`) milliseconds from the namespace's `epoch`. */
    readonly ts: string | number | undefined,
    readonly channel_values: Record<string, unknown>,
    readonly channel_versions: Checkpoint["channel_versions"] | undefined,
    readonly versions_seen: Checkpoint["versions_seen"] | undefined,
    /** In a `compact` namespace, compact or (any other id) in an array of one. */
    readonly parent_checkpoint_id: StoredParent,
    /** The pending writes, flat (./entry-forms.ts). Replaced (not changed) by `writes.put`, in place: the entry is internal. */
    public pending: PackedWrites,
    /** The metadata; with `sourceStep`, the base whose other values this metadata shares (./entry-forms.ts). */
    readonly meta: StoredCheckpoint["metadata"],
    readonly sourceStep: number | undefined,
    readonly writes: unknown,
    readonly runId: unknown,
  ) {}

  /** This entry with other ids (in stored form). */
  withIds(id: string, parent: StoredParent): Entry {
    return new Entry(id, this.ts, this.channel_values, this.channel_versions, this.versions_seen, parent, this.pending, this.meta, this.sourceStep, this.writes, this.runId);
  }
}

/** A parent checkpoint id in stored form (see `Entry`). */
type StoredParent = string | readonly [string] | null;

/** A checkpoint kept whole (with stored-form values): not of the engine's form. */
class WholeEntry extends Entry {
  constructor(
    id: string,
    channel_values: Record<string, unknown>,
    parent_checkpoint_id: StoredParent,
    pending: PackedWrites,
    meta: StoredCheckpoint["metadata"],
    sourceStep: number | undefined,
    writes: unknown,
    runId: unknown,
    readonly whole: Checkpoint,
  ) {
    super(id, undefined, channel_values, undefined, undefined, parent_checkpoint_id, pending, meta, sourceStep, writes, runId);
  }

  override withIds(id: string, parent: StoredParent): Entry {
    return new WholeEntry(id, this.channel_values, parent, this.pending, this.meta, this.sourceStep, this.writes, this.runId, this.whole);
  }
}

/**
 * `ts` as `nc` keeps it: a time in the engine's form (`Date.toISOString`, 24 characters) within
 * 12 days of the namespace's epoch as milliseconds from it (a small integer: 40 bytes of string
 * saved per checkpoint), any other as given.
 */
function timeKey(nc: NamespaceCheckpoints, ts: string): string | number {
  const ms = typeof ts === "string" ? isoMs(ts) : undefined;
  if (ms === undefined) return ts;
  // Kept even if this put fails: any epoch will do.
  nc.epoch ??= ms;
  const delta = ms - nc.epoch;
  // A small integer (31 bits: V8's with pointer compression) is kept in the entry itself, any
  // other number in a heap number of its own as large as the string; `| 0` makes the
  // difference of two heap numbers a small integer.
  return delta >= -SMALL_MS && delta < SMALL_MS ? delta | 0 : ts;
}

/** Times kept as numbers are within this many ms of their namespace's epoch (2^30: 12.4 days). */
const SMALL_MS = 2 ** 30;

/** The time of an entry of `nc` as given. */
const timeOf = (nc: NamespaceCheckpoints, e: Entry): string =>
  typeof e.ts === "number" ? isoTime(nc.epoch! + e.ts) : e.ts!;

/** The id of an entry of `nc` as given. */
const idOf = (nc: NamespaceCheckpoints, e: Entry): string => (nc.compact ? expandUuid(e.id) : e.id);

/** The parent id of an entry of `nc` as given. */
function parentOf(nc: NamespaceCheckpoints, e: Entry): string | null {
  const p = e.parent_checkpoint_id;
  if (p === null) return null;
  if (typeof p !== "string") return p[0];
  return nc.compact ? expandUuid(p) : p;
}

/** Checkpoint id `id` as `nc` keeps it, or undefined when no entry of `nc` can have it. */
const keyOf = (nc: NamespaceCheckpoints, id: string): string | undefined => (nc.compact ? compactUuid(id) : id);

/** The metadata of an entry as handed out. */
function metadataOf(e: Entry): StoredCheckpoint["metadata"] {
  return e.sourceStep === undefined ? e.meta : metadataOn(e.meta, e.sourceStep, e.writes, e.runId);
}

/** The keys of the engine's checkpoints, in its order. */
const CHECKPOINT_KEYS = ["v", "id", "ts", "channel_values", "channel_versions", "versions_seen"];

function hasCheckpointKeys(cp: object): boolean {
  let i = 0;
  for (const key in cp) if (key !== CHECKPOINT_KEYS[i++]) return false;
  return i === CHECKPOINT_KEYS.length;
}

/** A read of an entry: its checkpoint as handed out, and the last record handed out with it. */
interface CachedRead {
  entry: Entry;
  checkpoint: Checkpoint;
  read: StoredCheckpoint | undefined;
  /** The entry's pending writes `read` was built from. */
  pending: PackedWrites | undefined;
  /** The entry's metadata as handed out (as given when the read was cached by its put). */
  metadata: StoredCheckpoint["metadata"] | undefined;
}

/**
 * Materialized reads kept per namespace. One is enough for the engine's pattern (it reads the
 * latest, then puts its successors, which are cached as they come); more would hold a copy of
 * a long list per thread for little gain.
 */
const READ_CACHE = 1;

/** The position of checkpoint `id` (as given) in `nc.list`. */
function find(nc: NamespaceCheckpoints, id: string): number | undefined {
  const key = keyOf(nc, id);
  return key === undefined ? undefined : findKey(nc, key);
}

/** The position of checkpoint `id` (as kept) in `nc.list`. */
function findKey(nc: NamespaceCheckpoints, id: string): number | undefined {
  if (nc.index) return nc.index.get(id);
  const list = nc.list;
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = list[mid]!.id;
    if (at === id) return mid;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** An index for `list` when its ids do not ascend (`find` cannot search it), else undefined. */
function indexFor(list: readonly Entry[]): Map<string, number> | undefined {
  for (let i = 1; i < list.length; i++) {
    if (!(list[i - 1]!.id < list[i]!.id)) return new Map(list.map((c, k) => [c.id, k]));
  }
  return undefined;
}

/** The checkpoint of an entry (of id `id`) of `nc` as handed out: plain JSON, frozen. */
function checkpointOf(nc: NamespaceCheckpoints, e: Entry, id: string): Checkpoint {
  const values = hasRefs(e.channel_values) ? unpackValues(e.channel_values) : e.channel_values;
  if (e instanceof WholeEntry) return values === e.channel_values ? e.whole : frozenCopy(e.whole, { channel_values: values });
  return Object.freeze({
    v: 1,
    id,
    ts: timeOf(nc, e),
    channel_values: values,
    channel_versions: e.channel_versions!,
    versions_seen: e.versions_seen!,
  });
}

/** The checkpoints of every thread: the root namespace `""` and subgraph namespaces. */
export class MemoryCheckpoints {
  /**
   * Thread id -> the checkpoints of its root namespace `""`, in their stored form (entries):
   * read them through `get` and `list`, which hand out plain JSON.
   */
  readonly root = new Map<string, NamespaceCheckpoints>();
  /** Thread id -> subgraph namespace -> checkpoints. */
  readonly sub = new Map<string, Map<string, NamespaceCheckpoints>>();

  /** Stores a checkpoint (`checking`: its new data is checked to be JSON). */
  put(input: StoredCheckpoint, checking: boolean, undo: Array<() => void>): void {
    const threadId = input.thread_id;
    const ns = input.checkpoint_ns ?? "";
    let nc = this.space(threadId, ns);
    if (!nc) {
      nc = { threadId, ns, list: [], compact: true, epoch: undefined, index: undefined, cache: [] };
      this.setSpace(threadId, ns, nc, undo);
    }
    let id = input.checkpoint.id;
    if (nc.compact) {
      const key = compactUuid(id);
      if (key === undefined) nc = this.idsAsGiven(nc, undo);
      else id = key;
    }
    const parentAt = input.parent_checkpoint_id === null ? undefined : find(nc, input.parent_checkpoint_id);
    const parent = parentAt === undefined ? undefined : nc.list[parentAt]!;
    const parentValues = parent?.channel_values;

    // Check what is new (what the parent shares was checked when it was stored).
    const cp = input.checkpoint;
    const values = cp.channel_values;
    if (checking) {
      checkRecord(input, undefined, "checkpoint", isCheckpointKey);
      checkRecord(cp, parent instanceof WholeEntry ? parent.whole : parent, "checkpoint.checkpoint", isChannelValuesKey);
      checkRecord(values, undefined, "checkpoint.checkpoint.channel_values", (key, v) => Array.isArray(v) || v === parentValues?.[key]);
    }

    // The stored form: arrays that extend the parent's become references into shared logs.
    let packed: Record<string, unknown> | undefined;
    for (const key of Object.keys(values)) {
      const v = values[key];
      if (!Array.isArray(v)) continue;
      const where = CHANNEL_VALUES + key;
      const p = pack(v, parentValues?.[key], checking ? (item, i) => checkJson(item, where, 4, MAX_DEPTH, i) : noCheck, undo);
      if (p !== v || !Object.isFrozen(v)) {
        packed ??= exactObject(values);
        packed[key] = p === v ? Object.freeze(v.slice()) : p;
      }
    }
    const given = input.pending_writes;
    const pending = packWrites(given);
    // Metadata that shares the parent's base (the thread's) keeps its own values only.
    const metadata = input.metadata;
    const base = parent?.meta;
    const sourceStep = base === undefined || base === metadata ? undefined : onBase(metadata, base);
    const shared = sourceStep !== undefined;
    const meta = shared ? base! : metadata;
    const writes = shared ? metadata.writes : undefined;
    const runId = shared ? (metadata as { run_id?: unknown }).run_id : undefined;
    // The parent's own id string when it is stored (equal, and one string instead of two).
    const givenParent = input.parent_checkpoint_id;
    const parentId: StoredParent = parent
      ? parent.id
      : givenParent === null || !nc.compact
        ? givenParent
        : (compactUuid(givenParent) ?? Object.freeze([givenParent] as const));
    const entry =
      hasCheckpointKeys(cp) && cp.v === 1
        ? new Entry(id, timeKey(nc, cp.ts), packed ?? values, cp.channel_versions, cp.versions_seen, parentId, pending, meta, sourceStep, writes, runId)
        : new WholeEntry(
            id,
            packed ?? values,
            parentId,
            pending,
            meta,
            sourceStep,
            writes,
            runId,
            packed ? Object.assign({}, cp, { channel_values: packed }) : cp,
          );

    const at = findKey(nc, id);
    const list = nc.list;
    if (at === undefined) {
      // The hot path: append in place, undone by popping.
      const last = list[list.length - 1];
      if (!nc.index && last && !(last.id < id)) nc.index = new Map(list.map((c, k) => [c.id, k]));
      nc.index?.set(id, list.length);
      list.push(entry);
      const space = nc;
      undo.push(() => {
        list.pop();
        space.index?.delete(id);
      });
    } else {
      const old = list[at]!;
      list[at] = entry;
      undo.push(() => {
        list[at] = old;
      });
    }
    // What the engine handed in reads back as is when it is frozen (it is, from the engine). A
    // failed commit leaves this entry behind harmlessly: it is no stored checkpoint's.
    if (Object.isFrozen(cp) && frozenValues(values)) {
      const cache = nc.cache;
      if (cache.length >= READ_CACHE) cache.pop();
      cache.unshift({ entry, checkpoint: cp, read: undefined, pending: undefined, metadata });
    }
  }

  /** Deletes checkpoints of a namespace by id. */
  delete(op: Extract<WriteOp, { op: "checkpoint.delete" }>, undo: Array<() => void>): void {
    const ns = op.checkpoint_ns ?? "";
    const prev = this.space(op.thread_id, ns);
    if (!prev) return;
    const drop = new Set(op.checkpoint_ids);
    const list = prev.list.filter((c) => !drop.has(idOf(prev, c)));
    if (list.length === prev.list.length) return;
    const next = { threadId: op.thread_id, ns, list, compact: prev.compact, epoch: prev.epoch, index: indexFor(list), cache: [] };
    this.setSpace(op.thread_id, ns, list.length > 0 ? next : undefined, undo);
  }

  /** `nc` with its entries' ids as given, in place of it (its first id that is not a canonical UUID). */
  private idsAsGiven(nc: NamespaceCheckpoints, undo: Array<() => void>): NamespaceCheckpoints {
    const list = nc.list.map((e) => e.withIds(idOf(nc, e), parentOf(nc, e)));
    const next = { threadId: nc.threadId, ns: nc.ns, list, compact: false, epoch: nc.epoch, index: indexFor(list), cache: [] };
    this.setSpace(nc.threadId, nc.ns, next, undo);
    return next;
  }

  /** Sets a task's pending writes on a stored checkpoint (replacing the task's earlier ones). */
  putWrites(op: Extract<WriteOp, { op: "writes.put" }>, checking: boolean, undo: Array<() => void>): void {
    if (checking) checkJson(op.writes, "writes");
    const ns = op.checkpoint_ns ?? "";
    const nc = this.space(op.thread_id, ns);
    const at = nc && find(nc, op.checkpoint_id);
    if (!nc || at === undefined) {
      throw notFound(`writes for checkpoint ${op.checkpoint_id} (namespace "${ns}") of thread ${op.thread_id}: no such checkpoint`);
    }
    const entry = nc.list[at]!;
    const had = entry.pending;
    entry.pending = replaceTaskWrites(had, op.task_id, op.writes);
    undo.push(() => {
      entry.pending = had;
    });
  }

  /**
   * True when every value of a thread's `values` is one already stored: the same as the stored
   * thread's, or as the latest root checkpoint's (stored or as last read).
   */
  knownValues(threadId: string, prev: ThreadRecord | undefined, values: unknown): boolean {
    if (typeof values !== "object" || values === null || Array.isArray(values)) return false;
    const proto = Object.getPrototypeOf(values);
    if (proto !== Object.prototype && proto !== null) return false;
    const nc = this.root.get(threadId);
    const latest = nc?.list[nc.list.length - 1]?.channel_values;
    for (const key in values) {
      const v = (values as Record<string, unknown>)[key];
      if (v === undefined) continue;
      if (typeof v !== "object" || v === null) {
        checkJson(v, "thread.values", 2, MAX_DEPTH, key);
        continue;
      }
      if (prev?.values[key] === v || latest?.[key] === v) continue;
      if (nc?.cache.some((c) => c.checkpoint.channel_values[key] === v)) continue;
      checkJson(v, "thread.values", 2, MAX_DEPTH, key);
    }
    return true;
  }

  /** The checkpoint as handed out: an entry as a record, its shared arrays materialized. */
  private read(nc: NamespaceCheckpoints, e: Entry): StoredCheckpoint {
    const cache = nc.cache;
    let hit: CachedRead | undefined;
    for (let i = 0; i < cache.length; i++) if (cache[i]!.entry === e) hit = cache[i];
    if (!hit) {
      hit = { entry: e, checkpoint: checkpointOf(nc, e, idOf(nc, e)), read: undefined, pending: undefined, metadata: undefined };
      if (cache.length >= READ_CACHE) cache.pop();
      cache.unshift(hit);
    }
    if (hit.read === undefined || hit.pending !== e.pending) {
      hit.read = Object.freeze({
        thread_id: nc.threadId,
        checkpoint_ns: nc.ns,
        checkpoint: hit.checkpoint,
        metadata: (hit.metadata ??= metadataOf(e)),
        parent_checkpoint_id: parentOf(nc, e),
        pending_writes: unpackWrites(e.pending),
      });
      hit.pending = e.pending;
    }
    return hit.read;
  }

  private space(threadId: string, ns: string): NamespaceCheckpoints | undefined {
    return ns === "" ? this.root.get(threadId) : this.sub.get(threadId)?.get(ns);
  }

  private setSpace(threadId: string, ns: string, nc: NamespaceCheckpoints | undefined, undo: Array<() => void>): void {
    if (ns === "") {
      setIn(this.root, threadId, nc, undo);
      return;
    }
    let spaces = this.sub.get(threadId);
    if (!spaces) {
      if (!nc) return;
      spaces = new Map();
      setIn(this.sub, threadId, spaces, undo);
    }
    setIn(spaces, ns, nc, undo);
    if (spaces.size === 0) setIn(this.sub, threadId, undefined, undo);
  }

  /** A checkpoint by key (the latest of its namespace without an id), as JSON. */
  get(key: CheckpointKey): StoredCheckpoint | undefined {
    const nc = this.space(key.thread_id, key.checkpoint_ns ?? "");
    if (!nc) return undefined;
    const at = key.checkpoint_id === undefined ? nc.list.length - 1 : find(nc, key.checkpoint_id);
    if (at === undefined || at < 0) return undefined;
    return this.read(nc, nc.list[at]!);
  }

  /** A namespace's checkpoints, newest first, as JSON. */
  list(threadId: string, options: ListCheckpointsOptions = {}): StoredCheckpoint[] {
    const nc = this.space(threadId, options.checkpoint_ns ?? "");
    if (!nc) return [];
    let start = nc.list.length - 1;
    if (options.before !== undefined) {
      const at = find(nc, options.before);
      start = at === undefined ? -1 : at - 1;
    }
    const limit = options.limit ?? Infinity;
    const out: StoredCheckpoint[] = [];
    for (let i = start; i >= 0 && out.length < limit; i--) {
      const cp = nc.list[i]!;
      if (options.filter && !contains(metadataOf(cp), options.filter)) continue;
      out.push(this.read(nc, cp));
    }
    return out;
  }

  /** The namespaces of a thread that hold checkpoints, root first, then sorted. */
  namespaces(threadId: string): string[] {
    const out: string[] = [];
    for (const [ns, nc] of this.sub.get(threadId) ?? []) if (nc.list.length > 0) out.push(ns);
    out.sort();
    if ((this.root.get(threadId)?.list.length ?? 0) > 0) out.unshift("");
    return out;
  }
}
