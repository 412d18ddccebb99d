/**
 * Cron records as stores keep them, and the one meaning of `CronQuery` shared by the
 * stores that hold or scan their records in memory (memory, JSON file, IndexedDB); the
 * PostgreSQL store translates it to SQL instead. Core-safe.
 */
import { matchesAuthFilter, type AuthFilter, type AuthUser } from "../auth/types.js";
import { contains } from "../json.js";
import type { Metadata } from "../types.js";
import { sortAndPage } from "./query.js";

/**
 * A scheduled run as stored: the SDK's `Cron` record (snake_case, D2) plus what only the runtime
 * reads (`revision`, `user`). Callers see it without those two (`runtime.crons` strips them).
 */
export interface CronRecord {
  cron_id: string;
  assistant_id: string;
  /** The thread every tick runs on; `null`: each tick runs on a new thread. */
  thread_id: string | null;
  /** New-thread crons: `delete` (default) removes each tick's thread when its run ends; `keep` keeps it. */
  on_run_completed?: "delete" | "keep";
  /** ISO time after which the cron schedules no more runs; `null`: no end. */
  end_time: string | null;
  /** A 5-field (minute) or 6-field (second) cron expression. */
  schedule: string;
  /** IANA time zone the schedule is read in; `null`: UTC. */
  timezone: string | null;
  created_at: string;
  updated_at: string;
  /** The run payload of every tick, snake_case as on the wire (`input`, `config`, `context`, ...). */
  payload: Record<string, unknown>;
  /** The identity of the user who created the cron (`null` without auth). */
  user_id: string | null;
  /** ISO time of the next tick; `null` once the cron has ended (`end_time` passed). */
  next_run_date: string | null;
  metadata: Metadata;
  /** A disabled cron keeps its record and schedules nothing. */
  enabled: boolean;
  /** Bumped by every write; the compare-and-set of `CronExpectation.revision`. */
  revision: number;
  /** The creator as authenticated (D12), so each tick runs as them; `null` without auth. */
  user: AuthUser | null;
}

/** What a cron op expects of the stored cron; every field given must hold. */
export interface CronExpectation {
  /** The cron exists (true) or does not (false). */
  exists?: boolean;
  /** The stored cron's `revision` is this one (it has not changed since it was read). */
  revision?: number;
}

export type CronSortBy = "cron_id" | "assistant_id" | "thread_id" | "created_at" | "updated_at" | "next_run_date";

/** A search of crons (D21): every filter present must hold. */
export interface CronQuery {
  ids?: readonly string[];
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  /** JSON containment on `metadata`. */
  metadata?: Record<string, unknown>;
  /** The authorization filter, matched against `metadata`. */
  auth?: AuthFilter;
  /** Default `created_at`; ties broken by `cron_id`. `null` `thread_id`/`next_run_date` sort first. */
  sortBy?: CronSortBy;
  /** Default `desc`. */
  sortOrder?: "asc" | "desc";
  limit?: number;
  offset?: number;
}

export function matchesCron(c: CronRecord, q: CronQuery): boolean {
  return (
    (q.ids === undefined || q.ids.length === 0 || q.ids.includes(c.cron_id)) &&
    (q.assistant_id === undefined || c.assistant_id === q.assistant_id) &&
    (q.thread_id === undefined || c.thread_id === q.thread_id) &&
    (q.enabled === undefined || c.enabled === q.enabled) &&
    (q.metadata === undefined || contains(c.metadata, q.metadata)) &&
    matchesAuthFilter(c.metadata, q.auth)
  );
}

export function queryCrons(all: Iterable<CronRecord>, q: CronQuery): CronRecord[] {
  const hits: CronRecord[] = [];
  for (const c of all) if (matchesCron(c, q)) hits.push(c);
  return sortAndPage(hits, q.sortBy ?? "created_at", q.sortOrder ?? "desc", "cron_id", q);
}

export function countCrons(all: Iterable<CronRecord>, q: CronQuery): number {
  let n = 0;
  for (const c of all) if (matchesCron(c, q)) n++;
  return n;
}

/** True when the cron belongs in the due index: enabled, with a next tick. */
export const isScheduled = (c: CronRecord): c is CronRecord & { next_run_date: string } => c.enabled && c.next_run_date !== null;

/**
 * The due index of the in-memory stores: scheduled crons ordered by (`next_run_date`,
 * `cron_id`), kept sorted by binary insertion, so "due as of t" reads only the due ones.
 */
export class DueIndex {
  private keys: Array<[string, string]> = [];

  private find(at: string, id: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const [a, b] = this.keys[mid]!;
      if (a < at || (a === at && b < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Replaces `prev`'s entry (if any) by `next`'s (if scheduled). */
  update(prev: CronRecord | undefined, next: CronRecord | undefined): void {
    if (prev && isScheduled(prev)) {
      const i = this.find(prev.next_run_date, prev.cron_id);
      const k = this.keys[i];
      if (k && k[0] === prev.next_run_date && k[1] === prev.cron_id) this.keys.splice(i, 1);
    }
    if (next && isScheduled(next)) this.keys.splice(this.find(next.next_run_date, next.cron_id), 0, [next.next_run_date, next.cron_id]);
  }

  clear(): void {
    this.keys = [];
  }

  /** Ids of scheduled crons, earliest first; with `asOf`, only those due at or before it. */
  due(asOf: string | undefined, limit: number): string[] {
    const out: string[] = [];
    for (const [at, id] of this.keys) {
      if (out.length >= limit || (asOf !== undefined && at > asOf)) break;
      out.push(id);
    }
    return out;
  }
}

/** Why `stored` fails `expect` (for the store's `conflict` message), or undefined when it holds. */
export function cronExpectationFails(expect: CronExpectation | undefined, stored: Pick<CronRecord, "revision"> | undefined): string | undefined {
  if (!expect) return undefined;
  if (expect.exists !== undefined && expect.exists !== (stored !== undefined)) return expect.exists ? "it does not exist" : "it already exists";
  if (expect.revision !== undefined && stored?.revision !== expect.revision) {
    return stored ? `it changed since it was read (revision ${stored.revision}, expected ${expect.revision})` : "it does not exist";
  }
  return undefined;
}
