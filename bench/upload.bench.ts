// `npm run bench -- upload`: uploads two experiments of 10,000 rows with 3 scores each into a
// memory store (time and peak memory), then compares them (1,000 bootstrap resamples per metric).
import { createIds, createUploadApi, memoryStore, systemClock, type UploadExperimentRequest } from "../src/index.js";
import { compareCsv, compareReport } from "../src/upload/report-entry.js";
import v8 from "node:v8";
import vm from "node:vm";

// Heap figures after a full GC, so garbage left by earlier benches in the process does not count.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const ROWS = 10_000;
const TARGET_UPLOAD_MS = 1000;
const TARGET_COMPARE_MS = 1000;

function experiment(name: string, shift: number): UploadExperimentRequest {
  const start = Date.parse("2026-01-01T00:00:00Z");
  const results = Array.from({ length: ROWS }, (_, i) => {
    const t = start + i * 1000;
    const latency = 200 + ((i * 7919 + shift * 31) % 1800);
    return {
      row_id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`,
      inputs: { question: `question ${i}` },
      expected_outputs: { answer: `answer ${i}` },
      actual_outputs: { answer: `answer ${(i + shift) % ROWS}` },
      start_time: new Date(t).toISOString(),
      end_time: new Date(t + latency).toISOString(),
      ...(i % 97 === shift ? { error: "timeout" } : {}),
      evaluation_scores: [
        { key: "correctness", score: (i + shift) % 3 === 0 ? 0 : 1 },
        { key: "helpfulness", score: ((i * 13 + shift) % 100) / 100 },
        { key: "verdict", value: ["pass", "partial", "fail"][(i + shift) % 3]! },
      ],
    };
  });
  return {
    experiment_name: name,
    experiment_start_time: new Date(start).toISOString(),
    experiment_end_time: new Date(start + ROWS * 1000 + 10_000).toISOString(),
    dataset_name: "bench",
    results,
  };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

export default async function (): Promise<void> {
  const api = createUploadApi({ store: memoryStore(), ids: createIds(), clock: systemClock });
  const bodies = [experiment("a", 0), experiment("b", 1)];
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssPeakBefore = process.resourceUsage().maxRSS * 1024;
  const ids: string[] = [];
  for (const body of bodies) {
    const t0 = performance.now();
    const { experiment: e } = await api.experiments.upload(body);
    const ms = performance.now() - t0;
    ids.push(e.id);
    console.log(
      `upload ${ROWS} rows x 3 scores (${e.name}): ${ms.toFixed(0)} ms (${(ms / TARGET_UPLOAD_MS).toFixed(2)} of the ${TARGET_UPLOAD_MS} ms target), ` +
        `${((ROWS / ms) * 1000).toFixed(0)} rows/s`,
    );
  }
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const rssPeak = process.resourceUsage().maxRSS * 1024;
  console.log(
    `memory: heap +${mb(heapAfter - heapBefore)} retained for 2 experiments (20k runs, 60k feedback); ` +
      `process peak RSS ${mb(rssPeak)} (+${mb(rssPeak - rssPeakBefore)} during the uploads)`,
  );

  const t0 = performance.now();
  const cmp = await api.experiments.compare(ids);
  const ms = performance.now() - t0;
  const c = cmp.keys.find((k) => k.key === "correctness")!.experiments[1]!.vs_baseline!;
  console.log(
    `compare 2 x ${ROWS} rows (3 keys + latency, bootstrap 1000): ${ms.toFixed(0)} ms ` +
      `(${(ms / TARGET_COMPARE_MS).toFixed(2)} of the ${TARGET_COMPARE_MS} ms target); correctness improved ${c.improved}, regressed ${c.regressed}`,
  );

  const t1 = performance.now();
  const html = compareReport(cmp);
  const t2 = performance.now();
  const csv = compareCsv(cmp);
  const t3 = performance.now();
  console.log(
    `report: HTML ${(t2 - t1).toFixed(0)} ms (${mb(html.length)}, first 1000 examples), CSV ${(t3 - t2).toFixed(0)} ms (${mb(csv.length)}, all ${cmp.examples.length} examples)`,
  );
}
