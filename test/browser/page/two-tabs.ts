/**
 * One tab of the two-tab test: a runtime on the shared IndexedDB database `two-tabs`, exposed as
 * `window.tab` for the Node test to drive with `page.evaluate`.
 */
import { createRuntime } from "../../../src/index";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index";
import { echo } from "../../../examples/node/agent";

const runtime = await createRuntime({ graphs: { echo }, store: indexedDbStore("two-tabs") });

const tab = {
  runtime,
  /** Runs the echo graph once on the thread with a user message. */
  say: (threadId: string, content: string) =>
    runtime.runs.wait(threadId, "echo", { input: { messages: [{ role: "user", content }] } }),
  /** What this tab sees of a thread: its values, latest checkpoint and the history's chain. */
  async view(threadId: string) {
    const state = await runtime.threads.getState(threadId);
    const history = await runtime.threads.getHistory(threadId, { limit: 1000 });
    return {
      values: state.values,
      checkpoint_id: state.checkpoint_id,
      chain: history.map((s) => [s.checkpoint.checkpoint_id, s.parent_checkpoint?.checkpoint_id ?? null]),
    };
  },
};

export type Tab = typeof tab;
(window as unknown as { tab: Tab }).tab = tab;
