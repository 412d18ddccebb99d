/** The superstep loop: `CompiledGraph.execute`. */
import { concatChunks, eventChunk, tupleChunk } from "./chunks.js";
import { freeze, produce } from "immer";
import { invalidInput, notFound } from "../errors.js";
import type { Checkpoint, CheckpointMetadata, PendingWrite, StoredCheckpoint, WriteOp } from "../persistence/types.js";
import type { Ids } from "../ids.js";
import type { Interrupt } from "../types.js";
import { hash32 } from "../ids.js";
import { isPlainObject } from "../json.js";
import {
  applyWrites,
  emptyCheckpoint,
  prepareTasks,
  readValues,
  type Task,
  type Write,
} from "./algo.js";
import { Command, ERROR, INPUT, INTERRUPT, NO_WRITES, NULL_TASK_ID, RESUME, START, isSpecialChannel } from "./constants.js";
import { GraphAbortError, GraphInterrupt, GraphRecursionError, InvalidUpdateError } from "./errors.js";
import type { CompiledStateGraph, RouterRun } from "./graph.js";
import { toolMessage, type ToolResultMessage } from "./messages.js";
import { tracedMessages } from "./traced-messages.js";
import { checkpointPayload, ref, snapshotOf } from "./state.js";
import { isCompiledStateGraph, nsSegments, taskNamespace } from "./subgraphs.js";
import { exactObject } from "../exact-objects.js";
import type { ItemStore } from "../items/types.js";
import { forkForReanswer, heldInterrupts, needsFork, renameResume } from "./reanswer.js";
import type { Breakpoints, CompiledGraph, EngineStreamMode, ExecuteOptions, ExecuteResult, InputState, NodeContext, NodeTrace, RunnableConfig } from "./types.js";

const isResumeMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 &&
  Object.keys(v).every((k) => /^[0-9a-f]{32}$/.test(k));

/** Open interrupts of a checkpoint (of tasks that have not finished since): interrupt id -> task id. */
function pendingInterrupts(pending: readonly PendingWrite[]): Map<string, string> {
  const finished = new Set(pending.filter((w) => !isSpecialChannel(w[1]) || w[1] === NO_WRITES).map((w) => w[0]));
  const out = new Map<string, string>();
  for (const [tid, ch, v] of pending) if (ch === INTERRUPT && !finished.has(tid)) out.set((v as Interrupt).id, tid);
  return out;
}

interface Outcome {
  task: Task;
  writes: PendingWrite[];
  state: Write[];
  error?: unknown;
  /** Paused: by `interrupt()`, or by a subgraph that paused (`interrupts` empty at a static breakpoint). */
  interrupted?: boolean;
  interrupts: readonly Interrupt[];
  consumedNullResume: boolean;
}

/** A short description of a refused value for an error message (never throws, unlike JSON.stringify). */
export function describeValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v !== null && typeof v === "object" ? "an object" : String(v);
}

/**
 * Checks `interruptBefore` / `interruptAfter` against the graph's nodes: each is `"*"` or a list
 * of node names (a list holding `"*"` means every node). Returns them normalized; an unknown node
 * is `invalid_input`.
 * @internal
 */
export function checkBreakpoints(nodes: ReadonlyMap<string, unknown>, given: Breakpoints): Breakpoints {
  const out: Breakpoints = {};
  for (const key of ["interruptBefore", "interruptAfter"] as const) {
    const value: unknown = given[key];
    if (value === undefined) continue;
    if (value === "*" || (Array.isArray(value) && value.includes("*"))) {
      out[key] = "*";
      continue;
    }
    if (!Array.isArray(value) || value.some((n) => typeof n !== "string")) {
      throw invalidInput(`${key} must be "*" or a list of node names, got ${describeValue(value)}.`, [{ path: key, message: "expected \"*\" or string[]" }]);
    }
    const unknown = (value as string[]).filter((n) => !nodes.has(n));
    if (unknown.length > 0) {
      const list = unknown.map((n) => `"${n}"`).join(", ");
      throw invalidInput(`${key} names ${list}, which ${unknown.length > 1 ? "are not nodes" : "is not a node"} of this graph. Use "*" or some of: ${[...nodes.keys()].join(", ")}.`, [
        { path: key, message: `unknown node ${list}` },
      ]);
    }
    out[key] = [...(value as string[])];
  }
  return out;
}


/** A run's input checked against the graph alone. */
type RunInput =
  | { kind: "continue" }
  | { kind: "command"; command: Command; writes: Write[] }
  | { kind: "values"; values: Record<string, unknown> };

/** The static part of run-input checks, shared by `validateInput` and `execute`. */
function parseInput(graph: CompiledStateGraph, input: unknown, ids: Pick<Ids, "uuid">): RunInput {
  if (input === null || input === undefined) return { kind: "continue" };
  if (Command.is(input)) return { kind: "command", command: input, writes: graph.commandWrites(input, ids) };
  return { kind: "values", values: graph.prepareInput(input, ids) };
}

/**
 * Where `Command({ resume })` delivers its value(s) on checkpoint `saved`: a map interrupt id ->
 * value gives the values per task id; a plain value (one pending interrupt) gives `undefined`.
 * Nothing to resume is `invalid_input` (shared by `validateInput` and `execute`).
 */
function resumeTargets(threadId: string, saved: StoredCheckpoint | undefined, resume: unknown): Map<string, unknown[]> | undefined {
  if (!saved) throw invalidInput(`Thread ${threadId} has nothing to resume: it has no checkpoint. Start it with an input.`);
  const open = pendingInterrupts(saved.pending_writes);
  if (open.size === 0) {
    throw invalidInput(`Thread ${threadId} has no pending interrupt to resume (checkpoint ${saved.checkpoint.id}). Send an input instead of Command({ resume }).`);
  }
  if (!isResumeMap(resume)) {
    if (open.size > 1) {
      throw invalidInput(
        `Thread ${threadId} has ${open.size} pending interrupts (${[...open.keys()].join(", ")}); ` +
          `resume with a map { [interrupt id]: value }.`,
      );
    }
    return undefined;
  }
  const byTask = new Map<string, unknown[]>();
  for (const [iid, value] of Object.entries(resume)) {
    const tid = open.get(iid);
    if (!tid) throw invalidInput(`Unknown interrupt id ${iid} on thread ${threadId}; pending: ${[...open.keys()].join(", ")}.`);
    byTask.set(tid, [...(byTask.get(tid) ?? []), value]);
  }
  return byTask;
}

/** `CompiledGraph.validateInput`: the checks `execute` makes before writing anything. */
export async function validateInput(graph: CompiledStateGraph, input: unknown, state?: InputState, breakpoints?: Breakpoints): Promise<void> {
  if (breakpoints) checkBreakpoints(graph.nodes, breakpoints);
  // Ids minted here (message ids) are thrown away with the prepared values.
  const parsed = parseInput(graph, input, { uuid: () => NULL_TASK_ID });
  if (!state) return;
  const { store, threadId, checkpointId } = state;
  const saved = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId });
  if (checkpointId !== undefined && !saved) {
    throw invalidInput(`Checkpoint ${checkpointId} not found in thread ${threadId}. Pass one of the thread's checkpoint ids, or none to start from the latest.`, [
      { path: "checkpoint_id", message: "unknown checkpoint" },
    ]);
  }
  if (parsed.kind === "command" && parsed.command.resume !== undefined) {
    // A past checkpoint's interrupts can be answered again (reanswer.ts), answered or not.
    const target = checkpointId !== undefined && saved && (await needsFork(store, saved)) ? heldInterrupts(saved) : saved;
    resumeTargets(threadId, target, parsed.command.resume);
  }
}

/**
 * `CompiledGraph.execute`: the run with, for the `events` stream mode, the graph's own
 * `on_chain_start` / `on_chain_end` around it (a subgraph's node stands for it instead).
 */
export async function execute(graph: CompiledStateGraph, o: ExecuteOptions): Promise<ExecuteResult> {
  // Opt-in (unlike the other modes, which an emit without streamModes gets): it mints run ids.
  const wantsEvents = o.emit !== undefined && o.streamModes?.has("events") === true;
  if (!wantsEvents || o.parent) return run(graph, o, o.parent?.eventParents ?? []);
  const runId = typeof o.config.configurable.run_id === "string" ? o.config.configurable.run_id : o.ids.uuid();
  const base = { name: graph.name, tags: o.config.tags ?? [], run_id: runId, metadata: eventMetadata(o.config), parent_ids: [] };
  o.emit!("events", { event: "on_chain_start", data: { input: eventInput(o.input) }, ...base });
  const result = await run(graph, o, [runId]);
  o.emit!("events", { event: "on_chain_end", data: { output: result.values }, ...base });
  return result;
}

async function run(graph: CompiledStateGraph, o: ExecuteOptions, eventParents: readonly string[]): Promise<ExecuteResult> {
  const { def } = graph;
  const { store, threadId, ids, clock, signal } = o;
  const ns = o.checkpointNs ?? "";
  const link = o.parent;
  const namespace = ns === "" ? undefined : nsSegments(ns);
  /** `checkpoint_ns` of write ops: only set for a subgraph, so root ops keep their shape. */
  const nsKey = ns === "" ? {} : { checkpoint_ns: ns };
  const modes = o.streamModes;
  const on = (mode: EngineStreamMode) => o.emit !== undefined && (modes === undefined || modes.has(mode));
  const emit = (mode: EngineStreamMode, data: unknown) => {
    if (on(mode)) o.emit!(mode, data, namespace);
  };
  const checkAbort = () => {
    if (signal?.aborted) throw new GraphAbortError(`Run on thread ${threadId} was aborted.`);
  };
  checkAbort();

  const config: RunnableConfig = {
    ...o.config,
    configurable: { ...o.config.configurable, thread_id: threadId },
  };
  const runMeta = o.config.metadata ?? {};
  const breakpoints = checkBreakpoints(graph.nodes, o);
  const before = breakpoints.interruptBefore ?? graph.interruptBefore;
  const after = breakpoints.interruptAfter ?? graph.interruptAfter;

  let saved: StoredCheckpoint | undefined = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: o.checkpointId });
  if (o.checkpointId !== undefined && !saved) throw notFound(`Checkpoint ${o.checkpointId} not found in thread ${threadId}.`);
  // A subgraph that already has checkpoints in its namespace ran in this very task before (task
  // ids are deterministic): it was interrupted or failed, so it continues where it stopped.
  const parsed = parseInput(graph, link && saved ? null : o.input, ids);
  let cp: Checkpoint = saved?.checkpoint ?? emptyCheckpoint(def);
  let pending: PendingWrite[] = saved ? [...saved.pending_writes] : [];
  let step = saved ? saved.metadata.step + 1 : -1;
  const limit = config.recursion_limit ?? 25;
  const stop = step + limit + 1;
  const parents = link ? link.parents : (saved?.metadata.parents ?? {});
  /** Message ids the `messages` mode has reported in this run (shared with subgraphs). */
  const seenMessages = link?.seenMessages ?? new Set<string>();
  /** Resume values by interrupt id, for interrupts of this graph's tasks and of its subgraphs. */
  let resumeMap =
    parsed.kind === "command" && isResumeMap(parsed.command.resume) ? (parsed.command.resume as Record<string, unknown>) : link?.resumeMap;

  // With the `events` mode, a step's values frame waits until the next step's first node has
  // started (or the run ends): where LangGraph.js's loop sends it among the events.
  const deferValues = o.emit !== undefined && modes?.has("events") === true;
  let heldValues: { values: unknown } | undefined;
  const emitValues = (values: unknown) => {
    if (!on("values")) return;
    if (deferValues) heldValues = { values };
    else emit("values", values);
  };
  const flushValues = () => {
    if (!heldValues) return;
    const { values } = heldValues;
    heldValues = undefined;
    emit("values", values);
  };

  /** The `checkpoints` and `debug` events of a checkpoint. */
  const emitCheckpoint = (stored: StoredCheckpoint, parentId: string | null) => {
    if (!on("checkpoints") && !on("debug")) return;
    const payload = checkpointPayload(graph, threadId, stored, parentId);
    emit("checkpoints", payload);
    emit("debug", {
      type: "checkpoint",
      timestamp: stored.checkpoint.ts,
      step: stored.metadata.step,
      payload: { ...payload, checkpoint: ref(threadId, stored.checkpoint.id, ns), parent_checkpoint: parentId ? ref(threadId, parentId, ns) : null },
    });
  };

  /**
   * Commits a new checkpoint (with `extra` ops first, in the same commit). `showValues: false`
   * for the checkpoint of a plain input: it fills only `__start__`, so as in LangGraph it emits no
   * `values` event; the first one follows the `__start__` step.
   */
  const save = async (
    next: Checkpoint,
    source: CheckpointMetadata["source"],
    writes: CheckpointMetadata["writes"],
    extra: WriteOp[] = [],
    showValues = true,
  ) => {
    checkAbort();
    // At its exact size (src/exact-objects.ts): every checkpoint keeps one.
    const metadata = freeze(exactObject({ ...runMeta, source, step, parents, writes }), true) as CheckpointMetadata;
    const stored: StoredCheckpoint = {
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint: next,
      metadata,
      parent_checkpoint_id: saved?.checkpoint.id ?? null,
      pending_writes: [],
    };
    await store.commit([...extra, { op: "checkpoint.put", checkpoint: stored }]);
    const parent = saved;
    saved = stored;
    cp = next;
    pending = [];
    if (showValues && on("values")) emitValues(readValues(def, next));
    emitCheckpoint(stored, parent?.checkpoint.id ?? null);
  };
  const nextCheckpoint = (tasks: Parameters<typeof applyWrites>[2], stepFlag: boolean) =>
    applyWrites(def, cp, tasks, { step: stepFlag, id: ids.checkpointId(step), ts: new Date(clock()).toISOString() });

  const resuming = parsed.kind === "continue" || (parsed.kind === "command" && parsed.command.resume !== undefined);
  let resumeArg = parsed.kind === "command" ? parsed.command.resume : undefined;
  if (resuming && resumeArg !== undefined && o.checkpointId !== undefined && saved && (await needsFork(store, saved))) {
    // Re-answering an interrupt of a past checkpoint: resume a fork of it (reanswer.ts).
    checkAbort();
    const { forked, renamed } = await forkForReanswer(def, store, saved, { ids, clock, metadata: runMeta });
    saved = forked;
    cp = forked.checkpoint;
    pending = [...forked.pending_writes];
    resumeArg = renameResume(resumeArg, renamed);
    if (isResumeMap(resumeArg)) resumeMap = resumeArg as Record<string, unknown>;
  }
  if (resuming) {
    if (parsed.kind === "command") resumeTargets(threadId, saved, resumeArg);
    if (!saved) return { status: "done", values: {}, interrupts: [], checkpointId: null };
    // Resume values for this graph's own interrupts (a subgraph's are passed on to it).
    const byTask = resumeMap ? ownResumes(graph, ns, saved, resumeMap) : undefined;
    const nullWrites: PendingWrite[] = pending.filter((w) => w[0] === NULL_TASK_ID && w[1] !== RESUME);
    const ops: WriteOp[] = [];
    for (const [tid, values] of byTask ?? []) {
      const own = pending.filter((w) => w[0] === tid);
      const prev = (own.find((w) => w[1] === RESUME)?.[2] as unknown[] | undefined) ?? [];
      const writes: PendingWrite[] = [...own.filter((w) => w[1] !== RESUME), [tid, RESUME, freeze([...prev, ...values], true)]];
      ops.push({ op: "writes.put", thread_id: threadId, ...nsKey, checkpoint_id: saved.checkpoint.id, task_id: tid, writes });
      pending = [...pending.filter((w) => w[0] !== tid), ...writes];
    }
    if (parsed.kind === "command") {
      if (!isResumeMap(resumeArg)) nullWrites.push([NULL_TASK_ID, RESUME, freeze(resumeArg, true)]);
      nullWrites.push(...nullTaskWrites(parsed.writes));
      ops.push({ op: "writes.put", thread_id: threadId, ...nsKey, checkpoint_id: saved.checkpoint.id, task_id: NULL_TASK_ID, writes: nullWrites });
      pending = [...pending.filter((w) => w[0] !== NULL_TASK_ID), ...nullWrites];
    }
    if (ops.length > 0) {
      checkAbort();
      await store.commit(ops);
    }
    const applied = nullWrites.filter((w) => !isSpecialChannel(w[1]));
    if (applied.length > 0) {
      cp = applyWrites(def, cp, [{ name: INPUT, path: [], triggers: [], writes: applied.map((w) => [w[1], w[2]] as const) }], { step: false });
    }
    cp = produce(cp, (d) => {
      d.versions_seen[INTERRUPT] = { ...cp.channel_versions };
    });
    if (on("values")) emitValues(readValues(def, cp));
    // As the reference loop does at each step, a continued run first reports the checkpoint it starts from.
    emitCheckpoint(saved, saved.parent_checkpoint_id);
  } else if (parsed.kind === "command") {
    const cmd = nullTaskWrites(parsed.writes);
    const extra: WriteOp[] = [];
    if (saved) {
      const writes = [...pending.filter((w) => w[0] === NULL_TASK_ID), ...cmd];
      extra.push({ op: "writes.put", thread_id: threadId, ...nsKey, checkpoint_id: saved.checkpoint.id, task_id: NULL_TASK_ID, writes });
    }
    await save(
      nextCheckpoint([{ name: INPUT, path: [], triggers: [], writes: parsed.writes }], false),
      "input",
      {},
      extra,
    );
    step++;
  } else {
    const prepared = parsed.values;
    // New input drops the tasks still pending on the current checkpoint.
    const dropped = saved ? prepareTasks(def, cp, step, "declared").map((t) => ({ ...t, writes: [] })) : [];
    await save(
      nextCheckpoint([...dropped, { name: INPUT, path: [], triggers: [], writes: [[START, prepared]] }], dropped.length > 0),
      "input",
      // `__start__` spelled out: a literal with a computed key gets room for four properties.
      { __start__: prepared },
      [],
      false,
    );
    step++;
  }

  // The loop.
  try {
    return await steps();
  } finally {
    flushValues();
  }

  async function steps(): Promise<ExecuteResult> {
    for (;;) {
      checkAbort();
      if (step > stop) throw new GraphRecursionError(limit);
      const tasks = prepareTasks(def, cp, step, "sorted");
      if (tasks.length === 0) return { status: "done", values: readValues(def, cp), interrupts: [], checkpointId: cp.id };

      const stored = new Map<string, PendingWrite[]>();
      for (const w of pending) {
        const list = stored.get(w[0]);
        if (list) list.push(w);
        else stored.set(w[0], [w]);
      }
      const succeeded = (t: Task) => stored.get(t.id)?.some((w) => !isSpecialChannel(w[1]) || w[1] === NO_WRITES) ?? false;
      const toRun = tasks.filter((t) => !succeeded(t));
      if (toRun.length > 0 && matches(before, toRun, cp)) {
        flushValues();
        emit("values", { __interrupt__: [] });
        return { status: "interrupted", values: readValues(def, cp), interrupts: [], checkpointId: cp.id };
      }

      const values = readValues(def, cp);
      const nullResume = { value: pending.find((w) => w[0] === NULL_TASK_ID && w[1] === RESUME) };
      const checkpointId = cp.id;
      let held: WriteOp[] = [];
      let dead = false;
      let remaining = toRun.length;
      /** Node executions of this step being traced: a cancel ends those still running. */
      const tracedNodes = new Set<NodeTrace>();

      /** A task start or finish for the `tasks` and `debug` modes (hidden `__start__` excluded). */
      const taskEvent = (type: "task" | "task_result", payload: Record<string, unknown>) => {
        if (dead || payload.name === START) return;
        emit("tasks", payload);
        if (on("debug")) emit("debug", { type, timestamp: new Date(clock()).toISOString(), step, payload });
      };
      const runTask = async (task: Task): Promise<Outcome> => {
        const resumes = [...((stored.get(task.id)?.find((w) => w[1] === RESUME)?.[2] as unknown[] | undefined) ?? [])];
        let counter = 0;
        let consumed = false;
        let invoked = false;
        const taskNs = taskNamespace(ns, task.name, task.id);
        const iid = hash32(taskNs);
        const hidden = task.name === START;
        const wantsEvents = modes?.has("events") === true && o.emit !== undefined && !hidden;
        const traced = o.trace && !hidden ? o.trace.node({ name: task.name, id: task.id, step, namespace: ns }) : undefined;
        const tracedChats = traced && tracedMessages(traced);
        if (traced) tracedNodes.add(traced);
        const msgMeta = on("messages") ? messageMetadata(config, task, step, taskNs) : undefined;
        // Stream events (`events` mode), as LangChain reports a LangGraph node: the node's run; in it,
        // a chat model run per streamed message, a tool run per `ctx.runTool`, a run per router.
        const runTags = config.tags ?? [];
        const nodeRun = wantsEvents
          ? { name: task.name, tags: [...runTags, `graph:step:${step}`], run_id: ids.uuid(), metadata: nodeEventMetadata(config, task, step, taskNs), parent_ids: [...eventParents] }
          : undefined;
        const childEvent = (event: string, name: string, run_id: string, data: unknown) =>
          emit("events", { event, data, name, tags: runTags, run_id, metadata: nodeRun!.metadata, parent_ids: [...eventParents, nodeRun!.run_id] });
        /** Chat model runs of this node (one per streamed message id): run id and the message so far. */
        const modelRuns = new Map<string, { run_id: string; message: Record<string, unknown> }>();
        // The prompt is not known to the engine: a model run's input is the node's input messages
        // (LangChain's shape, a list of message lists).
        const modelInput = () => ({ messages: [isPlainObject(values) && Array.isArray(values.messages) ? values.messages : []] });
        /** `on_chat_model_end` for each message this node streamed, carrying the accumulated message. */
        const endModelRuns = () => {
          for (const m of modelRuns.values()) childEvent("on_chat_model_end", "ChatModel", m.run_id, { output: m.message, input: modelInput() });
          modelRuns.clear();
        };
        /** The plain resume value left for this task: this graph's, else an enclosing graph's. */
        const takeNullResume = (): { value: unknown } | undefined => {
          if (nullResume.value) {
            const v = nullResume.value[2];
            nullResume.value = undefined;
            consumed = true;
            return { value: v };
          }
          return link?.takeNullResume();
        };
        const ctx: NodeContext = {
          interrupt<R>(value: unknown): R {
            const i = counter++;
            if (i < resumes.length) return resumes[i] as R;
            const taken = takeNullResume();
            if (taken) {
              resumes.push(taken.value);
              return taken.value as R;
            }
            throw new GraphInterrupt([{ id: iid, value: freeze(value, true) }]);
          },
          config,
          context: o.context,
          signal: signal ?? neverAborted(),
          writer: (chunk) => {
            if (!dead) emit("custom", chunk);
          },
          emitMessage: (raw) => {
            if (dead) return;
            tracedChats?.chunk(raw);
            if (nodeRun) {
              // A model call streams one message: a chunk of another id starts the next call.
              const chunk = eventChunk(raw);
              const key = typeof chunk.id === "string" ? chunk.id : "";
              let modelRun = modelRuns.get(key);
              if (!modelRun) {
                endModelRuns();
                modelRuns.set(key, (modelRun = { run_id: ids.uuid(), message: chunk }));
                childEvent("on_chat_model_start", "ChatModel", modelRun.run_id, { input: modelInput() });
              } else modelRun.message = concatChunks(modelRun.message, chunk);
              childEvent("on_chat_model_stream", "ChatModel", modelRun.run_id, { chunk });
            }
            if (msgMeta) {
              if (typeof raw.id === "string") seenMessages.add(raw.id);
              emit("messages", [tupleChunk(raw), msgMeta]);
            }
          },
          runTool: async (call, fn) => {
            const toolRun = nodeRun && !dead ? ids.uuid() : undefined;
            const input = call.args;
            if (toolRun) childEvent("on_tool_start", call.name, toolRun, { input });
            const toolTrace = traced?.tool({ name: call.name, id: call.id });
            let message: ToolResultMessage;
            try {
              message = toolMessage(call, await fn(input));
            } catch (err) {
              toolTrace?.end(err instanceof GraphInterrupt ? { interrupted: true } : { error: err });
              if (toolRun && !dead) childEvent("on_tool_error", call.name, toolRun, { error: errorText(err), input });
              throw err;
            }
            toolTrace?.end({});
            if (toolRun && !dead) childEvent("on_tool_end", call.name, toolRun, { output: message, input });
            return message;
          },
          invoke: async <O>(sub: CompiledGraph, subInput: unknown): Promise<O> => {
            if (!isCompiledStateGraph(sub)) throw invalidInput(`Node "${task.name}": ctx.invoke runs graphs compiled with graphdock's StateGraph only.`);
            if (invoked) {
              throw new InvalidUpdateError(
                `Node "${task.name}" ran a second subgraph; a task runs at most one (its checkpoints live in namespace "${taskNs}"). Make each subgraph its own node.`,
                "MULTIPLE_SUBGRAPHS",
              );
            }
            invoked = true;
            const result = await sub.execute({
              store,
              threadId,
              input: subInput,
              config: o.config,
              context: o.context,
              ...(signal ? { signal } : {}),
              ids,
              clock,
              ...(modes ? { streamModes: modes } : {}),
              ...(o.emit ? { emit: o.emit } : {}),
              ...(o.itemStore ? { itemStore: o.itemStore } : {}),
              ...(traced ? { trace: traced } : {}),
              checkpointNs: taskNs,
              parent: {
                parents: { ...parents, [ns]: checkpointId },
                takeNullResume,
                resumeMap,
                eventParents: nodeRun ? [...eventParents, nodeRun.run_id] : eventParents,
                seenMessages,
              },
            });
            if (result.status === "interrupted") throw new GraphInterrupt(result.interrupts);
            const { __interrupt__: _none, ...out } = result.values;
            return out as O;
          },
          threadId,
          step,
          node: task.name,
          store: o.itemStore ?? NO_ITEM_STORE,
        };
        const input = task.path[0] === "__pregel_push" ? task.args : hidden ? cp.channel_values[START] : values;
        // As LangGraph's messages handler: a node's input messages count as seen, and ids seen
        // anywhere in the run (streamed as chunks, sent whole, in a subgraph) are not sent again.
        if (msgMeta) markSeen(graph, input, seenMessages);
        taskEvent("task", { id: task.id, name: task.name, input, triggers: task.triggers, interrupts: [] });
        if (nodeRun) emit("events", { event: "on_chain_start", data: { input }, ...nodeRun });
        flushValues();
        const resumeWrites = (): PendingWrite[] => (resumes.length > 0 ? [[task.id, RESUME, freeze(resumes, true)]] : []);
        // A router run (LangChain's `RunnableLambda`) per conditional edge the node's writes go through.
        const routerRun: RouterRun | undefined = nodeRun && {
          start: (state) => {
            const run_id = ids.uuid();
            childEvent("on_chain_start", "RunnableLambda", run_id, { input: state });
            return (output) => {
              if (!dead) childEvent("on_chain_end", "RunnableLambda", run_id, { output, input: state });
            };
          },
        };
        let out: Outcome;
        try {
          const fn = graph.nodes.get(task.name)!;
          const update = hidden ? input : await (traced ? traced.within(() => fn(input as never, ctx)) : fn(input as never, ctx));
          if (nodeRun && !dead) endModelRuns();
          tracedChats?.end();
          const { writes, shown } = await graph.nodeWrites(task.name, update, values, config, ids, routerRun);
          // Earlier interrupts stay recorded: the history entry of this checkpoint keeps showing them.
          const asked = stored.get(task.id)?.filter((w) => w[1] === INTERRUPT) ?? [];
          const pw: PendingWrite[] = [...resumeWrites(), ...asked, ...writes.map((w) => [task.id, w[0], w[1]] as const)];
          if (writes.length === 0) pw.push([task.id, NO_WRITES, null]);
          out = { task, writes: pw, state: writes, interrupts: [], consumedNullResume: consumed };
          traced?.end({});
          if (!dead && !hidden) {
            if (nodeRun) emit("events", { event: "on_chain_end", data: { output: Command.is(update) ? shown : (update ?? null), input }, ...nodeRun });
            if (msgMeta) emitWholeMessages(graph, writes, seenMessages, (m) => emit("messages", [m, msgMeta]));
            emit("updates", { [task.name]: shown });
            taskEvent("task_result", { id: task.id, name: task.name, result: shown ?? {}, interrupts: [] });
          }
        } catch (err) {
          // The messages a failed or interrupted node streamed still end (as a model call would have).
          if (nodeRun && !dead) endModelRuns();
          const outcome = err instanceof GraphInterrupt ? { interrupted: true } : { error: err };
          tracedChats?.end(outcome);
          traced?.end(outcome);
          if (err instanceof GraphInterrupt) {
            const asked = err.interrupts.map((i) => [task.id, INTERRUPT, i] as const);
            out = { task, writes: [...resumeWrites(), ...asked], state: [], interrupted: true, interrupts: err.interrupts, consumedNullResume: consumed };
            taskEvent("task_result", { id: task.id, name: task.name, result: {}, interrupts: err.interrupts });
          } else {
            const name = (err as Error | undefined)?.name ?? "Error";
            const message = (err as Error | undefined)?.message ?? String(err);
            out = { task, writes: [...resumeWrites(), [task.id, ERROR, freeze({ name, message })]], state: [], interrupts: [], error: err, consumedNullResume: consumed };
            taskEvent("task_result", { id: task.id, name: task.name, error: `${name}: ${message}`, interrupts: [] });
          }
        }
        // Persist the task's writes as it finishes; the last one rides with the step's checkpoint.
        const ops: WriteOp[] = [{ op: "writes.put", thread_id: threadId, ...nsKey, checkpoint_id: checkpointId, task_id: task.id, writes: out.writes }];
        if (out.consumedNullResume) {
          const rest = pending.filter((w) => w[0] === NULL_TASK_ID && w[1] !== RESUME);
          ops.push({ op: "writes.put", thread_id: threadId, ...nsKey, checkpoint_id: checkpointId, task_id: NULL_TASK_ID, writes: rest });
        }
        if (traced) tracedNodes.delete(traced);
        if (--remaining === 0) held = ops;
        else if (!dead) await store.commit(ops);
        return out;
      };

      const all = Promise.all(toRun.map(runTask));
      const outcomes = signal
        ? await raceAbort(all, signal, () => {
            dead = true;
            for (const node of tracedNodes) node.end({ cancelled: true });
          })
        : await all;
      checkAbort();
      const failed = outcomes.find((x) => x.error !== undefined);
      const interrupted = outcomes.some((x) => x.interrupted);
      if (failed || interrupted) {
        if (held.length > 0) await store.commit(held);
        if (failed) throw failed.error;
        const interrupts = outcomes.flatMap((x) => x.interrupts);
        if (interrupts.length > 0) emit("updates", { __interrupt__: interrupts });
        flushValues();
        emit("values", { __interrupt__: interrupts });
        const snap = snapshotOf(graph, threadId, (await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId }))!, true);
        const all = snap.interrupts.length > 0 ? snap.interrupts : interrupts;
        return { status: "interrupted", values: { ...snap.values, ...(all.length > 0 ? { __interrupt__: all } : {}) }, interrupts: all, checkpointId: cp.id };
      }

      const ran = new Map(outcomes.map((x) => [x.task.id, x.state]));
      const writes = tasks.map((t) => ({
        name: t.name,
        path: t.path,
        triggers: t.triggers,
        writes: ran.get(t.id) ?? (stored.get(t.id) ?? []).filter((w) => !isSpecialChannel(w[1])).map((w) => [w[1], w[2]] as const),
      }));
      await save(nextCheckpoint(writes, true), "loop", loopWrites(graph, writes), held);
      step++;
      if (matches(after, tasks, cp)) {
        flushValues();
        emit("values", { __interrupt__: [] });
        return { status: "interrupted", values: readValues(def, cp), interrupts: [], checkpointId: cp.id };
      }
    }
  }
}

/**
 * Resume values (`Command({ resume: { [interrupt id]: value } })`) for the interrupts this
 * graph's own tasks raised on `saved`, by task id. Ids of interrupts raised inside a subgraph
 * (its task recorded them, but their id is the subgraph task's) are left to the subgraph.
 */
function ownResumes(graph: CompiledStateGraph, ns: string, saved: StoredCheckpoint, resumeMap: Readonly<Record<string, unknown>>): Map<string, unknown[]> {
  const open = pendingInterrupts(saved.pending_writes);
  const names = new Map(prepareTasks(graph.def, saved.checkpoint, saved.metadata.step + 1, "declared").map((t) => [t.id, t.name]));
  const byTask = new Map<string, unknown[]>();
  for (const [iid, value] of Object.entries(resumeMap)) {
    const tid = open.get(iid);
    const name = tid === undefined ? undefined : names.get(tid);
    if (tid === undefined || name === undefined || hash32(taskNamespace(ns, name, tid)) !== iid) continue;
    byTask.set(tid, [...(byTask.get(tid) ?? []), value]);
  }
  return byTask;
}

/** Metadata of the graph's own stream events: the run metadata and the config's primitive `configurable` values. */
function eventMetadata(config: RunnableConfig): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config.configurable)) {
    if (!k.startsWith("__") && (typeof v === "string" || typeof v === "number" || typeof v === "boolean")) meta[k] = v;
  }
  return { ...meta, ...(config.metadata ?? {}) };
}

/** A run input as stream events show it (a `Command` as its fields). */
const eventInput = (input: unknown) =>
  Command.is(input) ? { ...(input.resume !== undefined ? { resume: input.resume } : {}), ...(input.update !== undefined ? { update: input.update } : {}), ...(input.goto !== undefined ? { goto: input.goto } : {}) } : (input ?? null);

/** The writes of a `Command` given as run input, as pending writes of no task. */
const nullTaskWrites = (writes: readonly Write[]): PendingWrite[] => writes.map((w) => [NULL_TASK_ID, w[0], w[1]] as const);

/** Static breakpoint check: a task matches and some channel changed since the last resume. */
function matches(nodes: string[] | "*", tasks: readonly Task[], cp: Checkpoint): boolean {
  if (nodes !== "*" && nodes.length === 0) return false;
  const seen = cp.versions_seen[INTERRUPT] ?? {};
  const changed = Object.entries(cp.channel_versions).some(([ch, v]) => v > (seen[ch] ?? 0));
  return changed && tasks.some((t) => t.name !== START && (nodes === "*" || nodes.includes(t.name)));
}

/** Legacy metadata `writes` of a loop step: null when only hidden tasks ran. */
function loopWrites(graph: CompiledStateGraph, tasks: ReadonlyArray<{ name: string; writes: readonly Write[] }>): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const t of tasks) {
    if (t.name === START) continue;
    const update: Record<string, unknown> = {};
    for (const [ch, v] of t.writes) if (graph.def.stateKeys.includes(ch)) update[ch] = v;
    const value = Object.keys(update).length > 0 ? exactObject(update) : null;
    if (any && t.name in out) {
      const prev = out[t.name];
      out[t.name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
    } else out[t.name] = value;
    any = true;
  }
  return any ? exactObject(out) : null;
}

function messageMetadata(config: RunnableConfig, task: Task, step: number, ns: string): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config.configurable)) {
    if (!k.startsWith("__") && (typeof v === "string" || typeof v === "number" || typeof v === "boolean")) meta[k] = v;
  }
  return Object.freeze({ ...meta, ...taskMetadata(task, step, ns), tags: config.tags ?? [] });
}

/** What LangGraph adds to a task's runs' metadata. */
const taskMetadata = (task: Task, step: number, ns: string) => ({
  langgraph_step: step,
  langgraph_node: task.name,
  langgraph_triggers: task.triggers,
  langgraph_path: task.path,
  langgraph_checkpoint_ns: ns,
  checkpoint_ns: ns,
});

/** Stream events' metadata of a task's runs: the run's, and the task's. */
const nodeEventMetadata = (config: RunnableConfig, task: Task, step: number, ns: string): Record<string, unknown> =>
  Object.freeze({ ...eventMetadata(config), ...taskMetadata(task, step, ns) });

/** An error as a stream event names it (`on_tool_error`). */
const errorText = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** Whole messages a node wrote under a messages-reducer key, unless already seen in the run. */
function emitWholeMessages(graph: CompiledStateGraph, writes: readonly Write[], seen: Set<string>, send: (m: unknown) => void) {
  for (const [ch, v] of writes) {
    const cdef = graph.def.channels.get(ch);
    if (cdef?.kind !== "reduce" || !cdef.prepare || !Array.isArray(v)) continue;
    for (const m of v as Array<{ id?: string; type?: string }>) {
      if (m.type === "remove" || seen.has(m.id ?? "")) continue;
      if (m.id) seen.add(m.id);
      send(m);
    }
  }
}

/** Marks the messages of a node's input (its messages-reducer keys) as seen. */
function markSeen(graph: CompiledStateGraph, input: unknown, seen: Set<string>) {
  if (!isPlainObject(input)) return;
  for (const [ch, v] of Object.entries(input)) {
    const cdef = graph.def.channels.get(ch);
    if (cdef?.kind !== "reduce" || !cdef.prepare || !Array.isArray(v)) continue;
    for (const m of v as Array<{ id?: unknown }>) if (typeof m?.id === "string") seen.add(m.id);
  }
}

/** `ctx.store` of a graph executed outside a runtime: every method rejects, saying why. */
const noItemStore = async (): Promise<never> => {
  throw new Error("graphdock: ctx.store is the runtime's long-term memory; run the graph through createRuntime() to use it");
};
const NO_ITEM_STORE: ItemStore = { putItem: noItemStore, getItem: noItemStore, deleteItem: noItemStore, searchItems: noItemStore, listNamespaces: noItemStore };

let never: AbortSignal | undefined;
/** The signal nodes get when the run has none (made on first use: no global touched at load, D18). */
const neverAborted = () => (never ??= new AbortController().signal);

function raceAbort<T>(p: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(new GraphAbortError());
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}
