/**
 * `npm run demo`: the offline agent run in process through the SDK-shaped runtime. Creates an
 * assistant with context, streams a run (printing events as they arrive), approves the tool call
 * the run paused on, shows the history, copies the thread, updates the assistant to a new
 * version and rolls it back with setLatest.
 */
import { createRuntime, type RunEvent } from "../../src/index.js";
import { agent, echo } from "./agent.js";

const runtime = await createRuntime({ graphs: { agent, echo } });

/** The id of the message whose chunks are being printed on the current line. */
let streaming: string | undefined;

function print(event: RunEvent): void {
  if (event.event === "messages") {
    const [chunk, meta] = event.data;
    const calls = chunk.tool_call_chunks as Array<{ name: string; args: string }> | undefined;
    if (calls?.length) {
      console.log(`  [${event.id}] ${String(meta.langgraph_node)} calls ${calls[0]!.name}(${calls[0]!.args})`);
    } else if (chunk.id === streaming) {
      process.stdout.write(String(chunk.content));
    } else {
      if (streaming) process.stdout.write("\n");
      streaming = String(chunk.id);
      process.stdout.write(`  [${event.id}] ${String(meta.langgraph_node)} says: ${String(chunk.content)}`);
    }
    return;
  }
  if (streaming) process.stdout.write("\n");
  streaming = undefined;
  switch (event.event) {
    case "metadata":
      console.log(`  [${event.id}] run ${event.data.run_id} started`);
      break;
    case "updates":
      for (const [node, update] of Object.entries(event.data)) {
        console.log(`  [${event.id}] update from ${node}: ${JSON.stringify(update).slice(0, 90)}...`);
      }
      break;
    case "error":
      console.log(`  [${event.id}] error ${event.data.error}: ${event.data.message}`);
      break;
    default:
      console.log(`  [${event.id}] ${event.event}`);
  }
}

async function stream(threadId: string, assistantId: string, payload: Parameters<typeof runtime.runs.stream>[2]) {
  for await (const event of runtime.runs.stream(threadId, assistantId, { streamMode: ["updates", "messages-tuple"], ...payload })) print(event);
}

try {
  console.log("1. An assistant of the agent graph, with context");
  const ada = await runtime.assistants.create({ graphId: "agent", name: "Ada", context: { persona: "Ada" } });
  console.log(`   ${ada.assistant_id} version ${ada.version} context ${JSON.stringify(ada.context)}`);

  console.log("\n2. Stream a run: the model calls the calculator, which waits for approval");
  const thread = await runtime.threads.create({ metadata: { demo: true } });
  await stream(thread.thread_id, ada.assistant_id, { input: { messages: [{ role: "user", content: "what is 12 * (3 + 4)?" }] } });
  const paused = await runtime.threads.get(thread.thread_id);
  const [interrupt] = Object.values(paused.interrupts).flat();
  console.log(`   thread is ${paused.status}; it asks: ${JSON.stringify((interrupt?.value as { question: string }).question)}`);

  console.log("\n3. Approve: resume the interrupt");
  await stream(thread.thread_id, ada.assistant_id, { command: { resume: true } });
  const state = await runtime.threads.getState(thread.thread_id);
  const messages = state.values.messages as Array<{ type: string; content: string }>;
  console.log(`   thread is ${(await runtime.threads.get(thread.thread_id)).status}; last message: ${messages.at(-1)!.content}`);

  console.log("\n4. History, newest first");
  for (const s of await runtime.threads.getHistory(thread.thread_id, { limit: 20 })) {
    console.log(`   step ${String(s.metadata?.step).padStart(2)} ${String(s.metadata?.source).padEnd(5)} next ${JSON.stringify(s.next)}`);
  }

  console.log("\n5. Copy the thread; the copy continues independently");
  const copy = await runtime.threads.copy(thread.thread_id);
  await runtime.runs.wait(copy.thread_id, ada.assistant_id, { input: { messages: [{ role: "user", content: "thanks!" }] } });
  const count = async (id: string) => ((await runtime.threads.getState(id)).values.messages as unknown[]).length;
  console.log(`   original has ${await count(thread.thread_id)} messages, copy ${copy.thread_id} has ${await count(copy.thread_id)}`);

  console.log("\n6. Update the assistant (a new version), then roll back with setLatest");
  const grace = await runtime.assistants.update(ada.assistant_id, { context: { persona: "Grace" } });
  const ask = async () => {
    const out = await runtime.runs.wait(null, ada.assistant_id, { input: { messages: [{ role: "user", content: "hello" }] } });
    return (out.messages as Array<{ content: string }>).at(-1)!.content;
  };
  console.log(`   version ${grace.version}: ${await ask()}`);
  const versions = await runtime.assistants.getVersions(ada.assistant_id);
  console.log(`   versions: ${versions.map((v) => `${v.version} (${(v.context as { persona: string }).persona})`).join(", ")}`);
  const back = await runtime.assistants.setLatest(ada.assistant_id, 1);
  console.log(`   setLatest(1) -> version ${back.version}: ${await ask()}`);
} finally {
  await runtime.close();
}
