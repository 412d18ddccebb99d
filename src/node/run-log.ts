/**
 * Log lines of a server's runs (D92): one when a run starts and one when it ends (info), with the
 * run, thread and assistant ids, its duration and trace id; a run that failed at error, with its
 * error and stack. Only the runs this process executes (the lifecycle events of its runtime).
 */
import { performance } from "node:perf_hooks";
import type { DiagnosticsLogger } from "../diagnostics.js";
import type { Runtime } from "../runtime/index.js";

/** Logs `runtime`'s runs to `log`; returns the function that stops it. */
export function logRuns(runtime: Pick<Runtime, "subscribe">, log: DiagnosticsLogger): () => void {
  const started = new Map<string, number>();
  const offStarted = runtime.subscribe("run.started", ({ run, trace_id }) => {
    started.set(run.run_id, performance.now());
    log.info({ run_id: run.run_id, thread_id: run.thread_id, assistant_id: run.assistant_id, ...(trace_id ? { trace_id } : {}) }, "graphdock: run started");
  });
  const offFinished = runtime.subscribe("run.finished", ({ run, error, trace_id }) => {
    const since = started.get(run.run_id);
    started.delete(run.run_id);
    const fields = {
      run_id: run.run_id,
      thread_id: run.thread_id,
      assistant_id: run.assistant_id,
      status: run.status,
      ...(since !== undefined ? { duration_ms: Math.round((performance.now() - since) * 10) / 10 } : {}),
      ...(trace_id ? { trace_id } : {}),
    };
    if (error) log.error({ ...fields, err: { type: error.error, message: error.message, ...(error.stack ? { stack: error.stack } : {}) } }, "graphdock: run failed");
    else log.info(fields, "graphdock: run ended");
  });
  return () => {
    offStarted();
    offFinished();
    started.clear();
  };
}
