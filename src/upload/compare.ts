/**
 * Comparing experiments of one dataset, example by example: a pure function
 * over stored records, so the report and the HTTP adapter get the same JSON.
 */
import { bootstrapMeanInterval, labelOf, mean } from "./stats.js";
import type {
  CompareOptions,
  Comparison,
  DatasetRecord,
  ExampleRecord,
  ExampleRunCell,
  ExperimentRecord,
  ExperimentRunWithFeedback,
  KeyComparison,
  LabelTransition,
  VersusBaseline,
} from "./types.js";

export interface ComparisonInput {
  dataset: DatasetRecord;
  examples: ExampleRecord[];
  /** In the order to show them; each with its runs (and their feedback). */
  experiments: Array<{ record: ExperimentRecord; runs: ExperimentRunWithFeedback[] }>;
}

/** Per-example values of one experiment: example id -> value (null when it ran but has none). */
type Values = Map<string, number | null>;

export function compareExperiments(input: ComparisonInput, options: CompareOptions = {}): Comparison {
  const { experiments } = input;
  const baselineId = options.baseline ?? experiments[0]!.record.id;
  const base = experiments.findIndex((e) => e.record.id === baselineId);
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 1000;
  const seed = options.seed ?? 1;
  const lowerIsBetter = new Set(options.lowerIsBetter ?? []);

  // One cell per (experiment, example it ran).
  const cells = experiments.map(({ record, runs }) => {
    const byExample = new Map<string, ExampleRunCell>();
    for (const run of runs) {
      const scores: ExampleRunCell["scores"] = {};
      const numeric = new Map<string, number[]>();
      for (const fb of run.feedback) {
        const cell = (scores[fb.key] ??= { score: null, label: null });
        cell.label ??= labelOf(fb);
        if (fb.score !== null) {
          const list = numeric.get(fb.key);
          if (list) list.push(fb.score);
          else numeric.set(fb.key, [fb.score]);
        }
      }
      for (const [key, list] of numeric) scores[key]!.score = mean(list);
      byExample.set(run.reference_example_id, {
        experiment_id: record.id,
        status: run.error === null ? "success" : "error",
        run_id: run.id,
        outputs: run.outputs,
        error: run.error,
        latency: run.latency,
        scores,
      });
    }
    return byExample;
  });

  const examples = input.examples.filter((ex) => cells.some((c) => c.has(ex.id)));
  const exampleIds = examples.map((ex) => ex.id);

  function versus(baseValues: Values, values: Values, higherIsBetter: boolean, delta: number | null): VersusBaseline {
    const out: VersusBaseline = {
      delta,
      paired: { n: 0, mean: null, ci_low: null, ci_high: null },
      improved: 0,
      regressed: 0,
      unchanged: 0,
      missing: 0,
      unscored: 0,
      improved_examples: [],
      regressed_examples: [],
    };
    const diffs: number[] = [];
    for (const id of exampleIds) {
      if (!baseValues.has(id) || !values.has(id)) {
        out.missing++;
        continue;
      }
      const b = baseValues.get(id)!;
      const v = values.get(id)!;
      if (b === null || v === null) {
        out.unscored++;
        continue;
      }
      const diff = v - b;
      diffs.push(diff);
      const gain = higherIsBetter ? diff : -diff;
      // Scores are means of floats: treat differences at rounding level as equal.
      if (Math.abs(diff) <= 1e-12 * Math.max(1, Math.abs(b), Math.abs(v))) out.unchanged++;
      else if (gain > 0) {
        out.improved++;
        out.improved_examples.push(id);
      } else {
        out.regressed++;
        out.regressed_examples.push(id);
      }
    }
    const interval = bootstrapMeanInterval(diffs, confidence, resamples, seed);
    out.paired = { n: diffs.length, mean: mean(diffs), ci_low: interval.low, ci_high: interval.high };
    return out;
  }

  const valuesOf = (i: number, pick: (cell: ExampleRunCell) => number | null): Values => {
    const values: Values = new Map();
    for (const [id, cell] of cells[i]!) values.set(id, pick(cell));
    return values;
  };
  const minus = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null ? null : a - b);

  const keyNames = [...new Set(experiments.flatMap((e) => Object.keys(e.record.feedback_stats)))];
  const keys: KeyComparison[] = keyNames.map((key) => {
    const higherIsBetter = !lowerIsBetter.has(key);
    const baseValues = valuesOf(base, (c) => c.scores[key]?.score ?? null);
    const baseStats = experiments[base]!.record.feedback_stats[key];
    return {
      key,
      higher_is_better: higherIsBetter,
      experiments: experiments.map(({ record }, i) => {
        const stats = record.feedback_stats[key] ?? null;
        if (i === base) return { experiment_id: record.id, stats, vs_baseline: null };
        const vs = versus(baseValues, valuesOf(i, (c) => c.scores[key]?.score ?? null), higherIsBetter, minus(stats?.avg, baseStats?.avg));
        return { experiment_id: record.id, stats, vs_baseline: { ...vs, transitions: transitions(base, i, key) } };
      }),
    };
  });

  function transitions(from: number, to: number, key: string): LabelTransition[] {
    const counts = new Map<string, LabelTransition>();
    for (const id of exampleIds) {
      const a = cells[from]!.get(id)?.scores[key]?.label;
      const b = cells[to]!.get(id)?.scores[key]?.label;
      if (a == null || b == null) continue;
      const k = JSON.stringify([a, b]);
      const t = counts.get(k);
      if (t) t.count++;
      else counts.set(k, { from: a, to: b, count: 1 });
    }
    return [...counts.values()].sort((x, y) => y.count - x.count || x.from.localeCompare(y.from) || x.to.localeCompare(y.to));
  }

  const latencyAvg = experiments.map((_, i) => mean([...cells[i]!.values()].map((c) => c.latency!)));
  const baseLatency = valuesOf(base, (c) => c.latency);
  const baseRecord = experiments[base]!.record;

  return {
    dataset: input.dataset,
    baseline_id: baselineId,
    experiments: experiments.map(({ record, runs }, i) => ({
      ...record,
      error_count: runs.filter((r) => r.error !== null).length,
      missing_count: exampleIds.filter((id) => !cells[i]!.has(id)).length,
    })),
    confidence,
    keys,
    latency: {
      experiments: experiments.map(({ record }, i) => ({
        experiment_id: record.id,
        p50: record.latency_p50,
        p99: record.latency_p99,
        avg: latencyAvg[i]!,
        vs_baseline:
          i === base
            ? null
            : {
                ...versus(baseLatency, valuesOf(i, (c) => c.latency), false, minus(latencyAvg[i], latencyAvg[base])),
                p50_delta: minus(record.latency_p50, baseRecord.latency_p50),
                p99_delta: minus(record.latency_p99, baseRecord.latency_p99),
              },
      })),
    },
    examples: examples.map((ex) => ({
      example_id: ex.id,
      inputs: ex.inputs,
      expected_outputs: ex.outputs,
      runs: experiments.map(({ record }, i) => cells[i]!.get(ex.id) ?? missingCell(record.id)),
    })),
  };
}

const missingCell = (experimentId: string): ExampleRunCell => ({
  experiment_id: experimentId,
  status: "missing",
  run_id: null,
  outputs: null,
  error: null,
  latency: null,
  scores: {},
});
