/**
 * The state of a memory store and the one way to change it (`apply`): see ../memory.ts. Every
 * op's new data is checked to be JSON (`checkJson`) before anything is applied, expectations
 * are judged op by op against the state the earlier ops left, and a failing op undoes the ones
 * before it: a commit is all or nothing. Records are frozen when stored and returned as they are
 * (checkpoints: see ./checkpoints.ts).
 */
import { conflict, invalidInput } from "../../errors.js";
import { checkJson } from "../../json.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, RunStatus, ThreadRecord } from "../../types.js";
import { describeOp } from "../common.js";
import { countCrons, cronExpectationFails, DueIndex, queryCrons, type CronQuery, type CronRecord } from "../crons.js";
import { ExpiryIndex, checkStoredItem, hasPrefix, listNamespacesOf, matchesItemQuery, namespaceKey, rankItems } from "../items.js";
import {
  matchesAssistant,
  matchesRun,
  matchesThread,
  queryAssistants,
  queryAssistantVersions,
  queryRuns,
  queryThreads,
} from "../query.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CancelRequest,
  CheckpointKey,
  DocCollection,
  ItemNamespaceQuery,
  ItemQuery,
  Lease,
  ListCheckpointsOptions,
  RunQuery,
  StoredCheckpoint,
  StoredDoc,
  StoredItem,
  ThreadExpectation,
  ThreadQuery,
  WriteOp,
} from "../types.js";
import { MemoryCheckpoints, type NamespaceCheckpoints } from "./checkpoints.js";
import { checkRecord, frozenCopy, mapIter, setIn } from "./records.js";

/** The items of one namespace. */
interface ItemGroup {
  namespace: readonly string[];
  items: Map<string, StoredItem>;
}

const freezeItem = (item: StoredItem): StoredItem =>
  Object.freeze({ ...item, namespace: Object.freeze([...item.namespace]), ...(item.vectors ? { vectors: Object.freeze(item.vectors.map((v) => Object.freeze([...v]))) } : {}) });

const ACTIVE: ReadonlySet<RunStatus> = new Set<RunStatus>(["pending", "running"]);

interface RunEntry {
  /** Replaced in place by a put of the run (undone in place): every index holds the one entry. */
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
  /** The checkpoints of every thread (./checkpoints.ts). */
  readonly checkpointSpaces = new MemoryCheckpoints();
  /** Thread id -> the checkpoints of its root namespace `""` (stored forms: read through the methods). */
  get checkpoints(): Map<string, NamespaceCheckpoints> {
    return this.checkpointSpaces.root;
  }
  /** Thread id -> subgraph namespace -> checkpoints. */
  get subCheckpoints(): Map<string, Map<string, NamespaceCheckpoints>> {
    return this.checkpointSpaces.sub;
  }
  /** Every run in queue order. */
  runs = new Map<string, RunEntry>();
  /**
   * Thread id -> its runs in queue order: an array, not a map by id (a chat's thread has a run
   * per turn, and a map's table costs ~36 bytes per run more); a run is found by id in `runs`.
   */
  runsByThread = new Map<string, RunEntry[]>();
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
  /** Scheduled crons ordered by next tick (../crons.ts). */
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
        setIn(this.assistants, op.assistant.assistant_id, frozenCopy(op.assistant), undo);
        return;
      }
      case "assistant.delete":
        setIn(this.assistants, op.assistant_id, undefined, undo);
        setIn(this.versions, op.assistant_id, undefined, undo);
        return;
      case "assistant_version.put": {
        if (this.checking) checkJson(op.version, "assistant version");
        const id = op.version.assistant_id;
        const list = (this.versions.get(id) ?? []).filter((v) => v.version !== op.version.version);
        list.push(frozenCopy(op.version));
        list.sort((a, b) => a.version - b.version);
        setIn(this.versions, id, list, undo);
        return;
      }
      case "thread.put": {
        const id = op.thread.thread_id;
        const prev = this.threads.get(id);
        if (this.checking) checkRecord(op.thread, prev, "thread", (key, values) => key === "values" && this.checkpointSpaces.knownValues(id, prev, values));
        this.checkThread(op, id, op.expect);
        const record = frozenCopy(op.thread);
        setIn(this.threads, id, record, undo);
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        this.checkThread(op, id, op.expect);
        setIn(this.threads, id, undefined, undo);
        setIn(this.checkpoints, id, undefined, undo);
        setIn(this.subCheckpoints, id, undefined, undo);
        const runs = this.runsByThread.get(id);
        if (runs) {
          for (const { run } of runs) {
            const runId = run.run_id;
            setIn(this.runs, runId, undefined, undo);
            setIn(this.activeRuns, runId, undefined, undo);
            setIn(this.cancels, runId, undefined, undo);
          }
          setIn(this.runsByThread, id, undefined, undo);
          undo.push(() => (this.runOrderDirty = true));
        }
        for (const [runId, req] of this.cancels) if (req.thread_id === id) setIn(this.cancels, runId, undefined, undo);
        return;
      }
      case "checkpoint.put":
        this.checkpointSpaces.put(op.checkpoint, this.checking, undo);
        return;
      case "checkpoint.delete":
        this.checkpointSpaces.delete(op, undo);
        return;
      case "writes.put":
        this.checkpointSpaces.putWrites(op, this.checking, undo);
        return;
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
        if (had) {
          const before = had.run;
          had.run = run;
          undo.push(() => (had.run = before));
          setIn(this.activeRuns, id, ACTIVE.has(run.status) ? had : undefined, undo);
          // An ended run's cancel request is never read again: it goes with the run's end.
          if (!ACTIVE.has(run.status) && this.cancels.has(id)) setIn(this.cancels, id, undefined, undo);
          return;
        }
        const entry: RunEntry = { run, seq: this.nextRunSeq++ };
        setIn(this.runs, id, entry, undo);
        let byThread = this.runsByThread.get(run.thread_id);
        if (!byThread) {
          byThread = [];
          setIn(this.runsByThread, run.thread_id, byThread, undo);
        }
        // The newest run of all: last in its thread's queue order.
        const list = byThread;
        list.push(entry);
        undo.push(() => list.splice(list.lastIndexOf(entry), 1));
        setIn(this.activeRuns, id, ACTIVE.has(run.status) ? entry : undefined, undo);
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
        setIn(this.cancels, op.run_id, undefined, undo);
        if (!had) return;
        setIn(this.runs, op.run_id, undefined, undo);
        setIn(this.activeRuns, op.run_id, undefined, undo);
        const byThread = this.runsByThread.get(had.run.thread_id);
        const at = byThread ? byThread.lastIndexOf(had) : -1;
        if (byThread && at >= 0) {
          byThread.splice(at, 1);
          undo.push(() => byThread.splice(at, 0, had));
          if (byThread.length === 0) setIn(this.runsByThread, had.run.thread_id, undefined, undo);
        }
        undo.push(() => (this.runOrderDirty = true));
        return;
      }
      case "cancel.put":
        if (this.checking) checkJson(op.request, "cancel request");
        setIn(this.cancels, op.request.run_id, frozenCopy(op.request), undo);
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
        setIn(this.leases, key, frozenCopy(op.lease), undo);
        return;
      }
      case "lease.delete": {
        const cur = this.leases.get(op.key);
        if (cur && (op.owner === undefined || cur.owner === op.owner)) setIn(this.leases, op.key, undefined, undo);
        return;
      }
      case "doc.put": {
        if (this.checking) checkJson(op.doc, "doc");
        let coll = this.docs.get(op.collection);
        if (!coll) {
          coll = new Map();
          setIn(this.docs, op.collection, coll, undo);
        }
        setIn(coll, op.id, Object.freeze({ id: op.id, parent: op.parent, doc: op.doc }), undo);
        return;
      }
      case "doc.delete": {
        const coll = this.docs.get(op.collection);
        if (coll) setIn(coll, op.id, undefined, undo);
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
        setIn(this.crons, id, next, undo);
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
        throw invalidInput(`graphdock store: unknown write op ${JSON.stringify((never as { op?: unknown }).op)}`);
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

  private reorderRuns(): void {
    this.runOrderDirty = false;
    const bySeq = (m: Map<string, RunEntry>) => new Map([...m].sort((a, b) => a[1].seq - b[1].seq));
    this.runs = bySeq(this.runs);
    this.activeRuns = bySeq(this.activeRuns);
    // A thread's array is put back in order by its undos.
  }

  // -------------------------------------------------------------------------------------------
  // Reads.

  getCheckpoint(key: CheckpointKey): StoredCheckpoint | undefined {
    return this.checkpointSpaces.get(key);
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): StoredCheckpoint[] {
    return this.checkpointSpaces.list(threadId, options);
  }

  listCheckpointNamespaces(threadId: string): string[] {
    return this.checkpointSpaces.namespaces(threadId);
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
      if (!activeOnly || mine.length <= this.activeRuns.size) return mine;
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
