/**
 * The store traffic of one echo run, without the runtime (so the IndexedDB store can be measured
 * while the runtime is rewritten, and in a browser page): what the runtime commits for a run of
 * the echo graph (captured from the runtime over the memory store: five commits, three
 * checkpoints, two task writes) and the reads it makes when the run starts. Core-safe, bundled
 * into the Chromium bench page.
 */
import type { Store } from "../src/persistence/types.js";
import type { RunRecord, ThreadRecord } from "../src/types.js";

const deepFreeze = <T>(v: T): T => {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
};

let counter = 0;
/** A UUID-shaped id, unique in the process. */
const id = (prefix = "01a20aa8") => {
  const n = (counter++).toString(16).padStart(12, "0");
  return `${prefix}-09e2-7000-8${n.slice(0, 3)}-${n}${"0".repeat(12 - n.length)}`.slice(0, 36);
};

export const said = (i: number) =>
  `Turn ${i}. I am planning a trip and would like some help comparing the options I found. The first is a train that leaves early ` +
  `in the morning and arrives around noon; the second is a flight that is cheaper but needs a transfer. I care most about total ` +
  `travel time and a little about cost. Could you summarise the trade-offs and suggest which one fits a relaxed schedule?`;
export const saidShort = (i: number) => `Turn ${i}. Which option suits a relaxed trip?`;

export interface ChatState {
  threadId: string;
  assistantId: string;
  messages: readonly unknown[];
  step: number;
  versions: number;
  created_at: string;
  lastCheckpoint: string | null;
}

export function newChat(threadId = id()): ChatState {
  return { threadId, assistantId: "046b5dc7-2108-582c-9c6c-31d556d138f0", messages: [], step: -1, versions: 0, created_at: new Date().toISOString(), lastCheckpoint: null };
}

/** Runs one echo turn against `store` (reads, then the five commits); returns the final values. */
export async function echoTurn(store: Store, chat: ChatState, text: string): Promise<Record<string, unknown>> {
  const now = () => new Date().toISOString();
  const t = chat.threadId;
  // What a run reads first: the thread and its latest checkpoint.
  await store.getThread(t);
  await store.getCheckpoint({ thread_id: t });
  const threadRec = (status: ThreadRecord["status"], values: Record<string, unknown>): ThreadRecord => ({
    thread_id: t,
    created_at: chat.created_at,
    updated_at: now(),
    state_updated_at: now(),
    metadata: { graph_id: "echo", assistant_id: chat.assistantId },
    status,
    config: { configurable: { thread_id: t, graph_id: "echo", assistant_id: chat.assistantId } },
    values,
    interrupts: {},
    error: null,
  });
  const runId = id();
  const runRec = (status: RunRecord["status"]): RunRecord => ({
    run_id: runId,
    thread_id: t,
    assistant_id: chat.assistantId,
    created_at: now(),
    updated_at: now(),
    status,
    metadata: {},
    kwargs: {
      input: { messages: [{ type: "human", content: text }] },
      command: null,
      config: { configurable: {} },
      context: {},
      stream_mode: ["values"],
      interrupt_before: null,
      interrupt_after: null,
      checkpoint_id: null,
      webhook: null,
      feedback_keys: null,
      subgraphs: false,
      resumable: false,
      on_disconnect: "continue",
      after_seconds: 0,
      temporary: false,
    },
    multitask_strategy: "reject",
  });
  const before = chat.messages.length === 0 ? {} : { messages: chat.messages };
  await store.commit([
    { op: "thread.put", thread: threadRec("busy", before) },
    { op: "run.put", run: runRec("pending") },
  ]);
  const human = deepFreeze({ content: text, additional_kwargs: {}, response_metadata: {}, type: "human", name: null, id: id(), example: false });
  const ai = deepFreeze({
    content: `You said: ${text}`,
    additional_kwargs: {},
    response_metadata: {},
    type: "ai",
    name: null,
    id: id(),
    example: false,
    tool_calls: [],
    invalid_tool_calls: [],
    usage_metadata: null,
  });
  const metadata = (source: "input" | "loop", writes: Record<string, unknown> | null) => ({
    created_by: "system",
    graph_id: "echo",
    assistant_id: chat.assistantId,
    run_id: runId,
    thread_id: t,
    run_attempt: 1,
    source,
    step: ++chat.step,
    parents: {},
    writes,
  });
  const put = (values: Record<string, unknown>, md: ReturnType<typeof metadata>) => {
    const v = ++chat.versions;
    const cpId = `1f1e7925-784d-62c0-8${String(v).padStart(3, "0").slice(-3)}-${id().slice(-12)}`;
    const checkpoint = deepFreeze({
      thread_id: t,
      checkpoint_ns: "",
      checkpoint: {
        v: 1 as const,
        id: cpId,
        ts: now(),
        channel_values: values,
        channel_versions: { __start__: v, messages: v, "branch:to:echo": v },
        versions_seen: { __start__: { __start__: v - 1 }, echo: { "branch:to:echo": v - 1 } },
      },
      metadata: md,
      parent_checkpoint_id: chat.lastCheckpoint,
      pending_writes: [],
    });
    chat.lastCheckpoint = cpId;
    return checkpoint;
  };
  const input = put({ ...before, __start__: { messages: [human] } }, metadata("input", { __start__: { messages: [human] } }));
  await store.commit([{ op: "run.put", run: runRec("running") }, { op: "checkpoint.put", checkpoint: input }]);
  const withHuman = Object.freeze([...chat.messages, human]);
  const task1 = id();
  const loop = put({ messages: withHuman, "branch:to:echo": null }, metadata("loop", null));
  await store.commit([
    { op: "writes.put", thread_id: t, checkpoint_id: input.checkpoint.id, task_id: task1, writes: [[task1, "messages", [human]], [task1, "branch:to:echo", null]] },
    { op: "checkpoint.put", checkpoint: loop },
  ]);
  const withAi = Object.freeze([...withHuman, ai]);
  const task2 = id();
  const done = put({ messages: withAi }, metadata("loop", { echo: { messages: [ai] } }));
  await store.commit([
    { op: "writes.put", thread_id: t, checkpoint_id: loop.checkpoint.id, task_id: task2, writes: [[task2, "messages", [ai]]] },
    { op: "checkpoint.put", checkpoint: done },
  ]);
  chat.messages = withAi;
  const values = { messages: withAi };
  await store.commit([
    { op: "run.put", run: runRec("success") },
    { op: "thread.put", thread: threadRec("idle", values) },
  ]);
  return values;
}

/** Runs/s of `runs` echo turns spread over `threads` threads (after one warm-up turn each). */
export async function echoRate(store: Store, runs = 200, threads = 20, text = said): Promise<number> {
  const chats = Array.from({ length: threads }, () => newChat());
  for (let i = 0; i < threads; i++) await echoTurn(store, chats[i]!, text(i));
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await echoTurn(store, chats[i % threads]!, text(i));
  return runs / ((performance.now() - t0) / 1000);
}
