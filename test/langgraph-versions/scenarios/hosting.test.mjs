// Hosted LangGraph.js graphs on the release installed in this project (node --test, run by
// ../versions.test.ts in a copy of lowest/ or latest/): graphdock from its packed tarball serves
// graph.json, the official SDK client talks to it over HTTP. What differs between releases is
// what is checked: every stream mode and the run's result, interrupt and resume, a chat model's
// tokens, a subgraph paused, edited and resumed, streamed checkpoints against the history,
// schemas, and a graph that takes the SDK logger as its module loads.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { serveConfig } from "graphdock/node";

let server;
let client;

before(async () => {
  server = await serveConfig({ config: new URL("./graph.json", import.meta.url).pathname, port: 0 });
  client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
});
after(() => server?.close());

async function gather(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}
const human = (content) => ({ messages: [{ role: "human", content }] });

test("runs stream every asked mode, and wait answers the final values", async () => {
  const thread = await client.threads.create();
  const frames = await gather(client.runs.stream(thread.thread_id, "chain", { input: {}, streamMode: ["values", "updates", "tasks", "checkpoints", "debug"] }));
  const events = new Set(frames.map((f) => f.event));
  for (const mode of ["metadata", "values", "updates", "tasks", "checkpoints", "debug"]) assert.ok(events.has(mode), `${mode} in ${[...events]}`);
  assert.deepEqual(frames.filter((f) => f.event === "updates").map((f) => Object.keys(f.data)), [["a"], ["b"], ["c"]]);
  assert.deepEqual(frames.filter((f) => f.event === "values").at(-1).data, { log: ["a", "b", "c"] });
  assert.deepEqual(await client.runs.wait(null, "chain", { input: {} }), { log: ["a", "b", "c"] });
});

test("interrupt() pauses the thread with its value; a resume command finishes the run", async () => {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "approval", { input: {} });
  assert.equal(paused.plan, "plan!");
  assert.deepEqual(paused.__interrupt__.map((i) => i.value), [{ question: "approve plan!?" }]);
  assert.equal((await client.threads.get(thread.thread_id)).status, "interrupted");
  assert.deepEqual(await client.runs.wait(thread.thread_id, "approval", { command: { resume: "yes" } }), { plan: "plan!", approved: "yes" });
});

test("a chat model's tokens stream in messages-tuple", async () => {
  const frames = await gather(client.runs.stream(null, "talker", { input: human("hi"), streamMode: ["messages-tuple"] }));
  const tokens = frames.filter((f) => f.event === "messages").map((f) => f.data[0].content);
  assert.ok(tokens.length > 1, `tokens: ${JSON.stringify(tokens)}`);
  assert.equal(tokens.join(""), "hello there");
  assert.equal(frames.find((f) => f.event === "messages").data[1].langgraph_node, "model");
});

test("a subgraph pauses at its breakpoint; its namespace is read, edited and resumed", async () => {
  const thread = await client.threads.create();
  const frames = await gather(client.runs.stream(thread.thread_id, "weather", { input: human("SF"), streamSubgraphs: true, streamMode: ["values"] }));
  assert.ok(frames.some((f) => f.event.startsWith("values|weather_graph:")), `frames: ${frames.map((f) => f.event)}`);
  const state = await client.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, ["weather_graph"]);
  const checkpoint = state.tasks[0].checkpoint;
  assert.deepEqual(Object.keys(checkpoint).sort(), ["checkpoint_ns", "thread_id"]);
  await client.threads.updateState(thread.thread_id, { values: { city: "LA" }, checkpoint });
  const inner = await client.threads.getState(thread.thread_id, checkpoint);
  assert.equal(inner.values.city, "LA");
  assert.deepEqual(inner.next, ["weather_node"]);
  const done = await client.runs.wait(thread.thread_id, "weather", { input: null });
  assert.equal(done.messages.at(-1).content, "It's sunny in LA!");
});

test("streamed debug checkpoints name themselves and their parents as the history does; a past checkpoint forks", async () => {
  const thread = await client.threads.create();
  const frames = await gather(client.runs.stream(thread.thread_id, "chain", { input: {}, streamMode: "debug" }));
  const streamed = frames.filter((f) => f.event === "debug" && f.data.type === "checkpoint").map((f) => f.data.payload);
  const history = (await client.threads.getHistory(thread.thread_id)).reverse();
  const shape = (s) => ({ step: s.metadata.step, checkpoint: s.checkpoint, parent_checkpoint: s.parent_checkpoint });
  assert.deepEqual(streamed.map(shape), history.map(shape));
  const afterA = history.find((s) => s.next[0] === "b");
  assert.deepEqual(await client.runs.wait(thread.thread_id, "chain", { input: null, checkpoint: afterA.checkpoint }), { log: ["a", "b", "c"] });
});

test("schemas of a StateSchema graph mark its messages as the agent server does", async () => {
  const schemas = await client.assistants.getSchemas("state_schema");
  assert.equal(schemas.state_schema.properties.messages.langgraph_type, "messages");
});
