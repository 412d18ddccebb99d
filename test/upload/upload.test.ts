import { describe, expect, it } from "vitest";
import { GraphdockError, LOCAL_TENANT_ID, memoryStore, type FeedbackRecord, type UploadExperimentRequest } from "../../src/index.js";
import { NOW, request, row, rowId, seqId, setup, snapshot } from "./helpers.js";

const nowIso = new Date(NOW).toISOString();

/** Hand-computed fixture: 4 rows of latency 1, 2, 3 and 10 s, one failed, timestamps in several zones. */
const fixture: UploadExperimentRequest = {
  experiment_name: "baseline",
  experiment_description: "first try",
  // naive = UTC; +02:00 13:00 = 11:00Z
  experiment_start_time: "2026-01-01T10:00:00",
  experiment_end_time: "2026-01-01T13:00:00+02:00",
  dataset_name: "qa",
  dataset_description: "questions",
  experiment_metadata: { model: "m1" },
  summary_experiment_scores: [
    { key: "f1", score: 0.8 },
    { key: "quality", value: "high", comment: "looks fine" },
  ],
  results: [
    {
      row_id: rowId(1),
      inputs: { q: "1" },
      expected_outputs: { a: "1" },
      actual_outputs: { a: "1" },
      start_time: "2026-01-01T12:00:00+02:00",
      end_time: "2026-01-01T10:00:01Z",
      evaluation_scores: [
        { key: "correctness", score: 1, feedback_source: { type: "model", metadata: { judge: "x" } } },
        { key: "grade", value: "A" },
        { key: "passed", score: true },
      ],
    },
    {
      row_id: rowId(2),
      inputs: { q: "2" },
      start_time: "2026-01-01T10:00:00",
      end_time: "2026-01-01T05:00:02-05:00",
      evaluation_scores: [
        { key: "correctness", score: 0, created_at: "2026-01-02T00:00:00+01:00" },
        { key: "grade", value: "B" },
        { key: "passed", score: false },
        {
          key: "verdict",
          score: 1,
          feedback_config: { type: "categorical", categories: [{ value: 0, label: "bad" }, { value: 1, label: "good" }] },
        },
      ],
    },
    {
      row_id: rowId(3),
      inputs: { q: "3" },
      start_time: "2026-01-01T10:00:00.000Z",
      end_time: "2026-01-01T10:00:03.000Z",
      run_name: "custom",
      run_metadata: { m: 1 },
      evaluation_scores: [
        { key: "correctness", score: 1 },
        { key: "grade", value: "A" },
      ],
    },
    {
      row_id: rowId(4),
      inputs: { q: "4" },
      start_time: "2026-01-01T10:00:05Z",
      end_time: "2026-01-01T10:00:15Z",
      error: "boom",
    },
  ],
};

const stats = (n: number, avg: number | null, stdev: number | null, values: Record<string, number> = {}) => ({
  n,
  avg,
  stdev: stdev === null ? null : expect.closeTo(stdev, 10),
  errors: 0,
  values,
});

describe("experiments.upload: response (seed response tables, D14)", () => {
  it("returns every field of the experiment and the dataset, statistics computed by hand", async () => {
    const { experiments } = setup();
    const { experiment, dataset } = await experiments.upload(fixture);
    // ids: dataset (generated: only a name was sent) 1, experiment 2, then runs and feedback.
    expect(dataset).toEqual({
      id: seqId(1),
      name: "qa",
      description: "questions",
      created_at: nowIso,
      modified_at: nowIso,
      data_type: "kv",
      inputs_schema_definition: null,
      outputs_schema_definition: null,
      externally_managed: true,
      tenant_id: LOCAL_TENANT_ID,
      example_count: 4,
      session_count: 1,
      last_session_start_time: "2026-01-01T10:00:00.000Z",
    });
    expect(experiment).toEqual({
      id: seqId(2),
      name: "baseline",
      description: "first try",
      start_time: "2026-01-01T10:00:00.000Z",
      end_time: "2026-01-01T11:00:00.000Z",
      extra: { metadata: { model: "m1" } },
      default_dataset_id: null,
      reference_dataset_id: seqId(1),
      trace_tier: "longlived",
      tenant_id: LOCAL_TENANT_ID,
      run_count: 4,
      // latencies 1, 2, 3, 10: p50 at rank 1.5 -> 2.5; p99 at rank 2.97 -> 3 + 0.97 * 7 = 9.79
      latency_p50: 2.5,
      latency_p99: expect.closeTo(9.79, 10),
      first_token_p50: null,
      first_token_p99: null,
      total_tokens: null,
      prompt_tokens: null,
      completion_tokens: null,
      total_cost: null,
      prompt_cost: null,
      completion_cost: null,
      last_run_start_time: "2026-01-01T10:00:05.000Z",
      last_run_start_time_live: null,
      feedback_stats: {
        // 1, 0, 1: mean 2/3, population stdev sqrt(2/9)
        correctness: stats(3, 2 / 3, Math.sqrt(2 / 9)),
        grade: stats(0, null, null, { A: 2, B: 1 }),
        // booleans as 1 / 0
        passed: stats(2, 0.5, 0.5),
        // categorical config: score 1 is labelled "good"
        verdict: stats(1, 1, 0, { good: 1 }),
      },
      session_feedback_stats: {
        f1: stats(1, 0.8, 0),
        quality: stats(0, null, null, { high: 1 }),
      },
      run_facets: null,
      error_rate: 0.25,
      streaming_rate: 0,
      test_run_number: 1,
    });
  });

  it("persists the runs with their feedback, the examples and reads them back", async () => {
    const { store, experiments, datasets } = setup();
    const { experiment, dataset } = await experiments.upload(fixture);
    expect(await experiments.get(experiment.id)).toEqual(experiment);
    expect(await datasets.get(dataset.id)).toEqual(dataset);

    const runs = await experiments.runs(experiment.id);
    expect(runs.map((r) => r.reference_example_id)).toEqual([rowId(1), rowId(2), rowId(3), rowId(4)]);
    expect(runs.map((r) => r.latency)).toEqual([1, 2, 3, 10]);
    const [r1, r2, r3, r4] = runs;
    expect(r1).toMatchObject({
      name: "baseline",
      run_type: "chain",
      session_id: experiment.id,
      inputs: { q: "1" },
      outputs: { a: "1" },
      error: null,
      status: "success",
      start_time: "2026-01-01T10:00:00.000Z",
      end_time: "2026-01-01T10:00:01.000Z",
      extra: null,
    });
    expect(r1!.trace_id).toBe(r1!.id);
    expect(r1!.feedback.map((f) => [f.key, f.score, f.value])).toEqual([
      ["correctness", 1, null],
      ["grade", null, "A"],
      ["passed", 1, null],
    ]);
    expect(r1!.feedback[0]).toMatchObject({
      run_id: r1!.id,
      session_id: experiment.id,
      feedback_source: { type: "model", metadata: { judge: "x" } },
      created_at: nowIso,
      modified_at: nowIso,
    });
    expect(r2!.feedback[0]!.created_at).toBe("2026-01-01T23:00:00.000Z");
    expect(r2!.outputs).toBeNull();
    expect(r3).toMatchObject({ name: "custom", extra: { metadata: { m: 1 } } });
    expect(r4).toMatchObject({ status: "error", error: "boom", feedback: [] });

    expect(await datasets.examples(dataset.id)).toEqual([
      { id: rowId(1), dataset_id: dataset.id, inputs: { q: "1" }, outputs: { a: "1" }, created_at: nowIso, modified_at: nowIso, tenant_id: LOCAL_TENANT_ID },
      { id: rowId(2), dataset_id: dataset.id, inputs: { q: "2" }, outputs: null, created_at: nowIso, modified_at: nowIso, tenant_id: LOCAL_TENANT_ID },
      { id: rowId(3), dataset_id: dataset.id, inputs: { q: "3" }, outputs: null, created_at: nowIso, modified_at: nowIso, tenant_id: LOCAL_TENANT_ID },
      { id: rowId(4), dataset_id: dataset.id, inputs: { q: "4" }, outputs: null, created_at: nowIso, modified_at: nowIso, tenant_id: LOCAL_TENANT_ID },
    ]);
    // Experiment-level feedback is stored without a run, and stays out of runs().
    const stored = await store.listDocs<FeedbackRecord>("feedback", experiment.id);
    expect(stored.filter((f) => f.doc.run_id === null).map((f) => [f.doc.key, f.doc.score, f.doc.value, f.doc.comment])).toEqual([
      ["f1", 0.8, null, null],
      ["quality", null, "high", "looks fine"],
    ]);
    expect(runs.flatMap((r) => r.feedback).every((f) => f.run_id !== null)).toBe(true);
  });

  it("gives null latency and rates for an experiment without rows", async () => {
    const { experiments } = setup();
    const { experiment, dataset } = await experiments.upload(request({ results: [] }));
    expect(experiment).toMatchObject({
      run_count: 0,
      latency_p50: null,
      latency_p99: null,
      error_rate: null,
      streaming_rate: null,
      last_run_start_time: null,
      feedback_stats: {},
    });
    expect(dataset.example_count).toBe(0);
  });

  it("reads one row's latency as both p50 and p99, and an empty error as no error", async () => {
    const { experiments } = setup();
    const { experiment } = await experiments.upload(request({ results: [row(1, 4, { error: "" })] }));
    expect([experiment.latency_p50, experiment.latency_p99, experiment.error_rate]).toEqual([4, 4, 0]);
  });
});

describe("experiments.upload: validation (D4, D15), nothing written on failure", () => {
  const invalid: Array<[string, unknown, string]> = [
    ["a body that is not an object", null, ""],
    ["a missing experiment_name", { ...request(), experiment_name: undefined }, "experiment_name"],
    ["results that are not an array", request({ results: {} as never }), "results"],
    ["a row without inputs", request({ results: [{ ...row(1, 1), inputs: undefined }] as never }), "results.0.inputs"],
    ["a row_id that is not a UUID", request({ results: [{ ...row(1, 1), row_id: "row-1" }] }), "results.0.row_id"],
    ["a score that is not a number", request({ results: [row(1, 1, { evaluation_scores: [{ key: "k", score: "high" }] })] }), "results.0.evaluation_scores.0.score"],
    ["a feedback without key", request({ results: [row(1, 1, { evaluation_scores: [{ score: 1 }] })] }), "results.0.evaluation_scores.0.key"],
    [
      "an unknown feedback_config type",
      request({ summary_experiment_scores: [{ key: "k", score: 1, feedback_config: { type: "ordinal" } }] as never }),
      "summary_experiment_scores.0.feedback_config.type",
    ],
    ["a feedback_source without type", request({ summary_experiment_scores: [{ key: "k", feedback_source: {} }] as never }), "summary_experiment_scores.0.feedback_source.type"],
    ["a date that is not ISO 8601", request({ experiment_start_time: "01/01/2026" }), "experiment_start_time"],
    ["a date that does not exist", request({ experiment_end_time: "2026-02-30T00:00:00Z" }), "experiment_end_time"],
    ["a dataset_id that is not a UUID", request({ dataset_id: "abc" }), "dataset_id"],
    ["neither dataset_id nor dataset_name", request({ dataset_name: undefined }), "dataset_id"],
    ["a row starting before the experiment", request({ results: [row(1, 1), { ...row(2, 1), start_time: "2026-01-01T09:59:59Z" }] }), "results.1.start_time"],
    ["a row ending after the experiment", request({ results: [row(1, 1), row(2, 3601)] }), "results.1.end_time"],
    // 10:30+02:00 is 08:30Z: outside although the wall clock reads inside the window
    ["a row outside the window once its offset is applied", request({ results: [{ ...row(1, 1), start_time: "2026-01-01T10:30:00+02:00" }] }), "results.0.start_time"],
    ["an experiment ending before it starts", request({ experiment_end_time: "2026-01-01T09:00:00Z", results: [] }), "experiment_end_time"],
    ["a row ending before it starts", request({ results: [{ ...row(1, 1), start_time: "2026-01-01T10:00:05Z" }] }), "results.0.end_time"],
    ["a row_id twice in one upload", request({ results: [row(1, 1), row(1, 2)] }), "results.1.row_id"],
  ];

  it.each(invalid)("rejects %s with invalid_input (422) naming the field", async (_, body, path) => {
    const { store, experiments } = setup();
    await experiments.upload(request({ experiment_name: "earlier", results: [row(1, 1)] }));
    const before = await snapshot(store);
    const err = await experiments.upload(body as never).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    expect((err as GraphdockError).problems!.map((p) => p.path)).toContain(path);
    expect(await snapshot(store)).toBe(before);
  });

  it("lists every problem at once", async () => {
    const { experiments } = setup();
    const err = (await experiments
      .upload(request({ dataset_name: undefined, results: [row(1, 7200), { ...row(2, 1), start_time: "2025-12-31T10:00:00Z" }] }))
      .catch((e: unknown) => e)) as GraphdockError;
    expect(err.problems!.map((p) => p.path).sort()).toEqual(["dataset_id", "results.0.end_time", "results.1.start_time"]);
    expect(err.message).toContain("results.0.end_time");
  });

  it("ignores unknown keys (D4) instead of storing them", async () => {
    const { experiments } = setup();
    const { experiment } = await experiments.upload({
      ...request({ results: [row(1, 1, { trace_url: "x", evaluation_scores: [{ key: "k", score: 1, extra_field: 2 }] })] }),
      client_version: "9",
    } as never);
    const [run] = await experiments.runs(experiment.id);
    expect(run).not.toHaveProperty("trace_url");
    expect(run!.feedback[0]).not.toHaveProperty("extra_field");
    expect(experiment).not.toHaveProperty("client_version");
  });

  async function expectConflict(prepare: (s: ReturnType<typeof setup>) => Promise<unknown>, body: unknown, text: RegExp) {
    const s = setup();
    await prepare(s);
    const before = await snapshot(s.store);
    const err = await s.experiments.upload(body as never).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toMatch(text);
    expect(await snapshot(s.store)).toBe(before);
  }

  const foreignId = "22222222-2222-4222-8222-222222222222";
  const foreignDataset = ({ store }: ReturnType<typeof setup>) =>
    store.commit([
      {
        op: "doc.put",
        collection: "datasets",
        id: foreignId,
        parent: null,
        doc: { id: foreignId, name: "curated", externally_managed: false, data_type: "kv" },
      },
    ]);

  it("refuses (409) a dataset id that names a dataset not created by upload (D15)", async () => {
    await expectConflict(foreignDataset, request({ dataset_name: undefined, dataset_id: foreignId }), /not created by experiment upload/);
  });

  it("refuses (409) a dataset name that names a dataset not created by upload (D15)", async () => {
    await expectConflict(foreignDataset, request({ dataset_name: "curated" }), new RegExp(foreignId));
  });

  it("refuses (409) a dataset id and name that name different datasets", async () => {
    await expectConflict(
      async ({ experiments }) => {
        await experiments.upload(request({ experiment_name: "a", dataset_name: "one", results: [row(1, 1)] }));
        await experiments.upload(request({ experiment_name: "b", dataset_name: "two", results: [row(2, 1)] }));
      },
      request({ experiment_name: "c", dataset_name: "two", dataset_id: seqId(1), results: [row(3, 1)] }),
      /named "one", not "two"/,
    );
  });

  it("refuses (409) an experiment name already used", async () => {
    await expectConflict(({ experiments }) => experiments.upload(request()), request({ dataset_name: "other" }), /experiment named "exp" already exists/);
  });

  it("refuses (409) a row_id that is an example of another dataset", async () => {
    await expectConflict(
      ({ experiments }) => experiments.upload(request({ experiment_name: "a", dataset_name: "one", results: [row(1, 1)] })),
      request({ experiment_name: "b", dataset_name: "two", results: [row(2, 1), row(1, 1)] }),
      new RegExp(`row_id ${rowId(1)} is already an example of another dataset`),
    );
  });
});

describe("grouping (D16) and generated names and ids", () => {
  const dsId = "33333333-3333-4333-8333-333333333333";

  it("groups uploads by dataset id, generating the name once", async () => {
    const { experiments, datasets } = setup();
    const a = await experiments.upload(request({ experiment_name: "a", dataset_name: undefined, dataset_id: dsId, results: [row(1, 1), row(2, 1)] }));
    const b = await experiments.upload(
      request({
        experiment_name: "b",
        dataset_name: undefined,
        dataset_id: dsId.toUpperCase(),
        experiment_start_time: "2026-01-02T10:00:00Z",
        experiment_end_time: "2026-01-02T11:00:00Z",
        results: [{ ...row(2, 1), start_time: "2026-01-02T10:00:00Z", end_time: "2026-01-02T10:00:01Z" }, { ...row(3, 1), start_time: "2026-01-02T10:00:00Z", end_time: "2026-01-02T10:00:02Z" }],
      }),
    );
    expect(a.dataset.name).toBe(`dataset-${dsId}`);
    expect(b.dataset).toMatchObject({ id: dsId, name: `dataset-${dsId}`, session_count: 2, example_count: 3, last_session_start_time: "2026-01-02T10:00:00.000Z" });
    expect([a.experiment.test_run_number, b.experiment.test_run_number]).toEqual([1, 2]);
    expect(b.experiment.reference_dataset_id).toBe(dsId);
    expect((await experiments.list({ datasetId: dsId })).map((e) => e.name)).toEqual(["a", "b"]);
    expect((await datasets.list()).map((d) => d.id)).toEqual([dsId]);
    expect((await datasets.examples(dsId)).map((e) => e.id)).toEqual([rowId(1), rowId(2), rowId(3)]);
  });

  it("groups uploads by dataset name, generating the id once", async () => {
    const { experiments, datasets } = setup();
    const a = await experiments.upload(request({ experiment_name: "a", dataset_name: "qa" }));
    const b = await experiments.upload(request({ experiment_name: "b", dataset_name: "qa" }));
    const c = await experiments.upload(request({ experiment_name: "c", dataset_name: "other", results: [row(2, 1)] }));
    expect(a.dataset.id).toBe(seqId(1));
    expect(b.dataset).toMatchObject({ id: seqId(1), name: "qa", session_count: 2, example_count: 1 });
    expect(c.dataset.id).not.toBe(seqId(1));
    expect((await datasets.list()).map((d) => [d.name, d.session_count])).toEqual([
      ["qa", 2],
      ["other", 1],
    ]);
    expect((await experiments.list()).map((e) => e.name)).toEqual(["a", "b", "c"]);
    expect((await experiments.list({ datasetId: c.dataset.id })).map((e) => e.name)).toEqual(["c"]);
  });

  it("creates a dataset with both the given id and name, then finds it by either", async () => {
    const { experiments } = setup();
    await experiments.upload(request({ experiment_name: "a", dataset_name: "qa", dataset_id: dsId, dataset_description: "first" }));
    const byName = await experiments.upload(request({ experiment_name: "b", dataset_name: "qa", dataset_description: "ignored" }));
    const byId = await experiments.upload(request({ experiment_name: "c", dataset_name: undefined, dataset_id: dsId }));
    expect(byName.dataset).toMatchObject({ id: dsId, name: "qa", description: "first" });
    expect(byId.dataset).toMatchObject({ id: dsId, name: "qa", session_count: 3 });
  });

  it("keys examples by row_id: a later upload of a row updates the example, keeping created_at", async () => {
    const api = setup();
    const first = await api.experiments.upload(request({ experiment_name: "a", results: [row(1, 1)] }));
    const second = await api.experiments.upload(
      request({ experiment_name: "b", results: [row(1, 1, { inputs: { q: "new" }, expected_outputs: { a: "better" } }), row(2, 1, { expected_outputs: undefined })] }),
    );
    expect(second.dataset.example_count).toBe(2);
    const examples = await api.datasets.examples(first.dataset.id);
    expect(examples.map((e) => [e.id, e.inputs, e.outputs])).toEqual([
      [rowId(1), { q: "new" }, { a: "better" }],
      [rowId(2), { q: "question 2" }, null],
    ]);
  });
});

describe("reading", () => {
  it("answers not_found for unknown ids and invalid_input for bad arguments", async () => {
    const { experiments, datasets } = setup();
    for (const p of [experiments.get("nope"), experiments.runs("nope"), datasets.get("nope"), datasets.examples("nope"), experiments.list({ datasetId: "nope" })]) {
      await expect(p).rejects.toMatchObject({ code: "not_found" });
    }
    await expect(experiments.get(42 as never)).rejects.toMatchObject({ code: "invalid_input" });
    await expect(experiments.list({ datasetId: 1 } as never)).rejects.toMatchObject({ code: "invalid_input" });
  });

  it("runs uploads one at a time so concurrent uploads number their runs correctly", async () => {
    const { experiments } = setup(memoryStore());
    const results = await Promise.all(["a", "b", "c"].map((name) => experiments.upload(request({ experiment_name: name }))));
    expect(results.map((r) => r.experiment.test_run_number)).toEqual([1, 2, 3]);
    expect(results[2]!.dataset.session_count).toBe(3);
  });
});
