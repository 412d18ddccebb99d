/**
 * `/studio/experiments/compare?ids=<baseline>,<id>,...`: experiments of one dataset against a
 * baseline (the first id; another can be chosen, which reorders the ids). Per metric: each
 * experiment's aggregate, the delta and the paired delta with its bootstrap interval (from the
 * server's comparison), improved / regressed / unchanged counts; latency likewise; a chart of the
 * metric's distribution per experiment; the examples in a sortable table (most regressed first is
 * one click) with regressions marked, filters by score, and each example's outputs side by side
 * with a diff against the baseline's. The comparison downloads as CSV.
 */
import { useMemo, useState } from "preact/hooks";
import type { Comparison, ExampleComparison, KeyComparison } from "../../../upload/types.js";
import { ErrorNote, InputField, Json, Link, Loading, SelectField, Table, TableScroll } from "../components/common.js";
import { Dialog } from "../components/dialog.js";
import { distribution, PALETTE, ScoreChart } from "../components/score-chart.js";
import { TextDiff } from "../components/text-diff.js";
import { VirtualTable } from "../components/virtual-table.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { num, pretty, seconds, shortId, signed } from "../format.js";
import type { Route } from "../router.js";

const LATENCY = "latency";

type Experiment = Comparison["experiments"][number];

/** The value of `metric` for one experiment's run of an example (latency in seconds). */
function valueOf(example: ExampleComparison, index: number, metric: string): number | null {
  const cell = example.runs[index];
  if (!cell || cell.status === "missing") return null;
  return metric === LATENCY ? cell.latency : (cell.scores[metric]?.score ?? null);
}

/** Higher is better for scores (unless the comparison says otherwise), lower for latency. */
function better(comparison: Comparison, metric: string): 1 | -1 {
  if (metric === LATENCY) return -1;
  return comparison.keys.find((k) => k.key === metric)?.higher_is_better === false ? -1 : 1;
}

export default function ComparePage({ route }: { route: Route }) {
  const { api, router } = useStudio();
  const ids = (route.query.get("ids") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const comparison = useLoad((signal) => (ids.length >= 2 ? api.compare(ids, signal) : Promise.reject(new Error("Choose two or more experiments to compare"))), [ids.join(",")]);
  document.title = "Compare experiments · graphdock studio";
  const set = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(route.query);
    for (const [k, v] of Object.entries(changes)) v === null || v === "" ? next.delete(k) : next.set(k, v);
    router.go(`experiments/compare?${next.toString().replace(/%2C/g, ",")}`, true);
  };
  const c = comparison.data;
  return (
    <section class="page" aria-labelledby="compare-heading">
      <p>
        <Link to={c ? `experiments?dataset=${encodeURIComponent(c.dataset.id)}` : "experiments"}>Experiments</Link> /
      </p>
      <h1 id="compare-heading">Compare experiments{c ? ` on ${c.dataset.name}` : ""}</h1>
      <ErrorNote error={comparison.error} />
      {!c && !comparison.error && <Loading what="the comparison" />}
      {c && <ComparisonView comparison={c} ids={ids} query={route.query} set={set} />}
    </section>
  );
}

function ComparisonView(props: { comparison: Comparison; ids: string[]; query: URLSearchParams; set(changes: Record<string, string | null>): void }) {
  const { api } = useStudio();
  const { comparison: c, query, set } = props;
  const metrics = [...c.keys.filter((k) => k.experiments.some((e) => e.stats?.avg !== null && e.stats?.avg !== undefined)).map((k) => k.key), LATENCY];
  const metric = metrics.includes(query.get("metric") ?? "") ? query.get("metric")! : metrics[0]!;
  const csv = useAction();
  const exportCsv = () =>
    csv.run(async () => {
      const blob = await api.compareCsv(props.ids);
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = `comparison-${c.dataset.name.replace(/[^\w.-]+/g, "-")}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });
  return (
    <>
      <div class="toolbar wrap">
        <SelectField
          label="Baseline"
          value={c.baseline_id}
          onChange={(id) => set({ ids: [id, ...props.ids.filter((x) => x !== id)].join(",") })}
          options={c.experiments.map((e) => [e.id, e.name])}
          testId="baseline"
        />
        <SelectField label="Metric" value={metric} onChange={(m) => set({ metric: m })} options={metrics.map((m) => [m, m === LATENCY ? "latency (s)" : m])} testId="metric" />
        <button type="button" class="secondary" onClick={exportCsv} disabled={csv.busy} data-testid="export-csv">
          Download CSV
        </button>
      </div>
      <ErrorNote error={csv.error} />
      <ul class="legend" aria-label="Experiments">
        {c.experiments.map((e, i) => (
          <li key={e.id}>
            <span class="swatch" style={{ background: PALETTE[i % PALETTE.length] }} aria-hidden="true" />
            {e.name} {e.id === c.baseline_id && <span class="badge">baseline</span>}{" "}
            <span class="muted small">
              {e.run_count} runs · {e.error_count} errors · {e.missing_count} missing
            </span>
          </li>
        ))}
      </ul>
      <h2>Metrics</h2>
      <p class="muted small">
        Δ is the difference of the means against the baseline; the paired Δ is the mean difference over the examples both scored, with its {Math.round(c.confidence * 100)}% bootstrap
        interval. Marked significant when the interval excludes 0.
      </p>
      {c.keys.map((k) => (
        <KeyTable key={k.key} comparison={c} keyComparison={k} />
      ))}
      <LatencyTable comparison={c} />
      <h2>Distribution of {metric === LATENCY ? "latency" : metric}</h2>
      <MetricChart comparison={c} metric={metric} />
      <h2>Examples</h2>
      <ExampleTable comparison={c} metric={metric} query={query} set={set} />
    </>
  );
}

function Interval({ low, high }: { low: number | null; high: number | null }) {
  if (low === null || high === null) return <span class="muted">—</span>;
  return (
    <span>
      [{signed(low)}, {signed(high)}]
    </span>
  );
}

function KeyTable({ comparison: c, keyComparison: k }: { comparison: Comparison; keyComparison: KeyComparison }) {
  const numeric = k.experiments.some((e) => e.stats?.avg !== null && e.stats?.avg !== undefined);
  const labels = [...new Set(k.experiments.flatMap((e) => Object.keys(e.stats?.values ?? {})))];
  return (
    <TableScroll label={`Metric ${k.key}`}>
      <Table
        caption={
          <>
            {k.key} <span class="muted small">({k.higher_is_better ? "higher is better" : "lower is better"})</span>
          </>
        }
        showCaption
        class="metrics"
        testId="metric-table"
        dataKey={k.key}
        head={["Experiment", ...(numeric ? ["Mean", "n", "Δ", "Paired Δ", "Interval"] : []), ...labels.map((l) => `“${l}”`), "Improved", "Regressed", "Unchanged"]}
      >
          {k.experiments.map((e, i) => {
            const v = e.vs_baseline;
            const significant = v && v.paired.ci_low !== null && v.paired.ci_high !== null && (v.paired.ci_low > 0 || v.paired.ci_high < 0);
            const direction = v?.paired.mean === null || v?.paired.mean === undefined ? 0 : Math.sign(v.paired.mean) * (k.higher_is_better ? 1 : -1);
            const experiment = c.experiments[i]!;
            return (
              <tr key={e.experiment_id} class={significant ? (direction > 0 ? "better" : "worse") : ""}>
                <th scope="row">
                  {experiment.name}
                  {!v && <span class="badge">baseline</span>}
                </th>
                {numeric && (
                  <>
                    <td>{num(e.stats?.avg)}</td>
                    <td>{e.stats?.n ?? 0}</td>
                    <td>{v ? signed(v.delta) : "—"}</td>
                    <td>
                      {v ? signed(v.paired.mean) : "—"}
                      {significant ? <strong class="significant"> {direction > 0 ? "better" : "worse"} (significant)</strong> : ""}
                    </td>
                    <td>{v ? <Interval low={v.paired.ci_low} high={v.paired.ci_high} /> : "—"}</td>
                  </>
                )}
                {labels.map((l) => (
                  <td key={l}>{e.stats?.values?.[l] ?? 0}</td>
                ))}
                <td>{v ? v.improved : "—"}</td>
                <td>{v ? v.regressed : "—"}</td>
                <td>{v ? v.unchanged : "—"}</td>
              </tr>
            );
          })}
      </Table>
    </TableScroll>
  );
}

function LatencyTable({ comparison: c }: { comparison: Comparison }) {
  return (
    <TableScroll label="Latency">
      <Table
        caption={
          <>
            latency <span class="muted small">(lower is better)</span>
          </>
        }
        showCaption
        class="metrics"
        testId="latency-table"
        head={["Experiment", "p50", "p99", "Mean", "Δ mean", "Δ p50", "Δ p99", "Paired Δ", "Interval", "Slower", "Faster"]}
      >
          {c.latency.experiments.map((e, i) => {
            const v = e.vs_baseline;
            return (
              <tr key={e.experiment_id}>
                <th scope="row">
                  {c.experiments[i]!.name}
                  {!v && <span class="badge">baseline</span>}
                </th>
                <td>{seconds(e.p50)}</td>
                <td>{seconds(e.p99)}</td>
                <td>{seconds(e.avg)}</td>
                <td>{v ? signed(v.delta) : "—"}</td>
                <td>{v ? signed(v.p50_delta) : "—"}</td>
                <td>{v ? signed(v.p99_delta) : "—"}</td>
                <td>{v ? signed(v.paired.mean) : "—"}</td>
                <td>{v ? <Interval low={v.paired.ci_low} high={v.paired.ci_high} /> : "—"}</td>
                <td>{v ? v.regressed : "—"}</td>
                <td>{v ? v.improved : "—"}</td>
              </tr>
            );
          })}
      </Table>
    </TableScroll>
  );
}

function MetricChart({ comparison: c, metric }: { comparison: Comparison; metric: string }) {
  const data = useMemo(
    () =>
      distribution(
        c.experiments.map((e, i) => ({ name: e.name, values: c.examples.map((x) => valueOf(x, i, metric)).filter((v): v is number => v !== null) })),
        metric === LATENCY ? (v) => `${num(v, 2)}s` : undefined,
      ),
    [c, metric],
  );
  return <ScoreChart data={data} title={`Examples per ${metric === LATENCY ? "latency" : "score"} bin of ${metric}, per experiment`} testId="metric-chart" />;
}

type Row = { example: ExampleComparison; regressed: boolean; worst: number | null; values: Array<number | null> };
const SORTS = ["regression", "example", "exp0", "latency"];

function ExampleTable(props: { comparison: Comparison; metric: string; query: URLSearchParams; set(changes: Record<string, string | null>): void }) {
  const { comparison: c, metric, query, set } = props;
  const [open, setOpen] = useState<ExampleComparison | null>(null);
  const direction = better(c, metric);
  const sort = query.get("sort") && (SORTS.includes(query.get("sort")!) || /^exp\d+$/.test(query.get("sort")!)) ? query.get("sort")! : "example";
  const order = query.get("dir") === "desc" ? "desc" : "asc";
  const scoreOf = query.get("of") ?? "0";
  const min = query.get("min") ?? "";
  const max = query.get("max") ?? "";
  const onlyRegressed = query.get("only") === "regressed";
  const [draftMin, setDraftMin] = useState(min);
  const [draftMax, setDraftMax] = useState(max);

  const regressedIds = useMemo(() => {
    if (metric === LATENCY) return new Set(c.latency.experiments.flatMap((e) => e.vs_baseline?.regressed_examples ?? []));
    const k = c.keys.find((key) => key.key === metric);
    return new Set(k?.experiments.flatMap((e) => e.vs_baseline?.regressed_examples ?? []) ?? []);
  }, [c, metric]);
  const baselineIndex = c.experiments.findIndex((e) => e.id === c.baseline_id);

  const rows = useMemo(() => {
    const all: Row[] = c.examples.map((example) => {
      const values = c.experiments.map((_, i) => valueOf(example, i, metric));
      const base = values[baselineIndex];
      const deltas = values.map((v, i) => (i === baselineIndex || v === null || base === null || base === undefined ? null : (v - base) * direction)).filter((d): d is number => d !== null);
      return { example, values, regressed: regressedIds.has(example.example_id), worst: deltas.length ? Math.min(...deltas) : null };
    });
    const lo = min === "" ? -Infinity : Number(min);
    const hi = max === "" ? Infinity : Number(max);
    const filtered = all.filter((r) => {
      if (onlyRegressed && !r.regressed) return false;
      if (min === "" && max === "") return true;
      const v = r.values[Number(scoreOf)];
      return v !== null && v !== undefined && v >= lo && v <= hi;
    });
    const key = (r: Row): number | string => {
      if (sort === "example") return r.example.example_id;
      if (sort === "regression") return r.worst ?? Infinity;
      if (sort === "latency") return Math.max(...r.example.runs.map((x) => x.latency ?? -Infinity));
      return r.values[Number(sort.slice(3))] ?? (order === "asc" ? Infinity : -Infinity);
    };
    const sign = order === "asc" ? 1 : -1;
    return filtered.sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      return (typeof ka === "number" && typeof kb === "number" ? ka - kb : String(ka).localeCompare(String(kb))) * sign;
    });
  }, [c, metric, sort, order, min, max, scoreOf, onlyRegressed, regressedIds]);

  const sortButton = (id: string, label: string) => {
    const active = sort === id;
    return (
      <th scope="col" aria-sort={active ? (order === "asc" ? "ascending" : "descending") : "none"}>
        <button
          type="button"
          class="sort"
          onClick={() => set({ sort: id, dir: active ? (order === "asc" ? "desc" : "asc") : "asc" })}
          data-testid={`sort-${id}`}
        >
          {label}
          <span aria-hidden="true">{active ? (order === "asc" ? " ▲" : " ▼") : " ↕"}</span>
        </button>
      </th>
    );
  };
  const format = (v: number | null) => (v === null ? "—" : metric === LATENCY ? seconds(v) : num(v));
  return (
    <>
      <form
        class="toolbar wrap"
        aria-label="Filter examples"
        onSubmit={(e) => {
          e.preventDefault();
          set({ min: draftMin.trim() || null, max: draftMax.trim() || null });
        }}
      >
        <SelectField label="Score of" value={scoreOf} onChange={(v) => set({ of: v })} options={c.experiments.map((e, i) => [String(i), e.name])} />
        <InputField label="At least" type="number" value={draftMin} onInput={setDraftMin} testId="filter-min" />
        <InputField label="At most" type="number" value={draftMax} onInput={setDraftMax} testId="filter-max" />
        <button type="submit" class="secondary" data-testid="filter-apply">
          Filter
        </button>
        <label class="inline">
          <input type="checkbox" checked={onlyRegressed} onChange={(e) => set({ only: (e.target as HTMLInputElement).checked ? "regressed" : null })} data-testid="only-regressed" /> Only regressions
        </label>
      </form>
      <p class="muted" role="status" data-testid="examples-shown">
        {rows.length} of {c.examples.length} examples · {regressedIds.size} regressed on {metric}
      </p>
      <VirtualTable
        caption={`Examples, ${metric} per experiment`}
        columns={3 + c.experiments.length}
        rows={rows}
        rowHeight={40}
        testId="examples"
        keyOf={(r) => r.example.example_id}
        rowClass={(r) => (r.regressed ? "regressed" : "")}
        head={
          <>
            {sortButton("example", "Example")}
            {c.experiments.map((e, i) => sortButton(`exp${i}`, e.name))}
            {sortButton("regression", "Worst Δ")}
            {sortButton("latency", "Slowest")}
          </>
        }
        render={(r) => (
          <>
            <th scope="row">
              <button type="button" class="link" onClick={() => setOpen(r.example)} data-testid="example-open" data-example={r.example.example_id}>
                {shortId(r.example.example_id)}
              </button>
              {r.regressed && <span class="badge bad">regressed</span>}
            </th>
            {r.values.map((v, i) => (
              <td key={i} class={r.example.runs[i]?.status === "error" ? "cell-error" : ""}>
                {r.example.runs[i]?.status === "missing" ? <span class="muted">missing</span> : format(v)}
                {r.example.runs[i]?.status === "error" && <span class="badge bad">error</span>}
              </td>
            ))}
            <td data-testid="worst-delta">{r.worst === null ? "—" : signed(r.worst * direction)}</td>
            <td>{seconds(Math.max(...r.example.runs.map((x) => x.latency ?? -1)) >= 0 ? Math.max(...r.example.runs.map((x) => x.latency ?? -1)) : null)}</td>
          </>
        )}
      />
      {open && <ExampleDialog comparison={c} example={open} onClose={() => setOpen(null)} />}
    </>
  );
}

function ExampleDialog({ comparison: c, example, onClose }: { comparison: Comparison; example: ExampleComparison; onClose(): void }) {
  const baselineIndex = c.experiments.findIndex((e) => e.id === c.baseline_id);
  const base = example.runs[baselineIndex];
  const text = (cell: ExampleComparison["runs"][number] | undefined) => (cell?.status === "missing" ? "" : cell?.error ? `error: ${cell.error}` : pretty(cell?.outputs ?? null));
  return (
    <Dialog title={`Example ${shortId(example.example_id)}`} onClose={onClose} wide testId="example-dialog">
      <p class="muted small">
        <code>{example.example_id}</code>
      </p>
      <div class="two-up">
        <section>
          <h3>Inputs</h3>
          <Json value={example.inputs} label="Inputs" />
        </section>
        <section>
          <h3>Reference outputs</h3>
          <Json value={example.expected_outputs} label="Reference outputs" />
        </section>
      </div>
      <h3>Outputs side by side</h3>
      <div class="side-by-side" style={{ gridTemplateColumns: `repeat(${c.experiments.length}, minmax(14rem, 1fr))` }} data-testid="side-by-side">
        {c.experiments.map((e: Experiment, i) => {
          const cell = example.runs[i]!;
          return (
            <section key={e.id} aria-label={`${e.name} output`}>
              <h4>
                <span class="swatch" style={{ background: PALETTE[i % PALETTE.length] }} aria-hidden="true" /> {e.name}
                {i === baselineIndex && <span class="badge">baseline</span>}
              </h4>
              <p class="muted small">
                {cell.status} · {seconds(cell.latency)} ·{" "}
                {Object.entries(cell.scores)
                  .map(([k, s]) => `${k} ${s.score ?? s.label ?? "—"}`)
                  .join(", ") || "no scores"}
              </p>
              {i === baselineIndex ? (
                <pre class="json" tabIndex={0} aria-label={`${e.name} output`}>
                  {text(cell) || "(no run)"}
                </pre>
              ) : (
                <TextDiff before={text(base)} after={text(cell)} label={`${e.name} output compared with the baseline`} testId="output-diff" />
              )}
            </section>
          );
        })}
      </div>
    </Dialog>
  );
}
