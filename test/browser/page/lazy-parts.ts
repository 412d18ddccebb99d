/**
 * The page of lazy-parts.test.ts: a runtime on IndexedDB with a graph declaring a zod input
 * schema, exposed as `window.lazyParts` for the Node test to call getSchemas and create crons.
 */
import * as z from "zod/mini";
import { createRuntime, END, GraphdockError, START, StateGraph } from "../../../src/index";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index";

const graph = new StateGraph({ topic: { default: () => "" }, answer: { default: () => "" } }, { input: z.object({ topic: z.string() }) })
  .addNode("respond", (state) => ({ answer: `about ${state.topic}` }))
  .addEdge(START, "respond")
  .addEdge("respond", END)
  .compile();
const runtime = await createRuntime({ graphs: { agent: graph }, store: indexedDbStore(`lazy-parts-${Date.now()}`) });

const lazyParts = {
  inputSchema: async () => (await runtime.assistants.getSchemas("agent")).input_schema,
  /** Creates a cron; answers its next run, or the error's code and message. */
  createCron: async (schedule: string, timezone: string) => {
    try {
      const cron = await runtime.crons.create("agent", { schedule, timezone, input: { topic: "tick" } });
      return { next: cron.next_run_date };
    } catch (err) {
      return { code: err instanceof GraphdockError ? err.code : "not a GraphdockError", message: String(err) };
    }
  },
  cronCount: () => runtime.crons.count(),
};
(window as unknown as { lazyParts: typeof lazyParts }).lazyParts = lazyParts;
