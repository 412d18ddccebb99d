/**
 * LangGraph's checkpoint and task payloads (the `checkpoints`, `tasks` and `debug` stream modes)
 * as the agent server streams them: each checkpoint names itself and its parent as
 * `checkpoint` / `parent_checkpoint` (the form `threads.getHistory` returns, so a client can match
 * streamed checkpoints with the thread's history), `parentConfig` is spelled `parent_config` (left
 * out for the first checkpoint), the configs lose LangGraph's internals, and a subgraph task's
 * config (`state`) becomes the `checkpoint` naming the subgraph's namespace.
 */
import { isPlainObject } from "../json.js";
import type { CheckpointRef, SubgraphCheckpointRef } from "../graph/types.js";

type Payload = Record<string, unknown>;

const configurableOf = (config: unknown): Payload | undefined =>
  isPlainObject(config) && isPlainObject(config.configurable) ? config.configurable : undefined;

/** The checkpoint a checkpoint's config names; null without a thread and a checkpoint id. */
function checkpointOf(config: unknown): CheckpointRef | null {
  const c = configurableOf(config);
  if (typeof c?.thread_id !== "string" || typeof c.checkpoint_id !== "string") return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
    checkpoint_id: c.checkpoint_id,
    checkpoint_map: isPlainObject(c.checkpoint_map) ? c.checkpoint_map : null,
  };
}

/**
 * A subgraph task's namespace, from the config LangGraph gives as the task's `state` (its thread
 * and namespace, no checkpoint id: the latest of that namespace). Null when it is not one.
 */
export function subgraphCheckpointOf(config: unknown): SubgraphCheckpointRef | null {
  const c = configurableOf(config);
  if (typeof c?.thread_id !== "string" || typeof c.checkpoint_ns !== "string") return null;
  return { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: undefined, checkpoint_map: undefined };
}

/**
 * A config without LangGraph's internals (`__pregel_*` keys, callbacks, and the `run_name` a
 * subgraph's task gets when the graph is streamed rather than run for its stream events, as the
 * agent server runs it). Absent (left out of the payload) when there is none.
 */
function publicConfig(config: unknown): unknown {
  const c = configurableOf(config);
  if (!c || !isPlainObject(config)) return config ?? undefined;
  const { callbacks: _callbacks, run_name: _runName, ...rest } = config;
  return { ...rest, configurable: Object.fromEntries(Object.entries(c).filter(([key]) => !key.startsWith("__"))) };
}

/** A task payload: a subgraph task's config (`state`) becomes its `checkpoint`. */
function taskPayload(task: unknown): unknown {
  if (!isPlainObject(task) || configurableOf(task.state)?.thread_id === undefined) return task;
  const c = configurableOf(task.state)!;
  const { state: _state, ...rest } = task;
  return {
    ...rest,
    checkpoint: {
      thread_id: c.thread_id,
      checkpoint_id: typeof c.checkpoint_id === "string" && c.checkpoint_id ? c.checkpoint_id : null,
      checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
      checkpoint_map: isPlainObject(c.checkpoint_map) ? c.checkpoint_map : null,
    },
  };
}

/** A checkpoint payload (see the module comment). */
function checkpointPayload(payload: Payload): Payload {
  const { parentConfig, ...rest } = payload;
  const parent = parentConfig ?? payload.parent_config;
  return {
    ...rest,
    config: publicConfig(payload.config),
    parent_config: publicConfig(parent),
    checkpoint: checkpointOf(payload.config),
    parent_checkpoint: checkpointOf(parent),
    tasks: Array.isArray(payload.tasks) ? payload.tasks.map(taskPayload) : [],
  };
}

/** The data of a `checkpoints`, `tasks` or `debug` chunk as the agent server streams it; other modes' data as is. */
export function toServerPayload(mode: string, data: unknown): unknown {
  if (!isPlainObject(data)) return data;
  if (mode === "checkpoints") return checkpointPayload(data);
  if (mode === "tasks") return taskPayload(data);
  if (mode !== "debug" || !isPlainObject(data.payload)) return data;
  if (data.type === "checkpoint") return { ...data, payload: checkpointPayload(data.payload) };
  if (data.type === "task" || data.type === "task_result") return { ...data, payload: taskPayload(data.payload) };
  return data;
}
