/**
 * `createRuntime` (D1): one object with SDK-shaped `assistants`, `threads` and `runs`
 * namespaces, the upload namespaces, a lifecycle subscription, and per-user binding (D12, D13).
 */
import { OWNER_USER, type AuthUser } from "../auth/types.js";
import { invalidInput } from "../errors.js";
import { createIds, systemClock } from "../ids.js";
import { memoryStore } from "../persistence/memory.js";
import type { WriteOp } from "../persistence/types.js";
import { createUploadApi, userTenantId } from "../upload/api.js";
import { LOCAL_TENANT_ID } from "../upload/types.js";
import { assistantsApi, ensureDefaultAssistants } from "./assistants.js";
import { type Caller, Core } from "./core.js";
import { RunQueue, runIsAlive, runsApi } from "./runs.js";
import { threadsApi } from "./threads.js";
import type { ClientRequest, CreateRuntimeOptions, Runtime, RuntimeClient, RuntimeEvent, RuntimeListener } from "./types.js";

/**
 * D10: runs left pending or running by a stopped process end as errors; their threads too. On a
 * shared store a run whose lock another live runtime (tab) holds is left alone. A thread left
 * `busy` with no run in flight (the process stopped between a rollback's commits) gets its status
 * back from its latest checkpoint: `interrupted` when it has pending tasks, else `idle`.
 */
async function recoverInterruptedRuns(core: Core): Promise<void> {
  const inFlight = (await core.store.listRuns()).filter((r) => r.status === "pending" || r.status === "running");
  const alive = await Promise.all(inFlight.map((r) => runIsAlive(core, r.run_id)));
  const stale = inFlight.filter((_, i) => !alive[i]);
  const now = core.now();
  const error = { error: "ProcessStopped", message: "agentdock: the process stopped while this run was in flight; run it again." };
  const ops: WriteOp[] = stale.map((run) => ({ op: "run.put", run: { ...run, status: "error", updated_at: now } }));
  const staleThreads = new Set(stale.map((r) => r.thread_id));
  for (const threadId of staleThreads) {
    const thread = await core.store.getThread(threadId);
    if (thread) ops.push({ op: "thread.put", thread: { ...thread, status: "error", error, updated_at: now } });
  }
  const inFlightThreads = new Set(inFlight.map((r) => r.thread_id));
  for (const thread of await core.store.listThreads()) {
    if (thread.status !== "busy" || inFlightThreads.has(thread.thread_id)) continue;
    const graph = typeof thread.metadata.graph_id === "string" && core.graphs.has(thread.metadata.graph_id) ? core.graph(thread.metadata.graph_id) : undefined;
    const next = graph ? (await graph.getState(core.store, thread.thread_id)).next : [];
    ops.push({ op: "thread.put", thread: { ...thread, status: next.length ? "interrupted" : "idle", updated_at: now } });
  }
  if (ops.length) await core.store.commit(ops);
}

const lowerCaseHeaders = (headers: ClientRequest["headers"]): Record<string, string> => {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (typeof (headers as Headers).get === "function") (headers as Headers).forEach((v, k) => (out[k.toLowerCase()] = v));
  else for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
};

/**
 * Creates a runtime over `graphs` on `store` (memory by default): opens the store, recovers
 * runs a stopped process left in flight (D10) and creates missing default assistants (D5).
 */
export async function createRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
  const graphs = Object.entries(options?.graphs ?? {});
  const notGraphs = graphs.filter(([, g]) => typeof (g as { execute?: unknown })?.execute !== "function").map(([id]) => id);
  if (notGraphs.length) {
    throw invalidInput(`agentdock: createRuntime: graphs ${notGraphs.join(", ")} are not compiled graphs; pass new StateGraph(...).compile().`);
  }
  const strategies = ["reject", "interrupt", "rollback", "enqueue"];
  if (options.multitaskStrategy !== undefined && !strategies.includes(options.multitaskStrategy)) {
    throw invalidInput(`agentdock: createRuntime: multitaskStrategy must be one of ${strategies.join(", ")}.`);
  }
  if (options.webhooks !== undefined && typeof options.webhooks?.allow !== "function") {
    throw invalidInput("agentdock: createRuntime: webhooks.allow must be a function (url: URL) => boolean deciding where runs may POST.");
  }
  const clock = options.clock ?? systemClock;
  const store = options.store ?? memoryStore();
  const core = new Core(
    store,
    new Map(graphs),
    options.ids ?? createIds(clock),
    clock,
    options.auth,
    options.multitaskStrategy ?? "reject",
    options.webhooks,
  );
  await store.open();
  await recoverInterruptedRuns(core);
  await ensureDefaultAssistants(core);
  const queue = new RunQueue(core);
  const upload = createUploadApi({ store, ids: core.ids, clock });

  const bind = (caller: Caller): RuntimeClient => ({
    assistants: assistantsApi(core, caller, queue),
    threads: threadsApi(core, caller, queue),
    runs: runsApi(core, caller, queue),
    // Experiments are the caller's tenant's: the owner's without auth, the user's own with it.
    ...upload.forTenant(core.auth ? async () => userTenantId((await caller.user()).identity) : LOCAL_TENANT_ID),
  });

  const { auth } = options;
  // Unbound calls: with auth, the handler decides what a request without credentials is (D13).
  const defaultCaller: Caller = { user: auth ? () => auth.authenticate({ headers: {} }) : async () => OWNER_USER };
  let closing: Promise<void> | undefined;

  const runtime: Runtime = {
    ...bind(defaultCaller),
    graphIds: Object.freeze([...core.graphs.keys()]),
    async client(request: ClientRequest = {}) {
      let user: AuthUser = OWNER_USER;
      if (auth) {
        user = await auth.authenticate({
          headers: lowerCaseHeaders(request.headers),
          ...(request.method !== undefined ? { method: request.method } : {}),
          ...(request.path !== undefined ? { path: request.path } : {}),
          ...(request.url !== undefined ? { url: request.url } : {}),
        });
      }
      return bind({ user: async () => user });
    },
    subscribe(typeOrListener: RuntimeListener | RuntimeEvent["type"], maybeListener?: RuntimeListener<never>): () => void {
      const listener = (typeof typeOrListener === "function" ? typeOrListener : maybeListener) as (e: RuntimeEvent) => void;
      const type = typeof typeOrListener === "string" ? typeOrListener : undefined;
      const isolated = (event: RuntimeEvent) => {
        if (type !== undefined && event.type !== type) return;
        try {
          listener(event);
        } catch (err) {
          // A throwing listener cannot break a run; the error is reported, not rethrown.
          console.error("agentdock: a lifecycle listener threw", err);
        }
      };
      core.emitter.on("event", isolated);
      return () => void core.emitter.off("event", isolated);
    },
    close() {
      closing ??= (async () => {
        core.closed = true;
        await queue.shutdown();
        await store.close();
        core.emitter.removeAllListeners();
      })();
      return closing;
    },
  } as Runtime;
  return runtime;
}
