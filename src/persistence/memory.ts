/**
 * The memory store: everything in Maps, nothing persisted. The default store of `createRuntime`
 * and the reference implementation of the `Store` contract. Several runtimes over one instance
 * act as one service (D20): the run queue, leases, cancel requests and run events live here.
 *
 * Records are frozen when stored and returned as they are, so reads cost no copies; callers
 * never mutate them. Every op's new data is checked to be JSON (`checkJson`) before anything is
 * applied, expectations are judged op by op against the state the earlier ops left, and a
 * failing op undoes the ones before it: a commit is all or nothing.
 *
 * Checkpoint values are opaque JSON, but long growing arrays (a chat's messages) are stored
 * compactly: a top-level channel value that extends the same channel's array in the parent
 * checkpoint is kept as a reference `{log, n}` into an append-only log, so consecutive
 * checkpoints share their common prefix and a checkpoint costs memory for its new items only.
 * Reads materialize `log.slice(0, n)` (frozen); the last reads of each namespace are cached.
 */
import { conflict, invalidInput, notFound } from "../errors.js";
import { MAX_DEPTH, checkJson, contains, jsonEqual } from "../json.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, RunStatus, ThreadRecord } from "../types.js";
import { MemoryRunEvents } from "./memory-events.js";
import {
  matchesAssistant,
  matchesRun,
  matchesThread,
  queryAssistants,
  queryAssistantVersions,
  queryRuns,
  queryThreads,
} from "./query.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CancelRequest,
  CheckpointKey,
  DocCollection,
  Lease,
  ListCheckpointsOptions,
  RunEventPort,
  RunQuery,
  Store,
  StoredCheckpoint,
  StoredDoc,
  ThreadExpectation,
  ThreadQuery,
  WriteOp,
} from "./types.js";
import { TopicListeners, describeOp } from "./common.js";
import { ExpiryIndex, checkStoredItem, hasPrefix, listNamespacesOf, matchesItemQuery, namespaceKey, rankItems } from "./items.js";
import type { ItemNamespaceQuery, ItemQuery, StoredItem } from "./types.js";

/** The items of one namespace. */
interface ItemGroup {
  namespace: readonly string[];
  items: Map<string, StoredItem>;
}

const freezeItem = (item: StoredItem): StoredItem =>
  Object.freeze({ ...item, namespace: Object.freeze([...item.namespace]), ...(item.vectors ? { vectors: Object.freeze(item.vectors.map((v) => Object.freeze([...v]))) } : {}) });
import { countCrons, cronExpectationFails, DueIndex, queryCrons, type CronQuery, type CronRecord } from "./crons.js";

// ---------------------------------------------------------------------------------------------
// Shared array prefixes.

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

/**
 * Checks that the fields of `record` are JSON, skipping those identical to the stored record's
 * (`prev`): they were checked when it was stored.
 */
function checkRecord(record: unknown, prev: object | undefined, where: string, skip?: (key: string, value: unknown) => boolean): void {
  const proto = typeof record === "object" && record !== null ? Object.getPrototypeOf(record) : undefined;
  if (Array.isArray(record) || (proto !== Object.prototype && proto !== null)) {
    checkJson(record, where);
    throw invalidInput(`${where} must be a plain object`);
  }
  const before = prev as Record<string, unknown> | undefined;
  for (const key in record as Record<string, unknown>) {
    const v = (record as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "string" || (before !== undefined && before[key] === v) || skip?.(key, v)) continue;
    checkJson(v, where, 1, MAX_DEPTH, key);
  }
}

/**
 * A frozen shallow copy of `record` (with `changes` over it). Assigned onto a fresh object: a
 * frozen spread copy gets a hidden class of its own, which every stored record would keep
 * (about 1 KB each); assigned copies share theirs.
 */
function frozenCopy<T extends object>(record: T, changes?: Partial<T>): T {
  return Object.freeze(changes ? Object.assign({}, record, changes) : Object.assign({}, record));
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

interface NamespaceCheckpoints {
  /** Stored forms in put order; the last is the latest. */
  list: StoredCheckpoint[];
  /**
   * checkpoint id -> index in `list`, once a put broke the ascending order of ids. Until then
   * (the engine's ids ascend: they are time-ordered) `find` searches `list` by id, and a
   * checkpoint costs no index entry.
   */
  index: Map<string, number> | undefined;
  /** The last reads, newest first (at most `READ_CACHE`). */
  cache: CachedRead[];
}

/** A stored checkpoint with shared arrays, materialized: `checkpoint` for `packed`, and the last record handed out. */
interface CachedRead {
  packed: StoredCheckpoint["checkpoint"];
  checkpoint: StoredCheckpoint["checkpoint"];
  stored?: StoredCheckpoint;
  read?: StoredCheckpoint;
}

/**
 * Materialized reads kept per namespace. One is enough for the engine's pattern (it reads the
 * latest, then puts its successors, which are cached as they come); more would hold a copy of
 * a long list per thread for little gain.
 */
const READ_CACHE = 1;

/** The position of checkpoint `id` in `nc.list`. */
function find(nc: NamespaceCheckpoints, id: string): number | undefined {
  if (nc.index) return nc.index.get(id);
  const list = nc.list;
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = list[mid]!.checkpoint.id;
    if (at === id) return mid;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** An index for `list` when its ids do not ascend (`find` cannot search it), else undefined. */
function indexFor(list: readonly StoredCheckpoint[]): Map<string, number> | undefined {
  for (let i = 1; i < list.length; i++) {
    if (!(list[i - 1]!.checkpoint.id < list[i]!.checkpoint.id)) return new Map(list.map((c, k) => [c.checkpoint.id, k]));
  }
  return undefined;
}

/** The pending writes of the checkpoints that have none (most: the engine puts them after). */
const NO_WRITES: StoredCheckpoint["pending_writes"] = Object.freeze([]);

/** A stored checkpoint with other pending writes (an object literal: all its fields in the object). */
const withPendingWrites = (cp: StoredCheckpoint, pending_writes: StoredCheckpoint["pending_writes"]): StoredCheckpoint =>
  Object.freeze({
    thread_id: cp.thread_id,
    checkpoint_ns: cp.checkpoint_ns,
    checkpoint: cp.checkpoint,
    metadata: cp.metadata,
    parent_checkpoint_id: cp.parent_checkpoint_id,
    pending_writes,
  });

const ACTIVE: ReadonlySet<RunStatus> = new Set<RunStatus>(["pending", "running"]);

interface RunEntry {
  run: RunRecord;
  /** Position in the queue: the order the store first accepted the run. */
  seq: number;
}


/**
 * The state of a memory store, with the one way to change it (`apply`). Exported for stores
 * that keep a memory image of their data (the JSON-file store replays its log into it).
 */
export class MemoryData {
  assistants = new Map<string, AssistantRecord>();
  /** Assistant id -> versions ascending. */
  versions = new Map<string, AssistantVersionRecord[]>();
  threads = new Map<string, ThreadRecord>();
  /**
   * Thread id -> the checkpoints of its root namespace `""`, in their stored form (channel
   * arrays may be `ArrayRef`s into shared logs): read them through `getCheckpoint` and
   * `listCheckpoints`, which hand out plain JSON.
   */
  checkpoints = new Map<string, NamespaceCheckpoints>();
  /** Thread id -> subgraph namespace -> checkpoints. */
  subCheckpoints = new Map<string, Map<string, NamespaceCheckpoints>>();
  /** Every run in queue order. */
  runs = new Map<string, RunEntry>();
  /** Thread id -> its runs in queue order. */
  runsByThread = new Map<string, Map<string, RunEntry>>();
  /** Runs whose status is pending or running. */
  activeRuns = new Map<string, RunEntry>();
  cancels = new Map<string, CancelRequest>();
  leases = new Map<string, Lease>();
  docs = new Map<DocCollection, Map<string, StoredDoc>>();
  /** Namespace key (labels joined with `.`) -> its items. */
  items = new Map<string, ItemGroup>();
  /** Items with an expiry, ordered by it. */
  readonly itemExpiry = new ExpiryIndex();
  crons = new Map<string, CronRecord>();
  /** Scheduled crons ordered by next tick (./crons.ts). */
  readonly dueIndex = new DueIndex();

  private nextRunSeq = 0;
  /** Set while undoing: run maps must be put back in queue order. */
  private runOrderDirty = false;

  /** False while replaying ops that were checked when first committed. */
  private checking = true;

  /**
   * Applies ops in order, all or nothing: it checks each op's data and expectation before
   * applying it, and if one throws (`invalid_input`, `conflict`, `not_found`), the ones already
   * applied are undone and the data is as before the call. `notify` ops change nothing here.
   *
   * `replay: true` is for ops this data (or a store's log of it) already accepted once, replayed
   * to rebuild it: their data is not checked again and their expectations are ignored (they held
   * when first committed; a `sameAs` cannot hold across processes).
   */
  apply(ops: readonly WriteOp[], options: { replay?: boolean } = {}): void {
    const undo: Array<() => void> = [];
    this.checking = options.replay !== true;
    try {
      for (const op of ops) this.applyOne(op, undo);
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      if (this.runOrderDirty) this.reorderRuns();
      throw err;
    } finally {
      this.checking = true;
    }
  }

  /**
   * True when `read` is the thread's current record. Every put stores a new frozen record and
   * reads hand out the stored one, so the record's identity is its revision.
   */
  isCurrent(threadId: string, read: object): boolean {
    const current = this.threads.get(threadId);
    return current !== undefined && current === read;
  }

  private setIn<K, V>(map: Map<K, V>, key: K, value: V | undefined, undo: Array<() => void>) {
    const had = map.has(key);
    const prev = map.get(key);
    if (value === undefined) {
      if (!had) return;
      map.delete(key);
    } else map.set(key, value);
    undo.push(() => (had ? map.set(key, prev as V) : map.delete(key)));
  }

  private checkThread(op: WriteOp, threadId: string, expect: ThreadExpectation | undefined): void {
    if (!expect || !this.checking) return;
    const t = this.threads.get(threadId);
    if (expect.exists !== undefined && expect.exists !== (t !== undefined)) {
      throw conflict(`${describeOp(op)}: expected the thread ${expect.exists ? "to exist" : "not to exist"}`);
    }
    if (expect.status && (!t || !expect.status.includes(t.status))) {
      throw conflict(`${describeOp(op)}: expected status ${expect.status.join(" or ")}, found ${t ? t.status : "no thread"}`);
    }
    if (expect.sameAs && !this.isCurrent(threadId, expect.sameAs)) {
      throw conflict(`${describeOp(op)}: the thread changed since it was read`);
    }
  }

  private applyOne(op: WriteOp, undo: Array<() => void>): void {
    switch (op.op) {
      case "assistant.put": {
        if (this.checking) checkRecord(op.assistant, this.assistants.get(op.assistant.assistant_id), "assistant");
        this.setIn(this.assistants, op.assistant.assistant_id, frozenCopy(op.assistant), undo);
        return;
      }
      case "assistant.delete":
        this.setIn(this.assistants, op.assistant_id, undefined, undo);
        this.setIn(this.versions, op.assistant_id, undefined, undo);
        return;
      case "assistant_version.put": {
        if (this.checking) checkJson(op.version, "assistant version");
        const id = op.version.assistant_id;
        const list = (this.versions.get(id) ?? []).filter((v) => v.version !== op.version.version);
        list.push(frozenCopy(op.version));
        list.sort((a, b) => a.version - b.version);
        this.setIn(this.versions, id, list, undo);
        return;
      }
      case "thread.put": {
        const id = op.thread.thread_id;
        const prev = this.threads.get(id);
        if (this.checking) checkRecord(op.thread, prev, "thread", (key, values) => key === "values" && this.knownValues(id, prev, values));
        this.checkThread(op, id, op.expect);
        const record = frozenCopy(op.thread);
        this.setIn(this.threads, id, record, undo);
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        this.checkThread(op, id, op.expect);
        this.setIn(this.threads, id, undefined, undo);
        this.setIn(this.checkpoints, id, undefined, undo);
        this.setIn(this.subCheckpoints, id, undefined, undo);
        const runs = this.runsByThread.get(id);
        if (runs) {
          for (const runId of runs.keys()) {
            this.setIn(this.runs, runId, undefined, undo);
            this.setIn(this.activeRuns, runId, undefined, undo);
            this.setIn(this.cancels, runId, undefined, undo);
          }
          this.setIn(this.runsByThread, id, undefined, undo);
          undo.push(() => (this.runOrderDirty = true));
        }
        for (const [runId, req] of this.cancels) if (req.thread_id === id) this.setIn(this.cancels, runId, undefined, undo);
        return;
      }
      case "checkpoint.put":
        this.putCheckpoint(op.checkpoint, undo);
        return;
      case "checkpoint.delete": {
        const ns = op.checkpoint_ns ?? "";
        const prev = this.space(op.thread_id, ns);
        if (!prev) return;
        const drop = new Set(op.checkpoint_ids);
        const list = prev.list.filter((c) => !drop.has(c.checkpoint.id));
        if (list.length === prev.list.length) return;
        this.setSpace(op.thread_id, ns, list.length > 0 ? { list, index: indexFor(list), cache: [] } : undefined, undo);
        return;
      }
      case "writes.put": {
        if (this.checking) checkJson(op.writes, "writes");
        const ns = op.checkpoint_ns ?? "";
        const nc = this.space(op.thread_id, ns);
        const at = nc && find(nc, op.checkpoint_id);
        if (!nc || at === undefined) {
          throw notFound(`writes for checkpoint ${op.checkpoint_id} (namespace "${ns}") of thread ${op.thread_id}: no such checkpoint`);
        }
        const cp = nc.list[at]!;
        // Arrays of their exact length (a spread into a new array keeps room for 17 items).
        const had = cp.pending_writes;
        let pending: StoredCheckpoint["pending_writes"];
        if (had.length === 0) pending = Object.isFrozen(op.writes) ? op.writes : Object.freeze(op.writes.slice());
        else pending = Object.freeze((had.some((w) => w[0] === op.task_id) ? had.filter((w) => w[0] !== op.task_id) : had).concat(op.writes));
        nc.list[at] = withPendingWrites(cp, pending);
        undo.push(() => {
          nc.list[at] = cp;
        });
        return;
      }
      case "run.put": {
        const id = op.run.run_id;
        const had = this.runs.get(id);
        if (this.checking) checkRecord(op.run, had?.run, "run");
        if (op.expect && this.checking) {
          if (op.expect.exists !== undefined && op.expect.exists !== (had !== undefined)) {
            throw conflict(`${describeOp(op)}: expected the run ${op.expect.exists ? "to exist" : "not to exist"}`);
          }
          if (op.expect.status && (!had || !op.expect.status.includes(had.run.status))) {
            throw conflict(`${describeOp(op)}: expected status ${op.expect.status.join(" or ")}, found ${had ? had.run.status : "no run"}`);
          }
        }
        const run = frozenCopy(op.run);
        if (had && had.run.thread_id !== run.thread_id) {
          throw invalidInput(`${describeOp(op)}: a run cannot move from thread ${had.run.thread_id} to ${run.thread_id}`);
        }
        const entry: RunEntry = { run, seq: had ? had.seq : this.nextRunSeq++ };
        this.setIn(this.runs, id, entry, undo);
        let byThread = this.runsByThread.get(run.thread_id);
        if (!byThread) {
          byThread = new Map();
          this.setIn(this.runsByThread, run.thread_id, byThread, undo);
        }
        this.setIn(byThread, id, entry, undo);
        this.setIn(this.activeRuns, id, ACTIVE.has(run.status) ? entry : undefined, undo);
        return;
      }
      case "run.delete": {
        const had = this.runs.get(op.run_id);
        if (op.expect && this.checking) {
          if (op.expect.exists !== undefined && op.expect.exists !== (had !== undefined)) {
            throw conflict(`${describeOp(op)}: expected the run ${op.expect.exists ? "to exist" : "not to exist"}`);
          }
          if (op.expect.status && (!had || !op.expect.status.includes(had.run.status))) {
            throw conflict(`${describeOp(op)}: expected status ${op.expect.status.join(" or ")}, found ${had ? had.run.status : "no run"}`);
          }
        }
        this.setIn(this.cancels, op.run_id, undefined, undo);
        if (!had) return;
        this.setIn(this.runs, op.run_id, undefined, undo);
        this.setIn(this.activeRuns, op.run_id, undefined, undo);
        const byThread = this.runsByThread.get(had.run.thread_id);
        if (byThread) {
          this.setIn(byThread, op.run_id, undefined, undo);
          if (byThread.size === 0) this.setIn(this.runsByThread, had.run.thread_id, undefined, undo);
        }
        undo.push(() => (this.runOrderDirty = true));
        return;
      }
      case "cancel.put":
        if (this.checking) checkJson(op.request, "cancel request");
        this.setIn(this.cancels, op.request.run_id, frozenCopy(op.request), undo);
        return;
      case "lease.put": {
        if (this.checking) checkJson(op.lease, "lease");
        const { key, owner } = op.lease;
        if (op.expect && this.checking) {
          const cur = this.leases.get(key);
          const live = cur !== undefined && cur.expires_at >= op.expect.now;
          const ok = op.expect.state === "free" ? !live : live && cur.owner === owner;
          if (!ok) {
            throw conflict(
              `${describeOp(op)}: expected it ${op.expect.state === "free" ? "free" : `held by ${owner}`}, ` +
                (live ? `held by ${cur.owner} until ${cur.expires_at}` : "it is free"),
            );
          }
        }
        this.setIn(this.leases, key, frozenCopy(op.lease), undo);
        return;
      }
      case "lease.delete": {
        const cur = this.leases.get(op.key);
        if (cur && (op.owner === undefined || cur.owner === op.owner)) this.setIn(this.leases, op.key, undefined, undo);
        return;
      }
      case "doc.put": {
        if (this.checking) checkJson(op.doc, "doc");
        let coll = this.docs.get(op.collection);
        if (!coll) {
          coll = new Map();
          this.setIn(this.docs, op.collection, coll, undo);
        }
        this.setIn(coll, op.id, Object.freeze({ id: op.id, parent: op.parent, doc: op.doc }), undo);
        return;
      }
      case "doc.delete": {
        const coll = this.docs.get(op.collection);
        if (coll) this.setIn(coll, op.id, undefined, undo);
        return;
      }
      case "cron.put":
      case "cron.delete": {
        const id = op.op === "cron.put" ? op.cron.cron_id : op.cron_id;
        const prev = this.crons.get(id);
        if (op.op === "cron.put" && this.checking) checkRecord(op.cron, undefined, "cron");
        const why = this.checking ? cronExpectationFails(op.expect, prev) : undefined;
        if (why) throw conflict(`${op.op} of cron ${id}: ${why}`);
        const next = op.op === "cron.put" ? Object.freeze({ ...op.cron }) : undefined;
        this.setIn(this.crons, id, next, undo);
        this.dueIndex.update(prev, next);
        undo.push(() => this.dueIndex.update(next, prev));
        return;
      }
      case "notify":
        if (typeof op.topic !== "string" || (op.payload !== undefined && typeof op.payload !== "string")) {
          throw invalidInput("notify: topic and payload must be strings");
        }
        return;
      case "item.put":
        if (this.checking) checkStoredItem(op.item);
        this.setItem(op.item.namespace, op.item.key, freezeItem(op.item), undo);
        return;
      case "item.delete": {
        const cur = this.getItem(op.namespace, op.key);
        if (!cur) return;
        if (op.expiredAt !== undefined && !(cur.expires_at !== null && cur.expires_at <= op.expiredAt)) return;
        this.setItem(op.namespace, op.key, undefined, undo);
        return;
      }
      case "item.touch": {
        if (this.checking && !Number.isFinite(op.expires_at)) throw invalidInput("item.touch: expires_at must be epoch ms");
        const cur = this.getItem(op.namespace, op.key);
        if (!cur || cur.ttl === null) return;
        this.setItem(op.namespace, op.key, Object.freeze({ ...cur, expires_at: op.expires_at }), undo);
        return;
      }
      default: {
        const never: never = op;
        throw invalidInput(`agentdock store: unknown write op ${JSON.stringify((never as { op?: unknown }).op)}`);
      }
    }
  }

  getItem(namespace: readonly string[], key: string): StoredItem | undefined {
    return this.items.get(namespaceKey(namespace))?.items.get(key);
  }

  /** Replaces (or with `undefined` removes) an item, keeping the expiry index in step. */
  private setItem(namespace: readonly string[], key: string, item: StoredItem | undefined, undo: Array<() => void>): void {
    const nk = namespaceKey(namespace);
    let group = this.items.get(nk);
    const prev = group?.items.get(key);
    if (prev === item) return;
    if (prev && prev.expires_at !== null) this.itemExpiry.remove(prev.expires_at, prev.namespace, prev.key);
    if (item) {
      if (item.expires_at !== null) this.itemExpiry.add(item.expires_at, item.namespace, item.key);
      if (!group) this.items.set(nk, (group = { namespace: item.namespace, items: new Map() }));
      group.items.set(key, item);
    } else if (group) {
      group.items.delete(key);
      if (group.items.size === 0) this.items.delete(nk);
    }
    undo.push(() => this.setItem(namespace, key, prev, []));
  }

  searchItems(q: ItemQuery) {
    const hits: StoredItem[] = [];
    for (const group of this.items.values()) {
      if (!hasPrefix(group.namespace, q.prefix)) continue;
      for (const item of group.items.values()) if (matchesItemQuery(item, q)) hits.push(item);
    }
    return rankItems(hits, q);
  }

  listItemNamespaces(q: ItemNamespaceQuery): string[][] {
    return listNamespacesOf(mapIter(this.items.values(), (g) => [g.namespace, g.items.values()] as const), q);
  }

  private putCheckpoint(input: StoredCheckpoint, undo: Array<() => void>): void {
    const threadId = input.thread_id;
    const ns = input.checkpoint_ns ?? "";
    let nc = this.space(threadId, ns);
    if (!nc) {
      nc = { list: [], index: undefined, cache: [] };
      this.setSpace(threadId, ns, nc, undo);
    }
    const id = input.checkpoint.id;
    const parentAt = input.parent_checkpoint_id === null ? undefined : find(nc, input.parent_checkpoint_id);
    const parent = parentAt === undefined ? undefined : nc.list[parentAt]!.checkpoint;
    const parentValues = parent?.channel_values;

    // Check what is new (what the parent shares was checked when it was stored).
    const cp = input.checkpoint;
    const values = cp.channel_values;
    if (this.checking) {
      checkRecord(input, undefined, "checkpoint", isCheckpointKey);
      checkRecord(cp, parent, "checkpoint.checkpoint", isChannelValuesKey);
      checkRecord(values, undefined, "checkpoint.checkpoint.channel_values", (key, v) => Array.isArray(v) || v === parentValues?.[key]);
    }

    // The stored form: arrays that extend the parent's become references into shared logs.
    let packed: Record<string, unknown> | undefined;
    for (const key of Object.keys(values)) {
      const v = values[key];
      if (!Array.isArray(v)) continue;
      const where = CHANNEL_VALUES + key;
      const p = pack(v, parentValues?.[key], this.checking ? (item, i) => checkJson(item, where, 4, MAX_DEPTH, i) : noCheck, undo);
      if (p !== v || !Object.isFrozen(v)) {
        packed ??= { ...values };
        packed[key] = p === v ? Object.freeze(v.slice()) : p;
      }
    }
    const given = input.pending_writes;
    const pending = given.length === 0 ? NO_WRITES : Object.isFrozen(given) ? given : Object.freeze(given.slice());
    // The stored form with references is internal (reads hand out materialized copies): not frozen.
    const checkpoint = packed
      ? {
          v: cp.v,
          id: cp.id,
          ts: cp.ts,
          channel_values: packed,
          channel_versions: cp.channel_versions,
          versions_seen: cp.versions_seen,
        }
      : cp;
    const stored: StoredCheckpoint = Object.freeze({
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint,
      metadata: input.metadata,
      // The parent's own id string when it is stored (equal, and one string instead of two).
      parent_checkpoint_id: parent ? parent.id : input.parent_checkpoint_id,
      pending_writes: pending,
    });

    const at = find(nc, id);
    if (at === undefined) {
      // The hot path: append in place, undone by popping.
      const list = nc.list;
      const last = list[list.length - 1];
      if (!nc.index && last && !(last.checkpoint.id < id)) nc.index = new Map(list.map((c, k) => [c.checkpoint.id, k]));
      nc.index?.set(id, list.length);
      list.push(stored);
      undo.push(() => {
        list.pop();
        nc.index?.delete(id);
      });
    } else {
      const list = nc.list;
      const old = list[at]!;
      list[at] = stored;
      undo.push(() => {
        list[at] = old;
      });
    }
    // What the engine handed in reads back as is when it is frozen (it is, from the engine). A
    // failed commit leaves this entry behind harmlessly: its key is no stored checkpoint.
    if (packed && Object.isFrozen(cp) && frozenValues(values)) {
      const cache = nc.cache;
      if (cache.length >= READ_CACHE) cache.pop();
      cache.unshift({ packed: checkpoint, checkpoint: cp });
    }
  }

  /**
   * True when every value of a thread's `values` is one already stored: the same as the stored
   * thread's, or as the latest root checkpoint's (stored or as last read).
   */
  private knownValues(threadId: string, prev: ThreadRecord | undefined, values: unknown): boolean {
    if (typeof values !== "object" || values === null || Array.isArray(values)) return false;
    const proto = Object.getPrototypeOf(values);
    if (proto !== Object.prototype && proto !== null) return false;
    const nc = this.checkpoints.get(threadId);
    const latest = nc?.list[nc.list.length - 1]?.checkpoint.channel_values;
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

  /** The checkpoint as handed out: stored form with its shared arrays materialized. */
  private materialize(nc: NamespaceCheckpoints, stored: StoredCheckpoint): StoredCheckpoint {
    const values = stored.checkpoint.channel_values;
    if (!hasRefs(values)) return stored;
    const cache = nc.cache;
    let hit: CachedRead | undefined;
    for (let i = 0; i < cache.length; i++) if (cache[i]!.packed === stored.checkpoint) hit = cache[i];
    if (!hit) {
      hit = { packed: stored.checkpoint, checkpoint: frozenCopy(stored.checkpoint, { channel_values: unpackValues(values) }) };
      if (cache.length >= READ_CACHE) cache.pop();
      cache.unshift(hit);
    }
    if (hit.stored !== stored) {
      hit.stored = stored;
      hit.read = frozenCopy(stored, { checkpoint: hit.checkpoint });
    }
    return hit.read!;
  }

  private space(threadId: string, ns: string): NamespaceCheckpoints | undefined {
    return ns === "" ? this.checkpoints.get(threadId) : this.subCheckpoints.get(threadId)?.get(ns);
  }

  private setSpace(threadId: string, ns: string, nc: NamespaceCheckpoints | undefined, undo: Array<() => void>): void {
    if (ns === "") {
      this.setIn(this.checkpoints, threadId, nc, undo);
      return;
    }
    let spaces = this.subCheckpoints.get(threadId);
    if (!spaces) {
      if (!nc) return;
      spaces = new Map();
      this.setIn(this.subCheckpoints, threadId, spaces, undo);
    }
    this.setIn(spaces, ns, nc, undo);
    if (spaces.size === 0) this.setIn(this.subCheckpoints, threadId, undefined, undo);
  }

  private reorderRuns(): void {
    this.runOrderDirty = false;
    const bySeq = (m: Map<string, RunEntry>) => new Map([...m].sort((a, b) => a[1].seq - b[1].seq));
    this.runs = bySeq(this.runs);
    this.activeRuns = bySeq(this.activeRuns);
    for (const [t, m] of this.runsByThread) this.runsByThread.set(t, bySeq(m));
  }

  // -------------------------------------------------------------------------------------------
  // Reads.

  getCheckpoint(key: CheckpointKey): StoredCheckpoint | undefined {
    const nc = this.space(key.thread_id, key.checkpoint_ns ?? "");
    if (!nc) return undefined;
    const at = key.checkpoint_id === undefined ? nc.list.length - 1 : find(nc, key.checkpoint_id);
    if (at === undefined || at < 0) return undefined;
    return this.materialize(nc, nc.list[at]!);
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): StoredCheckpoint[] {
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
      if (options.filter && !contains(cp.metadata, options.filter)) continue;
      out.push(this.materialize(nc, cp));
    }
    return out;
  }

  listCheckpointNamespaces(threadId: string): string[] {
    const out: string[] = [];
    for (const [ns, nc] of this.subCheckpoints.get(threadId) ?? []) if (nc.list.length > 0) out.push(ns);
    out.sort();
    if ((this.checkpoints.get(threadId)?.list.length ?? 0) > 0) out.unshift("");
    return out;
  }

  /** Candidate runs for a query, in queue order, from the narrowest index that answers it. */
  private runCandidates(q: RunQuery): Iterable<RunEntry> {
    const statuses = q.status === undefined ? undefined : typeof q.status === "string" ? [q.status] : q.status;
    const activeOnly = statuses !== undefined && statuses.every((s) => ACTIVE.has(s));
    if (q.thread_id !== undefined) {
      const mine = this.runsByThread.get(q.thread_id);
      if (!mine) return [];
      // A long chat's thread has many ended runs: its in-flight ones are among the few in flight
      // anywhere (the caller's filter keeps this thread's).
      if (!activeOnly || mine.size <= this.activeRuns.size) return mine.values();
    }
    if (activeOnly) {
      const list = [...this.activeRuns.values()];
      return list.sort((a, b) => a.seq - b.seq);
    }
    return this.runs.values();
  }

  queryRuns(q: RunQuery): RunRecord[] {
    return queryRuns(mapIter(this.runCandidates(q), (e) => e.run), q);
  }

  countRuns(q: RunQuery): number {
    let n = 0;
    for (const e of this.runCandidates(q)) if (matchesRun(e.run, q)) n++;
    return n;
  }

  /** Threads a query can match, from the ids when it names them. */
  private threadCandidates(q: ThreadQuery): Iterable<ThreadRecord> {
    if (q.ids && q.ids.length > 0) {
      const out: ThreadRecord[] = [];
      for (const id of new Set(q.ids)) {
        const t = this.threads.get(id);
        if (t) out.push(t);
      }
      return out;
    }
    return this.threads.values();
  }

  queryThreads(q: ThreadQuery): ThreadRecord[] {
    return queryThreads(this.threadCandidates(q), q);
  }

  countThreads(q: ThreadQuery): number {
    let n = 0;
    for (const t of this.threadCandidates(q)) if (matchesThread(t, q)) n++;
    return n;
  }

  queryAssistants(q: AssistantQuery): AssistantRecord[] {
    return queryAssistants(this.assistants.values(), q);
  }

  countAssistants(q: AssistantQuery): number {
    let n = 0;
    for (const a of this.assistants.values()) if (matchesAssistant(a, q)) n++;
    return n;
  }

  queryAssistantVersions(q: AssistantVersionQuery): AssistantVersionRecord[] {
    return queryAssistantVersions(this.versions.get(q.assistant_id) ?? [], q);
  }

  expiredLeases(prefix: string, now: number, limit = Infinity): Lease[] {
    const out: Lease[] = [];
    for (const [key, lease] of this.leases) {
      if (out.length >= limit) break;
      if (lease.expires_at < now && key.startsWith(prefix)) out.push(lease);
    }
    return out;
  }

  queryCrons(q: CronQuery): CronRecord[] {
    return queryCrons(this.cronCandidates(q), q);
  }

  countCrons(q: CronQuery): number {
    return countCrons(this.cronCandidates(q), q);
  }

  private cronCandidates(q: CronQuery): Iterable<CronRecord> {
    if (!q.ids?.length) return this.crons.values();
    const out: CronRecord[] = [];
    for (const id of new Set(q.ids)) {
      const c = this.crons.get(id);
      if (c) out.push(c);
    }
    return out;
  }

  dueCrons(asOf: string | undefined, limit = 100): CronRecord[] {
    return this.dueIndex.due(asOf, limit).map((id) => this.crons.get(id)!);
  }

  listDocs(collection: DocCollection, parent?: string): StoredDoc[] {
    const all = [...(this.docs.get(collection)?.values() ?? [])];
    return parent === undefined ? all : all.filter((d) => d.parent === parent);
  }
}

function* mapIter<T, U>(items: Iterable<T>, f: (t: T) => U): Iterable<U> {
  for (const t of items) yield f(t);
}

/** A `Store` over a `MemoryData`; other stores can reuse it for their in-memory image. */
export class MemoryStore implements Store {
  readonly kind: string = "memory";
  readonly capabilities = { persistent: false, shared: false };
  readonly events: RunEventPort;
  protected data = new MemoryData();
  private readonly listeners = new TopicListeners();

  constructor(options: { events?: RunEventPort } = {}) {
    this.events = options.events ?? new MemoryRunEvents();
  }

  async open(): Promise<void> {}
  async close(): Promise<void> {}

  async commit(ops: readonly WriteOp[]): Promise<void> {
    this.data.apply(ops);
    this.deliver(ops);
  }

  /** Delivers the `notify` ops of a committed commit to this instance's listeners, each in a microtask. */
  protected deliver(ops: readonly WriteOp[]): void {
    if (this.listeners.size === 0) return;
    for (const op of ops) if (op.op === "notify") queueMicrotask(() => this.listeners.deliver(op.topic, op.payload));
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    return this.listeners.subscribe(topic, listener);
  }


  async getAssistant(id: string) {
    return this.data.assistants.get(id);
  }
  async queryAssistants(query: AssistantQuery) {
    return this.data.queryAssistants(query);
  }
  async countAssistants(query: AssistantQuery) {
    return this.data.countAssistants(query);
  }
  async queryAssistantVersions(query: AssistantVersionQuery) {
    return this.data.queryAssistantVersions(query);
  }
  async getThread(id: string) {
    return this.data.threads.get(id);
  }
  async queryThreads(query: ThreadQuery) {
    return this.data.queryThreads(query);
  }
  async countThreads(query: ThreadQuery) {
    return this.data.countThreads(query);
  }
  async getCheckpoint(key: CheckpointKey) {
    return this.data.getCheckpoint(key);
  }
  async listCheckpoints(threadId: string, options?: ListCheckpointsOptions) {
    return this.data.listCheckpoints(threadId, options);
  }
  async listCheckpointNamespaces(threadId: string) {
    return this.data.listCheckpointNamespaces(threadId);
  }
  async getRun(id: string) {
    return this.data.runs.get(id)?.run;
  }
  async queryRuns(query: RunQuery) {
    return this.data.queryRuns(query);
  }
  async countRuns(query: RunQuery) {
    return this.data.countRuns(query);
  }
  async getCancelRequest(runId: string) {
    return this.data.cancels.get(runId);
  }
  async getLease(key: string) {
    return this.data.leases.get(key);
  }
  async expiredLeases(prefix: string, now: number, limit?: number) {
    return this.data.expiredLeases(prefix, now, limit);
  }
  async getDoc<T>(collection: DocCollection, id: string) {
    return this.data.docs.get(collection)?.get(id) as StoredDoc<T> | undefined;
  }
  async listDocs<T>(collection: DocCollection, parent?: string) {
    return this.data.listDocs(collection, parent) as StoredDoc<T>[];
  }
  async getItem(namespace: readonly string[], key: string) {
    return this.data.getItem(namespace, key);
  }
  async searchItems(query: ItemQuery) {
    return this.data.searchItems(query);
  }
  async listItemNamespaces(query: ItemNamespaceQuery) {
    return this.data.listItemNamespaces(query);
  }
  async expiredItems(now: number, limit?: number) {
    return this.data.itemExpiry.expired(now, limit);
  }
  async getCron(id: string) {
    return this.data.crons.get(id);
  }
  async queryCrons(query: CronQuery) {
    return this.data.queryCrons(query);
  }
  async countCrons(query: CronQuery) {
    return this.data.countCrons(query);
  }
  async dueCrons(asOf?: string, limit?: number) {
    return this.data.dueCrons(asOf, limit);
  }
}

/** An in-memory store: fast, nothing survives the process. The default of `createRuntime`. */
export function memoryStore(): Store {
  return new MemoryStore();
}
