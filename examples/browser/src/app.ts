/**
 * The page's runtime: agentdock running in this tab on IndexedDB, with the offline agent of the
 * Node example. Every tab of this origin opens the same database.
 */
import { createFetchHandler, createRuntime, indexedDbStore } from "./lib";
import { agent, echo } from "../../node/agent";

/** The IndexedDB database holding every assistant, thread, checkpoint, run and experiment. */
export const DATABASE = "agentdock-example";

export const runtime = await createRuntime({
  graphs: { agent, echo },
  store: indexedDbStore(DATABASE),
});

/** The agent-server HTTP API served in the page: a fetch handler, no network involved. */
export const handler = createFetchHandler(runtime);

export type Runtime = typeof runtime;

const ASSISTANT_KEY = "agentdock-example:assistant";

/** The assistant the chat runs: a graph id (its default assistant) or an assistant id. */
export function currentAssistant(): string {
  return localStorage.getItem(ASSISTANT_KEY) ?? "agent";
}

export function setCurrentAssistant(id: string): void {
  localStorage.setItem(ASSISTANT_KEY, id);
}
