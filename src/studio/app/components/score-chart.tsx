/**
 * The distribution of one metric per experiment as a grouped bar chart (Chart.js, loaded with the
 * first chart): the share of examples in each score bin, one colour per experiment. The same
 * numbers are in a table below it for screen readers and keyboard users.
 */
import { useEffect, useRef } from "preact/hooks";
import { num } from "../format.js";

/** Experiment colours (distinct, and dark enough against white). */
export const PALETTE = ["#4338ca", "#b45309", "#047857", "#be123c", "#0e7490", "#7e22ce", "#4d7c0f", "#9f1239"];

export interface Distribution {
  /** Bin labels, e.g. `0`, `1` or `0.2–0.4`. */
  bins: string[];
  /** Per experiment: its name and the count of examples per bin. */
  series: Array<{ name: string; counts: number[] }>;
}

/** Bins for `values`: each distinct value when there are few, else `n` equal ranges. */
export function distribution(series: Array<{ name: string; values: number[] }>, format: (v: number) => string = (v) => num(v, 2), n = 10): Distribution {
  const all = series.flatMap((s) => s.values);
  const distinct = [...new Set(all)].sort((a, b) => a - b);
  if (distinct.length <= 6) {
    return { bins: distinct.map(format), series: series.map((s) => ({ name: s.name, counts: distinct.map((d) => s.values.filter((v) => v === d).length) })) };
  }
  const min = distinct[0]!;
  const max = distinct[distinct.length - 1]!;
  const width = (max - min) / n;
  const binOf = (v: number) => Math.min(n - 1, Math.floor((v - min) / width));
  const bins = Array.from({ length: n }, (_, i) => `${format(min + i * width)}–${format(min + (i + 1) * width)}`);
  return {
    bins,
    series: series.map((s) => {
      const counts = new Array<number>(n).fill(0);
      for (const v of s.values) counts[binOf(v)]!++;
      return { name: s.name, counts };
    }),
  };
}

export function ScoreChart(props: { data: Distribution; title: string; testId?: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    let chart: { destroy(): void } | undefined;
    let live = true;
    void import("chart.js").then(({ Chart, BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip }) => {
      if (!live || !canvas.current) return;
      Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
      chart = new Chart(canvas.current, {
        type: "bar",
        data: {
          labels: props.data.bins,
          datasets: props.data.series.map((s, i) => ({ label: s.name, data: s.counts, backgroundColor: PALETTE[i % PALETTE.length] })),
        },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          scales: { y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "examples" } } },
          plugins: { legend: { position: "bottom" } },
        },
      });
      canvas.current.dataset.ready = "true";
    });
    return () => {
      live = false;
      chart?.destroy();
    };
  }, [props.data]);
  return (
    <figure class="chart" data-testid={props.testId ?? "chart"}>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title}: bar chart, the same numbers are in the table below`} />
      </div>
      <figcaption>{props.title}</figcaption>
      <details>
        <summary>The chart's numbers</summary>
        <table class="table small">
          <caption class="sr-only">{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">Bin</th>
              {props.data.series.map((s) => (
                <th scope="col" key={s.name}>
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.data.bins.map((bin, i) => (
              <tr key={bin}>
                <th scope="row">{bin}</th>
                {props.data.series.map((s) => (
                  <td key={s.name}>{s.counts[i]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
