/**
 * The IndexedDB store's reads and queries: each is one readonly transaction; threads, runs and
 * crons are filtered and sorted with the shared evaluators (../query.ts, ../crons.ts) on their
 * stored fields, and only the page returned is rebuilt. Core-safe: no Node built-ins.
 */
import { contains } from "../../json.js";
import type { AssistantRecord, RunRecord, RunStatus, ThreadRecord } from "../../types.js";
import { decodeValues, listRefs, type EncodedValues, type ListLookup } from "../delta.js";
import {
  queryAssistants as evalAssistants,
  queryAssistantVersions as evalVersions,
  queryRuns as evalRuns,
  matchesThread,
  matchesRun,
  matchesAssistant,
  sortAndPage,
} from "../query.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CheckpointKey,
  DocCollection,
  Lease,
  ListCheckpointsOptions,
  RunQuery,
  StoredDoc,
  ThreadQuery,
} from "../types.js";
import { listNamespacesOf, matchesItemQuery, namespaceKey, rankItems } from "../items.js";
import type { ExpiredItem, ItemNamespaceQuery, ItemQuery, StoredItem } from "../types.js";
import { queryCrons as evalCrons, countCrons as evalCountCrons, type CronQuery, type CronRecord } from "../crons.js";
import { type CronRow, type ItemRow, type RunRow, type ThreadRow } from "./migrate.js";
import { homeOf, itemNeeds, located, patchLeaves, resolveItems, type CpRow, type LeafDiff } from "./rows.js";
import { type Tx, CHECKPOINTS, under, RUNS } from "./schema.js";
import { IdbWrites } from "./writes.js";
import { unpackRun, type StoredRunRow } from "./run-row.js";

/** Every run status, to tell whether statuses are next to each other in key order. */
const RUN_STATUSES: readonly RunStatus[] = ["pending", "running", "success", "error", "timeout", "interrupted"];

/** The stored item of a row (without its namespace key). */
function itemOf(row: ItemRow): StoredItem;
function itemOf(row: ItemRow | undefined): StoredItem | undefined;
function itemOf(row: ItemRow | undefined): StoredItem | undefined {
  if (!row) return undefined;
  const { ns: _, ...item } = row;
  return item;
}

function cronOut(row: CronRow | undefined): CronRecord | undefined {
  if (!row) return undefined;
  const { $due: _due, ...cron } = row;
  return cron;
}

/** The reads of the IndexedDB store (./index.ts). */
export abstract class IdbReads extends IdbWrites {
  // ---------------------------------------------------------------------------------------------
  // Reads.

  getAssistant(id: string) {
    return this.read(["assistants"], (tx) => tx.objectStore("assistants").get(id));
  }

  protected assistantRows(q: AssistantQuery) {
    return this.read(["assistants"], async (tx) => {
      const store = tx.objectStore("assistants");
      if (q.ids && q.ids.length > 0) return (await Promise.all(q.ids.map((id) => store.get(id)))).filter((a): a is AssistantRecord => !!a);
      if (q.graph_id !== undefined) return store.index("by_graph").getAll(q.graph_id);
      return store.getAll();
    });
  }
  async queryAssistants(q: AssistantQuery) {
    return evalAssistants(await this.assistantRows(q), q);
  }
  async countAssistants(q: AssistantQuery) {
    return (await this.assistantRows(q)).filter((a) => matchesAssistant(a, q)).length;
  }
  queryAssistantVersions(q: AssistantVersionQuery) {
    return this.read(["versions"], async (tx) => evalVersions(await tx.objectStore("versions").getAll(under(q.assistant_id)), q));
  }

  /** A thread row as the caller sees it, with its revision remembered for `sameAs`. */
  protected threadOut(row: ThreadRow, lookup: ListLookup): ThreadRecord {
    const { $rev, ...rest } = row;
    const record = { ...rest, values: decodeValues(row.values as EncodedValues, lookup) } as ThreadRecord;
    this.revisions.set(record, $rev ?? 0);
    return record;
  }

  protected async decodeThreads(tx: Tx, rows: ThreadRow[]): Promise<ThreadRecord[]> {
    const out: ThreadRecord[] = [];
    for (const row of rows) {
      const needs = new Map<string, number>(listRefs(row.values as EncodedValues).map(({ l, n }) => [l, n]));
      out.push(this.threadOut(row, needs.size ? await this.loadLists(tx, row.thread_id, needs) : () => undefined));
    }
    return out;
  }

  getThread(id: string) {
    return this.read(["threads", "items"], async (tx) => {
      const row = await tx.objectStore("threads").get(id);
      return row && (await this.decodeThreads(tx, [row]))[0];
    });
  }

  protected async threadRows(tx: Tx, q: ThreadQuery): Promise<ThreadRow[]> {
    const store = tx.objectStore("threads");
    let rows: ThreadRow[];
    if (q.ids && q.ids.length > 0) rows = (await Promise.all(q.ids.map((id) => store.get(id)))).filter((t): t is ThreadRow => !!t);
    else if (q.status !== undefined) rows = await store.index("by_status").getAll(q.status);
    else rows = await store.getAll();
    if (q.values === undefined) return rows.filter((row) => matchesThread(row, q));
    // Only a `values` filter needs the values: rebuilt for the rows that pass the others.
    const others = rows.filter((row) => matchesThread(row, { ...q, values: undefined }));
    const decoded = await this.decodeThreads(tx, others);
    return others.filter((_, i) => contains(decoded[i]!.values, q.values));
  }

  queryThreads(q: ThreadQuery) {
    return this.read(["threads", "items"], async (tx) => {
      const hits = await this.threadRows(tx, q);
      const page = sortAndPage(hits, q.sortBy ?? "created_at", q.sortOrder ?? "desc", "thread_id", q);
      return this.decodeThreads(tx, page);
    });
  }
  countThreads(q: ThreadQuery) {
    return this.read(["threads", "items"], async (tx) => (await this.threadRows(tx, q)).length);
  }

  getCheckpoint(key: CheckpointKey) {
    return this.read(CHECKPOINTS, async (tx) => {
      const ns = key.checkpoint_ns ?? "";
      const row = key.checkpoint_id === undefined ? await this.latestRow(tx, key.thread_id, ns) : await this.rowById(tx, key.thread_id, ns, key.checkpoint_id);
      return row && (await this.decodeRows(tx, [row]))[0];
    });
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}) {
    return this.read(CHECKPOINTS, async (tx) => {
      const ns = options.checkpoint_ns ?? "";
      const limit = options.limit ?? Infinity;
      if (limit <= 0) return [];
      let upper: number | [] = [];
      if (options.before !== undefined) {
        const before = await this.rowById(tx, threadId, ns, options.before);
        if (!before) return [];
        upper = before.s;
      }
      const range = IDBKeyRange.bound([threadId, ns], [threadId, ns, upper], false, true);
      const rows: CpRow[] = [];
      const store = tx.objectStore("cps");
      if (!options.filter && limit !== Infinity) {
        for (let c = await store.openCursor(range, "prev"); c && rows.length < limit; c = await c.continue()) rows.push(located(c.primaryKey, c.value));
        return this.decodeRows(tx, rows, true);
      }
      if (!options.filter) {
        const [keys, values] = await Promise.all([store.getAllKeys(range), store.getAll(range)]);
        return this.decodeRows(tx, values.map((v, i) => located(keys[i]!, v)).reverse(), true);
      }
      for (let c = await store.openCursor(range, "prev"); c && rows.length < limit; c = await c.continue()) {
        const row = located(c.primaryKey, c.value);
        const rec = await this.recordOf(tx, row);
        let metadata = rec.metadata;
        const home = homeOf(rec);
        const needs = itemNeeds(metadata, undefined, home);
        if (needs.size > 0) metadata = resolveItems(metadata, await this.loadLists(tx, threadId, needs), home);
        if (contains(metadata, options.filter)) rows.push(row);
      }
      return this.decodeRows(tx, rows);
    });
  }

  listCheckpointNamespaces(threadId: string) {
    return this.read(["cps"], async (tx) => {
      const out: string[] = [];
      let c = await tx.objectStore("cps").openKeyCursor(under(threadId));
      while (c) {
        const ns = c.key[1];
        out.push(ns);
        c = await c.continue([threadId, ns, []] as unknown as [string, string, number]);
      }
      return out;
    });
  }

  /** A run as the caller sees it. */
  protected async runOut(tx: Tx, row: RunRow): Promise<RunRecord> {
    const { run_id, thread_id, assistant_id, status, created_at, b, r } = row;
    let rest = r;
    if (b !== undefined) {
      const base = await this.baseById(tx, thread_id, RUNS, b);
      if (!base) throw new Error(`graphdock indexeddb: base ${b} of run ${run_id} is missing (corrupt store)`);
      rest = patchLeaves(base, r as unknown as LeafDiff);
    }
    // Format 5 keeps the assistant in the rest; earlier rows keep it in the row.
    return { run_id, thread_id, ...(assistant_id === undefined ? {} : { assistant_id }), ...rest, created_at, status } as RunRecord;
  }

  /**
   * The rows with their assistant in place for a query that filters on it (format 5 keeps it in
   * the diffed rest, ./migrate.ts `RunRow`); other queries take the rows as they are.
   */
  protected async withAssistants(tx: Tx, rows: RunRow[], q: RunQuery): Promise<RunRow[]> {
    if (q.assistant_id === undefined) return rows;
    return Promise.all(rows.map(async (row) => (row.assistant_id !== undefined ? row : { ...row, assistant_id: (await this.runOut(tx, row)).assistant_id })));
  }

  getRun(id: string) {
    return this.read(["runs", "bases"], async (tx) => {
      const row = unpackRun(await tx.objectStore("runs").get(id));
      return row && this.runOut(tx, row);
    });
  }

  /** Runs that may match, in queue order (the fields queries filter on are stored whole). */
  protected async runRows(tx: Tx, q: RunQuery): Promise<RunRow[]> {
    return (await this.storedRunRows(tx, q)).map((row) => unpackRun(row));
  }
  protected async storedRunRows(tx: Tx, q: RunQuery): Promise<StoredRunRow[]> {
    const store = tx.objectStore("runs");
    if (q.thread_id !== undefined && q.status !== undefined) {
      // A thread's runs of some statuses (its queue): only those are read, however long its history.
      const statuses = typeof q.status === "string" ? [q.status] : [...new Set(q.status)];
      const index = store.index("by_thread_status");
      const [lo, hi] = [statuses.reduce((x, y) => (y < x ? y : x)), statuses.reduce((x, y) => (y > x ? y : x))];
      if (statuses.length > 1 && RUN_STATUSES.every((st) => st < lo || st > hi || statuses.includes(st))) {
        // Statuses next to each other in key order (the in-flight ones, pending and running): one
        // request over their range instead of one per status (rows are still checked by status).
        const wanted = new Set<string>(statuses);
        const rows = await index.getAll(IDBKeyRange.bound([q.thread_id, lo], [q.thread_id, hi, []]));
        return rows.filter((row) => wanted.has(row.s)).sort((a, b) => a.q - b.q);
      }
      const parts = await Promise.all(statuses.map((st) => index.getAll(under(q.thread_id!, st))));
      return parts.length === 1 ? parts[0]! : parts.flat().sort((a, b) => a.q - b.q);
    }
    if (q.thread_id !== undefined) return store.index("by_thread").getAll(under(q.thread_id));
    if (typeof q.status === "string") return store.index("by_status").getAll(under(q.status));
    return store.index("by_q").getAll();
  }
  queryRuns(q: RunQuery) {
    return this.read(["runs", "bases"], async (tx) => {
      // Filtered, sorted and paged on the stored fields; only the page is rebuilt.
      const page = evalRuns((await this.withAssistants(tx, await this.runRows(tx, q), q)) as unknown as RunRecord[], q) as unknown as RunRow[];
      return Promise.all(page.map((row) => this.runOut(tx, row)));
    });
  }
  countRuns(q: RunQuery) {
    return this.read(["runs", "bases"], async (tx) =>
      (await this.withAssistants(tx, await this.runRows(tx, q), q)).filter((r) => matchesRun(r as unknown as RunRecord, q)).length,
    );
  }
  getCancelRequest(runId: string) {
    return this.read(["cancels"], (tx) => tx.objectStore("cancels").get(runId));
  }

  getLease(key: string) {
    return this.read(["leases"], (tx) => tx.objectStore("leases").get(key));
  }
  expiredLeases(prefix: string, now: number, limit = Infinity) {
    return this.read(["leases"], async (tx) => {
      const out: Lease[] = [];
      const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`, false, false);
      for (let c = await tx.objectStore("leases").openCursor(range); c && out.length < limit; c = await c.continue()) {
        if (c.value.key.startsWith(prefix) && c.value.expires_at < now) out.push(c.value);
      }
      return out;
    });
  }

  getCron(id: string) {
    return this.read(["crons"], async (tx) => cronOut(await tx.objectStore("crons").get(id)));
  }
  /** Crons a query may match: those it names, else every cron (a small table, scanned). */
  protected async cronRows(tx: Tx, q: CronQuery): Promise<CronRecord[]> {
    const store = tx.objectStore("crons");
    const rows = q.ids?.length ? await Promise.all([...new Set(q.ids)].map((id) => store.get(id))) : await store.getAll();
    return rows.flatMap((row) => (row ? [cronOut(row)!] : []));
  }
  queryCrons(q: CronQuery) {
    return this.read(["crons"], async (tx) => evalCrons(await this.cronRows(tx, q), q));
  }
  countCrons(q: CronQuery) {
    return this.read(["crons"], async (tx) => evalCountCrons(await this.cronRows(tx, q), q));
  }
  dueCrons(asOf?: string, limit = 100) {
    return this.read(["crons"], async (tx) => {
      const range = asOf === undefined ? undefined : IDBKeyRange.upperBound([asOf, []]);
      const rows = await tx.objectStore("crons").index("by_due").getAll(range, limit);
      return rows.map((row) => cronOut(row)!);
    });
  }

  getDoc<T>(collection: DocCollection, id: string) {
    return this.read(["docs"], async (tx) => {
      const row = await tx.objectStore("docs").get([collection, id]);
      return row && ({ id: row.id, parent: row.parent, doc: row.doc } as StoredDoc<T>);
    });
  }
  listDocs<T>(collection: DocCollection, parent?: string) {
    return this.read(["docs"], async (tx) => {
      const rows = await tx.objectStore("docs").index("by_seq").getAll(under(collection));
      return rows.filter((r) => parent === undefined || r.parent === parent).map((r) => ({ id: r.id, parent: r.parent, doc: r.doc }) as StoredDoc<T>);
    });
  }

  getItem(namespace: readonly string[], key: string) {
    return this.read(["store_items"], async (tx) => itemOf(await tx.objectStore("store_items").get([namespaceKey(namespace), key])));
  }
  /** Rows of the namespaces starting with `labels` (a key range: the namespace itself, then `labels.` up to `labels/`). */
  protected async itemRows(tx: Tx, labels: readonly string[]): Promise<ItemRow[]> {
    const store = tx.objectStore("store_items");
    if (labels.length === 0) return store.getAll();
    const p = namespaceKey(labels);
    const [own, deeper] = await Promise.all([store.getAll(IDBKeyRange.bound([p], [p, []])), store.getAll(IDBKeyRange.bound([`${p}.`], [`${p}/`], false, true))]);
    return [...own, ...deeper];
  }
  searchItems(q: ItemQuery) {
    return this.read(["store_items"], async (tx) => rankItems((await this.itemRows(tx, q.prefix)).map((row) => itemOf(row)).filter((item) => matchesItemQuery(item, q)), q));
  }
  listItemNamespaces(q: ItemNamespaceQuery) {
    return this.read(["store_items"], async (tx) => {
      // The leading labels without wildcards narrow the key range.
      const fixed: string[] = [];
      for (const label of q.prefix ?? []) {
        if (label === "*") break;
        fixed.push(label);
      }
      const groups = new Map<string, [readonly string[], StoredItem[]]>();
      for (const row of await this.itemRows(tx, fixed)) {
        const group = groups.get(row.ns) ?? [row.namespace, []];
        groups.set(row.ns, group);
        group[1].push(itemOf(row));
      }
      return listNamespacesOf(groups.values(), q);
    });
  }
  expiredItems(now: number, limit = Infinity) {
    return this.read(["store_items"], async (tx) => {
      const out: ExpiredItem[] = [];
      const index = tx.objectStore("store_items").index("by_expiry");
      for (let c = await index.openCursor(IDBKeyRange.upperBound(now)); c && out.length < limit; c = await c.continue()) {
        out.push({ namespace: c.value.namespace, key: c.value.key, expires_at: c.value.expires_at! });
      }
      return out;
    });
  }
}
