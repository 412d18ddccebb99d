/**
 * Child of the crash test: runs an echo graph through the runtime on a JSON-file store in a loop
 * until it is killed, printing a line after each acknowledged write (`ack thread <id>`,
 * `ack run <thread> <run> pending|success`), so the parent knows what must survive.
 * Usage: tsx scripts/crash-child.ts <dir>
 */
import { END, START, StateGraph, messagesState } from "../src/graph/index.js";
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import { createRuntime } from "../src/runtime/index.js";

const crashGraph = () =>
  new StateGraph(messagesState)
    .addNode("echo", (s) => ({ messages: [{ type: "ai", content: `echo ${s.messages.length}` }] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile();

const dir = process.argv[2]!;
// A small compaction threshold, so kills also land in the middle of compactions.
const runtime = await createRuntime({ graphs: { echo: crashGraph() }, store: jsonFileStore(dir, { compactBytes: 32 * 1024 }) });
const ack = (...parts: string[]) => process.stdout.write(`ack ${parts.join(" ")}\n`);
process.stdout.write("ready\n");

for (;;) {
  const { thread_id } = await runtime.threads.create();
  ack("thread", thread_id);
  for (let r = 0; r < 4; r++) {
    const run = await runtime.runs.create(thread_id, "echo", { input: { messages: [{ role: "user", content: `turn ${r} `.repeat(20) }] } });
    ack("run", thread_id, run.run_id, "pending");
    await runtime.runs.join(thread_id, run.run_id);
    ack("run", thread_id, run.run_id, "success");
  }
}
