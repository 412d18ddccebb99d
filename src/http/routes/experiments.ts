/**
 * Experiment upload and reading (`runtime.experiments`, `runtime.datasets`, docs/upload.md),
 * under `/api/v1` as the upload endpoint has it; the handler's `apiKey` option guards them all.
 * The comparison is JSON, or the HTML report or CSV (`format`, or `Accept: text/html`).
 */
import * as z from "zod/mini";
import { compareCsv, compareReport } from "../../upload/report-entry.js";
import { uploadRequestSchema } from "../../upload/index.js";
import { ok, raw, type Define } from "../route.js";
import { queryEnum, queryList, queryString } from "../wire.js";

const ids = (what: string) => queryList(z.string(), what, true);
const format = z.enum(["json", "html", "csv"]);
const page = (body: string, type: string) => raw(new Response(body, { status: 200, headers: { "content-type": type } }));

export function experimentRoutes(define: Define): void {
  define({
    method: "POST",
    path: "/api/v1/datasets/upload-experiment",
    id: "experiments.upload",
    summary: "Upload an experiment run elsewhere",
    description: "One example and one run per row, in the dataset named; all or nothing.",
    body: uploadRequestSchema,
    responses: { 200: { description: "The experiment and its dataset.", json: "UploadResult" } },
    handle: async ({ client, body }) => ok(await client.experiments.upload(body)),
  });
  define({
    method: "GET",
    path: "/api/v1/datasets",
    id: "datasets.list",
    summary: "List datasets",
    responses: { 200: { description: "Every dataset, in creation order.", json: "Dataset[]" } },
    handle: async ({ client }) => ok(await client.datasets.list()),
  });
  define({
    method: "GET",
    path: "/api/v1/datasets/:dataset_id",
    id: "datasets.get",
    summary: "Get a dataset",
    responses: { 200: { description: "The dataset with its counters.", json: "Dataset" } },
    handle: async ({ client, params }) => ok(await client.datasets.get(params.dataset_id)),
  });
  define({
    method: "GET",
    path: "/api/v1/datasets/:dataset_id/examples",
    id: "datasets.examples",
    summary: "List a dataset's examples",
    responses: { 200: { description: "Its examples, in the order first uploaded.", json: "Example[]" } },
    handle: async ({ client, params }) => ok(await client.datasets.examples(params.dataset_id)),
  });
  define({
    method: "GET",
    path: "/api/v1/experiments",
    id: "experiments.list",
    summary: "List experiments",
    query: z.object({ dataset_id: queryString }),
    responses: { 200: { description: "Experiments in upload order (of one dataset when asked).", json: "Experiment[]" } },
    handle: async ({ client, query }) => ok(await client.experiments.list({ datasetId: query.dataset_id })),
  });
  define({
    method: "GET",
    path: "/api/v1/experiments/compare",
    id: "experiments.compare",
    summary: "Compare experiments of one dataset",
    headers: { accept: "`text/html` answers the HTML report when `format` is not given." },
    query: z.object({
      id: ids("experiment ids"),
      baseline: queryString,
      lower_is_better: ids("feedback keys"),
      format: queryEnum(format),
    }),
    responses: {
      200: {
        description: "The comparison.",
        json: "Comparison",
        content: { "text/html": "The comparison as a report page (`format=html`).", "text/csv": "One row per example and experiment (`format=csv`)." },
      },
    },
    handle: async ({ client, query, request }) => {
      const comparison = await client.experiments.compare(query.id ?? [], { baseline: query.baseline, lowerIsBetter: query.lower_is_better });
      const as = query.format ?? (/text\/html/.test(request.headers.get("accept") ?? "") ? "html" : "json");
      if (as === "html") return page(compareReport(comparison), "text/html; charset=utf-8");
      if (as === "csv") return page(compareCsv(comparison), "text/csv; charset=utf-8");
      return ok(comparison);
    },
  });
  define({
    method: "GET",
    path: "/api/v1/experiments/:experiment_id",
    id: "experiments.get",
    summary: "Get an experiment with its statistics",
    responses: { 200: { description: "The experiment.", json: "Experiment" } },
    handle: async ({ client, params }) => ok(await client.experiments.get(params.experiment_id)),
  });
  define({
    method: "GET",
    path: "/api/v1/experiments/:experiment_id/runs",
    id: "experiments.runs",
    summary: "List an experiment's runs with their feedback",
    responses: { 200: { description: "Its runs, in row order.", json: "ExperimentRun[]" } },
    handle: async ({ client, params }) => ok(await client.experiments.runs(params.experiment_id)),
  });
}
