/**
 * An echo run at the store level: the commits a runtime makes for one run on the v2 store
 * contract (D20), without the runtime. Used by the crash test (scripts/crash-harness.ts) and the
 * JSON-file figures of the persistence bench while the runtime is being moved to the v2 contract.
 *
 * One run is: thread busy + run pending (+ notify) in one commit; run running + the thread's
 * lease; the engine's own commits (checkpoints and pending writes); run success + thread idle
 * with its values + lease dropped.
 */
import { END, START, StateGraph, messagesState } from "../src/graph/index.js";
import { createIds, systemClock } from "../src/ids.js";
import type { Store } from "../src/persistence/types.js";
import type { RunRecord, ThreadRecord } from "../src/types.js";

export const echoGraph = () =>
  new StateGraph(messagesState)
    .addNode("echo", (s) => ({ messages: [{ type: "ai", content: `You said: ${String((s.messages.at(-1) as { content: unknown }).content)}` }] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile();

const ids = createIds();
const now = () => new Date().toISOString();

export function newThread(threadId = ids.uuid()): ThreadRecord {
  const t = now();
  return { thread_id: threadId, created_at: t, updated_at: t, state_updated_at: t, metadata: { graph_id: "echo" }, status: "idle", config: {}, values: {}, interrupts: {} };
}

/** Runs one echo turn on `thread`; `ack` is called after each acknowledged commit. Returns the run id and the final values. */
export async function echoTurn(
  store: Store,
  graph: ReturnType<typeof echoGraph>,
  threadId: string,
  text: string,
  ack: (what: "pending" | "success", runId: string) => void = () => undefined,
): Promise<{ runId: string; values: Record<string, unknown> }> {
  const thread = (await store.getThread(threadId)) ?? newThread(threadId);
  const runId = ids.uuid();
  const input = { messages: [{ type: "human", content: text }] };
  const run: RunRecord = {
    run_id: runId,
    thread_id: threadId,
    assistant_id: "046b5dc7-2108-582c-9c6c-31d556d138f0",
    created_at: now(),
    updated_at: now(),
    status: "pending",
    metadata: {},
    kwargs: { input, config: { configurable: {} }, stream_mode: ["values"], multitask_strategy: "reject" },
    multitask_strategy: "reject",
  };
  await store.commit([
    { op: "thread.put", thread: { ...thread, status: "busy", updated_at: now() } },
    { op: "run.put", run, expect: { exists: false } },
    { op: "notify", topic: "runs", payload: runId },
  ]);
  ack("pending", runId);
  await store.commit([
    { op: "run.put", run: { ...run, status: "running", updated_at: now() }, expect: { status: ["pending"] } },
    { op: "lease.put", lease: { key: `thread:${threadId}`, owner: "bench", expires_at: systemClock() + 30_000, data: { run_id: runId } }, expect: { state: "free", now: systemClock() } },
  ]);
  const result = await graph.execute({
    store,
    threadId,
    input,
    config: { configurable: { thread_id: threadId }, metadata: { run_id: runId, graph_id: "echo", assistant_id: run.assistant_id } },
    ids,
    clock: systemClock,
  });
  const latest = (await store.getThread(threadId))!;
  await store.commit([
    { op: "run.put", run: { ...run, status: "success", updated_at: now() } },
    { op: "thread.put", thread: { ...latest, status: "idle", values: result.values, updated_at: now(), state_updated_at: now() } },
    { op: "lease.delete", key: `thread:${threadId}`, owner: "bench" },
  ]);
  ack("success", runId);
  return { runId, values: result.values };
}
