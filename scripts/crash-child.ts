/**
 * Child of the crash test: writes runs into a JSON-file store in a loop until it is killed, and
 * prints a line for every commit after it resolved (`ack <kind> <thread> <id> [status]`), so the
 * parent knows what was acknowledged. Usage: tsx scripts/crash-child.ts <dir> <tag>
 */
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import type { StoredCheckpoint, WriteOp } from "../src/persistence/types.js";
import type { RunRecord, ThreadRecord } from "../src/types.js";

const [dir, tag] = process.argv.slice(2) as [string, string];
// Small compaction threshold: kills also land in the middle of compactions.
const store = jsonFileStore(dir, { compactBytes: 32 * 1024 });
await store.open();
const ack = (...parts: string[]) => process.stdout.write(`ack ${parts.join(" ")}\n`);
const now = () => new Date().toISOString();
process.stdout.write("ready\n");

const thread = (id: string, status: ThreadRecord["status"], values: Record<string, unknown>): ThreadRecord => ({
  thread_id: id,
  created_at: now(),
  updated_at: now(),
  state_updated_at: now(),
  metadata: { tag },
  status,
  config: {},
  values,
  interrupts: {},
});
const run = (id: string, threadId: string, status: RunRecord["status"]): RunRecord => ({
  run_id: id,
  thread_id: threadId,
  assistant_id: "a",
  created_at: now(),
  updated_at: now(),
  status,
  metadata: {},
  kwargs: { input: { n: id } },
  multitask_strategy: null,
});

let seq = 0;
for (let t = 0; ; t++) {
  const threadId = `${tag}-t${t}`;
  let parent: string | null = null;
  let messages: unknown[] = [];
  for (let r = 0; r < 4; r++) {
    const runId = `${threadId}-r${r}`;
    await store.commit([{ op: "run.put", run: run(runId, threadId, "pending") }, { op: "thread.put", thread: thread(threadId, "busy", { messages }) }]);
    ack("run", threadId, runId, "pending");
    for (let step = 0; step < 3; step++) {
      messages = [...messages, { type: step % 2 ? "ai" : "human", content: `${runId} step ${step} `.repeat(4) }];
      const id = `${tag}-${String(seq++).padStart(8, "0")}`;
      const cp: StoredCheckpoint = {
        thread_id: threadId,
        checkpoint_ns: "",
        checkpoint: { v: 1, id, ts: now(), channel_values: { messages, step }, channel_versions: { messages: seq }, versions_seen: {} },
        metadata: { source: "loop", step, parents: {}, run_id: runId },
        parent_checkpoint_id: parent,
        pending_writes: [],
      };
      const ops: WriteOp[] = [
        { op: "checkpoint.put", checkpoint: cp },
        { op: "writes.put", thread_id: threadId, checkpoint_id: id, task_id: "task", writes: [["task", "messages", step]] },
        { op: "run.put", run: run(runId, threadId, "running") },
      ];
      await store.commit(ops);
      ack("checkpoint", threadId, id);
      parent = id;
    }
    await store.commit([{ op: "run.put", run: run(runId, threadId, "success") }, { op: "thread.put", thread: thread(threadId, "idle", { messages }) }]);
    ack("run", threadId, runId, "success");
  }
}
