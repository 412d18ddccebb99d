/**
 * Uploads the three sample experiments of one dataset into an in-memory store and writes the
 * comparison as a self-contained HTML page (and its CSV next to it).
 *
 *   npx tsx examples/upload/report.ts [out.html]     (default: compare-report.html in cwd)
 */
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { createIds, createUploadApi, memoryStore, systemClock } from "../../src/index.js";
import { compareCsv, compareReport } from "../../src/upload/report-entry.js"; // "graphdock/report" in an app

const out = resolve(process.argv[2] ?? "compare-report.html");
const api = createUploadApi({ store: memoryStore(), ids: createIds(), clock: systemClock });

const ids: string[] = [];
for (const file of ["baseline.json", "prompt-v2.json", "rag-v3.json"]) {
  const body = JSON.parse(await readFile(new URL(file, import.meta.url), "utf8"));
  const { experiment, dataset } = await api.experiments.upload(body);
  ids.push(experiment.id);
  console.log(
    `uploaded "${experiment.name}" into "${dataset.name}": ${experiment.run_count} runs, ` +
      `p50 ${experiment.latency_p50?.toFixed(2)} s, error rate ${experiment.error_rate}, ` +
      `correctness ${experiment.feedback_stats.correctness?.avg?.toFixed(3)}`,
  );
}

const comparison = await api.experiments.compare(ids, { baseline: ids[0] });
await writeFile(out, compareReport(comparison));
await writeFile(out.replace(/\.html?$/i, "") + ".csv", compareCsv(comparison));
console.log(`report: ${out}`);
