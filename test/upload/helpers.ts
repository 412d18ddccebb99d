import { createUploadApi, memoryStore, sequentialIds, type Store, type UploadExperimentRequest } from "../../src/index.js";
import type { DocCollection } from "../../src/persistence/types.js";

export const NOW = Date.parse("2026-03-01T12:00:00Z");

/** An upload API on a fresh memory store with sequential ids and a frozen clock. */
export function setup(store: Store = memoryStore()) {
  const ids = sequentialIds();
  const api = createUploadApi({ store, ids, clock: () => NOW });
  return { store, api, ...api };
}

/** The n-th id of `sequentialIds()` (1-based). */
export const seqId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

/** A row id that reads as its number. */
export const rowId = (n: number) => `11111111-1111-4111-8111-${n.toString(16).padStart(12, "0")}`;

const COLLECTIONS: DocCollection[] = ["datasets", "examples", "experiments", "experiment_runs", "feedback"];

/** Everything the upload collections hold, as JSON (to check that a failed upload wrote nothing). */
export async function snapshot(store: Store): Promise<string> {
  const all: Record<string, unknown> = {};
  for (const c of COLLECTIONS) all[c] = await store.listDocs(c);
  return JSON.stringify(all);
}

/** A row between 10:00:00Z and 10:00:<latency>Z on 2026-01-01. */
export function row(n: number, latencySeconds: number, extra: Record<string, unknown> = {}) {
  return {
    row_id: rowId(n),
    inputs: { q: `question ${n}` },
    expected_outputs: { a: `answer ${n}` },
    actual_outputs: { a: `output ${n}` },
    start_time: "2026-01-01T10:00:00Z",
    end_time: new Date(Date.parse("2026-01-01T10:00:00Z") + latencySeconds * 1000).toISOString(),
    ...extra,
  };
}

/** A minimal valid request with the given rows (window 2026-01-01 10:00Z to 11:00Z). */
export function request(overrides: Partial<UploadExperimentRequest> & Record<string, unknown> = {}): UploadExperimentRequest {
  return {
    experiment_name: "exp",
    experiment_start_time: "2026-01-01T10:00:00Z",
    experiment_end_time: "2026-01-01T11:00:00Z",
    dataset_name: "ds",
    results: [row(1, 1)],
    ...overrides,
  } as UploadExperimentRequest;
}
