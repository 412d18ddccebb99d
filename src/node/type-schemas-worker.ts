/**
 * The worker thread that reads graphs' schemas from their TypeScript types (type-schemas.ts):
 * type checking a graph's imports takes seconds of CPU, which must not stop the server's event
 * loop. Built as its own file (dist/type-schemas-worker.js), started by type-schemas-thread.ts.
 */
import { parentPort } from "node:worker_threads";
import { readTypeSchemas, type GraphSource } from "./type-schemas.js";

parentPort?.once("message", (graphs: GraphSource[]) => {
  readTypeSchemas(graphs).then(
    (schemas) => parentPort?.postMessage({ ok: [...schemas] }),
    (err: unknown) => parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
});
