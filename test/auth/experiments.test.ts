/**
 * Experiments and datasets are per tenant: each authenticated user's uploads are theirs alone
 * (tenant = uuid5(identity, USER_TENANT_NAMESPACE)), in process and over HTTP alike. Without auth
 * everything is the owner's (LOCAL_TENANT_ID).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GraphdockError, type ErrorCode } from "../../src/errors.js";
import { createFetchHandler, type FetchHandler } from "../../src/http/index.js";
import { memoryStore } from "../../src/persistence/memory.js";
import type { DocCollection, Store } from "../../src/persistence/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { LOCAL_TENANT_ID, userTenantId, type UploadApi, type UploadExperimentRequest } from "../../src/upload/index.js";
import { call } from "../http/helpers.js";
import { request, row, rowId } from "../upload/helpers.js";
import { matrixAuth } from "./isolation.js";

const STATUS: Record<ErrorCode, number> = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403, unavailable: 503 };
const COLLECTIONS: DocCollection[] = ["datasets", "examples", "experiments", "experiment_runs", "feedback"];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The HTTP status a call fails with (an `GraphdockError` in process, a response over HTTP). */
async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GraphdockError) return STATUS[err.code];
    const status = (err as { status?: number }).status;
    if (typeof status === "number") return status;
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** The experiment endpoints as an `UploadApi`: non-2xx answers throw an error with `status`. */
function httpUploadApi(handler: FetchHandler, headers: Record<string, string>): UploadApi {
  const send = async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await call(handler, method, `/api/v1${path}`, body, headers);
    const payload = await res.json();
    if (!res.ok) throw Object.assign(new Error(String(payload.detail)), { status: res.status, detail: payload.detail });
    return payload as T;
  };
  return {
    experiments: {
      upload: (body) => send("POST", "/datasets/upload-experiment", body),
      get: (id) => send("GET", `/experiments/${id}`),
      list: (options) => send("GET", `/experiments${options?.datasetId ? `?dataset_id=${options.datasetId}` : ""}`),
      runs: (id) => send("GET", `/experiments/${id}/runs`),
      compare: (ids, options) =>
        send("GET", `/experiments/compare?${ids.map((id) => `id=${id}`).join("&")}${options?.baseline ? `&baseline=${options.baseline}` : ""}`),
    },
    datasets: {
      get: (id) => send("GET", `/datasets/${id}`),
      list: () => send("GET", "/datasets"),
      examples: (id) => send("GET", `/datasets/${id}/examples`),
    },
  };
}

interface Target {
  store: Store;
  /** The caller presenting `headers` (in process: `runtime.client({ headers })`, may reject). */
  as(headers: Record<string, string>): Promise<UploadApi>;
  runtime: Runtime;
}

const TRANSPORTS: Array<[string, (runtime: Runtime) => Target["as"]]> = [
  ["in process", (runtime) => (headers) => runtime.client({ headers })],
  [
    "over HTTP (with the x-api-key guard too)",
    (runtime) => {
      const handler = createFetchHandler(runtime, { apiKey: "k" });
      return async (headers) => httpUploadApi(handler, { "x-api-key": "k", ...headers });
    },
  ],
];

/** Each user's upload: the same dataset name, experiment name and row ids, different content. */
const uploadOf = (who: string, overrides: Partial<UploadExperimentRequest> = {}) =>
  request({
    experiment_name: "run-1",
    dataset_name: "qa",
    results: [1, 2].map((n) => ({ ...row(n, n), inputs: { q: `${who} secret ${n}` } })),
    summary_experiment_scores: [{ key: "f1", score: 0.5 }],
    ...overrides,
  });

for (const [transport, bindAs] of TRANSPORTS) {
  describe(`experiments are per tenant: ${transport}`, () => {
    let target: Target;
    let alice: UploadApi;
    let bob: UploadApi;
    let a: Awaited<ReturnType<UploadApi["experiments"]["upload"]>>;
    let b: Awaited<ReturnType<UploadApi["experiments"]["upload"]>>;
    let bobPrivate: typeof b;

    beforeAll(async () => {
      const store = memoryStore();
      const runtime = await createRuntime({ graphs: {}, auth: matrixAuth(), store });
      target = { store, runtime, as: bindAs(runtime) };
      alice = await target.as(bearer("alice-token"));
      bob = await target.as(bearer("bob-token"));
      a = await alice.experiments.upload(uploadOf("alice"));
      b = await bob.experiments.upload(uploadOf("bob"));
      bobPrivate = await bob.experiments.upload(uploadOf("bob", { experiment_name: "run-2", dataset_name: "bob-private", results: [row(3, 1)] }));
    });
    afterAll(() => target?.runtime.close());

    it("gives two users uploading to the same dataset name two datasets, each counted on its own", () => {
      expect(a.dataset.id).not.toBe(b.dataset.id);
      expect([a.dataset.name, b.dataset.name]).toEqual(["qa", "qa"]);
      expect([a.dataset.tenant_id, b.dataset.tenant_id]).toEqual([userTenantId("alice"), userTenantId("bob")]);
      expect([a.experiment.tenant_id, b.experiment.tenant_id]).toEqual([userTenantId("alice"), userTenantId("bob")]);
      // Neither saw the other's examples or experiments: both are the first run of a fresh dataset.
      expect([a.dataset.example_count, b.dataset.example_count]).toEqual([2, 2]);
      expect([a.experiment.test_run_number, b.experiment.test_run_number]).toEqual([1, 1]);
    });

    it("stamps every record an upload writes with the uploader's tenant", async () => {
      const tenants = new Set<string>();
      for (const collection of COLLECTIONS) {
        for (const { doc } of await target.store.listDocs<{ tenant_id: string }>(collection)) tenants.add(doc.tenant_id);
      }
      expect([...tenants].sort()).toEqual([userTenantId("alice"), userTenantId("bob")].sort());
      const runs = await alice.experiments.runs(a.experiment.id);
      expect(runs.map((r) => r.tenant_id)).toEqual([userTenantId("alice"), userTenantId("alice")]);
    });

    it("lists only the caller's datasets, experiments, examples and runs", async () => {
      expect((await alice.datasets.list()).map((d) => d.id)).toEqual([a.dataset.id]);
      expect((await bob.datasets.list()).map((d) => d.id)).toEqual([b.dataset.id, bobPrivate.dataset.id]);
      expect((await alice.experiments.list()).map((e) => e.id)).toEqual([a.experiment.id]);
      expect((await bob.experiments.list()).map((e) => e.id)).toEqual([b.experiment.id, bobPrivate.experiment.id]);
      // The same row ids are two examples, each with its own inputs.
      const mine = await alice.datasets.examples(a.dataset.id);
      expect(mine.map((e) => [e.id, e.inputs])).toEqual([
        [rowId(1), { q: "alice secret 1" }],
        [rowId(2), { q: "alice secret 2" }],
      ]);
      expect((await bob.datasets.examples(b.dataset.id)).map((e) => e.inputs.q)).toEqual(["bob secret 1", "bob secret 2"]);
      expect((await alice.experiments.runs(a.experiment.id)).map((r) => r.inputs.q)).toEqual(["alice secret 1", "alice secret 2"]);
    });

    it("answers 404 for every read of another user's records", async () => {
      for (const [reader, owner] of [
        [alice, b],
        [bob, a],
      ] as const) {
        expect(await statusOf(reader.datasets.get(owner.dataset.id))).toBe(404);
        expect(await statusOf(reader.datasets.examples(owner.dataset.id))).toBe(404);
        expect(await statusOf(reader.experiments.get(owner.experiment.id))).toBe(404);
        expect(await statusOf(reader.experiments.runs(owner.experiment.id))).toBe(404);
        expect(await statusOf(reader.experiments.list({ datasetId: owner.dataset.id }))).toBe(404);
      }
      expect(await statusOf(alice.experiments.compare([a.experiment.id, b.experiment.id]))).toBe(404);
      expect(await statusOf(alice.experiments.compare([b.experiment.id, bobPrivate.experiment.id]))).toBe(404);
      // The owner still reads their own.
      expect((await bob.experiments.get(b.experiment.id)).name).toBe("run-1");
    });

    it("refuses another tenant's dataset id with 409, revealing nothing and writing nothing", async () => {
      const before = JSON.stringify(await Promise.all(COLLECTIONS.map((c) => target.store.listDocs(c))));
      let detail = "";
      const attempt = alice.experiments.upload(uploadOf("alice", { experiment_name: "steal", dataset_name: undefined, dataset_id: bobPrivate.dataset.id }));
      const status = await statusOf(
        attempt.catch((err: Error) => {
          detail = err.message;
          throw err;
        }),
      );
      expect(status).toBe(409);
      expect(detail).not.toMatch(/bob-private|run-2/);
      expect(JSON.stringify(await Promise.all(COLLECTIONS.map((c) => target.store.listDocs(c))))).toBe(before);
    });

    it("keys dataset names, experiment names and row ids per tenant", async () => {
      // Bob's "bob-private" is not Alice's: she gets a new dataset of that name, with row 3 too.
      const hers = await alice.experiments.upload(uploadOf("alice", { experiment_name: "run-2", dataset_name: "bob-private", results: [row(3, 1)] }));
      expect(hers.dataset.id).not.toBe(bobPrivate.dataset.id);
      expect(hers.experiment.test_run_number).toBe(1);
      // Inside a tenant a row id still belongs to one dataset (D15).
      expect(await statusOf(alice.experiments.upload(uploadOf("alice", { experiment_name: "run-3", dataset_name: "qa", results: [row(3, 1)] })))).toBe(409);
      expect((await bob.datasets.get(bobPrivate.dataset.id)).session_count).toBe(1);
    });

    it("answers 401 for a bad credential and for no credential", async () => {
      for (const headers of [bearer("forged"), {}]) {
        expect(await statusOf(target.as(headers).then((api) => api.datasets.list()))).toBe(401);
        expect(await statusOf(target.as(headers).then((api) => api.experiments.upload(uploadOf("mallory", { experiment_name: "x" }))))).toBe(401);
      }
    });
  });
}

describe("experiments of the runtime itself", () => {
  it("authenticate with no headers when auth is configured, so the handler decides (D13)", async () => {
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: {}, auth: matrixAuth(), store });
    try {
      expect(await statusOf(runtime.experiments.upload(uploadOf("anyone")))).toBe(401);
      expect(await statusOf(runtime.datasets.list())).toBe(401);
      expect(await store.listDocs("datasets")).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it("are the owner's without auth: every caller shares the local tenant", async () => {
    const runtime = await createRuntime({ graphs: {} });
    try {
      const { dataset, experiment } = await runtime.experiments.upload(uploadOf("owner"));
      expect([dataset.tenant_id, experiment.tenant_id]).toEqual([LOCAL_TENANT_ID, LOCAL_TENANT_ID]);
      const other = await runtime.client({ headers: bearer("alice-token") });
      expect((await other.datasets.list()).map((d) => d.id)).toEqual([dataset.id]);
      expect((await other.experiments.get(experiment.id)).id).toBe(experiment.id);
    } finally {
      await runtime.close();
    }
  });
});
