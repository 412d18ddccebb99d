/**
 * Reads graphs' schemas from their TypeScript types in a worker thread (type-schemas-worker.ts),
 * once per set of graphs: the server stays responsive while TypeScript checks their imports.
 */
import { Worker } from "node:worker_threads";
import type { GraphSource, GraphTypeSchemas } from "./type-schemas.js";

/**
 * The worker: dist/type-schemas-worker.js next to the built module; when graphdock runs from its
 * TypeScript sources, the source file, imported once tsx's loader is registered in the thread.
 */
function startWorker(): Worker {
  const here = import.meta.url;
  if (!/\.ts$/.test(new URL(here).pathname)) return new Worker(new URL("./type-schemas-worker.js", here));
  const source = new URL("./type-schemas-worker.ts", here).href;
  return new Worker(`import("tsx/esm/api").then((tsx) => tsx.register()).then(() => import(${JSON.stringify(source)}))`, { eval: true });
}

/** The schemas, or an empty map when they cannot be read (no typescript, a worker that failed). */
export function readTypeSchemasInWorker(graphs: readonly GraphSource[]): Promise<GraphTypeSchemas> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = startWorker();
    } catch {
      return resolve(new Map());
    }
    const done = (schemas: GraphTypeSchemas) => {
      resolve(schemas);
      void worker.terminate();
    };
    worker.once("message", (m: { ok?: Array<[string, GraphTypeSchemas extends Map<string, infer V> ? V : never]> }) => done(new Map(m.ok ?? [])));
    worker.once("error", () => done(new Map()));
    worker.once("exit", () => done(new Map()));
    worker.postMessage(graphs);
  });
}
