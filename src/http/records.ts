/**
 * What the API answers, as zod schemas (D81): the OpenAPI document's components, named as routes
 * name them in their responses (`json: "Thread"`, `json: "Thread[]"`). The types of these
 * schemas are what each route's handler must answer (src/http/route.ts), so a record the runtime
 * returns that the document does not describe fails to compile. Only the OpenAPI document loads
 * this module (on the first `GET /openapi.json`); routes import its types alone.
 */
import * as z from "zod/mini";

const record = z.record(z.string(), z.unknown());
const nullableRecord = z.nullable(record);
const string = z.string();
const strings = z.array(string);
const nullableString = z.nullable(string);
const int = z.int();
const number = z.number();
const nullableNumber = z.nullable(number);
const time = z.string().check(z.describe("ISO 8601 date-time"));
const nullableTime = z.nullable(time);
const config = z.looseObject({ tags: z.optional(strings), recursion_limit: z.optional(int), configurable: z.optional(record) });
const interrupt = z.object({ value: z.unknown(), id: string });
const error = z.object({ error: string, message: string });

const checkpoint = z.object({ thread_id: string, checkpoint_ns: string, checkpoint_id: string, checkpoint_map: nullableRecord });
const checkpointMetadata = z.looseObject({
  source: z.enum(["input", "loop", "update", "fork"]),
  step: int,
  parents: z.record(string, string),
  writes: z.optional(nullableRecord),
  thread_id: string,
  checkpoint_id: string,
});
const threadTask = z.object({
  id: string,
  name: string,
  path: z.array(z.unknown()),
  error: nullableString,
  interrupts: z.array(interrupt),
  /** A subgraph task's: where the subgraph's state lives (no id: the namespace's latest checkpoint). */
  checkpoint: z.nullable(z.object({ thread_id: string, checkpoint_ns: string })),
  /** A subgraph task's state, when subgraph states were asked for. */
  get state() {
    return z.nullable(threadState);
  },
  result: z.unknown(),
});
const threadState = z.object({
  values: record,
  next: strings,
  tasks: z.array(threadTask),
  metadata: z.nullable(checkpointMetadata),
  created_at: nullableTime,
  // null for a thread without checkpoints
  checkpoint: z.nullable(checkpoint),
  parent_checkpoint: z.nullable(checkpoint),
  checkpoint_id: nullableString,
  parent_checkpoint_id: nullableString,
  interrupts: z.array(interrupt),
});

const assistantFields = {
  assistant_id: string,
  graph_id: string,
  name: string,
  description: z.nullish(string),
  config,
  context: z.unknown(),
  metadata: record,
  version: int,
  created_at: time,
};
const assistant = z.object({ ...assistantFields, updated_at: time });
const graphSchema = z.object({
  graph_id: string,
  input_schema: nullableRecord,
  output_schema: nullableRecord,
  state_schema: nullableRecord,
  config_schema: nullableRecord,
  context_schema: nullableRecord,
});
/** One subgraph's schemas, also under the keys the JS agent server answers with. */
const subgraphSchema = z.object({
  ...graphSchema.shape,
  state: nullableRecord,
  input: nullableRecord,
  output: nullableRecord,
  config: nullableRecord,
});

const thread = z.object({
  thread_id: string,
  created_at: time,
  updated_at: time,
  state_updated_at: time,
  metadata: record,
  status: z.enum(["idle", "busy", "interrupted", "error"]),
  config,
  values: record,
  interrupts: z.record(string, z.array(interrupt)),
  error: z.optional(z.nullable(error)),
});

const runStatus = z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]);
const multitaskStrategy = z.enum(["reject", "interrupt", "rollback", "enqueue"]);
const run = z.object({
  run_id: string,
  thread_id: string,
  assistant_id: string,
  created_at: time,
  updated_at: time,
  status: runStatus,
  metadata: record,
  kwargs: record,
  multitask_strategy: z.nullable(multitaskStrategy),
  /** 1 for a run's first execution, one more each time a cut-off run is resumed (docs/durable.md). */
  attempt: int,
});

const cron = z.object({
  cron_id: string,
  assistant_id: string,
  thread_id: nullableString,
  on_run_completed: z.optional(z.enum(["delete", "keep"])),
  end_time: nullableTime,
  schedule: string,
  timezone: nullableString,
  created_at: time,
  updated_at: time,
  payload: record,
  user_id: nullableString,
  next_run_date: nullableTime,
  metadata: record,
  enabled: z.boolean(),
});

const item = z.object({ namespace: strings, key: string, value: record, created_at: time, updated_at: time });

const feedbackStats = z.object({ n: int, avg: nullableNumber, stdev: nullableNumber, errors: int, values: z.record(string, number) });
const extra = z.nullable(z.object({ metadata: record }));
const dataset = z.object({
  id: string,
  name: string,
  description: nullableString,
  created_at: time,
  modified_at: time,
  data_type: string,
  inputs_schema_definition: nullableRecord,
  outputs_schema_definition: nullableRecord,
  externally_managed: z.boolean(),
  tenant_id: string,
  example_count: int,
  session_count: int,
  last_session_start_time: nullableTime,
});
const experimentFields = {
  id: string,
  name: string,
  description: nullableString,
  start_time: time,
  end_time: time,
  extra,
  default_dataset_id: nullableString,
  reference_dataset_id: string,
  trace_tier: string,
  tenant_id: string,
  run_count: int,
  latency_p50: nullableNumber,
  latency_p99: nullableNumber,
  first_token_p50: nullableNumber,
  first_token_p99: nullableNumber,
  total_tokens: nullableNumber,
  prompt_tokens: nullableNumber,
  completion_tokens: nullableNumber,
  total_cost: nullableNumber,
  prompt_cost: nullableNumber,
  completion_cost: nullableNumber,
  last_run_start_time: nullableTime,
  last_run_start_time_live: nullableTime,
  feedback_stats: z.record(string, feedbackStats),
  session_feedback_stats: z.record(string, feedbackStats),
  run_facets: z.nullable(z.array(z.unknown())),
  error_rate: nullableNumber,
  streaming_rate: nullableNumber,
  test_run_number: int,
};
const experiment = z.object(experimentFields);
const feedback = z.object({
  id: string,
  key: string,
  score: nullableNumber,
  value: nullableString,
  comment: nullableString,
  correction: z.nullable(z.union([record, string])),
  feedback_source: z.nullable(z.looseObject({ type: string })),
  feedback_config: z.nullable(
    z.object({
      type: z.enum(["continuous", "categorical", "freeform"]),
      min: z.optional(number),
      max: z.optional(number),
      categories: z.optional(z.array(z.object({ value: number, label: z.optional(string) }))),
    }),
  ),
  run_id: nullableString,
  session_id: string,
  tenant_id: string,
  created_at: time,
  modified_at: time,
});
const experimentRun = z.object({
  id: string,
  name: string,
  run_type: z.literal("chain"),
  session_id: string,
  reference_example_id: string,
  trace_id: string,
  inputs: record,
  outputs: nullableRecord,
  error: nullableString,
  status: z.enum(["success", "error"]),
  start_time: time,
  end_time: time,
  latency: number,
  extra,
  tenant_id: string,
  feedback: z.array(feedback),
});
const pairedDelta = z.object({ n: int, mean: nullableNumber, ci_low: nullableNumber, ci_high: nullableNumber });
const versusBaseline = {
  delta: nullableNumber,
  paired: pairedDelta,
  improved: int,
  regressed: int,
  unchanged: int,
  missing: int,
  unscored: int,
  improved_examples: strings,
  regressed_examples: strings,
};
const comparison = z.object({
  dataset,
  baseline_id: string,
  experiments: z.array(z.object({ ...experimentFields, error_count: int, missing_count: int })),
  confidence: number,
  keys: z.array(
    z.object({
      key: string,
      higher_is_better: z.boolean(),
      experiments: z.array(
        z.object({
          experiment_id: string,
          stats: z.nullable(feedbackStats),
          vs_baseline: z.nullable(z.object({ ...versusBaseline, transitions: z.array(z.object({ from: string, to: string, count: int })) })),
        }),
      ),
    }),
  ),
  latency: z.object({
    experiments: z.array(
      z.object({
        experiment_id: string,
        p50: nullableNumber,
        p99: nullableNumber,
        avg: nullableNumber,
        vs_baseline: z.nullable(z.object({ ...versusBaseline, p50_delta: nullableNumber, p99_delta: nullableNumber })),
      }),
    ),
  }),
  examples: z.array(
    z.object({
      example_id: string,
      inputs: record,
      expected_outputs: nullableRecord,
      runs: z.array(
        z.object({
          experiment_id: string,
          status: z.enum(["success", "error", "missing"]),
          run_id: nullableString,
          outputs: nullableRecord,
          error: nullableString,
          latency: nullableNumber,
          scores: z.record(string, z.object({ score: nullableNumber, label: nullableString })),
        }),
      ),
    }),
  ),
});

/** The records, by the name routes and the OpenAPI document give them. */
export const records = {
  Ok: z.object({ ok: z.literal(true) }),
  Info: z.looseObject({ version: string, context: string, flags: z.record(string, z.boolean()) }),
  Error: z.object({
    detail: string,
    problems: z.optional(z.array(z.object({ path: string, message: string }))),
  }),
  Count: int,
  PruneResult: z.object({ pruned_count: int }),
  /** The OpenAPI document itself. */
  OpenApiDocument: z.looseObject({ openapi: string, info: record, paths: record }),

  Assistant: assistant,
  /** An assistant with only the `select`ed fields when asked. */
  AssistantSelection: z.partial(assistant),
  AssistantVersion: z.object(assistantFields),
  AssistantGraph: z.object({
    nodes: z.array(z.object({ id: string, type: z.enum(["schema", "runnable"]), data: z.optional(z.union([record, string])), metadata: z.optional(z.unknown()) })),
    edges: z.array(z.object({ source: string, target: string, data: z.optional(string), conditional: z.optional(z.boolean()) })),
  }),
  GraphSchema: graphSchema,
  Subgraphs: z.record(string, subgraphSchema),

  Thread: thread,
  /** A thread as searches list it: without `values`, and with only the `select`ed fields when asked. */
  ThreadSummary: z.partial(thread),
  ThreadState: threadState,
  /** A state with only the `select`ed fields when asked. */
  ThreadStateSelection: z.partial(threadState),
  UpdatedState: z.object({ checkpoint, configurable: checkpoint }),

  Run: run,
  /** A run with only the `select`ed fields when asked. */
  RunSelection: z.partial(run),
  /** A run's final values, or `{ __error__ }` when it failed. */
  RunResult: z.catchall(z.object({ __error__: z.optional(error) }), z.unknown()),
  /** A v2 protocol command's typed response (docs/protocol-v2.md). */
  ProtocolResponse: z.union([
    z.object({ type: z.literal("success"), id: int, result: record, meta: z.optional(z.object({ applied_through_seq: z.optional(int) })) }),
    z.object({ type: z.literal("error"), id: z.nullable(int), error: string, message: string, missed_events: z.optional(int), oldest_seq: z.optional(int) }),
  ]),

  Cron: cron,
  /** A cron with only the `select`ed fields when asked. */
  CronSelection: z.partial(cron),

  Item: z.nullable(item),
  SearchItems: z.object({ items: z.array(z.object({ ...item.shape, score: z.optional(number) })) }),
  Namespaces: z.object({ namespaces: z.array(strings) }),

  Dataset: dataset,
  Example: z.object({ id: string, dataset_id: string, inputs: record, outputs: nullableRecord, created_at: time, modified_at: time, tenant_id: string }),
  Experiment: experiment,
  ExperimentRun: experimentRun,
  UploadResult: z.object({ experiment, dataset }),
  Comparison: comparison,
};

/** The name of a record. */
export type RecordName = keyof typeof records;
/** What a record's name stands for, as a type. */
export type RecordOf<N extends RecordName> = z.output<(typeof records)[N]>;
