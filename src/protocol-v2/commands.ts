/**
 * v2 command dispatch (`POST /threads/{id}/commands`, WebSocket frames, the in-process
 * transport): one function per method, each over the runtime's public API with the caller's
 * bound client, answering a typed `CommandResponse` or `ErrorResponse`.
 */
import { GraphdockError } from "../errors.js";
import type { RuntimeClient } from "../runtime/index.js";
import { type SessionRegistry, type ThreadSession, V2_STREAM_MODES } from "./session.js";
import type { CommandError, CommandSuccess, ProtocolCommand, ProtocolErrorCode, SubscribeFilter } from "./types.js";

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/** Subscription commands exist on connections with in-band subscriptions (WebSocket). */
export interface SubscriptionHost {
  subscribe(filter: SubscribeFilter): { subscription_id: string; replayed_events: number };
  unsubscribe(id: string): boolean;
  reconnect(params: { last_event_id?: string; subscriptions?: string[] }): Rec;
}

export interface CommandContext {
  registry: SessionRegistry;
  threadId: string;
  client: RuntimeClient;
  subscriptions?: SubscriptionHost;
}

class CommandFailure extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const fail = (code: ProtocolErrorCode, message: string): never => {
  throw new CommandFailure(code, message);
};

/** Maps a runtime error onto a protocol error code (`notFound` names what was missing). */
function toError(id: number | null, err: unknown, notFound: ProtocolErrorCode = "invalid_argument"): CommandError {
  if (err instanceof CommandFailure) return { type: "error", id, error: err.code, message: err.message };
  if (GraphdockError.is(err)) {
    const code: ProtocolErrorCode =
      err.code === "not_found"
        ? notFound
        : err.code === "forbidden" || err.code === "unauthenticated"
          ? "permission_denied"
          : err.code === "unavailable"
            ? "unknown_error"
            : "invalid_argument";
    return { type: "error", id, error: code, message: err.message };
  }
  const status = (err as { status?: unknown } | null)?.status; // auth handlers throw HTTPException(status)
  if (status === 401 || status === 403) return { type: "error", id, error: "permission_denied", message: (err as Error).message };
  if (status === 404) return { type: "error", id, error: notFound, message: (err as Error).message };
  return { type: "error", id, error: "unknown_error", message: (err as Error)?.message ?? String(err) };
}

const str = (v: unknown, name: string): string => (typeof v === "string" && v !== "" ? v : fail("invalid_argument", `${name} must be a non-empty string`));

/** The checkpoint a run should start from: `config.configurable.checkpoint_id` (the SDK's `forkFrom`). */
function splitConfig(config: unknown): { config?: Rec; checkpointId?: string } {
  if (config === undefined || config === null) return {};
  if (!isRec(config)) fail("invalid_argument", "config must be an object");
  const c = config as Rec;
  const configurable = isRec(c.configurable) ? { ...c.configurable } : undefined;
  const checkpointId = typeof configurable?.checkpoint_id === "string" ? configurable.checkpoint_id : undefined;
  if (configurable) {
    delete configurable.checkpoint_id;
    delete configurable.checkpoint_ns;
    delete configurable.thread_id;
  }
  return { config: { ...c, ...(configurable ? { configurable } : {}) }, ...(checkpointId ? { checkpointId } : {}) };
}

async function threadOf(ctx: CommandContext): Promise<Rec | undefined> {
  try {
    return (await ctx.client.threads.get(ctx.threadId)) as unknown as Rec;
  } catch (err) {
    if (GraphdockError.is(err) && err.code === "not_found") return undefined;
    throw err;
  }
}

/** The assistant runs on this thread use when a command names none (`input.respond`). */
async function assistantOf(ctx: CommandContext, session: ThreadSession): Promise<string> {
  if (session.lastAssistantId) return session.lastAssistantId;
  const [latest] = await ctx.client.runs.list(ctx.threadId, { limit: 1 });
  if (latest) return latest.assistant_id;
  const thread = await threadOf(ctx);
  const meta = isRec(thread?.metadata) ? thread!.metadata : {};
  const id = meta.assistant_id ?? meta.graph_id;
  return typeof id === "string" ? id : fail("invalid_argument", `thread ${ctx.threadId} has no run yet: start one with run.start`);
}

const multitask = (p: Rec) => {
  const m = p.multitask_strategy ?? p.multitaskStrategy;
  return typeof m === "string" ? { multitaskStrategy: m as "reject" | "interrupt" | "rollback" | "enqueue" } : {};
};

async function startRun(ctx: CommandContext, session: ThreadSession, assistantId: string, payload: Rec): Promise<string> {
  const live = ctx.registry.live;
  // The creator can read the run: its client joins it (run.created fires inside runs.create).
  const previous = session.client;
  session.client = ctx.client;
  const run = await ctx.client.runs.create(ctx.threadId, assistantId, {
    ...payload,
    streamMode: [...V2_STREAM_MODES],
    // Subgraph events land on their namespaces (and open/close them on the lifecycle channel).
    streamSubgraphs: true,
    ifNotExists: "create",
    // Without `runtime.subscribe` the session joins after creation: keep the events to replay.
    ...(live ? {} : { streamResumable: true }),
  } as never).catch((err: unknown) => {
    session.client = previous;
    throw err;
  });
  // run.created attached the session already when the runtime has `subscribe`; else attach now.
  session.attachRun(run, !live);
  session.awaitPickup(run.run_id);
  return run.run_id;
}

type Handler = (ctx: CommandContext, session: ThreadSession, params: Rec) => Promise<Rec>;

const handlers: Record<string, Handler> = {
  async "run.start"(ctx, session, p) {
    const assistantId = str(p.assistant_id ?? p.assistantId, "assistant_id");
    const { config, checkpointId } = splitConfig(p.config);
    const thread = await threadOf(ctx);
    const base: Rec = {
      ...(config ? { config } : {}),
      ...(isRec(p.metadata) ? { metadata: p.metadata } : {}),
      ...(p.context !== undefined ? { context: p.context } : {}),
      ...multitask(p),
      ...(checkpointId ? { checkpointId } : {}),
    };
    // An interrupted thread is resumed with the input as the resume value (protocol 4a).
    const resuming = thread?.status === "interrupted" && !checkpointId && p.input !== undefined && p.input !== null;
    const runId = await startRun(ctx, session, assistantId, resuming ? { ...base, command: { resume: p.input } } : { ...base, input: p.input ?? null });
    return { run_id: runId };
  },

  async "input.respond"(ctx, session, p) {
    const entries: Array<{ interrupt_id: string; response: unknown }> = Array.isArray(p.responses)
      ? p.responses.filter(isRec).map((e) => ({ interrupt_id: str(e.interrupt_id, "responses[].interrupt_id"), response: e.response }))
      : [{ interrupt_id: str(p.interrupt_id ?? p.interruptId, "interrupt_id"), response: p.response }];
    const state = await ctx.client.threads.getState(ctx.threadId);
    const pending = new Set((state.interrupts ?? []).map((i) => i.id));
    for (const t of state.tasks ?? []) for (const i of (t.interrupts ?? []) as Array<{ id?: string }>) if (i.id) pending.add(i.id);
    for (const e of entries) if (!pending.has(e.interrupt_id)) fail("no_such_interrupt", `interrupt ${e.interrupt_id} is not pending on thread ${ctx.threadId}`);
    const resume = Object.fromEntries(entries.map((e) => [e.interrupt_id, e.response]));
    const command: Rec = { resume };
    if (p.update !== undefined) command.update = p.update;
    if (p.goto !== undefined) command.goto = p.goto;
    const { config } = splitConfig(p.config);
    const assistantId = await assistantOf(ctx, session);
    const runId = await startRun(ctx, session, assistantId, { command, ...(config ? { config } : {}), ...(isRec(p.metadata) ? { metadata: p.metadata } : {}) });
    session.publish([{ method: "input.answered", namespace: [], data: { interrupt_ids: entries.map((e) => e.interrupt_id) } }]);
    return { run_id: runId };
  },

  async "input.inject"(ctx, session, p) {
    // The protocol injects into the running graph; an graphdock graph reads its input once, when
    // its run starts, so the message is queued as the input of the thread's next run (it starts at
    // once when none runs). docs/protocol-v2.md, Limits, says why.
    const message = isRec(p.message) ? p.message : fail("invalid_argument", "message must be an object {role, content}");
    const role = message.role === "system" ? "system" : message.role === "user" ? "human" : fail("invalid_argument", 'message.role must be "user" or "system"');
    const assistantId = await assistantOf(ctx, session);
    const input = { messages: [{ type: role, content: message.content, ...(typeof message.name === "string" ? { name: message.name } : {}) }] };
    const runId = await startRun(ctx, session, assistantId, { input, multitaskStrategy: "enqueue" });
    return { run_id: runId };
  },

  async "state.get"(ctx, _session, p) {
    const state = await ctx.client.threads.getState(ctx.threadId);
    let values = state.values as Rec;
    if (Array.isArray(p.keys)) values = Object.fromEntries(Object.entries(values).filter(([k]) => (p.keys as unknown[]).includes(k)));
    const cp = state.checkpoint;
    return { values, ...(cp?.checkpoint_id ? { checkpoint: { id: cp.checkpoint_id, ns: cp.checkpoint_ns ?? "" } } : {}), next: state.next, interrupts: state.interrupts };
  },

  async "state.listCheckpoints"(ctx, _session, p) {
    const before = typeof p.before === "string" ? { configurable: { checkpoint_id: p.before } } : undefined;
    const history = await ctx.client.threads.getHistory(ctx.threadId, {
      ...(typeof p.limit === "number" ? { limit: p.limit } : {}),
      ...(before ? { before } : {}),
    });
    return {
      checkpoints: history
        .filter((s) => s.checkpoint?.checkpoint_id)
        .map((s) => ({
          id: s.checkpoint.checkpoint_id,
          ...(s.parent_checkpoint?.checkpoint_id ? { parent_id: s.parent_checkpoint.checkpoint_id } : {}),
          timestamp: s.created_at ?? "",
          step: typeof s.metadata?.step === "number" ? s.metadata.step : 0,
          metadata: s.metadata ?? {},
          values: s.values,
          next: s.next,
        })),
    };
  },

  async "state.fork"(ctx, session, p) {
    const checkpointId = str(p.checkpoint_id ?? p.checkpointId, "checkpoint_id");
    try {
      await ctx.client.threads.getState(ctx.threadId, checkpointId);
    } catch (err) {
      if (GraphdockError.is(err) && err.code === "not_found") fail("no_such_checkpoint", `checkpoint ${checkpointId} not found on thread ${ctx.threadId}`);
      throw err;
    }
    const { config } = splitConfig(p.config);
    const assistantId = typeof p.assistant_id === "string" ? p.assistant_id : await assistantOf(ctx, session);
    const runId = await startRun(ctx, session, assistantId, { checkpointId, input: p.input ?? null, ...(config ? { config } : {}) });
    return { run_id: runId, thread_id: ctx.threadId };
  },

  // The root is the thread's graph; its children the subgraph namespaces the run (`run_id`, else
  // the latest run attached to the session) opened, each with its latest lifecycle status.
  async "agent.getTree"(ctx, session, p) {
    const thread = await threadOf(ctx);
    if (!thread) fail("no_such_run", `thread ${ctx.threadId} not found`);
    const graph = typeof (thread!.metadata as Rec | undefined)?.graph_id === "string" ? String((thread!.metadata as Rec).graph_id) : "graph";
    const status = session.activeRunIds.length ? "running" : session.lastStatus === "idle" ? "completed" : session.lastStatus;
    const runId = typeof p.run_id === "string" ? p.run_id : session.lastRunId;
    return { tree: { namespace: [], status, graph_name: graph, children: session.trees.children(runId) } };
  },

  async "subscription.subscribe"(ctx, _session, p) {
    const host = ctx.subscriptions ?? fail("not_supported", "subscription.subscribe is for WebSocket connections; over HTTP open POST /threads/{id}/stream/events");
    const filter = filterOf(p);
    // As an SSE stream: a subscription made while another connection's command runs starts after it.
    await ctx.registry.settled(ctx.threadId);
    return host.subscribe(filter);
  },

  async "subscription.unsubscribe"(ctx, _session, p) {
    const host = ctx.subscriptions ?? fail("not_supported", "subscription.unsubscribe is for WebSocket connections; over HTTP close the event stream");
    const id = str(p.subscription_id ?? p.subscriptionId, "subscription_id");
    if (!host.unsubscribe(id)) fail("no_such_subscription", `subscription ${id} not found`);
    return {};
  },

  async "subscription.reconnect"(ctx, _session, p) {
    const host = ctx.subscriptions ?? fail("not_supported", "subscription.reconnect is for WebSocket connections; over HTTP reopen the event stream with since");
    return host.reconnect({
      ...(typeof p.last_event_id === "string" ? { last_event_id: p.last_event_id } : {}),
      ...(Array.isArray(p.subscriptions) ? { subscriptions: p.subscriptions.map(String) } : {}),
    });
  },
};

/** Validates a subscription filter (`channels` required; `namespaces`, `depth` optional). */
export function filterOf(p: unknown): SubscribeFilter {
  if (!isRec(p)) return fail("invalid_argument", "the filter must be an object {channels, namespaces?, depth?}");
  if (!Array.isArray(p.channels) || p.channels.length === 0 || !p.channels.every((c) => typeof c === "string")) {
    fail("invalid_argument", "channels must be a non-empty list of channel names");
  }
  if (p.namespaces !== undefined && p.namespaces !== null && !(Array.isArray(p.namespaces) && p.namespaces.every((n) => Array.isArray(n) && n.every((s) => typeof s === "string")))) {
    fail("invalid_argument", "namespaces must be a list of namespaces (lists of strings)");
  }
  if (p.depth !== undefined && p.depth !== null && !(Number.isInteger(p.depth) && (p.depth as number) >= 0)) fail("invalid_argument", "depth must be a non-negative integer");
  return {
    channels: p.channels as string[],
    ...(Array.isArray(p.namespaces) ? { namespaces: p.namespaces as string[][] } : {}),
    ...(typeof p.depth === "number" ? { depth: p.depth } : {}),
  };
}

/** Runs one command and answers its typed response (never throws). */
export async function dispatchCommand(ctx: CommandContext, command: unknown): Promise<CommandSuccess | CommandError> {
  const id = isRec(command) && typeof command.id === "number" ? command.id : null;
  if (!isRec(command) || id === null || typeof command.method !== "string") {
    return { type: "error", id, error: "invalid_argument", message: "a command is {id: number, method: string, params?: object}" };
  }
  const handler = Object.prototype.hasOwnProperty.call(handlers, command.method) ? handlers[command.method] : undefined;
  if (!handler) return { type: "error", id, error: "unknown_command", message: `unknown command ${command.method}` };
  const params = command.params === undefined || command.params === null ? {} : command.params;
  if (!isRec(params)) return { type: "error", id, error: "invalid_argument", message: "params must be an object" };
  try {
    const run = async () => {
      const session = await ctx.registry.ready(ctx.threadId, ctx.client);
      // The log as it stood when the command was taken: events after it are the command's effects
      // (the React hook keeps interrupts newer than this as live).
      const appliedThrough = session.seq;
      const result = await handler(ctx, session, params);
      return { type: "success" as const, id, result, meta: { applied_through_seq: appliedThrough } };
    };
    // Subscription commands run inside a connection's chain: tracking them would only delay others.
    return await (command.method.startsWith("subscription.") ? run() : ctx.registry.track(ctx.threadId, run()));
  } catch (err) {
    const notFound: ProtocolErrorCode = command.method.startsWith("state.") ? "no_such_checkpoint" : command.method.startsWith("input.") ? "no_such_interrupt" : "no_such_run";
    return toError(id, err, notFound);
  }
}

export type { ProtocolCommand };
