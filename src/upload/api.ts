/**
 * Experiment upload and reading: `createUploadApi` returns the `experiments` and
 * `datasets` namespaces the runtime mounts. Everything is plain JSON in and out (D1, D2), so the
 * HTTP adapter serves it unchanged. One upload is one atomic `store.commit` (D15).
 */
import * as z from "zod/mini";
import { conflict, invalidInput, notFound } from "../errors.js";
import { uuid5, type Clock, type Ids } from "../ids.js";
import type { DocCollection, Store, WriteOp } from "../persistence/types.js";
import { compareExperiments } from "./compare.js";
import { parseUploadRequest, zodMessages, type ParsedFeedback, type UploadExperimentRequest } from "./schema.js";
import { feedbackStats, quantile } from "./stats.js";
import {
  LOCAL_TENANT_ID,
  type CompareOptions,
  type Comparison,
  type DatasetRecord,
  type ExampleRecord,
  type ExperimentRecord,
  type ExperimentRunRecord,
  type ExperimentRunWithFeedback,
  type FeedbackRecord,
  type UploadExperimentResult,
} from "./types.js";

export interface UploadDeps {
  store: Store;
  ids: Ids;
  clock: Clock;
}

/** `runtime.experiments`: one tenant's experiments (another tenant's are never found nor listed). */
export interface ExperimentsApi {
  /**
   * Uploads an experiment run elsewhere: creates or reuses the dataset (grouped by id or name,
   * D16), upserts one example per row (keyed by `row_id`), stores one run per row with its
   * feedback and the experiment with its statistics (D14). Throws `invalid_input` for a malformed
   * body, rows outside the experiment's window or neither dataset id nor name; `conflict` for a
   * dataset not created by upload or of another tenant, an experiment name already used, or a
   * `row_id` that belongs to another dataset (D15). A failed upload writes nothing.
   */
  upload(request: UploadExperimentRequest): Promise<UploadExperimentResult>;
  /** An experiment with its statistics; `not_found` if unknown. */
  get(experimentId: string): Promise<ExperimentRecord>;
  /** Experiments in upload order, of one dataset when `datasetId` is given. */
  list(options?: { datasetId?: string }): Promise<ExperimentRecord[]>;
  /** The experiment's runs in row order, each with its feedback. */
  runs(experimentId: string): Promise<ExperimentRunWithFeedback[]>;
  /**
   * Compares experiments of one dataset example by example against a baseline (default the
   * first id): aggregates and deltas per feedback key with bootstrap intervals, improved /
   * regressed / unchanged / missing counts, label transitions, latency deltas.
   */
  compare(experimentIds: string[], options?: CompareOptions): Promise<Comparison>;
}

/** `runtime.datasets`: one tenant's datasets. */
export interface DatasetsApi {
  /** A dataset with its counters; `not_found` if unknown. */
  get(datasetId: string): Promise<DatasetRecord>;
  /** Every dataset, in creation order. */
  list(): Promise<DatasetRecord[]>;
  /** A dataset's examples, in the order they were first uploaded. */
  examples(datasetId: string): Promise<ExampleRecord[]>;
}

/** The two namespaces, as one tenant sees them. */
export interface UploadApi {
  experiments: ExperimentsApi;
  datasets: DatasetsApi;
}

/**
 * A tenant id, or how to find the caller's on each call (a function may authenticate and throw
 * `unauthenticated`; it runs before anything is read or parsed).
 */
export type TenantSource = string | (() => string | Promise<string>);

/** What `createUploadApi` returns: the local tenant's namespaces, and any other tenant's. */
export interface UploadService extends UploadApi {
  /**
   * The namespaces of one tenant: they write its `tenant_id` on every record and see only its
   * records (another tenant's are not found and never listed). Every tenant shares one upload
   * queue, so counters stay exact.
   */
  forTenant(tenant: TenantSource): UploadApi;
}

/**
 * Namespace of user tenants: an authenticated user's tenant is
 * `uuid5(user.identity, USER_TENANT_NAMESPACE)` (see `userTenantId`).
 */
export const USER_TENANT_NAMESPACE = "ecd26e35-77bb-45b4-9a8e-2d6d4c064f1b";

/** The tenant of an authenticated user: a stable UUID derived from `identity`. */
export const userTenantId = (identity: string): string => uuid5(identity, USER_TENANT_NAMESPACE);

/** Records written before tenants (examples, runs, feedback had no `tenant_id`) are the local tenant's. */
const tenantOfDoc = (doc: { tenant_id?: string }) => doc.tenant_id ?? LOCAL_TENANT_ID;

/**
 * Store key of an example: row ids are per tenant. The local tenant keeps the bare `row_id` (as
 * before tenants, so older data is found); other tenants prefix it (a row id is a UUID, so the
 * two never collide).
 */
const exampleKey = (tenant: string, rowId: string) => (tenant === LOCAL_TENANT_ID ? rowId : `${tenant}:${rowId}`);

const idArg = z.string().check(z.minLength(1));
const listArgs = z.optional(z.object({ datasetId: z.optional(idArg) }));
const compareArgs = z.tuple([
  z.array(idArg).check(z.minLength(2, "compare needs at least two experiment ids")),
  z.optional(
    z.object({
      baseline: z.optional(idArg),
      lowerIsBetter: z.optional(z.array(z.string())),
      confidence: z.optional(z.number().check(z.gt(0), z.lt(1))),
      resamples: z.optional(z.int().check(z.gte(1), z.lte(100_000))),
      seed: z.optional(z.int()),
    }),
  ),
]);

function parseArgs<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value, zodMessages);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  throw invalidInput(`Invalid ${what}: ${problems.map((p) => `${p.path || "input"}: ${p.message}`).join("; ")}`, problems);
}

const iso = (ms: number) => new Date(ms).toISOString();
const laterOf = (a: string | null, b: string) => (a !== null && a > b ? a : b);

/**
 * The upload namespaces on any store. Used directly, they are the local tenant's
 * (`LOCAL_TENANT_ID`); `forTenant` gives another tenant's. The runtime binds each caller's.
 */
export function createUploadApi({ store, ids, clock }: UploadDeps): UploadService {
  // Uploads read counters then write them: run one at a time (across tabs via the store's lock).
  let queue: Promise<unknown> = Promise.resolve();
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = () => (store.withLock ? store.withLock("graphdock:upload", fn) : fn());
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  }

  type Owned = { tenant_id: string };
  /** The tenant's record (legacy ones get their `tenant_id`), or undefined when absent or another's. */
  const own = <T extends Owned>(doc: T | undefined, tenant: string): T | undefined =>
    doc && tenantOfDoc(doc) === tenant ? (doc.tenant_id ? doc : { ...doc, tenant_id: tenant }) : undefined;

  /** The tenant's documents of a collection (of one parent when given), in insertion order. */
  async function docs<T extends Owned>(tenant: string, collection: DocCollection, parent?: string): Promise<T[]> {
    const out: T[] = [];
    for (const { doc } of await store.listDocs<T>(collection, parent)) {
      const mine = own(doc, tenant);
      if (mine) out.push(mine);
    }
    return out;
  }

  async function dataset(tenant: string, datasetId: string): Promise<DatasetRecord> {
    const found = await store.getDoc<DatasetRecord>("datasets", parseArgs(idArg, datasetId, "dataset id"));
    const mine = own(found?.doc, tenant);
    if (!mine) throw notFound(`Dataset ${datasetId} not found; datasets.list() shows the uploaded ones`);
    return mine;
  }

  async function experiment(tenant: string, experimentId: string): Promise<ExperimentRecord> {
    const found = await store.getDoc<ExperimentRecord>("experiments", parseArgs(idArg, experimentId, "experiment id"));
    const mine = own(found?.doc, tenant);
    if (!mine) throw notFound(`Experiment ${experimentId} not found; experiments.list() shows the uploaded ones`);
    return mine;
  }

  /** The dataset a request names (D15, D16): found by id and/or name, or undefined when new. */
  async function targetDataset(tenant: string, id: string | null | undefined, name: string | null | undefined) {
    const found = id ? (await store.getDoc<DatasetRecord>("datasets", id))?.doc : undefined;
    // Ids are global, names per tenant: another tenant's id is taken, and nothing more is said.
    if (found && tenantOfDoc(found) !== tenant) throw conflict(`dataset_id ${id} is not available; choose another dataset_id`);
    const byId = own(found, tenant);
    const byName = name ? (await docs<DatasetRecord>(tenant, "datasets")).find((d) => d.name === name) : undefined;
    if (byId && name && byId.name !== name) {
      throw conflict(
        `dataset_id ${id} is the dataset named "${byId.name}", not "${name}"; send matching values or only one of them`,
      );
    }
    if (byName && id && byName.id !== id) {
      throw conflict(`dataset_name "${name}" is the dataset ${byName.id}, not ${id}; send matching values or only one of them`);
    }
    const existing = byId ?? byName;
    if (existing && !existing.externally_managed) {
      throw conflict(
        `Dataset ${existing.id} ("${existing.name}") was not created by experiment upload; ` +
          "experiments can be uploaded only to datasets created by upload: choose another dataset_id or dataset_name",
      );
    }
    return existing;
  }

  async function upload(tenant: string, body: UploadExperimentRequest): Promise<UploadExperimentResult> {
    const req = parseUploadRequest(body);
    return exclusive(async () => {
      const now = iso(clock());
      const existing = await targetDataset(tenant, req.dataset_id, req.dataset_name);
      if ((await docs<ExperimentRecord>(tenant, "experiments")).some((e) => e.name === req.experiment_name)) {
        throw conflict(`An experiment named "${req.experiment_name}" already exists; choose another experiment_name`);
      }
      const datasetId = existing?.id ?? req.dataset_id ?? ids.uuid();
      const previous = await Promise.all(req.results.map((r) => store.getDoc<ExampleRecord>("examples", exampleKey(tenant, r.row_id))));
      const foreign = req.results.filter((_, i) => previous[i] && previous[i]!.parent !== datasetId).map((r) => r.row_id);
      if (foreign.length > 0) {
        throw conflict(
          `${foreign.length === 1 ? "row_id" : "row_ids"} ${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ` (and ${foreign.length - 3} more)` : ""} ` +
            `${foreign.length === 1 ? "is already an example" : "are already examples"} of another dataset; a row_id identifies one example of one dataset`,
        );
      }

      const experimentId = ids.uuid();
      const ops: WriteOp[] = [];
      const feedbackOf = (fb: ParsedFeedback, runId: string | null): FeedbackRecord => ({
        id: ids.uuid(),
        key: fb.key,
        score: typeof fb.score === "boolean" ? Number(fb.score) : (fb.score ?? null),
        value: fb.value ?? null,
        comment: fb.comment ?? null,
        correction: fb.correction ?? null,
        feedback_source: fb.feedback_source ?? null,
        feedback_config: fb.feedback_config
          ? {
              type: fb.feedback_config.type,
              ...(fb.feedback_config.min != null && { min: fb.feedback_config.min }),
              ...(fb.feedback_config.max != null && { max: fb.feedback_config.max }),
              ...(fb.feedback_config.categories && {
                categories: fb.feedback_config.categories.map((c) => (c.label == null ? { value: c.value } : { value: c.value, label: c.label })),
              }),
            }
          : null,
        run_id: runId,
        session_id: experimentId,
        tenant_id: tenant,
        created_at: fb.created_at == null ? now : iso(fb.created_at),
        modified_at: fb.modified_at == null ? now : iso(fb.modified_at),
      });

      const runFeedback: FeedbackRecord[] = [];
      const latencies: number[] = [];
      let errors = 0;
      let lastRunStart: string | null = null;
      let newExamples = 0;
      req.results.forEach((row, i) => {
        const before = previous[i]?.doc;
        if (!before) newExamples++;
        const example: ExampleRecord = {
          id: row.row_id,
          dataset_id: datasetId,
          inputs: row.inputs,
          outputs: row.expected_outputs ?? before?.outputs ?? null,
          created_at: before?.created_at ?? now,
          modified_at: now,
          tenant_id: tenant,
        };
        ops.push({ op: "doc.put", collection: "examples", id: exampleKey(tenant, row.row_id), parent: datasetId, doc: example });

        const runId = ids.uuid();
        const error = row.error ? row.error : null; // "" means no error
        const startTime = iso(row.start_time);
        const run: ExperimentRunRecord = {
          id: runId,
          name: row.run_name ?? req.experiment_name,
          run_type: "chain",
          session_id: experimentId,
          reference_example_id: row.row_id,
          trace_id: runId,
          inputs: row.inputs,
          outputs: row.actual_outputs ?? null,
          error,
          status: error === null ? "success" : "error",
          start_time: startTime,
          end_time: iso(row.end_time),
          latency: (row.end_time - row.start_time) / 1000,
          extra: row.run_metadata ? { metadata: row.run_metadata } : null,
          tenant_id: tenant,
        };
        ops.push({ op: "doc.put", collection: "experiment_runs", id: runId, parent: experimentId, doc: run });
        latencies.push(run.latency);
        if (error !== null) errors++;
        lastRunStart = laterOf(lastRunStart, startTime);
        for (const fb of row.evaluation_scores ?? []) runFeedback.push(feedbackOf(fb, runId));
      });
      const sessionFeedback = (req.summary_experiment_scores ?? []).map((fb) => feedbackOf(fb, null));
      for (const fb of [...runFeedback, ...sessionFeedback]) {
        ops.push({ op: "doc.put", collection: "feedback", id: fb.id, parent: experimentId, doc: fb });
      }

      const sessionCount = existing?.session_count ?? 0;
      latencies.sort((a, b) => a - b);
      const runCount = req.results.length;
      const experiment: ExperimentRecord = {
        id: experimentId,
        name: req.experiment_name,
        description: req.experiment_description ?? null,
        start_time: iso(req.experiment_start_time),
        end_time: iso(req.experiment_end_time),
        extra: req.experiment_metadata ? { metadata: req.experiment_metadata } : null,
        default_dataset_id: null,
        reference_dataset_id: datasetId,
        trace_tier: "longlived",
        tenant_id: tenant,
        run_count: runCount,
        latency_p50: quantile(latencies, 0.5),
        latency_p99: quantile(latencies, 0.99),
        first_token_p50: null,
        first_token_p99: null,
        total_tokens: null,
        prompt_tokens: null,
        completion_tokens: null,
        total_cost: null,
        prompt_cost: null,
        completion_cost: null,
        last_run_start_time: lastRunStart,
        last_run_start_time_live: null,
        feedback_stats: feedbackStats(runFeedback),
        session_feedback_stats: feedbackStats(sessionFeedback),
        run_facets: null,
        error_rate: runCount === 0 ? null : errors / runCount,
        streaming_rate: runCount === 0 ? null : 0,
        test_run_number: sessionCount + 1,
      };
      const dataset: DatasetRecord = {
        id: datasetId,
        name: existing?.name ?? req.dataset_name ?? `dataset-${datasetId}`,
        description: existing?.description ?? req.dataset_description ?? null,
        created_at: existing?.created_at ?? now,
        modified_at: now,
        data_type: "kv",
        inputs_schema_definition: null,
        outputs_schema_definition: null,
        externally_managed: true,
        tenant_id: tenant,
        example_count: (existing?.example_count ?? 0) + newExamples,
        session_count: sessionCount + 1,
        last_session_start_time: laterOf(existing?.last_session_start_time ?? null, experiment.start_time),
      };
      ops.unshift(
        { op: "doc.put", collection: "datasets", id: datasetId, parent: null, doc: dataset },
        { op: "doc.put", collection: "experiments", id: experimentId, parent: datasetId, doc: experiment },
      );
      await store.commit(ops);
      return { experiment, dataset };
    });
  }

  async function runs(tenant: string, experimentId: string): Promise<ExperimentRunWithFeedback[]> {
    await experiment(tenant, experimentId);
    const byRun = new Map<string, FeedbackRecord[]>();
    for (const fb of await docs<FeedbackRecord>(tenant, "feedback", experimentId)) {
      if (fb.run_id === null) continue;
      const list = byRun.get(fb.run_id);
      if (list) list.push(fb);
      else byRun.set(fb.run_id, [fb]);
    }
    return (await docs<ExperimentRunRecord>(tenant, "experiment_runs", experimentId)).map((r) => ({
      ...r,
      feedback: byRun.get(r.id) ?? [],
    }));
  }

  function forTenant(source: TenantSource): UploadApi {
    // Resolved first on every call: an unauthenticated caller learns nothing, not even a 422.
    const tenantOf = async () => (typeof source === "string" ? source : await source());
    return {
      experiments: {
        upload: async (request) => upload(await tenantOf(), request),
        get: async (experimentId) => experiment(await tenantOf(), experimentId),
        async list(options) {
          const tenant = await tenantOf();
          const { datasetId } = parseArgs(listArgs, options, "experiments.list options") ?? {};
          if (datasetId === undefined) return docs<ExperimentRecord>(tenant, "experiments");
          await dataset(tenant, datasetId);
          return docs<ExperimentRecord>(tenant, "experiments", datasetId);
        },
        runs: async (experimentId) => runs(await tenantOf(), experimentId),
        async compare(experimentIds, options) {
          const tenant = await tenantOf();
          const [idList, opts = {}] = parseArgs(compareArgs, [experimentIds, options], "compare arguments");
          if (new Set(idList).size !== idList.length) {
            throw invalidInput(`compare got an experiment id twice (${idList.join(", ")}); list each experiment once`);
          }
          if (opts.baseline !== undefined && !idList.includes(opts.baseline)) {
            throw invalidInput(`Baseline ${opts.baseline} is not one of the compared experiments (${idList.join(", ")})`);
          }
          const records = await Promise.all(idList.map((id) => experiment(tenant, id)));
          const datasetId = records[0]!.reference_dataset_id;
          const other = records.find((e) => e.reference_dataset_id !== datasetId);
          if (other) {
            throw invalidInput(
              `Experiments ${records[0]!.id} and ${other.id} belong to different datasets (${datasetId}, ${other.reference_dataset_id}); ` +
                "compare experiments of one dataset",
            );
          }
          return compareExperiments(
            {
              dataset: await dataset(tenant, datasetId),
              examples: await docs<ExampleRecord>(tenant, "examples", datasetId),
              experiments: await Promise.all(records.map(async (record) => ({ record, runs: await runs(tenant, record.id) }))),
            },
            opts,
          );
        },
      },
      datasets: {
        get: async (datasetId) => dataset(await tenantOf(), datasetId),
        list: async () => docs<DatasetRecord>(await tenantOf(), "datasets"),
        async examples(datasetId) {
          const tenant = await tenantOf();
          await dataset(tenant, datasetId);
          return docs<ExampleRecord>(tenant, "examples", datasetId);
        },
      },
    };
  }

  return { ...forTenant(LOCAL_TENANT_ID), forTenant };
}
