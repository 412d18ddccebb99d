/**
 * Public types of `runtime.crons`: the SDK's `client.crons` methods, camelCase options
 * and the snake_case `Cron` record of the HTTP API (D1, D2).
 */
import type { CronRecord, CronSortBy } from "../persistence/crons.js";
import type { CallOptions, MetadataInput, RunPayload, Selection, SortOrder } from "./types.js";

export type { CronSortBy };

/**
 * A scheduled run (the SDK's `Cron`). `thread_id` is `null` for a cron whose every tick runs on
 * a new thread; `next_run_date` is `null` once `end_time` has passed; `payload` is the run
 * payload of each tick in its snake_case wire form; `user_id` is the creator's identity (`null`
 * without auth).
 */
export type Cron = Omit<CronRecord, "revision" | "user">;

/** Fields of a `Cron` that `crons.search` can `select` (`now`, in the SDK's list, selects nothing). */
export type CronSelectField = keyof Cron | "now";

/** The run options a cron gives each of its runs (as for `runs.create`). */
type CronRunOptions = Pick<
  RunPayload,
  | "input"
  | "config"
  | "context"
  | "interruptBefore"
  | "interruptAfter"
  | "webhook"
  | "multitaskStrategy"
  | "checkpointDuring"
  | "durability"
  | "streamMode"
  | "streamSubgraphs"
  | "streamResumable"
>;

/** `crons.create` / `crons.createForThread` (the SDK's `CronsCreatePayload`). */
export interface CronsCreatePayload extends CronRunOptions, CallOptions {
  /**
   * When to run: a cron expression of 5 fields (`minute hour day month weekday`) or 6 (a
   * `second` field first), as `croner` reads them (`*`, lists, ranges, steps, names, `L`, `#`,
   * and nicknames such as `@daily`).
   */
  schedule: string;
  /** IANA time zone the schedule is read in (e.g. `"Europe/Paris"`); default UTC. */
  timezone?: string;
  /** ISO time after which no more runs are scheduled. */
  endTime?: string;
  /** Default true; a disabled cron keeps its record and schedules nothing. */
  enabled?: boolean;
  /**
   * New-thread crons (`crons.create`): `delete` (default) removes each tick's thread once its run
   * has ended; `keep` keeps it (yours to delete).
   */
  onRunCompleted?: "delete" | "keep";
  /** The cron's metadata (auth handlers stamp owners here); each tick's run carries it too. */
  metadata?: MetadataInput;
}

/** `crons.update` (the SDK's `CronsUpdatePayload`): only what is given changes. */
export interface CronsUpdatePayload extends Partial<Omit<CronsCreatePayload, "endTime" | "signal">>, CallOptions {
  /** A new end time; `null` clears it. */
  endTime?: string | null;
}

/** `crons.search`. */
export interface CronSearchQuery extends CallOptions {
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  /** Containment filter on the cron's metadata. */
  metadata?: MetadataInput;
  /** Default 10, at most 1000. */
  limit?: number;
  offset?: number;
  /** Default `created_at`. */
  sortBy?: CronSortBy;
  /** Default `desc`. */
  sortOrder?: SortOrder;
  select?: CronSelectField[];
}

/** `crons.count`. */
export interface CronCountQuery extends CallOptions {
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  metadata?: MetadataInput;
}

/**
 * `runtime.crons`: the SDK's `client.crons`. Crons are stored (they survive restarts of a
 * persistent store) and fired by every runtime on the store, each tick exactly once.
 */
export interface CronsApi {
  /** A cron whose every tick runs the assistant on a new thread (see `onRunCompleted`). */
  create(assistantId: string, payload: CronsCreatePayload): Promise<Cron>;
  /** A cron whose every tick runs the assistant on the thread (its multitask strategy applies). */
  createForThread(threadId: string, assistantId: string, payload: CronsCreatePayload): Promise<Cron>;
  update(cronId: string, payload?: CronsUpdatePayload): Promise<Cron>;
  delete(cronId: string, options?: CallOptions): Promise<void>;
  search(query?: CronSearchQuery & { select?: undefined }): Promise<Cron[]>;
  /** With `select`: only the fields named. */
  search<const S extends readonly CronSelectField[] = readonly CronSelectField[]>(query?: Omit<CronSearchQuery, "select"> & { select?: S }): Promise<Selection<Cron, S>[]>;
  count(query?: CronCountQuery): Promise<number>;
}
