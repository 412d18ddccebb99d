/**
 * The upload request (seed-spec "Experiment upload request"), parsed with zod (D4: unknown keys
 * are dropped, wrong types rejected). Timestamps are normalised to UTC ISO strings with
 * milliseconds; a timestamp without a time zone is read as UTC.
 */
import { z } from "zod";
import { invalidInput, type ValidationProblem } from "../errors.js";

/** ISO 8601 date-time, with or without offset -> epoch ms (naive = UTC). */
const datetime = z.iso
  .datetime({ offset: true, local: true })
  .transform((s, ctx) => {
    const ms = Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(s) ? s : `${s}Z`);
    // Date.parse rolls 2024-02-30 over to March: compare the date part to refuse it.
    if (Number.isNaN(ms) || new Date(ms + offsetMs(s)).toISOString().slice(0, 10) !== s.slice(0, 10)) {
      ctx.addIssue({ code: "custom", message: `Invalid date: ${s}` });
      return z.NEVER;
    }
    return ms;
  });

function offsetMs(s: string): number {
  const m = /([+-])(\d{2}):(\d{2})$/.exec(s);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
}

const jsonObject = z.record(z.string(), z.unknown());
/** Any 8-4-4-4-12 hex id (as pydantic's UUID), lower-cased so ids compare by value. */
const uuid = z.guid().transform((s) => s.toLowerCase());

const feedback = z.object({
  key: z.string().min(1).max(180),
  score: z.union([z.number(), z.boolean()]).nullish(),
  value: z.string().nullish(),
  comment: z.string().nullish(),
  feedback_source: z.looseObject({ type: z.string() }).nullish(),
  feedback_config: z
    .object({
      type: z.enum(["continuous", "categorical", "freeform"]),
      min: z.number().nullish(),
      max: z.number().nullish(),
      categories: z.array(z.object({ value: z.number(), label: z.string().min(1).nullish() })).nullish(),
    })
    .nullish(),
  created_at: datetime.nullish(),
  modified_at: datetime.nullish(),
  correction: z.union([jsonObject, z.string()]).nullish(),
});

const row = z.object({
  row_id: uuid,
  inputs: jsonObject,
  expected_outputs: jsonObject.nullish(),
  actual_outputs: jsonObject.nullish(),
  evaluation_scores: z.array(feedback).nullish(),
  start_time: datetime,
  end_time: datetime,
  run_name: z.string().nullish(),
  error: z.string().nullish(),
  run_metadata: jsonObject.nullish(),
});

/** Zod schema of the upload request body. */
export const uploadRequestSchema = z.object({
  experiment_name: z.string().min(1),
  experiment_description: z.string().nullish(),
  experiment_start_time: datetime,
  experiment_end_time: datetime,
  dataset_id: uuid.nullish(),
  dataset_name: z.string().min(1).nullish(),
  dataset_description: z.string().nullish(),
  experiment_metadata: jsonObject.nullish(),
  summary_experiment_scores: z.array(feedback).nullish(),
  results: z.array(row),
});

/** The request as sent (timestamps as ISO strings). */
export type UploadExperimentRequest = z.input<typeof uploadRequestSchema>;
/** The request after parsing (timestamps as epoch ms). */
export type ParsedUpload = z.output<typeof uploadRequestSchema>;
export type ParsedFeedback = z.output<typeof feedback>;

const pathOf = (path: readonly PropertyKey[]) => path.map(String).join(".");

/**
 * Parses and checks a request: the schema, then the seed's rules (dataset id or name; every row
 * inside the experiment's window) and ours (end not before start, `row_id` unique in a request).
 * Throws `invalid_input` listing every problem (D15: 422).
 */
export function parseUploadRequest(body: unknown): ParsedUpload {
  const parsed = uploadRequestSchema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => ({ path: pathOf(i.path), message: i.message }));
    throw invalidInput(`Invalid experiment upload: ${summary(problems)}`, problems);
  }
  const req = parsed.data;
  const problems: ValidationProblem[] = [];
  if (!req.dataset_id && !req.dataset_name) {
    problems.push({ path: "dataset_id", message: "Either dataset_id or dataset_name is required" });
  }
  const start = req.experiment_start_time;
  const end = req.experiment_end_time;
  if (end < start) {
    problems.push({ path: "experiment_end_time", message: "experiment_end_time is before experiment_start_time" });
  }
  const seen = new Set<string>();
  req.results.forEach((r, i) => {
    const at = `results.${i}`;
    if (r.start_time < start || r.start_time > end) {
      problems.push({ path: `${at}.start_time`, message: `Row ${r.row_id} starts outside the experiment's start and end times` });
    }
    if (r.end_time < start || r.end_time > end) {
      problems.push({ path: `${at}.end_time`, message: `Row ${r.row_id} ends outside the experiment's start and end times` });
    }
    if (r.end_time < r.start_time) {
      problems.push({ path: `${at}.end_time`, message: `Row ${r.row_id} ends before it starts` });
    }
    if (seen.has(r.row_id)) problems.push({ path: `${at}.row_id`, message: `Duplicate row_id ${r.row_id}: each row is one example` });
    seen.add(r.row_id);
  });
  if (problems.length > 0) throw invalidInput(`Invalid experiment upload: ${summary(problems)}`, problems);
  return req;
}

function summary(problems: ValidationProblem[]): string {
  const shown = problems.slice(0, 3).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : "";
  return shown.join("; ") + more;
}
