/**
 * Runs created by other runtimes on the same store (another `createRuntime` over one store
 * object, another tab on one IndexedDB database, another process on PostgreSQL): admission
 * commits a `notify` on RUN_CREATED_TOPIC with the payload `<thread_id> <run_id> <owner>`, and
 * every other runtime on the store reads the run and reports it to its listeners as a
 * `run.created.external` lifecycle event (its own runs are `run.created`). The run is read right
 * after the notice, before the runtime that admitted it has usually opened its event log, so a
 * listener that joins the run's events at once mostly sees them from the first.
 */
import type { Core } from "./core.js";
import { publicRun } from "./outcome.js";

/** The store topic admission notifies for every run it creates. */
export const RUN_CREATED_TOPIC = "run.created";

/** The notify op of a run's admission commit. */
export const runCreatedNotice = (core: Core, threadId: string, runId: string) =>
  ({ op: "notify" as const, topic: RUN_CREATED_TOPIC, payload: `${threadId} ${runId} ${core.owner}` });

/** Emits `run.created.external` for runs other runtimes create; returns the unsubscribe function. */
export function listenExternalRuns(core: Core): () => void {
  return core.store.subscribe(RUN_CREATED_TOPIC, (payload) => {
    // Nobody listening (no v2 session, no app listener): no read of the run per notice (nor a split of it).
    if (core.closed || !core.listening) return;
    const [threadId, runId, owner] = (payload ?? "").split(" ");
    if (!threadId || !runId || owner === core.owner) return;
    core.store.getRun(runId).then(
      (run) => {
        if (run && !core.closed) core.emit({ type: "run.created.external", run: publicRun(run) });
      },
      () => undefined, // unreadable now (the store closing): nothing to report
    );
  });
}
