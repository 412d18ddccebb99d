/**
 * `runtime.crons`: the SDK's `client.crons` over cron records in the
 * store. Creating, updating and deleting a cron is one commit that also wakes the scheduler of
 * every runtime on the store (`notify` "crons"); the ticks are fired by ./scheduler.ts through
 * the ordinary run admission.
 *
 * Authorization: resource `crons`, actions create / update / delete / search. A
 * handler stamps owners on `value.metadata` at create and update, and its filter is matched
 * against the cron's metadata like a thread's, so another user's cron looks like no cron (404)
 * and never shows in a search or count. Each tick runs as the cron's creator (D12).
 */
import { type AuthUser, matchesAuthFilter, type AuthFilter } from "../auth/types.js";
import { invalidInput, notFound } from "../errors.js";
import type { CronQuery, CronRecord } from "../persistence/crons.js";
import type { Store, WriteOp } from "../persistence/types.js";
import type { Metadata } from "../types.js";
import { checkRun, type RunOptions } from "./admission.js";
import { parseSchedule } from "./cron-schedule.js";
import type { Cron, CronSearchQuery, CronSelectField, CronsApi } from "./cron-types.js";
import type { Caller, Core } from "./core.js";
import { selectFields } from "./select.js";
import type { Selection } from "./types.js";
import { commitIf, LostRace, retryLostRaces } from "./races.js";
import { CRON_RUN_FIELDS as RUN_FIELDS, cronSchemas, parse, schemas } from "./schemas.js";


/** The topic that wakes every runtime's scheduler when crons change. */
export const CRONS_TOPIC = "crons";
export const cronsChanged: WriteOp = { op: "notify", topic: CRONS_TOPIC };


/** A cron as callers see it: without the store's revision and the creator's user record. */
export function publicCron(cron: CronRecord): Cron {
  const { revision: _revision, user: _user, ...rest } = cron;
  return rest;
}

/** The snake_case payload of the run options given (only those given). */
function payloadOf(p: RunOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [camel, snake] of RUN_FIELDS) if (p[camel] !== undefined) out[snake] = p[camel];
  return out;
}

/**
 * Ops deleting the crons of a thread or an assistant that is being deleted, for the commit that
 * deletes it (a cron created meanwhile is deleted by the scheduler at its next tick).
 */
export async function cronsOf(store: Store, of: { thread_id: string } | { assistant_id: string }): Promise<WriteOp[]> {
  const crons = await store.queryCrons(of);
  if (!crons.length) return [];
  return [...crons.map((c): WriteOp => ({ op: "cron.delete", cron_id: c.cron_id })), cronsChanged];
}

/** The run options of a stored payload. */
function optionsOf(payload: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [camel, snake] of RUN_FIELDS) if (payload[snake] !== undefined) out[camel] = payload[snake];
  return out;
}

/** The run options of the cron's ticks: its payload, its metadata plus `cron_id`, and how its thread ends. */
export function tickOptions(cron: CronRecord): RunOptions {
  return parse(
    schemas.run,
    {
      ...optionsOf(cron.payload),
      metadata: { ...cron.metadata, cron_id: cron.cron_id },
      ...(cron.thread_id === null ? { onCompletion: cron.on_run_completed ?? "delete" } : {}),
    },
    `cron ${cron.cron_id}`,
  );
}

/** The caller a tick runs as: the cron's creator (D12). */
export function tickCaller(cron: CronRecord, fallback: Caller): Caller {
  const user = cron.user;
  return user ? { user: async () => user } : fallback;
}

/** JSON copy of the authenticated user, as the cron keeps it for its ticks. */
const storedUser = (user: AuthUser | undefined): AuthUser | null => (user ? (JSON.parse(JSON.stringify(user)) as AuthUser) : null);

const asIso = (ms: number) => new Date(ms).toISOString();

export function cronsApi(core: Core, caller: Caller): CronsApi {
  const { store } = core;

  async function visibleCron(cronId: string, filter: AuthFilter | undefined): Promise<CronRecord> {
    const cron = await store.getCron(cronId);
    if (!cron || !matchesAuthFilter(cron.metadata, filter)) throw notFound(`graphdock: cron ${cronId} not found.`);
    return cron;
  }

  /** The run options of a create or update payload (checked as for `runs.create`). */
  function runPart(payload: unknown, what: string): RunOptions {
    const src = (payload ?? {}) as Record<string, unknown>;
    if (typeof src !== "object" || Array.isArray(src)) throw invalidInput(`graphdock: ${what}: the payload must be an object.`);
    const given: Record<string, unknown> = {};
    for (const [camel] of RUN_FIELDS) if (src[camel] !== undefined) given[camel] = src[camel];
    return parse(schemas.run, given, what);
  }

  /** `threadIdArg` undefined: a cron whose ticks run on new threads (`crons.create`). */
  async function createCron(threadIdArg: unknown, assistantIdArg: unknown, payload: unknown, what: string): Promise<Cron> {
    const threadId = threadIdArg === undefined ? null : parse(schemas.id, threadIdArg, what);
    const assistantArg = parse(schemas.id, assistantIdArg, what);
    const call = `${what}(${threadId === null ? "" : `${threadId}, `}${assistantArg})`;
    const c = parse(cronSchemas.create, payload ?? {}, call);
    const p = runPart(payload, call);
    const endTime = c.endTime === undefined ? null : asIso(Date.parse(c.endTime));
    const schedule = await parseSchedule(c.schedule, c.timezone ?? null, endTime, call);
    const cronId = core.ids.uuid();
    const user = core.auth ? await caller.user() : undefined;
    const value: Record<string, unknown> = {
      payload: payloadOf(p),
      schedule: c.schedule,
      cron_id: cronId,
      thread_id: threadId,
      user_id: user?.identity ?? null,
      end_time: endTime,
      metadata: { ...(c.metadata ?? {}) },
    };
    await core.authorize(caller, "crons", "create", value);
    if (threadId !== null) await core.visibleThread(threadId, await core.authorize(caller, "threads", "read", { thread_id: threadId }));
    // The run every tick creates is checked now (assistant, webhook, input), so a bad one creates nothing.
    const { assistant } = await checkRun(core, caller, threadId, assistantArg, p, call);
    const now = core.now();
    const cron: CronRecord = {
      cron_id: cronId,
      assistant_id: assistant.assistant_id,
      thread_id: threadId,
      ...(threadId === null ? { on_run_completed: c.onRunCompleted ?? "delete" } : c.onRunCompleted ? { on_run_completed: c.onRunCompleted } : {}),
      end_time: endTime,
      schedule: c.schedule,
      timezone: c.timezone ?? null,
      created_at: now,
      updated_at: now,
      payload: payloadOf(p),
      user_id: user?.identity ?? null,
      next_run_date: schedule.nextAfter(core.clock())?.toISOString() ?? null,
      metadata: (value.metadata as Metadata | undefined) ?? {},
      enabled: c.enabled ?? true,
      revision: 1,
      user: storedUser(user),
    };
    await store.commit([{ op: "cron.put", cron, expect: { exists: false } }, cronsChanged]);
    return publicCron(cron);
  }

  async function update(cronIdArg: unknown, payload?: unknown): Promise<Cron> {
    const cronId = parse(schemas.id, cronIdArg, "crons.update");
    const call = `crons.update(${cronId})`;
    const u = parse(cronSchemas.update, payload ?? {}, call);
    const p = runPart(payload, call);
    const value: Record<string, unknown> = {
      cron_id: cronId,
      payload: payloadOf(p),
      schedule: u.schedule,
      ...(u.metadata !== undefined ? { metadata: { ...u.metadata } } : {}),
    };
    const filter = await core.authorize(caller, "crons", "update", value);
    const updated = await retryLostRaces(async () => {
      const cron = await visibleCron(cronId, filter);
      const endTime = u.endTime === undefined ? cron.end_time : u.endTime === null ? null : asIso(Date.parse(u.endTime));
      const timezone = u.timezone ?? cron.timezone;
      const expression = u.schedule ?? cron.schedule;
      const schedule = await parseSchedule(expression, timezone, endTime, call);
      const merged: Record<string, unknown> = { ...cron.payload, ...payloadOf(p) };
      await checkRun(core, tickCaller(cron, caller), cron.thread_id, cron.assistant_id, parse(schemas.run, optionsOf(merged), call), call);
      const enabled = u.enabled ?? cron.enabled;
      const replanned = u.schedule !== undefined || u.timezone !== undefined || u.endTime !== undefined || (enabled && !cron.enabled);
      const next: CronRecord = {
        ...cron,
        schedule: expression,
        timezone,
        end_time: endTime,
        enabled,
        ...(u.onRunCompleted !== undefined ? { on_run_completed: u.onRunCompleted } : {}),
        payload: merged,
        metadata: value.metadata !== undefined ? { ...cron.metadata, ...(value.metadata as Metadata) } : cron.metadata,
        next_run_date: replanned ? (schedule.nextAfter(core.clock())?.toISOString() ?? null) : cron.next_run_date,
        updated_at: core.now(),
        revision: cron.revision + 1,
      };
      await commitIf(store, [{ op: "cron.put", cron: next, expect: { revision: cron.revision } }, cronsChanged]);
      return next;
    });
    return publicCron(updated);
  }

  async function remove(cronIdArg: unknown, options?: unknown): Promise<void> {
    const cronId = parse(schemas.id, cronIdArg, "crons.delete");
    parse(schemas.callOptions, options ?? {}, `crons.delete(${cronId})`);
    const filter = await core.authorize(caller, "crons", "delete", { cron_id: cronId });
    await visibleCron(cronId, filter);
    try {
      await commitIf(store, [{ op: "cron.delete", cron_id: cronId, expect: { exists: true } }, cronsChanged]);
    } catch (err) {
      // Deleted meanwhile (by its owner elsewhere): as if it was never there.
      if (err instanceof LostRace) throw notFound(`graphdock: cron ${cronId} not found.`);
      throw err;
    }
  }

  function filters(q: { assistantId?: string | undefined; threadId?: string | undefined; enabled?: boolean | undefined; metadata?: Metadata | undefined }, auth: AuthFilter | undefined): CronQuery {
    return {
      ...(q.assistantId !== undefined ? { assistant_id: core.resolveAssistantId(q.assistantId) } : {}),
      ...(q.threadId !== undefined ? { thread_id: q.threadId } : {}),
      ...(q.enabled !== undefined ? { enabled: q.enabled } : {}),
      ...(q.metadata !== undefined ? { metadata: q.metadata } : {}),
      ...(auth !== undefined ? { auth } : {}),
    };
  }

  function search(query?: CronSearchQuery & { select?: undefined }): Promise<Cron[]>;
  function search<const S extends readonly CronSelectField[]>(query?: Omit<CronSearchQuery, "select"> & { select?: S }): Promise<Selection<Cron, S>[]>;
  async function search(query?: unknown): Promise<Array<Cron | Partial<Cron>>> {
    const q = parse(cronSchemas.search, query ?? {}, "crons.search");
    const limit = q.limit ?? 10;
    const offset = q.offset ?? 0;
    const filter = await core.authorize(caller, "crons", "search", {
      assistant_id: q.assistantId,
      thread_id: q.threadId,
      metadata: q.metadata,
      limit,
      offset,
    });
    const page = await store.queryCrons({ ...filters(q, filter), sortBy: q.sortBy ?? "created_at", sortOrder: q.sortOrder ?? "desc", limit, offset });
    return page.map((c) => (q.select?.length ? selectFields(publicCron(c), q.select) : publicCron(c)));
  }

  async function count(query?: unknown): Promise<number> {
    const q = parse(cronSchemas.count, query ?? {}, "crons.count");
    const filter = await core.authorize(caller, "crons", "search", { assistant_id: q.assistantId, thread_id: q.threadId, metadata: q.metadata, limit: 0, offset: 0 });
    return store.countCrons(filters(q, filter));
  }

  return {
    create: (assistantId: unknown, payload?: unknown) => createCron(undefined, assistantId, payload, "crons.create"),
    // A missing thread id is refused (not read as "a new thread each tick").
    createForThread: (threadId: unknown, assistantId: unknown, payload?: unknown) => createCron(threadId ?? null, assistantId, payload, "crons.createForThread"),
    update,
    delete: remove,
    search,
    count,
  } satisfies CronsApi;
}
