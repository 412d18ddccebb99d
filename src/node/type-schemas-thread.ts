/**
 * Reads graphs' schemas from their TypeScript types in a worker thread (type-schemas-worker.ts),
 * once per set of graphs: the server stays responsive while TypeScript checks their imports.
 */
import { Worker } from "node:worker_threads";
import type { GraphSource, GraphTypeSchemas } from "./type-schemas.js";

/**
 * The worker's file: dist/type-schemas-worker.js next to the built module; the TypeScript source
 * (loaded through tsx) when graphdock runs from its sources.
 */
function workerFile(): { url: URL; execArgv?: string[] } {
  const here = import.meta.url;
  if (/\.ts$/.test(new URL(here).pathname)) return { url: new URL("./type-schemas-worker.ts", here), execArgv: ["--import", "tsx"] };
  return { url: new URL("./type-schemas-worker.js", here) };
}

/** The schemas, or an empty map when they cannot be read (no typescript, a worker that failed). */
export function readTypeSchemasInWorker(graphs: readonly GraphSource[]): Promise<GraphTypeSchemas> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      const { url, execArgv } = workerFile();
      worker = new Worker(url, execArgv ? { execArgv } : {});
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
