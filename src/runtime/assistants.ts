/** `runtime.assistants` (D5, D6). */
import { matchesAuthFilter, type AuthFilter } from "../auth/types.js";
import { GraphdockError, conflict, notFound } from "../errors.js";
import { defaultAssistantId } from "../ids.js";
import type { AssistantQuery, WriteOp } from "../persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord, Config, Metadata } from "../types.js";
import type { RunControl } from "./control.js";
import type { Caller, Core } from "./core.js";
import { cronsOf } from "./crons.js";
import { parse, schemas } from "./schemas.js";
import { selectFields } from "./select.js";
import type { Assistant, AssistantGraph, AssistantSearchQuery, AssistantSelectField, AssistantsApi, AssistantVersion, GraphSchema, Selection, SubgraphSchema } from "./types.js";

/** The version row of an assistant's current fields. */
function versionOf(a: AssistantRecord, createdAt: string): AssistantVersionRecord {
  const { updated_at: _updated, ...fields } = a;
  return { ...fields, created_at: createdAt };
}

/** Creates the default assistant of every graph that lacks one (D5). */
export async function ensureDefaultAssistants(
  core: Core,
  defaults: ReadonlyMap<string, { config: Config; context: unknown; description?: string }> = new Map(),
): Promise<void> {
  const ops: WriteOp[] = [];
  for (const graphId of core.graphs.keys()) {
    const id = defaultAssistantId(graphId);
    if (await core.store.getAssistant(id)) continue;
    const now = core.now();
    const assistant: AssistantRecord = {
      assistant_id: id,
      graph_id: graphId,
      name: graphId,
      description: defaults.get(graphId)?.description ?? null,
      // Declared defaults (assistant-defaults.ts) apply when the assistant is created, as on the
      // agent server (if_exists: do_nothing); an existing one is changed with assistants.update.
      config: defaults.get(graphId)?.config ?? {},
      context: defaults.get(graphId)?.context ?? {},
      metadata: { created_by: "system" },
      version: 1,
      created_at: now,
      updated_at: now,
    };
    ops.push({ op: "assistant.put", assistant }, { op: "assistant_version.put", version: versionOf(assistant, now) });
  }
  if (ops.length) await core.store.commit(ops);
}

/** Search / count filters with the authorization filter, as one store query (D21). */
function assistantFilters(q: { graphId?: string | undefined; name?: string | undefined; metadata?: Metadata | undefined }, auth: AuthFilter | undefined): AssistantQuery {
  return {
    ...(q.graphId !== undefined ? { graph_id: q.graphId } : {}),
    ...(q.name !== undefined ? { name: q.name } : {}),
    ...(q.metadata !== undefined ? { metadata: q.metadata } : {}),
    ...(auth !== undefined ? { auth } : {}),
  };
}

export function assistantsApi(core: Core, caller: Caller, control: RunControl): AssistantsApi {
  const { store } = core;

  async function create(payload: unknown): Promise<Assistant> {
    const p = parse(schemas.assistantCreate, payload, "assistants.create");
    const value: Record<string, unknown> = {
      assistant_id: p.assistantId,
      graph_id: p.graphId,
      metadata: { ...(p.metadata ?? {}) },
      config: p.config ?? {},
      context: p.context ?? {},
      if_exists: p.ifExists ?? "raise",
      name: p.name,
      description: p.description ?? null,
    };
    const filter = await core.authorize(caller, "assistants", "create", value);
    core.requireGraph(p.graphId);
    const id = p.assistantId ?? core.ids.uuid();
    return core.mutex.run(`assistant:${id}`, async () => {
      const existing = await store.getAssistant(id);
      if (existing) {
        if (p.ifExists === "do_nothing" && matchesAuthFilter(existing.metadata, filter)) return existing;
        throw conflict(`graphdock: assistant ${id} already exists. Use another assistantId or ifExists: "do_nothing".`);
      }
      const now = core.now();
      const assistant: AssistantRecord = {
        assistant_id: id,
        graph_id: p.graphId,
        name: p.name ?? "Untitled",
        description: p.description ?? null,
        config: p.config ?? {},
        context: p.context ?? {},
        metadata: (value.metadata as Metadata | undefined) ?? {},
        version: 1,
        created_at: now,
        updated_at: now,
      };
      await store.commit([
        { op: "assistant.put", assistant },
        { op: "assistant_version.put", version: versionOf(assistant, now) },
      ]);
      return assistant;
    });
  }

  async function get(assistantId: unknown, options?: unknown): Promise<Assistant> {
    const id = parse(schemas.id, assistantId, "assistants.get");
    parse(schemas.callOptions, options ?? {}, `assistants.get(${id})`);
    const filter = await core.authorize(caller, "assistants", "read", { assistant_id: id });
    return core.visibleAssistant(id, filter);
  }

  async function update(assistantId: unknown, payload: unknown): Promise<Assistant> {
    const id = parse(schemas.id, assistantId, "assistants.update");
    const p = parse(schemas.assistantUpdate, payload ?? {}, `assistants.update(${id})`);
    const value: Record<string, unknown> = {
      assistant_id: id,
      metadata: { ...(p.metadata ?? {}) },
      config: p.config,
      context: p.context,
      graph_id: p.graphId,
      name: p.name,
      description: p.description,
    };
    const filter = await core.authorize(caller, "assistants", "update", value);
    return core.mutex.run(`assistant:${core.resolveAssistantId(id)}`, async () => {
      const current = await core.visibleAssistant(id, filter);
      if (p.graphId !== undefined) core.requireGraph(p.graphId);
      const [latest] = await store.queryAssistantVersions({ assistant_id: current.assistant_id, limit: 1 });
      const version = Math.max(current.version, latest?.version ?? 0) + 1;
      const now = core.now();
      // D6: built from exactly what is supplied; graph_id, name, description carry over.
      const next: AssistantRecord = {
        ...current,
        graph_id: p.graphId ?? current.graph_id,
        name: p.name ?? current.name,
        description: p.description !== undefined ? p.description : current.description,
        config: (p.config ?? {}) as Config,
        context: p.context ?? {},
        metadata: (value.metadata as Metadata | undefined) ?? {},
        version,
        updated_at: now,
      };
      await store.commit([
        { op: "assistant.put", assistant: next },
        { op: "assistant_version.put", version: versionOf(next, now) },
      ]);
      return next;
    });
  }

  async function remove(assistantId: unknown, options?: unknown): Promise<void> {
    const id = parse(schemas.id, assistantId, "assistants.delete");
    const o = parse(schemas.assistantDelete, options ?? {}, `assistants.delete(${id})`);
    const filter = await core.authorize(caller, "assistants", "delete", { assistant_id: id });
    await core.mutex.run(`assistant:${core.resolveAssistantId(id)}`, async () => {
      const assistant = await core.visibleAssistant(id, filter);
      if (core.isDefaultAssistant(assistant.assistant_id)) {
        // D5: every registered graph has its default assistant; without it the graph id names nothing.
        throw conflict(
          `graphdock: assistant ${assistant.assistant_id} is the default assistant of graph "${assistant.graph_id}" and cannot be deleted; remove the graph from createRuntime's graphs instead.`,
        );
      }
      const ops: WriteOp[] = [{ op: "assistant.delete", assistant_id: assistant.assistant_id }];
      // Its finished runs go too; in-flight ones finish first.
      const finished = await store.queryRuns({ assistant_id: assistant.assistant_id, status: ["success", "error", "timeout", "interrupted"] });
      for (const run of finished) ops.push({ op: "run.delete", run_id: run.run_id, expect: { status: [run.status] } });
      const threadIds: string[] = [];
      if (o.deleteThreads) {
        for (const t of await store.queryThreads({ metadata: { assistant_id: assistant.assistant_id } })) {
          // Only threads the caller may delete go: another user's thread run on this assistant stays.
          const threadFilter = await core.authorize(caller, "threads", "delete", { thread_id: t.thread_id });
          if (matchesAuthFilter(t.metadata, threadFilter)) threadIds.push(t.thread_id);
        }
      }
      // As threads.delete does: a deleted thread's in-flight runs are cancelled first, so none
      // keeps writing checkpoints for a thread that is gone.
      for (const threadId of threadIds) {
        await control.cancelAll(threadId);
        const thread = await store.getThread(threadId);
        if (thread) ops.push({ op: "thread.delete", thread_id: threadId, expect: { sameAs: thread } });
        await control.forget(threadId);
      }
      const restarted = async () => {
        for (const threadId of threadIds) if ((await control.inFlight(threadId)) > 0) return threadId;
        return undefined;
      };
      const refuse = (threadId: string) =>
        conflict(`graphdock: a run was started on thread ${threadId} while assistant ${assistant.assistant_id} was being deleted with its threads; delete it again.`);
      // Its crons, and those of the threads deleted with it, go too.
      ops.push(...(await cronsOf(store, { assistant_id: assistant.assistant_id })));
      for (const threadId of threadIds) ops.push(...(await cronsOf(store, { thread_id: threadId })));
      const early = await restarted();
      if (early) throw refuse(early);
      try {
        await store.commit(ops);
      } catch (err) {
        // A run admitted meanwhile changed one of the threads (the conditional delete refused).
        if (GraphdockError.is(err, "conflict") && threadIds.length) throw refuse((await restarted()) ?? threadIds[0]!);
        throw err;
      }
    });
  }

  type Page<T> = { assistants: T[]; next: string | null };
  function search(query: AssistantSearchQuery & { includePagination: true; select?: undefined }): Promise<Page<Assistant>>;
  function search(query?: AssistantSearchQuery & { includePagination?: false; select?: undefined }): Promise<Assistant[]>;
  function search<const S extends readonly AssistantSelectField[]>(
    query: Omit<AssistantSearchQuery, "select"> & { includePagination: true; select?: S },
  ): Promise<Page<Selection<Assistant, S>>>;
  function search<const S extends readonly AssistantSelectField[]>(
    query?: Omit<AssistantSearchQuery, "select"> & { includePagination?: false; select?: S },
  ): Promise<Selection<Assistant, S>[]>;
  async function search(query?: unknown): Promise<Page<Partial<Assistant>> | Partial<Assistant>[]> {
    const q = parse(schemas.assistantSearch, query ?? {}, "assistants.search");
    const limit = q.limit ?? 10;
    const offset = q.offset ?? 0;
    const filter = await core.authorize(caller, "assistants", "search", {
      graph_id: q.graphId,
      metadata: q.metadata,
      limit,
      offset,
    });
    const filters = assistantFilters(q, filter);
    const rows = await store.queryAssistants({ ...filters, sortBy: q.sortBy ?? "created_at", sortOrder: q.sortOrder ?? "desc", offset, limit });
    const page = rows.map((a) => (q.select?.length ? selectFields(a, q.select) : a));
    if (q.includePagination) {
      const next = offset + limit < (await store.countAssistants(filters)) ? String(offset + limit) : null;
      return { assistants: page, next };
    }
    return page;
  }

  async function count(query?: unknown): Promise<number> {
    const q = parse(schemas.assistantCount, query ?? {}, "assistants.count");
    const filter = await core.authorize(caller, "assistants", "search", {
      graph_id: q.graphId,
      metadata: q.metadata,
      limit: 0,
      offset: 0,
    });
    return store.countAssistants(assistantFilters(q, filter));
  }

  async function getVersions(assistantId: unknown, payload?: unknown): Promise<AssistantVersion[]> {
    const id = parse(schemas.id, assistantId, "assistants.getVersions");
    const p = parse(schemas.assistantVersions, payload ?? {}, `assistants.getVersions(${id})`);
    const filter = await core.authorize(caller, "assistants", "read", { assistant_id: id });
    const resolved = core.resolveAssistantId(id);
    const query = { assistant_id: resolved, ...(p.metadata !== undefined ? { metadata: p.metadata } : {}), ...(filter ? { auth: filter } : {}) };
    const versions = await store.queryAssistantVersions({ ...query, offset: p.offset ?? 0, limit: p.limit ?? 10 });
    if (versions.length === 0 && (await store.queryAssistantVersions({ ...query, limit: 1 })).length === 0) {
      throw notFound(`graphdock: assistant "${id}" not found (no versions).`);
    }
    return versions;
  }

  async function setLatest(assistantId: unknown, version: unknown, options?: unknown): Promise<Assistant> {
    const id = parse(schemas.id, assistantId, "assistants.setLatest");
    const v = parse(schemas.version, version, `assistants.setLatest(${id})`);
    parse(schemas.callOptions, options ?? {}, `assistants.setLatest(${id})`);
    const filter = await core.authorize(caller, "assistants", "update", { assistant_id: id, version: v });
    return core.mutex.run(`assistant:${core.resolveAssistantId(id)}`, async () => {
      const current = await core.visibleAssistant(id, filter);
      const row = (await store.queryAssistantVersions({ assistant_id: current.assistant_id })).find((x) => x.version === v);
      if (!row) throw notFound(`graphdock: assistant ${current.assistant_id} has no version ${v}. List them with assistants.getVersions.`);
      // Every versioned field of that version is restored (D6).
      const next: AssistantRecord = {
        ...current,
        graph_id: row.graph_id,
        name: row.name,
        description: row.description,
        config: row.config,
        context: row.context,
        metadata: row.metadata,
        version: row.version,
        updated_at: core.now(),
      };
      await store.commit([{ op: "assistant.put", assistant: next }]);
      return next;
    });
  }

  async function graphOf(assistantId: unknown, options: unknown, what: string) {
    const id = parse(schemas.id, assistantId, what);
    const o = parse(schemas.xray, options ?? {}, `${what}(${id})`);
    const filter = await core.authorize(caller, "assistants", "read", { assistant_id: id });
    const assistant = await core.visibleAssistant(id, filter);
    const config = { ...assistant.config, configurable: { ...assistant.config?.configurable, graph_id: assistant.graph_id, assistant_id: assistant.assistant_id } };
    return { assistant, graph: await core.graph(assistant.graph_id, config), xray: o.xray };
  }

  return {
    create,
    get,
    update,
    delete: remove,
    search,
    count,
    getVersions,
    setLatest,
    async getGraph(assistantId, options) {
      const { graph, xray } = await graphOf(assistantId, options, "assistants.getGraph");
      return graph.getGraph(xray === undefined ? undefined : { xray }) as AssistantGraph;
    },
    async getSchemas(assistantId, options) {
      const { assistant, graph } = await graphOf(assistantId, options, "assistants.getSchemas");
      return { graph_id: assistant.graph_id, ...(await graph.getSchemas()) } as GraphSchema;
    },
    async getSubgraphs(assistantId, options) {
      const id = parse(schemas.id, assistantId, "assistants.getSubgraphs");
      const o = parse(schemas.subgraphs, options ?? {}, `assistants.getSubgraphs(${id})`);
      const filter = await core.authorize(caller, "assistants", "read", { assistant_id: id });
      const assistant = await core.visibleAssistant(id, filter);
      // Keyed by namespace without task ids (`node`, `node|child`); a graph without subgraphs has none.
      const found = await (await core.graph(assistant.graph_id)).getSubgraphs?.({
        ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
        ...(o.recurse !== undefined ? { recurse: o.recurse } : {}),
      });
      return Object.fromEntries(
        Object.entries(found ?? {}).map(([ns, schemas]) => [
          ns,
          {
            graph_id: assistant.graph_id,
            ...schemas,
            // The JS agent server's keys, which its clients read.
            state: schemas.state_schema,
            input: schemas.input_schema,
            output: schemas.output_schema,
            config: schemas.config_schema,
          } satisfies SubgraphSchema,
        ]),
      );
    },
  };
}
