/**
 * The page's runtime: graphdock running in this tab on IndexedDB, with the offline agent of the
 * Node example, once on graphdock's engine (`agent`) and once built with LangGraph.js
 * (`langgraph`, passed to createRuntime as is). Every tab of this origin opens the same database.
 */
import { createFetchHandler, createRuntime, indexedDbStore } from "./lib";
// "graphdock/langgraph" (in an app: `import "graphdock/langgraph"`): importing it registers the
// adapter, so createRuntime hosts the LangGraph.js graph of ./langgraph-agent.ts as is (a browser
// bundle cannot load the adapter by name). vite.config.ts keeps this import in the bundle.
import "../../../src/langgraph/index";
import { agent, echo } from "../../node/agent";
import { LANGGRAPH_AGENT, langGraphAgent } from "./langgraph-agent";

/** The IndexedDB database holding every assistant, thread, checkpoint, run and experiment. */
export const DATABASE = "graphdock-example";

export const runtime = await createRuntime({
  graphs: { agent, echo, [LANGGRAPH_AGENT]: langGraphAgent },
  store: indexedDbStore(DATABASE),
});

/** The agent-server HTTP API served in the page: a fetch handler, no network involved. */
export const handler = createFetchHandler(runtime);

export type Runtime = typeof runtime;

const ASSISTANT_KEY = "graphdock-example:assistant";

/** The assistant the chat runs: a graph id (its default assistant) or an assistant id. */
export function currentAssistant(): string {
  return localStorage.getItem(ASSISTANT_KEY) ?? "agent";
}

export function setCurrentAssistant(id: string): void {
  localStorage.setItem(ASSISTANT_KEY, id);
}
