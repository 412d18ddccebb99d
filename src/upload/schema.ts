/**
 * The upload request, parsed with zod/mini (D4: unknown keys
 * are dropped, wrong types rejected). Timestamps are normalised to UTC ISO strings with
 * milliseconds; a timestamp without a time zone is read as UTC.
 */
import * as z from "zod/mini";
import { en } from "zod/v4/locales";
import { invalidInput, type ValidationProblem } from "../errors.js";

/**
 * English messages for every parse, passed per call (zod/mini loads no locale and we do not
 * touch zod's global config): problem lists read as they did with classic zod.
 */
export const zodMessages = { error: en().localeError };

/** ISO 8601 date-time, with or without offset -> epoch ms (naive = UTC). */
const datetime = z.pipe(
  z.iso.datetime({ offset: true, local: true }),
  z.transform((s: string, payload) => {
    const ms = Date.parse(/(Z|[+-]\d{2}:\d{2})$/i.test(s) ? s : `${s}Z`);
    // Date.parse rolls 2024-02-30 over to March: compare the date part to refuse it.
    if (Number.isNaN(ms) || new Date(ms + offsetMs(s)).toISOString().slice(0, 10) !== s.slice(0, 10)) {
      payload.issues.push({ code: "custom", message: `Invalid date: ${s}`, input: s });
      return z.NEVER;
    }
    return ms;
  }),
);

function offsetMs(s: string): number {
  const m = /([+-])(\d{2}):(\d{2})$/.exec(s);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
}

const jsonObject = z.record(z.string(), z.unknown());
/** Any 8-4-4-4-12 hex id (as pydantic's UUID), lower-cased so ids compare by value. */
const uuid = z.pipe(
  z.guid(),
  z.transform((s: string) => s.toLowerCase()),
);
const nonEmpty = z.string().check(z.minLength(1));

const feedback = z.object({
  key: z.string().check(z.minLength(1), z.maxLength(180)),
  score: z.nullish(z.union([z.number(), z.boolean()])),
  value: z.nullish(z.string()),
  comment: z.nullish(z.string()),
  feedback_source: z.nullish(z.looseObject({ type: z.string() })),
  feedback_config: z.nullish(
    z.object({
      type: z.enum(["continuous", "categorical", "freeform"]),
      min: z.nullish(z.number()),
      max: z.nullish(z.number()),
      categories: z.nullish(z.array(z.object({ value: z.number(), label: z.nullish(nonEmpty) }))),
    }),
  ),
  created_at: z.nullish(datetime),
  modified_at: z.nullish(datetime),
  correction: z.nullish(z.union([jsonObject, z.string()])),
});

const row = z.object({
  row_id: uuid,
  inputs: jsonObject,
  expected_outputs: z.nullish(jsonObject),
  actual_outputs: z.nullish(jsonObject),
  evaluation_scores: z.nullish(z.array(feedback)),
  start_time: datetime,
  end_time: datetime,
  run_name: z.nullish(z.string()),
  error: z.nullish(z.string()),
  run_metadata: z.nullish(jsonObject),
});

/** Zod (mini) schema of the upload request body. */
export const uploadRequestSchema = z.object({
  experiment_name: nonEmpty,
  experiment_description: z.nullish(z.string()),
  experiment_start_time: datetime,
  experiment_end_time: datetime,
  dataset_id: z.nullish(uuid),
  dataset_name: z.nullish(nonEmpty),
  dataset_description: z.nullish(z.string()),
  experiment_metadata: z.nullish(jsonObject),
  summary_experiment_scores: z.nullish(z.array(feedback)),
  results: z.array(row),
});

/** The request as sent (timestamps as ISO strings). */
export type UploadExperimentRequest = z.input<typeof uploadRequestSchema>;
/** The request after parsing (timestamps as epoch ms). */
export type ParsedUpload = z.output<typeof uploadRequestSchema>;
export type ParsedFeedback = z.output<typeof feedback>;

const pathOf = (path: readonly PropertyKey[]) => path.map(String).join(".");

/**
 * Parses and checks a request: the schema, then the upload endpoint's rules (dataset id or name;
 * every row inside the experiment's window) and ours (end not before start, `row_id` unique in a request).
 * Throws `invalid_input` listing every problem (D15: 422).
 */
export function parseUploadRequest(body: unknown): ParsedUpload {
  const parsed = uploadRequestSchema.safeParse(body, zodMessages);
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
