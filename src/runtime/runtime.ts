/**
 * `createRuntime` (D1): one object with SDK-shaped `assistants`, `threads` and `runs`
 * namespaces, the upload namespaces, a lifecycle subscription, and per-user binding (D12, D13).
 */
import { OWNER_USER, type AuthUser } from "../auth/types.js";
import { invalidInput } from "../errors.js";
import { createIds, systemClock } from "../ids.js";
import { memoryStore } from "../persistence/memory.js";
import type { Store } from "../persistence/types.js";
import { createUploadApi, userTenantId } from "../upload/api.js";
import { LOCAL_TENANT_ID } from "../upload/types.js";
import { assistantsApi, ensureDefaultAssistants } from "./assistants.js";
import { RunControl } from "./control.js";
import { type Caller, Core } from "./core.js";
import { cronsApi } from "./crons.js";
import { Executor } from "./execution.js";
import { checkAssistantDefaults } from "./assistant-defaults.js";
import { resolveEntries } from "./graph-source.js";
import { listenExternalRuns } from "./external-runs.js";
import { runsApi } from "./runs.js";
import { isSdkLogger, registerSdkLogger } from "./sdk-logger.js";
import { CronScheduler } from "./scheduler.js";
import { threadsApi } from "./threads.js";
import { checkIndexConfig, checkItemTtl, ItemService } from "./items.js";
import { checkThreadTtl, ThreadTtlSweeper } from "./thread-ttl.js";
import { deleteThread } from "./threads.js";
import { LazyTracing } from "../otel/tracing.js";
import { carrierOf } from "../otel/w3c.js";
import { guardedLogger, isDiagnosticsLogger } from "../diagnostics.js";
import type { ClientRequest, CreateRuntimeOptions, Runtime, RuntimeClient, RuntimeEvent, RuntimeListener } from "./types.js";

const lowerCaseHeaders = (headers: ClientRequest["headers"]): Record<string, string> => {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (typeof (headers as Headers).get === "function") (headers as Headers).forEach((v, k) => (out[k.toLowerCase()] = v));
  else for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
};

/**
 * Runtimes of this process using each store object: a store shared by several runtimes (several
 * runtimes over one `memoryStore()`, one `jsonFileStore()` object) is closed by the last of them.
 */
const storeUsers = new WeakMap<Store, number>();

/** Default lease of a running run: a runtime that stops renewing it for this long loses its runs to another (D20, D60). */
export const DEFAULT_LEASE_MS = 30_000;
/** Default attempts of a run whose executions are cut off (D61). */
export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * Creates a runtime over `graphs` on `store` (memory by default): opens the store, creates
 * missing default assistants (D5) and starts executing the store's queued runs. Several runtimes
 * over one store act as one service (D20); none scans the store when it starts.
 */
export async function createRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
  // Promises of graphs are awaited here, once; factories are kept (graph-source.ts).
  const graphs = await resolveEntries(options?.graphs ?? {});
  const assistantDefaults = checkAssistantDefaults(options.assistantDefaults, graphs);
  const strategies = ["reject", "interrupt", "rollback", "enqueue"];
  if (options.multitaskStrategy !== undefined && !strategies.includes(options.multitaskStrategy)) {
    throw invalidInput(`graphdock: createRuntime: multitaskStrategy must be one of ${strategies.join(", ")}.`);
  }
  if (options.leaseMs !== undefined && !(Number.isFinite(options.leaseMs) && options.leaseMs >= 50)) {
    throw invalidInput("graphdock: createRuntime: leaseMs must be a number of milliseconds, at least 50.");
  }
  if (options.maxAttempts !== undefined && !(Number.isInteger(options.maxAttempts) && options.maxAttempts >= 1)) {
    throw invalidInput("graphdock: createRuntime: maxAttempts must be a whole number of attempts, at least 1.");
  }
  if (options.webhooks !== undefined && typeof options.webhooks?.allow !== "function") {
    throw invalidInput("graphdock: createRuntime: webhooks.allow must be a function (url: URL) => boolean deciding where runs may POST.");
  }
  const index = checkIndexConfig(options.index);
  const threadTtl = checkThreadTtl(options.threadTtl);
  if (options.logger !== undefined && !isSdkLogger(options.logger)) {
    throw invalidInput("graphdock: createRuntime: logger must have the methods error, warn, help, data, info, debug, prompt, http, verbose, input and silly.");
  }
  registerSdkLogger(options.logger);
  if (options.diagnostics !== undefined && !isDiagnosticsLogger(options.diagnostics)) {
    throw invalidInput("graphdock: createRuntime: diagnostics must have the methods error, warn, info and debug (a pino logger, for one).");
  }
  const clock = options.clock ?? systemClock;
  const store = options.store ?? memoryStore();
  const core = new Core(
    store,
    graphs,
    options.ids ?? createIds(clock),
    clock,
    options.auth,
    options.multitaskStrategy ?? "reject",
    options.webhooks,
    options.leaseMs ?? DEFAULT_LEASE_MS,
    options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
  );
  core.log = guardedLogger(options.diagnostics);
  // Before it opens: opening may have something to report (a torn log line).
  if (options.diagnostics) store.useDiagnostics?.(core.log);
  await store.open();
  storeUsers.set(store, (storeUsers.get(store) ?? 0) + 1);
  await ensureDefaultAssistants(core, assistantDefaults);
  if (options.tracing !== false) core.tracing = new LazyTracing(options.tracing);
  core.threadTtl = threadTtl;
  const executor = new Executor(core);
  const control = new RunControl(core, executor);
  executor.listen();
  const offExternal = listenExternalRuns(core);
  const upload = createUploadApi({ store, ids: core.ids, clock });
  const items = new ItemService(core, index, checkItemTtl(options.itemTtl));
  core.itemStore = items.trusted;
  items.start();
  const threadSweeper = threadTtl ? new ThreadTtlSweeper(core, threadTtl, (id) => deleteThread(core, control, id)) : undefined;
  threadSweeper?.start();

  const bind = (caller: Caller): RuntimeClient => ({
    assistants: assistantsApi(core, caller, control),
    threads: threadsApi(core, caller, control),
    runs: runsApi(core, caller, control),
    crons: cronsApi(core, caller),
    // Experiments are the caller's tenant's: the owner's without auth, the user's own with it.
    ...upload.forTenant(core.auth ? async () => userTenantId((await caller.user()).identity) : LOCAL_TENANT_ID),
    store: items.api(caller),
    whoami: () => caller.user(),
  });

  const { auth } = options;
  // Unbound calls: with auth, the handler decides what a request without credentials is (D13).
  const defaultCaller: Caller = { user: auth ? () => auth.authenticate({ headers: {} }) : async () => OWNER_USER };
  let closing: Promise<void> | undefined;

  const runtime: Runtime = {
    ...bind(defaultCaller),
    graphIds: Object.freeze([...core.graphs.keys()]),
    async ping() {
      await store.ping?.();
    },
    async client(request: ClientRequest = {}) {
      let user: AuthUser = OWNER_USER;
      const headers = lowerCaseHeaders(request.headers);
      // The span the request names: read by the global propagator once tracing is loaded.
      const pending = core.tracing?.tracer();
      const tracing = pending instanceof Promise ? await pending : pending;
      const trace = tracing ? tracing.fromHeaders(headers) : core.tracing && carrierOf(headers.traceparent, headers.tracestate);
      if (auth) {
        user = await auth.authenticate({
          headers,
          ...(request.method !== undefined ? { method: request.method } : {}),
          ...(request.path !== undefined ? { path: request.path } : {}),
          ...(request.url !== undefined ? { url: request.url } : {}),
        });
      }
      return bind({ user: async () => user, ...(trace ? { trace } : {}) });
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
          core.log.error({ err, event: event.type }, "graphdock: a lifecycle listener threw");
        }
      };
      core.emitter.on("event", isolated);
      return () => void core.emitter.off("event", isolated);
    },
    close() {
      closing ??= (async () => {
        core.close();
        await scheduler.stop();
        for (const end of core.onClose) end();
        offExternal();
        await executor.shutdown();
        await items.stop();
        await threadSweeper?.stop();
        const users = (storeUsers.get(store) ?? 1) - 1;
        if (users > 0) storeUsers.set(store, users);
        else {
          storeUsers.delete(store);
          await store.close();
        }
        core.emitter.removeAllListeners();
      })();
      return closing;
    },
  } as Runtime;
  // Crons: fires the store's due ticks, whichever runtime on the store gets there first.
  const scheduler = new CronScheduler(core, control);
  scheduler.start(runtime);
  return runtime;
}
