/**
 * Transitional signature of the upload API, so the runtime can mount it while the upload issue
 * fills it in. Replaced by the real implementation of issue 6.
 */
import type { Clock, Ids } from "../ids.js";
import type { Store } from "../persistence/types.js";

export interface UploadDeps {
  store: Store;
  ids: Ids;
  clock: Clock;
}

export interface UploadApi {
  experiments: Record<string, (...args: never[]) => unknown>;
  datasets: Record<string, (...args: never[]) => unknown>;
}

export function createUploadApi(_deps: UploadDeps): UploadApi {
  return { experiments: {}, datasets: {} };
}
