/**
 * The query evaluator shared by the stores that hold their records in memory (memory, JSON file)
 * or scan them (IndexedDB): one meaning of `ThreadQuery`, `AssistantQuery`, `AssistantVersionQuery`
 * and `RunQuery` (D21) that a SQL store translates instead. Core-safe.
 */
import { matchesAuthFilter } from "../auth/types.js";
import { contains } from "../json.js";
import type { AssistantRecord, AssistantVersionRecord, RunRecord, ThreadRecord } from "../types.js";
import type { AssistantQuery, AssistantVersionQuery, Page, RunQuery, SortOrder, ThreadQuery } from "./types.js";

export function matchesThread(t: ThreadRecord, q: ThreadQuery): boolean {
  return (
    (q.ids === undefined || q.ids.length === 0 || q.ids.includes(t.thread_id)) &&
    (q.status === undefined || t.status === q.status) &&
    (q.metadata === undefined || contains(t.metadata, q.metadata)) &&
    (q.values === undefined || contains(t.values, q.values)) &&
    matchesAuthFilter(t.metadata, q.auth)
  );
}

export function matchesAssistant(a: AssistantRecord, q: AssistantQuery): boolean {
  return (
    (q.ids === undefined || q.ids.length === 0 || q.ids.includes(a.assistant_id)) &&
    (q.graph_id === undefined || a.graph_id === q.graph_id) &&
    (q.name === undefined || a.name.toLowerCase().includes(q.name.toLowerCase())) &&
    (q.metadata === undefined || contains(a.metadata, q.metadata)) &&
    matchesAuthFilter(a.metadata, q.auth)
  );
}

export function matchesVersion(v: AssistantVersionRecord, q: AssistantVersionQuery): boolean {
  return v.assistant_id === q.assistant_id && (q.metadata === undefined || contains(v.metadata, q.metadata)) && matchesAuthFilter(v.metadata, q.auth);
}

export function matchesRun(r: RunRecord, q: RunQuery): boolean {
  if (q.thread_id !== undefined && r.thread_id !== q.thread_id) return false;
  if (q.assistant_id !== undefined && r.assistant_id !== q.assistant_id) return false;
  if (q.status === undefined) return true;
  return typeof q.status === "string" ? r.status === q.status : q.status.includes(r.status);
}

/** Compares two field values as strings (ISO times, ids, names, statuses). */
const compareText = (x: unknown, y: unknown): number => {
  const a = String(x ?? "");
  const b = String(y ?? "");
  return a < b ? -1 : a > b ? 1 : 0;
};

/**
 * Sorts `items` in place by `field` in `order`, ties broken by `tieBy` in the same direction,
 * then pages. `items` must be a fresh array the caller owns.
 */
export function sortAndPage<T>(items: T[], field: keyof T, order: SortOrder, tieBy: keyof T, page: Page): T[] {
  const dir = order === "asc" ? 1 : -1;
  items.sort((a, b) => dir * (compareText(a[field], b[field]) || compareText(a[tieBy], b[tieBy])));
  return paged(items, page);
}

/** `offset` / `limit` of an already ordered list. */
export function paged<T>(items: T[], page: Page): T[] {
  const offset = page.offset ?? 0;
  const end = page.limit === undefined ? undefined : offset + page.limit;
  return offset === 0 && end === undefined ? items : items.slice(offset, end);
}

export function queryThreads(all: Iterable<ThreadRecord>, q: ThreadQuery): ThreadRecord[] {
  const hits: ThreadRecord[] = [];
  for (const t of all) if (matchesThread(t, q)) hits.push(t);
  return sortAndPage(hits, q.sortBy ?? "created_at", q.sortOrder ?? "desc", "thread_id", q);
}

export function queryAssistants(all: Iterable<AssistantRecord>, q: AssistantQuery): AssistantRecord[] {
  const hits: AssistantRecord[] = [];
  for (const a of all) if (matchesAssistant(a, q)) hits.push(a);
  return sortAndPage(hits, q.sortBy ?? "created_at", q.sortOrder ?? "desc", "assistant_id", q);
}

/** `versions` ascending by version (as stores keep them). */
export function queryAssistantVersions(versions: readonly AssistantVersionRecord[], q: AssistantVersionQuery): AssistantVersionRecord[] {
  const hits = versions.filter((v) => matchesVersion(v, q));
  if ((q.sortOrder ?? "desc") === "desc") hits.reverse();
  return paged(hits, q);
}

/**
 * `runs` in queue order (the order the store accepted them). `created_at` sorts stably, so runs
 * created in the same millisecond keep their queue order before the run id breaks the tie.
 */
export function queryRuns(runsInQueueOrder: Iterable<RunRecord>, q: RunQuery): RunRecord[] {
  const hits: RunRecord[] = [];
  for (const r of runsInQueueOrder) if (matchesRun(r, q)) hits.push(r);
  if ((q.sortBy ?? "created_at") === "queue") {
    if ((q.sortOrder ?? "asc") === "desc") hits.reverse();
    return paged(hits, q);
  }
  return sortAndPage(hits, "created_at", q.sortOrder ?? "desc", "run_id", q);
}
