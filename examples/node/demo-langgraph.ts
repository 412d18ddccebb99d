/**
 * `npm run demo:langgraph`: the offline `createAgent` agent (examples/node/agent-langgraph.ts)
 * hosted in process. Streams a question (tokens and updates as they arrive), approves the
 * calculator the run paused on, streams the answer, then shows the thread's history.
 */
import { createRuntime, type RunEvent } from "../../src/index.js";
import { graph } from "./agent-langgraph.js";

const runtime = await createRuntime({ graphs: { agent: graph } });

/** True while a model's answer is being printed token by token on the current line. */
let streaming = false;

function print(event: RunEvent): void {
  if (event.event === "messages") {
    const [chunk, meta] = event.data;
    if (chunk.type !== "AIMessageChunk") return; // whole messages (the tool's) show in the updates
    const calls = chunk.tool_call_chunks as Array<{ name: string; args: string }> | undefined;
    if (calls?.length) console.log(`  ${String(meta.langgraph_node)} calls ${calls[0]!.name}(${calls[0]!.args})`);
    else {
      if (!streaming) process.stdout.write(`  ${String(meta.langgraph_node)} says: `);
      streaming = true;
      process.stdout.write(String(chunk.content));
    }
  } else if (event.event === "updates") {
    if (streaming) process.stdout.write("\n");
    streaming = false;
    for (const [node, update] of Object.entries(event.data)) console.log(`  update from ${node}: ${JSON.stringify(update).slice(0, 90)}...`);
  }
}

const thread = await runtime.threads.create();
console.log('> "what is 12 * (3 + 4)?"');
for await (const event of runtime.runs.stream(thread.thread_id, "agent", {
  input: { messages: [{ role: "user", content: "what is 12 * (3 + 4)?" }] },
  streamMode: ["messages-tuple", "updates"],
})) {
  print(event);
}
const state = await runtime.threads.getState(thread.thread_id);
console.log(`paused before ${state.next.join(", ")}: ${JSON.stringify(state.interrupts[0]?.value)}`);
console.log("> approve");
for await (const event of runtime.runs.stream(thread.thread_id, "agent", { command: { resume: "yes" }, streamMode: ["messages-tuple", "updates"] })) {
  print(event);
}
console.log("\nhistory, newest first:");
for (const snapshot of await runtime.threads.getHistory(thread.thread_id)) {
  console.log(`  step ${String(snapshot.metadata?.step).padStart(2)} (${String(snapshot.metadata?.source)}) next: [${snapshot.next.join(", ")}]`);
}
await runtime.close();
