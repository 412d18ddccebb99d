/**
 * Child of the crash test: runs echo turns at the store level (scripts/store-echo.ts) on a
 * JSON-file store in a loop until it is killed, printing a line after each acknowledged write
 * (`ack thread <id>`, `ack run <thread> <run> pending|success`), so the parent knows what must
 * survive. Usage: tsx scripts/crash-child.ts <dir>
 */
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import { echoGraph, echoTurn, newThread } from "./store-echo.js";

const dir = process.argv[2]!;
// A small compaction threshold, so kills also land in the middle of compactions.
const store = jsonFileStore(dir, { compactBytes: 32 * 1024 });
await store.open();
const graph = echoGraph();
const ack = (...parts: string[]) => process.stdout.write(`ack ${parts.join(" ")}\n`);
process.stdout.write("ready\n");

for (;;) {
  const thread = newThread();
  await store.commit([{ op: "thread.put", thread }]);
  ack("thread", thread.thread_id);
  for (let r = 0; r < 4; r++) {
    await echoTurn(store, graph, thread.thread_id, `turn ${r} `.repeat(20), (what, runId) => ack("run", thread.thread_id, runId, what));
  }
}
