/** `runtime.threads` (D7, D8). */
import { type AuthFilter, matchesAuthFilter } from "../auth/types.js";
import { GraphdockError, conflict, forbidden, invalidInput, notFound } from "../errors.js";
import { copyThreadOps } from "../graph/state.js";
import type { CompiledGraph, StateSnapshot, Superstep } from "../graph/types.js";
import { memoryStore } from "../persistence/memory.js";
import type { ThreadQuery, WriteOp } from "../persistence/types.js";
import type { Metadata, ThreadRecord, ThreadStatus } from "../types.js";
import type { RunControl } from "./control.js";
import { cronsOf } from "./crons.js";
import type { Caller, Core } from "./core.js";
import { selectFields, selectState } from "./select.js";
import { LostRace, commitIf, retryLostRaces } from "./races.js";
import { graphIdOf, interruptsOf, runsReady, threadKey } from "./outcome.js";
import { checkpointIdOf, checkpointNsOf, parse, schemas } from "./schemas.js";
import { threadGraphConfig } from "./graph-source.js";
import { joinThreadStream } from "./thread-stream.js";
import { expiryOp, pruneThread, threadTtlOf } from "./thread-ttl.js";
import type {
  CheckpointSelector,
  CheckpointState,
  HistoryQuery,
  Selection,
  StateSelection,
  Thread,
  ThreadGetStateOptions,
  ThreadSearchQuery,
  ThreadSelectField,
  ThreadsApi,
  ThreadState,
  ThreadStateSelectField,
  ThreadSummary,
  ThreadUpdatePayload,
} from "./types.js";

/** The state of a thread without checkpoints (never run). */
const EMPTY_STATE: ThreadState = Object.freeze({
  values: {},
  next: [],
  tasks: [],
  metadata: null,
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
  checkpoint_id: null,
  parent_checkpoint_id: null,
  interrupts: [],
});

/**
 * The engine's snapshot as the API hands it out. Its `values` are whatever the graph wrote: the
 * caller names their type (`Values`, as the SDK's `ValuesType`), which nothing here can check.
 */
export const asState = <V = Record<string, unknown>>(s: StateSnapshot) => s as unknown as ThreadState<V>;
/** A thread record as the API hands it out; `values` typed by the caller as in `asState`. */
const asThread = <V = Record<string, unknown>>(t: ThreadRecord) => t as unknown as Thread<V>;

/**
 * The graph a thread runs, from `metadata.graph_id`; undefined for a thread never run. A factory
 * is called with the thread's config and ids.
 */
export async function graphOfThread(core: Core, thread: ThreadRecord): Promise<CompiledGraph | undefined> {
  const graphId = graphIdOf(thread);
  return graphId === undefined ? undefined : core.graph(graphId, threadGraphConfig(thread, graphId));
}


/** Engine failures on bad updates (unknown node, ambiguous update) are the caller's input. */
function asInputError(err: unknown, what: string): never {
  if (GraphdockError.is(err)) throw err;
  throw invalidInput(`graphdock: ${what}: ${err instanceof Error ? err.message : String(err)}`);
}

const toEngineSupersteps = (
  supersteps: Array<{ updates: Array<{ values?: unknown; command?: unknown; asNode?: string }> }>,
): Superstep[] =>
  supersteps.map((s) => ({
    updates: s.updates.map((u) => ({
      values: u.values,
      ...(u.command ? { command: u.command as Superstep["updates"][number]["command"] } : {}),
      ...(u.asNode !== undefined ? { as_node: u.asNode } : {}),
    })),
  }));

/** The filters of a search or count, with the authorization filter, as one store query (D21). */
function threadFilters(
  q: { ids?: string[] | undefined; status?: ThreadStatus | undefined; metadata?: Metadata | undefined; values?: Record<string, unknown> | undefined },
  auth: AuthFilter | undefined,
): ThreadQuery {
  return {
    ...(q.ids?.length ? { ids: q.ids } : {}),
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.metadata !== undefined ? { metadata: q.metadata } : {}),
    ...(q.values !== undefined ? { values: q.values } : {}),
    ...(auth !== undefined ? { auth } : {}),
  };
}

export function threadsApi(core: Core, caller: Caller, control: RunControl): ThreadsApi {
  const { store } = core;

  async function readable(threadId: string): Promise<ThreadRecord> {
    return core.visibleThread(threadId, await core.authorize(caller, "threads", "read", { thread_id: threadId }));
  }

  /** threads:update then threads:read: hidden -> 404, visible but denied -> 403. */
  async function writable(threadId: string): Promise<ThreadRecord> {
    const updateFilter = await core.authorize(caller, "threads", "update", { thread_id: threadId });
    const thread = await readable(threadId);
    if (!matchesAuthFilter(thread.metadata, updateFilter)) {
      throw forbidden(`graphdock: not allowed to update thread ${threadId}.`);
    }
    return thread;
  }

  async function create<V>(payload?: unknown): Promise<Thread<V>> {
    const p = parse(schemas.threadCreate, payload ?? {}, "threads.create");
    const metadata: Metadata = { ...(p.metadata ?? {}) };
    if (p.graphId !== undefined) metadata.graph_id = p.graphId;
    const value: Record<string, unknown> = { thread_id: p.threadId, metadata, if_exists: p.ifExists ?? "raise" };
    const filter = await core.authorize(caller, "threads", "create", value);
    const id = p.threadId ?? core.ids.uuid();
    return retryLostRaces(async () => {
      const existing = await store.getThread(id);
      if (existing) {
        if (p.ifExists === "do_nothing" && matchesAuthFilter(existing.metadata, filter)) return asThread<V>(existing);
        throw conflict(`graphdock: thread ${id} already exists. Use another threadId or ifExists: "do_nothing".`);
      }
      const now = core.now();
      let thread: ThreadRecord = {
        thread_id: id,
        created_at: now,
        updated_at: now,
        state_updated_at: now,
        metadata: (value.metadata as Metadata | undefined) ?? metadata,
        status: "idle",
        config: {},
        values: {},
        interrupts: {},
      };
      const ops: WriteOp[] = [];
      if (p.supersteps?.length) {
        const graphId = thread.metadata.graph_id;
        if (typeof graphId !== "string") {
          throw invalidInput(`graphdock: thread ${id} has no graph id; pass graphId to threads.create to apply supersteps.`);
        }
        const graph = await core.graph(graphId, { configurable: { thread_id: id, graph_id: graphId } });
        // Applied on a scratch store first, so a bad superstep writes nothing.
        const scratch = memoryStore();
        await graph
          .bulkUpdateState(scratch, id, toEngineSupersteps(p.supersteps), {
            metadata: { graph_id: graphId },
            ids: core.ids,
            clock: core.clock,
          })
          .catch((err) => asInputError(err, `threads.create(${id}) supersteps`));
        const state = await graph.getState(scratch, id);
        thread = { ...thread, values: state.values, interrupts: interruptsOf(state) };
        ops.push(...(await copyThreadOps(scratch, id, id)));
      }
      const ttl = threadTtlOf(p.ttl, core.threadTtl);
      if (ttl) ops.push(expiryOp(id, ttl, core.clock()));
      await commitIf(store, [{ op: "thread.put", thread, expect: { exists: false } }, ...ops]);
      return asThread<V>(thread);
    });
  }

  async function get<V>(threadId: unknown, options?: unknown): Promise<Thread<V>> {
    const id = parse(schemas.id, threadId, "threads.get");
    parse(schemas.callOptions, options ?? {}, `threads.get(${id})`);
    return asThread<V>(await readable(id));
  }

  function update(threadId: string, payload?: ThreadUpdatePayload & { returnMinimal?: false }): Promise<Thread>;
  function update(threadId: string, payload: ThreadUpdatePayload & { returnMinimal: true }): Promise<void>;
  function update(threadId: string, payload: ThreadUpdatePayload & { returnMinimal: boolean }): Promise<Thread | void>;
  async function update(threadId: unknown, payload?: unknown): Promise<Thread | void> {
    const id = parse(schemas.id, threadId, "threads.update");
    const p = parse(schemas.threadUpdate, payload ?? {}, `threads.update(${id})`);
    const value: Record<string, unknown> = { thread_id: id, metadata: { ...(p.metadata ?? {}) } };
    const filter = await core.authorize(caller, "threads", "update", value);
    const ttl = p.ttl === undefined ? undefined : threadTtlOf(p.ttl, core.threadTtl);
    const updated = await retryLostRaces(async () => {
      const thread = await core.visibleThread(id, filter);
      const next: ThreadRecord = {
        ...thread,
        metadata: { ...thread.metadata, ...((value.metadata as Metadata | undefined) ?? {}) },
        updated_at: core.now(),
      };
      await commitIf(store, [{ op: "thread.put", thread: next, expect: { sameAs: thread } }, ...(ttl ? [expiryOp(id, ttl, core.clock())] : [])]);
      return next;
    });
    return p.returnMinimal ? undefined : asThread(updated);
  }

  async function remove(threadId: unknown, options?: unknown): Promise<void> {
    const id = parse(schemas.id, threadId, "threads.delete");
    parse(schemas.callOptions, options ?? {}, `threads.delete(${id})`);
    const filter = await core.authorize(caller, "threads", "delete", { thread_id: id });
    await core.visibleThread(id, filter);
    await deleteThread(core, control, id, filter);
  }

  async function prune(threadIds: unknown, options?: unknown): Promise<{ pruned_count: number }> {
    const ids = parse(schemas.threadIds, threadIds, "threads.prune");
    const p = parse(schemas.threadPrune, options ?? {}, "threads.prune");
    let pruned = 0;
    for (const id of new Set(ids)) {
      const filter = await core.authorize(caller, "threads", "delete", { thread_id: id });
      const thread = await store.getThread(id);
      if (!thread || !matchesAuthFilter(thread.metadata, filter)) continue;
      if (await pruneThread(core, id, p.strategy ?? "delete", (tid) => deleteThread(core, control, tid, filter))) pruned++;
    }
    return { pruned_count: pruned };
  }

  function search(query?: ThreadSearchQuery & { select?: undefined }): Promise<ThreadSummary[]>;
  function search<V, const S extends readonly ThreadSelectField[]>(query?: Omit<ThreadSearchQuery, "select"> & { select?: S }): Promise<Selection<Thread<V>, S>[]>;
  async function search(query?: unknown): Promise<Array<ThreadSummary | Partial<ThreadRecord>>> {
    const q = parse(schemas.threadSearch, query ?? {}, "threads.search");
    const limit = q.limit ?? 10;
    const offset = q.offset ?? 0;
    const filter = await core.authorize(caller, "threads", "search", {
      ids: q.ids,
      status: q.status,
      metadata: q.metadata,
      values: q.values,
      limit,
      offset,
    });
    const page = await store.queryThreads({
      ...threadFilters(q, filter),
      sortBy: q.sortBy ?? "created_at",
      sortOrder: q.sortOrder ?? "desc",
      offset,
      limit,
    });
    return page.map((t) => {
      if (q.select?.length) return selectFields(t, q.select);
      const { values: _values, ...rest } = t; // D8: search results omit values
      return rest;
    });
  }

  async function count(query?: unknown): Promise<number> {
    const q = parse(schemas.threadCount, query ?? {}, "threads.count");
    const filter = await core.authorize(caller, "threads", "search", {
      status: q.status,
      metadata: q.metadata,
      values: q.values,
      limit: 0,
      offset: 0,
    });
    return store.countThreads(threadFilters(q, filter));
  }

  async function copy<V>(threadId: unknown, options?: unknown): Promise<Thread<V>> {
    const id = parse(schemas.id, threadId, "threads.copy");
    parse(schemas.callOptions, options ?? {}, `threads.copy(${id})`);
    const source = await readable(id);
    const newId = core.ids.uuid();
    const value: Record<string, unknown> = { thread_id: newId, metadata: { ...source.metadata, thread_id: newId }, if_exists: "raise" };
    await core.authorize(caller, "threads", "create", value);
    return (async () => {
      const checkpoints = await copyThreadOps(store, id, newId);
      const now = core.now();
      const thread: ThreadRecord = {
        ...source,
        thread_id: newId,
        created_at: now,
        updated_at: now,
        state_updated_at: now,
        metadata: value.metadata as Metadata,
        status: "idle",
        config: {},
        error: null,
      };
      await store.commit([{ op: "thread.put", thread, expect: { exists: false } }, ...checkpoints]);
      return asThread<V>(thread);
    })();
  }

  function getState<V>(threadId: string, checkpoint?: CheckpointSelector | string, options?: ThreadGetStateOptions & { select?: undefined }): Promise<ThreadState<V>>;
  function getState<V, const S extends readonly ThreadStateSelectField[]>(
    threadId: string,
    checkpoint?: CheckpointSelector | string,
    options?: ThreadGetStateOptions & { select?: S },
  ): Promise<StateSelection<V, S>>;
  async function getState(threadId: unknown, checkpoint?: unknown, options?: unknown): Promise<ThreadState | Partial<ThreadState>> {
    const id = parse(schemas.id, threadId, "threads.getState");
    const cp = parse(schemas.checkpointArg, checkpoint, `threads.getState(${id})`);
    const o = parse(schemas.getStateOptions, options ?? {}, `threads.getState(${id})`);
    const thread = await readable(id);
    const checkpointId = checkpointIdOf(cp);
    const checkpointNs = checkpointNsOf(cp);
    const graph = await graphOfThread(core, thread);
    if (!graph) {
      await core.requireCheckpoint(id, checkpointId);
      return o.select ? selectState(EMPTY_STATE, o.select) : EMPTY_STATE;
    }
    // The engine refuses an unknown checkpoint (not_found) or namespace itself.
    const state = asState(
      await graph
        .getState(store, id, {
          ...(checkpointId !== undefined ? { checkpointId } : {}),
          ...(checkpointNs !== undefined ? { checkpointNs } : {}),
          ...(o.subgraphs ? { subgraphs: true } : {}),
        })
        .catch((err) => asInputError(err, `threads.getState(${id})`)),
    );
    return o.select ? selectState(state, o.select) : state;
  }

  async function updateState(threadId: unknown, options: unknown) {
    const id = parse(schemas.id, threadId, "threads.updateState");
    const p = parse(schemas.updateState, options, `threads.updateState(${id})`);
    await writable(id);
    const initial = await core.visibleThread(id, undefined);
    const graph = await graphOfThread(core, initial);
    if (!graph) throw invalidInput(`graphdock: thread ${id} has no graph id; run it or create it with graphId first.`);
    const checkpointId = p.checkpointId ?? checkpointIdOf(p.checkpoint);
    // A subgraph's checkpoint (`checkpoint.checkpoint_ns`): the engine checks it in that namespace.
    const checkpointNs = checkpointNsOf(p.checkpoint);
    if (checkpointNs === undefined) await core.requireCheckpoint(id, checkpointId);
    return withThreadLease(id, "updating its state", async () => {
      const ref = await graph
        .bulkUpdateState(store, id, [{ updates: [{ values: p.values, ...(p.asNode !== undefined ? { as_node: p.asNode } : {}) }] }], {
          ...(checkpointId !== undefined ? { checkpointId } : {}),
          ...(checkpointNs !== undefined ? { checkpointNs } : {}),
          metadata: { graph_id: initial.metadata.graph_id },
          ids: core.ids,
          clock: core.clock,
        })
        .catch((err) => asInputError(err, `threads.updateState(${id})`));
      const state = await graph.getState(store, id);
      await retryLostRaces(async () => {
        const thread = await core.visibleThread(id, undefined);
        const now = core.now();
        const next = { ...thread, values: state.values, interrupts: interruptsOf(state), updated_at: now, state_updated_at: now };
        await commitIf(store, [{ op: "thread.put", thread: next, expect: { sameAs: thread } }]);
      });
      return { checkpoint: ref, configurable: ref };
    });
  }

  function getHistory<V>(threadId: string, options?: HistoryQuery & { select?: undefined }): Promise<CheckpointState<V>[]>;
  function getHistory<V, const S extends readonly ThreadStateSelectField[]>(threadId: string, options?: Omit<HistoryQuery, "select"> & { select?: S }): Promise<StateSelection<V, S>[]>;
  async function getHistory(threadId: unknown, options?: unknown): Promise<Array<ThreadState | Partial<ThreadState>>> {
    const id = parse(schemas.id, threadId, "threads.getHistory");
    const p = parse(schemas.history, options ?? {}, `threads.getHistory(${id})`);
    const thread = await readable(id);
    const before = checkpointIdOf(p.before);
    const checkpointId = checkpointIdOf(p.checkpoint);
    const checkpointNs = checkpointNsOf(p.checkpoint);
    // `before` naming an unknown checkpoint is a mistake, not an empty history (as getState at
    // one); the engine refuses an unknown `checkpoint` itself.
    if (checkpointNs === undefined) await core.requireCheckpoint(id, typeof before === "string" ? before : undefined);
    const graph = await graphOfThread(core, thread);
    if (!graph) return [];
    const history = await graph.getHistory(store, id, {
      limit: p.limit ?? 10,
      ...(typeof before === "string" ? { before } : {}),
      ...(p.metadata ? { filter: p.metadata } : {}),
      ...(checkpointId !== undefined ? { checkpointId } : {}),
      ...(checkpointNs !== undefined ? { checkpointNs } : {}),
    });
    return history.map((s) => (p.select ? selectState(asState(s), p.select) : asState(s)));
  }

  /**
   * Merges `metadata` into the metadata of the thread's latest checkpoint (the SDK's
   * `patchState`, `PATCH /threads/{id}/state`): the same checkpoint, its writes kept. Takes a
   * thread id or a config `{configurable: {thread_id}}`. Refused (`conflict`) while a run is in
   * flight, `not_found` for a thread without checkpoints.
   */
  async function patchState(threadIdOrConfig: unknown, metadata: unknown, options?: unknown): Promise<void> {
    const ref = parse(schemas.threadRef, threadIdOrConfig, "threads.patchState");
    const id = typeof ref === "string" ? ref : ref.configurable.thread_id;
    const p = parse(schemas.patchState, { metadata }, `threads.patchState(${id})`);
    parse(schemas.callOptions, options ?? {}, `threads.patchState(${id})`);
    await writable(id);
    await withThreadLease(id, "patching its state metadata", async () => {
      const latest = await store.getCheckpoint({ thread_id: id });
      if (!latest) throw notFound(`graphdock: thread ${id} has no state to patch; run it or update its state first.`);
      await store.commit([{ op: "checkpoint.put", checkpoint: { ...latest, metadata: { ...latest.metadata, ...p.metadata } } }]);
    });
  }

  /**
   * Runs `fn` holding the thread's lease, so no run of any runtime starts meanwhile; `conflict`
   * when a run is in flight or starts first.
   */
  async function withThreadLease<T>(id: string, doing: string, fn: () => Promise<T>): Promise<T> {
    const busy = () => conflict(`graphdock: thread ${id} is busy with a run; wait for it or cancel it before ${doing}.`);
    if ((await control.inFlight(id)) > 0) throw busy();
    const nowMs = core.clock();
    const lease = { key: threadKey(id), owner: core.owner, expires_at: nowMs + core.leaseMs, data: { update_state: true } };
    try {
      await commitIf(store, [{ op: "lease.put", lease, expect: { state: "free", now: nowMs } }]);
    } catch (err) {
      if (err instanceof LostRace) throw busy();
      throw err;
    }
    try {
      return await fn();
    } finally {
      await store.commit([{ op: "lease.delete", key: lease.key, owner: core.owner }, runsReady(core, id)]);
    }
  }

  return {
    create,
    get,
    update,
    delete: remove,
    prune,
    search,
    count,
    copy,
    getState,
    updateState,
    getHistory,
    patchState,
    joinStream: (threadId: string, options?: Parameters<ThreadsApi["joinStream"]>[1]) => joinThreadStream(core, caller, control, threadId, options),
  } satisfies ThreadsApi;
}

/**
 * Deletes a thread the caller may see (`filter`): cancels its runs in flight, drops their event
 * logs, and removes it with its crons, only if no run was admitted meanwhile (`conflict` then).
 */
export async function deleteThread(core: Core, control: RunControl, id: string, filter?: AuthFilter): Promise<void> {
  const { store } = core;
  await control.cancelAll(id);
  const thread = await core.visibleThread(id, filter);
  await control.forget(id);
  // A run admitted after the cancel changes the thread: the conditional delete then refuses,
  // so no run goes on writing into a deleted thread.
  const restarted = () => conflict(`graphdock: a run was started on thread ${id} while it was being deleted; cancel it or delete the thread again.`);
  if ((await control.inFlight(id)) > 0) throw restarted();
  try {
    // Its crons go with it.
    await commitIf(store, [{ op: "thread.delete", thread_id: id, expect: { sameAs: thread } }, ...(await cronsOf(store, { thread_id: id }))]);
  } catch (err) {
    if (err instanceof LostRace) throw restarted();
    throw err;
  }
}
