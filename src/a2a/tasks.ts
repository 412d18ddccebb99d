/**
 * A2A tasks as the runtime's runs (D104, D105): a task is the run a message started, found again
 * from its id alone (`<thread id>:<run id>`; the context is the thread), plus the runs that
 * answered its interrupts (tagged with the task's id in their metadata). Its state is read from
 * the runs and the thread, so every process on the store sees the same task; its result is the
 * run's final values as parts.
 */
import type { Artifact, Message, Part, Task, TaskState } from "@a2a-js/sdk";
import { lastAiText } from "../graph/messages.js";
import { isPlainObject } from "../json.js";
import type { HttpClient } from "../http/types.js";
import type { Run, Thread } from "../runtime/types.js";
import type { A2aSdk } from "./sdk.js";

/** The run metadata key naming the task a run continues (a run answering an interrupt). */
export const TASK_METADATA_KEY = "a2a_task_id";

/** A task's id: its thread (the context) and the run that started it. */
export interface TaskRef {
  threadId: string;
  runId: string;
}

export const taskIdOf = (ref: TaskRef) => `${ref.threadId}:${ref.runId}`;

/** The thread and first run a task id names, or undefined when it is not a task id of ours. */
export function parseTaskId(id: string): TaskRef | undefined {
  const at = id.lastIndexOf(":");
  if (at <= 0 || at === id.length - 1) return undefined;
  return { threadId: id.slice(0, at), runId: id.slice(at + 1) };
}

/** The newest run of a task (its first run, or a later one answering its interrupt) and whether it is the thread's newest. */
export async function currentRun(client: HttpClient, ref: TaskRef): Promise<{ run: Run; newest: boolean } | undefined> {
  const id = taskIdOf(ref);
  const PAGE = 100;
  for (let offset = 0; ; offset += PAGE) {
    const runs = await client.runs.list(ref.threadId, { limit: PAGE, offset });
    const i = runs.findIndex((r) => r.run_id === ref.runId || r.metadata?.[TASK_METADATA_KEY] === id);
    if (i >= 0) return { run: runs[i]!, newest: offset === 0 && i === 0 };
    if (runs.length < PAGE) return undefined;
  }
}

const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
const data = (value: unknown): Part => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" });

/** An agent message of `parts` in the task's context. */
function agentMessage(sdk: A2aSdk, ref: TaskRef, parts: Part[], messageId: string): Message {
  return { messageId, contextId: ref.threadId, taskId: taskIdOf(ref), role: sdk.Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/**
 * The result of a run as parts: the last AI message as text, and the other state keys (all of
 * them when there is no AI message) as one data part.
 */
export function resultParts(values: Record<string, unknown>): Part[] {
  const { __interrupt__: _interrupts, __error__: _error, ...state } = values;
  const reply = lastAiText(state);
  const parts: Part[] = [];
  if (reply !== undefined) {
    parts.push(text(reply));
    delete state.messages;
  }
  if (Object.keys(state).length || !parts.length) parts.push(data(state));
  return parts;
}

/** The one artifact of a completed task. */
export const resultArtifact = (parts: Part[]): Artifact => ({ artifactId: "result", name: "result", description: "", parts, metadata: undefined, extensions: [] });

/** What an interrupt asks, as parts: a text for a string, data otherwise. */
function interruptParts(thread: Thread): Part[] {
  const parts: Part[] = [];
  for (const interrupts of Object.values(thread.interrupts ?? {})) {
    for (const i of interrupts) {
      const value = isPlainObject(i) && "value" in i ? i.value : i;
      parts.push(typeof value === "string" ? text(value) : data(value));
    }
  }
  return parts.length ? parts : [text("The agent is waiting for input.")];
}

/** The final values a run left: the thread's values for its newest run, else its last checkpoint's. */
async function valuesAfter(client: HttpClient, run: Run, thread: Thread, newest: boolean): Promise<Record<string, unknown>> {
  if (newest) return thread.values;
  const [state] = await client.threads.getHistory(run.thread_id, { limit: 1, metadata: { run_id: run.run_id } });
  return state?.values ?? {};
}

/** The task `ref` as it stands: its state from its newest run (and the thread), its result as an artifact. */
export async function readTask(sdk: A2aSdk, client: HttpClient, ref: TaskRef): Promise<Task | undefined> {
  const found = await currentRun(client, ref);
  if (!found) return undefined;
  const { run, newest } = found;
  const S = sdk.TaskState;
  const task = (state: TaskState, message?: Message, artifacts: Artifact[] = []): Task => ({
    id: taskIdOf(ref),
    contextId: ref.threadId,
    status: { state, message, timestamp: run.updated_at },
    artifacts,
    history: [],
    metadata: undefined,
  });
  switch (run.status) {
    case "pending":
      return task(S.TASK_STATE_SUBMITTED);
    case "running":
      return task(S.TASK_STATE_WORKING);
    case "interrupted":
      return task(S.TASK_STATE_CANCELED);
    default:
  }
  const thread = await client.threads.get(ref.threadId);
  if (run.status === "error" || run.status === "timeout") {
    const why = newest && thread.error ? `${thread.error.error}: ${thread.error.message}` : `The run ended with status ${run.status}.`;
    return task(S.TASK_STATE_FAILED, agentMessage(sdk, ref, [text(why)], `${run.run_id}:status`));
  }
  if (newest && thread.status === "interrupted") {
    return task(S.TASK_STATE_INPUT_REQUIRED, agentMessage(sdk, ref, interruptParts(thread), `${run.run_id}:status`));
  }
  const parts = resultParts(await valuesAfter(client, run, thread, newest));
  return task(S.TASK_STATE_COMPLETED, undefined, [resultArtifact(parts)]);
}
