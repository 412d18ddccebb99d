/** Statistics of experiment upload (D14) and comparison. Pure functions, no I/O. */
import type { FeedbackConfig, FeedbackStats } from "./types.js";

/**
 * The p-quantile (0..1) of ascending `sorted`, linear interpolation between order statistics
 * (numpy's default): [1, 2] -> p50 1.5, p99 1.99. Null for an empty list.
 */
export function quantile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

export const mean = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;

/** The feedback fields statistics read. */
export interface ScoredFeedback {
  key: string;
  score: number | null;
  value: string | null;
  feedback_config: FeedbackConfig | null;
}

/**
 * The categorical label of a feedback: its `value`, or else the label that its categorical
 * config gives its score. Null for purely numeric or freeform feedback.
 */
export function labelOf(fb: ScoredFeedback): string | null {
  if (fb.value != null) return fb.value;
  if (fb.score === null || fb.feedback_config?.type !== "categorical") return null;
  return fb.feedback_config.categories?.find((c) => c.value === fb.score)?.label ?? null;
}

/** Per-key statistics (D14): n, avg, population stdev over numeric scores; label counts. */
export function feedbackStats(feedback: Iterable<ScoredFeedback>): Record<string, FeedbackStats> {
  const acc = new Map<string, { scores: number[]; values: Record<string, number> }>();
  for (const fb of feedback) {
    let a = acc.get(fb.key);
    if (!a) acc.set(fb.key, (a = { scores: [], values: {} }));
    if (fb.score !== null) a.scores.push(fb.score);
    const label = labelOf(fb);
    if (label !== null) a.values[label] = (a.values[label] ?? 0) + 1;
  }
  const out: Record<string, FeedbackStats> = {};
  for (const [key, { scores, values }] of acc) {
    const avg = mean(scores);
    out[key] = {
      n: scores.length,
      avg,
      stdev: avg === null ? null : Math.sqrt(mean(scores.map((s) => (s - avg) ** 2))!),
      errors: 0,
      values,
    };
  }
  return out;
}

/**
 * Percentile bootstrap interval of the mean of `diffs` at `confidence`: `resamples` means of
 * samples drawn with replacement (mulberry32 seeded with `seed`, so results repeat), cut at the
 * two tails. Null bounds for fewer than 2 values.
 */
export function bootstrapMeanInterval(
  diffs: readonly number[],
  confidence: number,
  resamples: number,
  seed: number,
): { low: number | null; high: number | null } {
  const n = diffs.length;
  if (n < 2) return { low: null, high: null };
  const values = Float64Array.from(diffs);
  const means = new Float64Array(resamples);
  const scale = n / 4294967296;
  let a = seed >>> 0;
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      // mulberry32, inlined: this loop runs resamples * n times
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      sum += values[(((t ^ (t >>> 14)) >>> 0) * scale) | 0]!;
    }
    means[r] = sum / n;
  }
  means.sort();
  const tail = (1 - confidence) / 2;
  const sorted = Array.from(means);
  return { low: quantile(sorted, tail), high: quantile(sorted, 1 - tail) };
}
