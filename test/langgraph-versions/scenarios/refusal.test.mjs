// A LangGraph.js release graphdock does not host (node --test, run by ../versions.test.ts in a copy
// of unsupported/): it is refused with a message naming the releases hosted, by `graphdock serve`
// and by createRuntime, rather than hosted in a way that answers nothing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { test } from "node:test";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { createRuntime } from "graphdock";

const here = new URL(".", import.meta.url).pathname;
const installed = (await import("@langchain/langgraph/package.json", { with: { type: "json" } })).default.version;

const graph = new StateGraph(Annotation.Root({ log: Annotation({ reducer: (_a, b) => b, default: () => [] }) }))
  .addNode("a", () => ({ log: ["a"] }))
  .addEdge(START, "a")
  .addEdge("a", END)
  .compile();

test(`graphdock serve refuses a graph built with @langchain/langgraph ${installed}, naming the releases hosted`, () => {
  writeFileSync(
    `${here}/old-graph.mjs`,
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
export const graph = new StateGraph(Annotation.Root({ x: Annotation() })).addNode("a", () => ({ x: 1 })).addEdge(START, "a").addEdge("a", END).compile();
`,
  );
  writeFileSync(`${here}/old-graph.json`, JSON.stringify({ graphs: { old: "./old-graph.mjs:graph" } }));
  const run = spawnSync("npx", ["--no-install", "graphdock", "serve", "--config", `${here}/old-graph.json`, "--port", "0"], { encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 1, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
  assert.match(run.stderr, new RegExp(`@langchain/langgraph ${installed.replace(/\./g, "\\.")} \\(resolved from .*\\) is not supported`));
  assert.match(run.stderr, /graphdock hosts LangGraph\.js 1\.1\.5 and later 1\.x releases \(\^1\.1\.5\)/);
});

test(`createRuntime refuses a graph built with @langchain/langgraph ${installed}`, async () => {
  await assert.rejects(createRuntime({ graphs: { old: graph } }), (err) => {
    assert.equal(err.code, "invalid_input");
    assert.match(err.message, new RegExp(`@langchain/langgraph ${installed.replace(/\./g, "\\.")} is not supported`));
    assert.match(err.message, /\^1\.1\.5/);
    return true;
  });
});
