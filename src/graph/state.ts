/** Snapshots, history and state updates. */
import { freeze } from "immer";
import { invalidInput, notFound } from "../errors.js";
import { contains } from "../json.js";
import type { Checkpoint, CheckpointMetadata, CheckpointStore, PendingWrite, StoredCheckpoint, WriteOp } from "../persistence/types.js";
import type { Interrupt } from "../types.js";
import { applyWrites, emptyCheckpoint, prepareTasks, readValues, type TaskWrites, type Write } from "./algo.js";
import { COPY, Command, END, ERROR, INPUT, INTERRUPT, NO_WRITES, NULL_TASK_ID, START, isSpecialChannel } from "./constants.js";
import { InvalidUpdateError } from "./errors.js";
import type { CompiledStateGraph } from "./graph.js";
import { graphAt, taskNamespace } from "./subgraphs.js";
import type { CheckpointRef, GetStateOptions, HistoryOptions, StateSnapshot, Superstep, TaskView, UpdateStateOptions } from "./types.js";

export const ref = (threadId: string, checkpointId: string, ns = ""): CheckpointRef => ({
  thread_id: threadId,
  checkpoint_ns: ns,
  checkpoint_id: checkpointId,
  checkpoint_map: null,
});

/** The state of a thread with no checkpoint. */
export const EMPTY_SNAPSHOT = (): StateSnapshot => ({
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

const toWrites = (ws: readonly PendingWrite[]): Write[] => ws.filter((w) => !isSpecialChannel(w[1])).map((w) => [w[1], w[2]] as const);

/** Applies the null writes (Command input, resume) of a stored checkpoint, as an `__input__` pseudo-task. */
function withNullWrites(graph: CompiledStateGraph, saved: StoredCheckpoint): Checkpoint {
  const nulls = toWrites(saved.pending_writes.filter((w) => w[0] === NULL_TASK_ID));
  if (nulls.length === 0) return saved.checkpoint;
  return applyWrites(graph.def, saved.checkpoint, [{ name: INPUT, path: [], triggers: [], writes: nulls }], { step: false });
}

/**
 * The snapshot of a stored checkpoint. `latest`: attach finished tasks' writes to
 * the values and drop those tasks from `next` (the latest-state read only).
 */
export function snapshotOf(graph: CompiledStateGraph, threadId: string, saved: StoredCheckpoint, latest: boolean): StateSnapshot {
  const { def } = graph;
  let cp = withNullWrites(graph, saved);
  const tasks = prepareTasks(def, cp, saved.metadata.step + 1, "declared");
  const byTask = new Map<string, PendingWrite[]>();
  for (const w of saved.pending_writes) {
    const list = byTask.get(w[0]);
    if (list) list.push(w);
    else byTask.set(w[0], [w]);
  }
  const done: TaskWrites[] = [];
  const next: string[] = [];
  const interrupts: Interrupt[] = [];
  const views: TaskView[] = tasks.map((t) => {
    const ws = byTask.get(t.id) ?? [];
    const ok = ws.some((w) => !isSpecialChannel(w[1]) || w[1] === NO_WRITES);
    // A task that finished after a resume keeps its interrupt in history, not in the latest state.
    const taskInterrupts = latest && ok ? [] : ws.filter((w) => w[1] === INTERRUPT).map((w) => w[2] as Interrupt);
    interrupts.push(...taskInterrupts);
    const err = ws.find((w) => w[1] === ERROR)?.[2] as { name?: string; message?: string } | undefined;
    let result: Record<string, unknown> | null = null;
    if (ok && !err && taskInterrupts.length === 0) {
      result = {};
      for (const [ch, v] of toWrites(ws)) {
        if (!def.stateKeys.includes(ch)) continue;
        const prev = result[ch] as { $writes?: unknown[] } | undefined;
        result[ch] = ch in result ? { $writes: [...(prev?.$writes ?? [prev]), v] } : v;
      }
      if (latest) done.push({ name: t.name, path: t.path, triggers: t.triggers, writes: toWrites(ws) });
    }
    if (!(latest && ok)) next.push(t.name);
    return {
      id: t.id,
      name: t.name,
      path: [...t.path],
      // The message alone, as the agent server reports a task's error.
      error: err ? String(err.message ?? err.name ?? "Error") : null,
      interrupts: taskInterrupts,
      // A subgraph task points at the namespace holding its state.
      checkpoint: graph.subgraphs.has(t.name) ? { thread_id: threadId, checkpoint_ns: taskNamespace(saved.checkpoint_ns, t.name, t.id), checkpoint_id: undefined, checkpoint_map: undefined } : null,
      state: null,
      result,
    };
  });
  if (done.length > 0) cp = applyWrites(def, cp, done, { step: true });
  const id = saved.checkpoint.id;
  const parent = saved.parent_checkpoint_id;
  const ns = saved.checkpoint_ns;
  // A subgraph's checkpoint maps each enclosing namespace, and its own, to a checkpoint id.
  const mapped = (checkpointId: string): CheckpointRef =>
    ns === "" ? ref(threadId, checkpointId) : { ...ref(threadId, checkpointId, ns), checkpoint_map: { ...saved.metadata.parents, [ns]: checkpointId } };
  return {
    values: readValues(def, cp),
    next,
    tasks: views,
    metadata: { ...saved.metadata, thread_id: threadId, checkpoint_id: id },
    created_at: saved.checkpoint.ts,
    checkpoint: mapped(id),
    parent_checkpoint: parent ? mapped(parent) : null,
    checkpoint_id: id,
    parent_checkpoint_id: parent,
    interrupts,
  };
}

/** The `checkpoints` stream payload of a freshly saved checkpoint. */
export function checkpointPayload(graph: CompiledStateGraph, threadId: string, saved: StoredCheckpoint, parentId: string | null) {
  const snap = snapshotOf(graph, threadId, saved, false);
  const config = (id: string) => ({ configurable: { thread_id: threadId, checkpoint_ns: saved.checkpoint_ns, checkpoint_id: id } });
  return {
    config: config(saved.checkpoint.id),
    parent_config: parentId ? config(parentId) : null,
    values: snap.values,
    metadata: snap.metadata,
    next: snap.next,
    tasks: snap.tasks,
  };
}

export async function getState(root: CompiledStateGraph, store: CheckpointStore, threadId: string, options: GetStateOptions = {}): Promise<StateSnapshot> {
  const ns = options.checkpointNs ?? "";
  return stateAt(graphAt(root, ns), store, threadId, ns, options.checkpointId, options.subgraphs ?? false);
}

/** The state of `graph`, whose checkpoints live in namespace `ns`. */
async function stateAt(
  graph: CompiledStateGraph,
  store: CheckpointStore,
  threadId: string,
  ns: string,
  checkpointId: string | undefined,
  subgraphs: boolean,
): Promise<StateSnapshot> {
  const saved = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId });
  if (!saved) {
    if (checkpointId !== undefined) throw notFound(`Checkpoint ${checkpointId} not found in thread ${threadId}${ns ? ` (namespace "${ns}")` : ""}.`);
    return EMPTY_SNAPSHOT();
  }
  const snapshot = snapshotOf(graph, threadId, saved, checkpointId === undefined);
  if (!subgraphs) return snapshot;
  // Each subgraph task carries the subgraph's latest state in its namespace;
  // a subgraph that has not started yet shows the empty state.
  const tasks = await Promise.all(
    snapshot.tasks.map(async (task) => {
      const sub = task.checkpoint ? graph.subgraphs.get(task.name) : undefined;
      if (!sub || !task.checkpoint) return task;
      const state = await stateAt(sub, store, threadId, task.checkpoint.checkpoint_ns, undefined, true);
      return { ...task, checkpoint: null, state };
    }),
  );
  return { ...snapshot, tasks };
}

export async function getHistory(root: CompiledStateGraph, store: CheckpointStore, threadId: string, options: HistoryOptions = {}): Promise<StateSnapshot[]> {
  const { limit, filter, checkpointId } = options;
  const ns = options.checkpointNs ?? "";
  const graph = graphAt(root, ns);
  if (limit !== undefined && limit <= 0) return [];
  let before = options.before;
  const list: StoredCheckpoint[] = [];
  if (checkpointId !== undefined && before === undefined) {
    const first = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId });
    if (!first) throw notFound(`Checkpoint ${checkpointId} not found in thread ${threadId}.`);
    if (!filter || contains(first.metadata, filter)) list.push(first);
    before = checkpointId;
  }
  const rest = limit === undefined ? undefined : limit - list.length;
  if (rest !== 0) {
    list.push(...(await store.listCheckpoints(threadId, { checkpoint_ns: ns, ...(rest !== undefined ? { limit: rest } : {}), ...(before !== undefined ? { before } : {}), ...(filter ? { filter } : {}) })));
  }
  return list.map((saved) => snapshotOf(graph, threadId, saved, false));
}


/**
 * Applies supersteps in order, one checkpoint each, all committed at once: nothing
 * is written when any update is refused.
 */
export async function bulkUpdateState(
  root: CompiledStateGraph,
  store: CheckpointStore,
  threadId: string,
  supersteps: Superstep[],
  options: UpdateStateOptions,
): Promise<CheckpointRef> {
  const ns = options.checkpointNs ?? "";
  const graph = graphAt(root, ns);
  const { def } = graph;
  const { ids, clock } = options;
  if (supersteps.length === 0) throw invalidInput(`No supersteps given for thread ${threadId}.`);
  let saved = await store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: options.checkpointId });
  if (options.checkpointId !== undefined && !saved) throw notFound(`Checkpoint ${options.checkpointId} not found in thread ${threadId}.`);
  const ops: WriteOp[] = [];
  const config = { configurable: { thread_id: threadId }, metadata: options.metadata ?? {} };

  for (const [index, superstep] of supersteps.entries()) {
    const updates = superstep.updates;
    if (!Array.isArray(updates) || updates.length === 0) throw invalidInput(`Superstep ${index} of thread ${threadId} has no updates.`);
    const base = saved?.checkpoint ?? emptyCheckpoint(def);
    const step = saved ? saved.metadata.step : -1;
    const first = updates[0]!;
    const firstValues = first.command ? new Command(first.command as never) : first.values;
    const special = [END, COPY, INPUT];
    const only = (name: string) => {
      if (updates.length > 1) throw invalidInput(`An update as "${name}" must be the only update of its superstep (superstep ${index}).`);
    };
    let cp: Checkpoint;
    let source: CheckpointMetadata["source"] = "update";
    let writesMeta: Record<string, unknown> = {};
    let parent = saved?.checkpoint.id ?? null;
    // An input on an empty thread is step -1; everything else is step + 1.
    const nextStep = first.as_node === INPUT && !saved ? -1 : step + 1;
    const stamp = { id: ids.checkpointId(nextStep), ts: new Date(clock()).toISOString() };

    if ((firstValues === null || firstValues === undefined) && first.as_node === undefined) {
      only("(empty)");
      cp = freeze({ ...base, ...stamp });
    } else if (first.as_node === END && (firstValues === null || firstValues === undefined)) {
      only(END);
      const withNulls = saved ? withNullWrites(graph, saved) : base;
      const done = new Map<string, PendingWrite[]>();
      for (const w of saved?.pending_writes ?? []) if (w[0] !== NULL_TASK_ID) done.set(w[0], [...(done.get(w[0]) ?? []), w]);
      const tasks = prepareTasks(def, withNulls, step + 1, "declared").map((t) => ({ ...t, writes: toWrites(done.get(t.id) ?? []) }));
      cp = applyWrites(def, withNulls, tasks, { step: true, ...stamp });
    } else if (first.as_node === COPY) {
      only(COPY);
      if (!saved) throw invalidInput(`Thread ${threadId} has no checkpoint to fork with "${COPY}".`);
      cp = freeze({ ...base, ...stamp });
      source = "fork";
      parent = saved.parent_checkpoint_id;
    } else if (first.as_node === INPUT) {
      only(INPUT);
      const prepared = graph.prepareInput(firstValues ?? {}, ids);
      cp = applyWrites(def, base, [{ name: INPUT, path: [], triggers: [], writes: [[START, prepared]] }], { step: false, ...stamp });
      source = "input";
      writesMeta = { [START]: prepared };
    } else {
      // Updates as nodes.
      let current = base;
      if (saved && options.checkpointId === undefined && index === 0 && saved.pending_writes.length > 0) {
        current = withNullWrites(graph, saved);
        const byTask = new Map<string, PendingWrite[]>();
        for (const w of saved.pending_writes) byTask.set(w[0], [...(byTask.get(w[0]) ?? []), w]);
        const finished = prepareTasks(def, current, step + 1, "declared")
          .map((t) => ({ ...t, writes: toWrites(byTask.get(t.id) ?? []) }))
          .filter((t) => t.writes.length > 0);
        if (finished.length > 0) current = applyWrites(def, current, finished, { step: false, bump: false });
      }
      if (updates.length > 1 && updates.some((u) => u.as_node === undefined)) {
        throw invalidInput(`Superstep ${index} has ${updates.length} updates: each must name its node with as_node.`);
      }
      const state = readValues(def, current);
      const pseudo: TaskWrites[] = [];
      for (const u of updates) {
        const asNode = u.as_node ?? resolveAsNode(graph, current);
        if (special.includes(asNode) || (asNode !== START && !graph.nodes.has(asNode))) {
          throw invalidInput(
            special.includes(asNode)
              ? `An update as "${asNode}" must be the only update of its superstep (superstep ${index}).`
              : `Node "${asNode}" does not exist in this graph (nodes: ${graph.nodeNames.join(", ")}).`,
          );
        }
        const values = u.command ? new Command(u.command as never) : u.values;
        const checked = Command.is(values) ? values : values === null || values === undefined ? values : graph.prepareInput(values, ids);
        const prepared = Command.is(checked) && checked.update !== undefined && checked.update !== null
          ? new Command({ ...checked, update: graph.prepareInput(checked.update, ids) })
          : checked;
        const { writes, shown } = await graph.nodeWrites(asNode, prepared, state, config, ids).catch((err: unknown) => {
          throw err instanceof InvalidUpdateError ? invalidInput(`Invalid update as "${asNode}": ${err.message}`) : err;
        });
        pseudo.push({ name: asNode, path: ["__pregel_pull", asNode], triggers: [INTERRUPT], writes });
        writesMeta[asNode] = shown ?? (Command.is(prepared) ? null : prepared ?? null);
      }
      cp = applyWrites(def, current, pseudo, { step: true, ...stamp });
    }

    const metadata = freeze({ ...options.metadata, source, step: nextStep, parents: saved?.metadata.parents ?? {}, writes: writesMeta }, true) as CheckpointMetadata;
    const stored: StoredCheckpoint = { thread_id: threadId, checkpoint_ns: ns, checkpoint: cp, metadata, parent_checkpoint_id: parent, pending_writes: [] };
    ops.push({ op: "checkpoint.put", checkpoint: stored });
    saved = stored;
  }
  await store.commit(ops);
  return ref(threadId, saved!.checkpoint.id, ns);
}

/** `as_node` of a single update without one. */
function resolveAsNode(graph: CompiledStateGraph, cp: Checkpoint): string {
  let best: string | undefined;
  let bestVersion = -1;
  let tie = false;
  for (const [node, seen] of Object.entries(cp.versions_seen)) {
    if (!graph.def.triggers.has(node)) continue;
    const v = Math.max(0, ...Object.values(seen));
    if (v > bestVersion) {
      best = node;
      bestVersion = v;
      tie = false;
    } else if (v === bestVersion) tie = true;
  }
  if (best === undefined) return START;
  if (tie) throw invalidInput("Ambiguous update, specify as_node: several nodes ran in the last step.");
  return best;
}

/**
 * Write operations copying every checkpoint of `fromThreadId`, in every namespace (same ids,
 * parents and pending writes; `thread_id` in metadata replaced) to `toThreadId`, oldest first
 * within each namespace.
 */
export async function copyThreadOps(store: CheckpointStore, fromThreadId: string, toThreadId: string): Promise<WriteOp[]> {
  const ops: WriteOp[] = [];
  for (const checkpoint_ns of await store.listCheckpointNamespaces(fromThreadId)) {
    const all = await store.listCheckpoints(fromThreadId, { checkpoint_ns });
    for (const c of all.reverse()) {
      const metadata = { ...c.metadata };
      for (const [k, v] of Object.entries(metadata)) if (v === fromThreadId) metadata[k] = toThreadId;
      ops.push({ op: "checkpoint.put", checkpoint: { ...c, thread_id: toThreadId, metadata } });
    }
  }
  return ops;
}
