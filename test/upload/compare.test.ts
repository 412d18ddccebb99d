import { describe, expect, it } from "vitest";
import { type Comparison } from "../../src/index.js";
import { compareCsv, compareReport } from "../../src/upload/report-entry.js";
import { bootstrapMeanInterval, quantile } from "../../src/upload/stats.js";
import { request, row, rowId, setup } from "./helpers.js";

const score = (key: string, s: number) => ({ key, score: s });
const label = (key: string, v: string) => ({ key, value: v });

/**
 * Baseline A ran rows 1-4; B ran 1, 2, 3 (failed, no score) and 5; C ran 1-4.
 * correctness  A: 1, 0, 0.5, 1      B: 1, 1, -, -, 1      C: 0, 1, 1, 1
 * grade        A: good, bad         B: good, good         C: bad, good
 * latency (s)  A: 2, 2, 2, 2        B: 1, 3, 1, -, 1      C: 2, 2, 2, 2
 */
async function threeExperiments() {
  const s = setup();
  const up = (name: string, results: unknown[]) => s.experiments.upload(request({ experiment_name: name, results: results as never }));
  const a = await up("A", [
    row(1, 2, { evaluation_scores: [score("correctness", 1), label("grade", "good")] }),
    row(2, 2, { evaluation_scores: [score("correctness", 0), label("grade", "bad")] }),
    row(3, 2, { evaluation_scores: [score("correctness", 0.5)] }),
    row(4, 2, { evaluation_scores: [score("correctness", 1)] }),
  ]);
  const b = await up("B", [
    row(1, 1, { evaluation_scores: [score("correctness", 1), label("grade", "good")] }),
    row(2, 3, { evaluation_scores: [score("correctness", 1), label("grade", "good")], actual_outputs: { a: "fixed" } }),
    row(3, 1, { error: "timeout", actual_outputs: undefined }),
    row(5, 1, { evaluation_scores: [score("correctness", 1), score("speed", 1)] }),
  ]);
  const c = await up("C", [
    row(1, 2, { evaluation_scores: [score("correctness", 0), label("grade", "bad")] }),
    row(2, 2, { evaluation_scores: [score("correctness", 1), label("grade", "good")] }),
    row(3, 2, { evaluation_scores: [score("correctness", 1)] }),
    row(4, 2, { evaluation_scores: [score("correctness", 1)] }),
  ]);
  return { ...s, a: a.experiment, b: b.experiment, c: c.experiment };
}

const key = (cmp: Comparison, k: string) => cmp.keys.find((x) => x.key === k)!;
const entry = (cmp: Comparison, k: string, id: string) => key(cmp, k).experiments.find((e) => e.experiment_id === id)!;

describe("experiments.compare: two experiments", () => {
  it("aligns examples, separates missing rows from failed ones and counts improved / regressed / unchanged", async () => {
    const { experiments, a, b } = await threeExperiments();
    const cmp = await experiments.compare([a.id, b.id]);
    expect(cmp.baseline_id).toBe(a.id);
    expect(cmp.examples.map((e) => e.example_id)).toEqual([rowId(1), rowId(2), rowId(3), rowId(4), rowId(5)]);
    expect(cmp.experiments.map((e) => [e.name, e.error_count, e.missing_count])).toEqual([
      ["A", 0, 1],
      ["B", 1, 1],
    ]);

    const cells = (n: number) => cmp.examples[n - 1]!.runs;
    expect(cells(3).map((c) => c.status)).toEqual(["success", "error"]);
    expect(cells(3)[1]).toMatchObject({ error: "timeout", outputs: null, scores: {} });
    expect(cells(4).map((c) => c.status)).toEqual(["success", "missing"]);
    expect(cells(5).map((c) => c.status)).toEqual(["missing", "success"]);
    expect(cells(2)[1]).toMatchObject({ outputs: { a: "fixed" }, latency: 3, scores: { correctness: { score: 1, label: null }, grade: { score: null, label: "good" } } });
    expect(cmp.examples[1]!.expected_outputs).toEqual({ a: "answer 2" });

    const base = entry(cmp, "correctness", a.id);
    expect(base.vs_baseline).toBeNull();
    expect(base.stats).toEqual(a.feedback_stats.correctness);
    const vs = entry(cmp, "correctness", b.id).vs_baseline!;
    // B's mean 1 (3 scores) minus A's mean 2.5 / 4
    expect(vs.delta).toBeCloseTo(1 - 0.625, 12);
    expect(vs).toMatchObject({
      improved: 1,
      regressed: 0,
      unchanged: 1,
      missing: 2, // row 4 (B did not run it) and row 5 (A did not)
      unscored: 1, // row 3: B's run failed without a score
      improved_examples: [rowId(2)],
      regressed_examples: [],
    });
    // paired over rows 1 and 2: differences 0 and 1
    expect(vs.paired.n).toBe(2);
    expect(vs.paired.mean).toBe(0.5);
    expect(vs.paired.ci_low!).toBeGreaterThanOrEqual(0);
    expect(vs.paired.ci_high!).toBeLessThanOrEqual(1);
    expect(vs.paired.ci_low!).toBeLessThan(vs.paired.ci_high!);
  });

  it("shows categorical label transitions from the baseline", async () => {
    const { experiments, a, c } = await threeExperiments();
    const cmp = await experiments.compare([a.id, c.id]);
    expect(entry(cmp, "grade", c.id).vs_baseline!.transitions).toEqual([
      { from: "bad", to: "good", count: 1 },
      { from: "good", to: "bad", count: 1 },
    ]);
    expect(entry(cmp, "grade", c.id).stats!.values).toEqual({ bad: 1, good: 1 });
  });

  it("compares latency: deltas of p50, p99 and mean, and faster / slower examples", async () => {
    const { experiments, a, b } = await threeExperiments();
    const cmp = await experiments.compare([a.id, b.id]);
    const [la, lb] = cmp.latency.experiments;
    expect(la).toMatchObject({ experiment_id: a.id, p50: 2, p99: 2, avg: 2, vs_baseline: null });
    // B latencies 1, 3, 1, 1: p50 1, p99 at rank 2.97 -> 1 + 0.97 * 2 = 2.94, mean 1.5
    expect(lb!.p50).toBe(1);
    expect(lb!.p99).toBeCloseTo(2.94, 12);
    expect(lb!.avg).toBe(1.5);
    expect(lb!.vs_baseline).toMatchObject({ delta: -0.5, p50_delta: -1, improved: 2, regressed: 1, unchanged: 0, missing: 2 });
    expect(lb!.vs_baseline!.p99_delta).toBeCloseTo(0.94, 12);
    expect(lb!.vs_baseline!.improved_examples).toEqual([rowId(1), rowId(3)]);
  });

  it("takes another baseline and lower-is-better keys", async () => {
    const { experiments, a, b } = await threeExperiments();
    const cmp = await experiments.compare([a.id, b.id], { baseline: b.id, lowerIsBetter: ["correctness"] });
    expect(cmp.baseline_id).toBe(b.id);
    expect(key(cmp, "correctness").higher_is_better).toBe(false);
    expect(entry(cmp, "correctness", b.id).vs_baseline).toBeNull();
    // A vs B: row 2 went 1 -> 0, an improvement when lower is better
    expect(entry(cmp, "correctness", a.id).vs_baseline).toMatchObject({ improved: 1, regressed: 0, improved_examples: [rowId(2)] });
    expect(key(cmp, "grade").higher_is_better).toBe(true);
  });
});

describe("experiments.compare: three experiments", () => {
  it("compares each with the baseline, keeps the requested order and unions the keys", async () => {
    const { experiments, a, b, c } = await threeExperiments();
    const cmp = await experiments.compare([c.id, a.id, b.id], { baseline: a.id });
    expect(cmp.experiments.map((e) => e.name)).toEqual(["C", "A", "B"]);
    expect(cmp.keys.map((k) => k.key)).toEqual(["correctness", "grade", "speed"]);
    expect(cmp.examples[0]!.runs.map((r) => r.experiment_id)).toEqual([c.id, a.id, b.id]);
    // C vs A: row 1 regressed (1 -> 0), rows 2 and 3 improved, row 4 unchanged
    expect(entry(cmp, "correctness", c.id).vs_baseline).toMatchObject({
      improved: 2,
      regressed: 1,
      unchanged: 1,
      missing: 1, // row 5: only B ran it
      unscored: 0,
      improved_examples: [rowId(2), rowId(3)],
      regressed_examples: [rowId(1)],
    });
    expect(entry(cmp, "correctness", b.id).vs_baseline!.improved).toBe(1);
    // a key only B has: no stats elsewhere, every other row unscored or missing
    expect(entry(cmp, "speed", a.id).stats).toBeNull();
    expect(entry(cmp, "speed", c.id).vs_baseline).toMatchObject({ delta: null, paired: { n: 0, mean: null, ci_low: null, ci_high: null } });
  });

  it("is reproducible: the same seed gives the same intervals", async () => {
    const { experiments, a, c } = await threeExperiments();
    const one = await experiments.compare([a.id, c.id], { seed: 7 });
    const two = await experiments.compare([a.id, c.id], { seed: 7 });
    expect(one).toEqual(two);
  });

  it("refuses bad arguments", async () => {
    const { experiments, a, b } = await threeExperiments();
    const other = await setupOtherDataset(experiments);
    await expect(experiments.compare([a.id])).rejects.toMatchObject({ code: "invalid_input" });
    await expect(experiments.compare([a.id, a.id])).rejects.toMatchObject({ code: "invalid_input" });
    await expect(experiments.compare([a.id, b.id], { baseline: "x" })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(experiments.compare([a.id, b.id], { confidence: 1.5 })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(experiments.compare([a.id, "nope"])).rejects.toMatchObject({ code: "not_found" });
    await expect(experiments.compare([a.id, other])).rejects.toMatchObject({ code: "invalid_input", message: expect.stringMatching(/different datasets/) });
  });
});

async function setupOtherDataset(experiments: Awaited<ReturnType<typeof threeExperiments>>["experiments"]) {
  const { experiment } = await experiments.upload(request({ experiment_name: "D", dataset_name: "elsewhere", results: [row(9, 1)] }));
  return experiment.id;
}

describe("statistics", () => {
  it("interpolates percentiles linearly between order statistics", () => {
    expect(quantile([1, 2], 0.5)).toBe(1.5);
    expect(quantile([1, 2], 0.99)).toBeCloseTo(1.99, 12);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeNull();
  });

  it("puts the bootstrap interval around the mean, above zero for a clear gain", () => {
    // gains of 0.1 .. 0.3, mean 0.2
    const diffs = Array.from({ length: 201 }, (_, i) => 0.1 + (((i * 37) % 201) / 200) * 0.2);
    const { low, high } = bootstrapMeanInterval(diffs, 0.95, 1000, 1);
    const m = diffs.reduce((x, y) => x + y, 0) / diffs.length;
    expect(low!).toBeGreaterThan(0.15);
    expect(low!).toBeLessThan(m);
    expect(high!).toBeGreaterThan(m);
    expect(high!).toBeLessThan(0.25);
    expect(bootstrapMeanInterval([1], 0.95, 100, 1)).toEqual({ low: null, high: null });
    expect(bootstrapMeanInterval(diffs, 0.95, 1000, 2)).not.toEqual({ low, high });
    expect(bootstrapMeanInterval(diffs, 0.95, 1000, 1)).toEqual({ low, high });
  });
});

describe("compareReport and compareCsv", () => {
  it("renders one self-contained HTML page with a table per key, a chart and expandable examples", async () => {
    const s = setup();
    const x = await s.experiments.upload(request({ experiment_name: "<b>base</b>", results: [row(1, 1, { evaluation_scores: [score("acc", 0)] }), row(2, 1)] }));
    const y = await s.experiments.upload(
      request({ experiment_name: "new & better", results: [row(1, 2, { evaluation_scores: [score("acc", 1)], actual_outputs: { a: "<script>alert(1)</script>" } })] }),
    );
    const html = compareReport(await s.experiments.compare([x.experiment.id, y.experiment.id]));
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain("&lt;b&gt;base&lt;/b&gt;");
    expect(html).toContain("new &amp; better");
    expect(html).not.toContain("<script>");
    expect(html).not.toMatch(/<link|src=|url\(/);
    expect(html.match(/<table>/g)!.length).toBe(2); // the key "acc" and latency
    expect(html).toMatch(/<h3>acc <small>higher is better/);
    expect(html).toContain("<svg");
    expect(html.match(/<details/g)!.length).toBe(2);
    expect(html).toMatch(/class="n delta good[^"]*">\+1</);
    expect(html).toContain(">missing<");
  });

  it("exports the example matrix as CSV with quoting", async () => {
    const s = setup();
    const x = await s.experiments.upload(
      request({ experiment_name: "x", results: [row(1, 1, { evaluation_scores: [label("verdict", "=cmd"), score("acc", 0.5)], inputs: { q: 'say "hi", then\nbye' } }), row(2, 1)] }),
    );
    const y = await s.experiments.upload(
      request({ experiment_name: "y", results: [row(1, 2, { error: 'bad,\n"very"', inputs: { q: 'say "hi", then\nbye' } })] }),
    );
    const csv = compareCsv(await s.experiments.compare([x.experiment.id, y.experiment.id]));
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe(
      "example_id,inputs,expected_outputs,x: status,x: outputs,x: error,x: latency_s,x: verdict,x: acc,y: status,y: outputs,y: error,y: latency_s,y: verdict,y: acc",
    );
    // JSON cells are quoted (quotes doubled), a formula-like label is kept as text, a newline in a field is quoted
    expect(lines[1]).toBe(
      `${rowId(1)},"{""q"":""say \\""hi\\"", then\\nbye""}","{""a"":""answer 1""}",success,"{""a"":""output 1""}",,1,'=cmd,0.5,` +
        `error,"{""a"":""output 1""}","bad,\n""very""",2,,`,
    );
    expect(lines[2]).toBe(`${rowId(2)},"{""q"":""question 2""}","{""a"":""answer 2""}",success,"{""a"":""output 2""}",,1,,,missing,,,,,`);
    expect(lines.length).toBe(4); // header, 2 rows, trailing empty
  });
});
