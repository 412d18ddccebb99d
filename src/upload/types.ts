/**
 * Records of experiment upload (the upload endpoint's response, D2: snake_case as on the
 * wire). They are stored as documents in the store's doc collections: `datasets`, `examples`
 * (parent: dataset id), `experiments` (parent: dataset id), `experiment_runs` and `feedback`
 * (parent: experiment id).
 */

/**
 * Tenant of the deployment's owner when no auth is configured (and of data uploaded before
 * tenants). With auth, each user has a tenant of their own (`userTenantId`).
 */
export const LOCAL_TENANT_ID = "00000000-0000-0000-0000-000000000000";

/** A dataset as the upload endpoint returns it. */
export interface DatasetRecord {
  id: string;
  name: string;
  description: string | null;
  /** ISO 8601, UTC. */
  created_at: string;
  /** Time of the last upload into the dataset. */
  modified_at: string;
  /** `"kv"` for datasets created by upload. */
  data_type: string;
  inputs_schema_definition: Record<string, unknown> | null;
  outputs_schema_definition: Record<string, unknown> | null;
  /** True for datasets created by upload; uploads into any other dataset are refused (D15). */
  externally_managed: boolean;
  tenant_id: string;
  /** Distinct examples (rows keyed by `row_id`, D16). */
  example_count: number;
  /** Experiments uploaded into the dataset. */
  session_count: number;
  /** Latest `start_time` of its experiments. */
  last_session_start_time: string | null;
}

/** One dataset example: a row of an upload, keyed by its `row_id` (D16). */
export interface ExampleRecord {
  id: string;
  dataset_id: string;
  inputs: Record<string, unknown>;
  /** The row's `expected_outputs` (the last upload of the row wins). */
  outputs: Record<string, unknown> | null;
  created_at: string;
  modified_at: string;
  /** The uploader's tenant; row ids are per tenant. */
  tenant_id: string;
}

/**
 * Aggregate of the feedback of one key (D14). `n`, `avg`, `stdev` (population) cover numeric
 * scores (booleans count as 1/0); `values` counts categorical labels.
 */
export interface FeedbackStats {
  n: number;
  avg: number | null;
  stdev: number | null;
  errors: number;
  values: Record<string, number>;
}

/** An experiment ("tracer session") with its statistics, computed at upload (D14). */
export interface ExperimentRecord {
  id: string;
  name: string;
  description: string | null;
  start_time: string;
  end_time: string;
  /** `{ metadata: experiment_metadata }`, or null without metadata. */
  extra: { metadata: Record<string, unknown> } | null;
  default_dataset_id: string | null;
  reference_dataset_id: string;
  trace_tier: string;
  tenant_id: string;
  /** Number of rows (runs). */
  run_count: number;
  /** Latency percentiles in seconds, linear interpolation between order statistics; null without runs. */
  latency_p50: number | null;
  latency_p99: number | null;
  first_token_p50: number | null;
  first_token_p99: number | null;
  total_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  last_run_start_time: string | null;
  last_run_start_time_live: string | null;
  /** Per feedback key, over the rows' `evaluation_scores`. */
  feedback_stats: Record<string, FeedbackStats>;
  /** Per feedback key, over `summary_experiment_scores`. */
  session_feedback_stats: Record<string, FeedbackStats>;
  run_facets: unknown[] | null;
  /** Share of runs with an error, 0..1; null without runs. */
  error_rate: number | null;
  /** 0: uploaded runs never streamed; null without runs. */
  streaming_rate: number | null;
  /** 1-based ordinal of the experiment among its dataset's experiments. */
  test_run_number: number;
}

/** One uploaded run: a row's run in an experiment. */
export interface ExperimentRunRecord {
  id: string;
  name: string;
  run_type: "chain";
  /** The experiment id. */
  session_id: string;
  /** The example id (= the row's `row_id`). */
  reference_example_id: string;
  trace_id: string;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown> | null;
  error: string | null;
  status: "success" | "error";
  start_time: string;
  end_time: string;
  /** end_time - start_time, in seconds. */
  latency: number;
  /** `{ metadata: run_metadata }`, or null without metadata. */
  extra: { metadata: Record<string, unknown> } | null;
  /** The uploader's tenant. */
  tenant_id: string;
}

/** Where a feedback came from (`type` required; other fields kept as sent). */
export interface FeedbackSource {
  type: string;
  [key: string]: unknown;
}

export interface FeedbackConfig {
  type: "continuous" | "categorical" | "freeform";
  min?: number;
  max?: number;
  categories?: Array<{ value: number; label?: string }>;
}

/** One feedback: a row's evaluation score (with `run_id`) or a summary score (`run_id` null). */
export interface FeedbackRecord {
  id: string;
  key: string;
  /** Numeric score; a boolean score is stored as 1/0. */
  score: number | null;
  value: string | null;
  comment: string | null;
  correction: Record<string, unknown> | string | null;
  feedback_source: FeedbackSource | null;
  feedback_config: FeedbackConfig | null;
  run_id: string | null;
  session_id: string;
  /** The uploader's tenant. */
  tenant_id: string;
  created_at: string;
  modified_at: string;
}

/** A run with its feedback, as `experiments.runs(id)` returns it. */
export interface ExperimentRunWithFeedback extends ExperimentRunRecord {
  feedback: FeedbackRecord[];
}

/** Response of `experiments.upload`. */
export interface UploadExperimentResult {
  experiment: ExperimentRecord;
  dataset: DatasetRecord;
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** Paired difference (experiment minus baseline) over the examples both have a value for. */
export interface PairedDelta {
  /** Examples with a value in both. */
  n: number;
  /** Mean of the per-example differences; null when n is 0. */
  mean: number | null;
  /** Bootstrap percentile interval of `mean` at `Comparison.confidence`; null when n < 2. */
  ci_low: number | null;
  ci_high: number | null;
}

/** How an experiment's per-example values moved against the baseline's. */
export interface VersusBaseline {
  /** Aggregate difference: this experiment's aggregate minus the baseline's. */
  delta: number | null;
  paired: PairedDelta;
  /** Examples better / worse / equal (in the metric's direction), with values in both. */
  improved: number;
  regressed: number;
  unchanged: number;
  /** Examples that this experiment or the baseline did not run at all. */
  missing: number;
  /** Examples both ran but at least one has no value for the metric (a failed run without score, ...). */
  unscored: number;
  improved_examples: string[];
  regressed_examples: string[];
}

export interface LabelTransition {
  from: string;
  to: string;
  count: number;
}

/** One feedback key across the compared experiments. */
export interface KeyComparison {
  key: string;
  /** False for keys listed in `lowerIsBetter`. */
  higher_is_better: boolean;
  experiments: Array<{
    experiment_id: string;
    /** The experiment's aggregate for the key (its `feedback_stats` entry), null when it has none. */
    stats: FeedbackStats | null;
    /** Null for the baseline. */
    vs_baseline: (VersusBaseline & { transitions: LabelTransition[] }) | null;
  }>;
}

/** Latency (seconds) across the compared experiments; lower is better. */
export interface LatencyComparison {
  experiments: Array<{
    experiment_id: string;
    p50: number | null;
    p99: number | null;
    avg: number | null;
    /** `delta` is the difference of `avg`; null for the baseline. */
    vs_baseline: (VersusBaseline & { p50_delta: number | null; p99_delta: number | null }) | null;
  }>;
}

/** What one experiment did on one example. */
export interface ExampleRunCell {
  experiment_id: string;
  /** `missing`: the experiment has no run for the example; `error`: its run failed. */
  status: "success" | "error" | "missing";
  run_id: string | null;
  outputs: Record<string, unknown> | null;
  error: string | null;
  latency: number | null;
  /** Per key: mean numeric score (null if none) and the first categorical label (null if none). */
  scores: Record<string, { score: number | null; label: string | null }>;
}

export interface ExampleComparison {
  example_id: string;
  inputs: Record<string, unknown>;
  expected_outputs: Record<string, unknown> | null;
  /** One cell per compared experiment, in the order of `Comparison.experiments`. */
  runs: ExampleRunCell[];
}

/** Result of `experiments.compare`. */
export interface Comparison {
  dataset: DatasetRecord;
  baseline_id: string;
  /** The compared experiments, in the order requested. */
  experiments: Array<ExperimentRecord & { error_count: number; missing_count: number }>;
  /** Confidence level of the intervals (e.g. 0.95). */
  confidence: number;
  /** Feedback keys of the runs, in order of first appearance. */
  keys: KeyComparison[];
  latency: LatencyComparison;
  /** Every example of the dataset that at least one compared experiment ran, in dataset order. */
  examples: ExampleComparison[];
}

export interface CompareOptions {
  /** Experiment every other one is compared with; default the first id. */
  baseline?: string;
  /** Feedback keys where a lower score is better (default: higher is better). */
  lowerIsBetter?: string[];
  /** Confidence level of the bootstrap intervals, in (0, 1); default 0.95. */
  confidence?: number;
  /** Bootstrap resamples; default 1000. */
  resamples?: number;
  /** Seed of the bootstrap's random generator (results are reproducible); default 1. */
  seed?: number;
}
