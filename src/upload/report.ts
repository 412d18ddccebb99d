/**
 * Renders a `Comparison` as one self-contained HTML page (inline CSS and SVG, no scripts, no
 * external assets) and as CSV. Core-safe: strings in, strings out.
 */
import type { Comparison, ExampleComparison, ExampleRunCell, FeedbackStats, KeyComparison, VersusBaseline } from "./types.js";

export interface CompareReportOptions {
  /** Page title; default "Experiment comparison: <dataset name>". */
  title?: string;
  /** At most this many example rows (regressions first); default 1000. The CSV has them all. */
  maxExamples?: number;
}

const PALETTE = ["#4f46e5", "#0d9488", "#d97706", "#db2777", "#2563eb", "#65a30d", "#9333ea", "#dc2626"];

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function num(x: number | null | undefined, digits = 3): string {
  if (x == null) return "–";
  return Number.isInteger(x) ? String(x) : x.toFixed(digits).replace(/\.?0+$/, "");
}
const signed = (x: number | null | undefined, digits = 3) => (x == null ? "–" : (x > 0 ? "+" : x < 0 ? "−" : "±") + num(Math.abs(x), digits));
const secs = (x: number | null | undefined) => (x == null ? "–" : `${num(x, x < 10 ? 3 : 1)} s`);
const pct = (x: number | null | undefined) => (x == null ? "–" : `${num(x * 100, 1)}%`);
const json = (v: unknown) => esc(JSON.stringify(v, null, 2) ?? "null");
const preview = (v: unknown, max = 90) => {
  const s = JSON.stringify(v) ?? "";
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

/** "good" / "bad" / "flat" for a delta in the metric's direction; strong when the interval excludes 0. */
function tone(delta: number | null | undefined, higherIsBetter: boolean, vs?: VersusBaseline): string {
  if (delta == null || Math.abs(delta) < 1e-12) return "flat";
  const good = higherIsBetter ? delta > 0 : delta < 0;
  const p = vs?.paired;
  const sure = p?.ci_low != null && p.ci_high != null && (p.ci_low > 0 || p.ci_high < 0);
  return `${good ? "good" : "bad"}${sure ? " sure" : ""}`;
}

function ci(vs: VersusBaseline, digits = 3): string {
  const p = vs.paired;
  return p.ci_low == null ? "–" : `[${signed(p.ci_low, digits)}, ${signed(p.ci_high, digits)}]`;
}

const labels = (stats: FeedbackStats | null) =>
  Object.entries(stats?.values ?? {})
    .map(([k, v]) => `<span>${esc(k)} <b>${v}</b></span>`)
    .join(" · ");

/** Label counts with their share of the experiment's scored examples, most frequent first. */
const labelShares = (stats: FeedbackStats | null) => {
  const entries = Object.entries(stats?.values ?? {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = entries.reduce((n, [, v]) => n + v, 0);
  return entries.length === 0
    ? "–"
    : entries.map(([k, v]) => `<span class="tag">${esc(k)} <b>${v}</b> <small>${pct(v / total)}</small></span>`).join(" ");
};

/**
 * The shortest suffix (at least 8 characters) that tells every example id apart: generated ids
 * (UUIDv7, prefixed ids) often share their beginning, so a prefix would not.
 */
export function shortIds(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const unique = [...new Set(ids)];
  const longest = Math.max(0, ...unique.map((id) => id.length));
  let n = Math.min(8, longest);
  while (n < longest && new Set(unique.map((id) => id.slice(-n))).size < unique.length) n++;
  for (const id of unique) out.set(id, id.length > n ? `…${id.slice(-n)}` : id);
  return out;
}

/** One self-contained HTML page showing the comparison. */
export function compareReport(comparison: Comparison, options: CompareReportOptions = {}): string {
  const c = comparison;
  const title = options.title ?? `Experiment comparison: ${c.dataset.name}`;
  const colour = new Map(c.experiments.map((e, i) => [e.id, PALETTE[i % PALETTE.length]!]));
  const name = new Map(c.experiments.map((e) => [e.id, e.name]));
  const chip = (id: string) =>
    `<span class="exp"><i style="background:${colour.get(id)}"></i>${esc(name.get(id)!)}${id === c.baseline_id ? ' <em class="base">baseline</em>' : ""}</span>`;
  const level = `${num(c.confidence * 100, 1)}% CI`;

  const cards = c.experiments
    .map(
      (e) => `<div class="card" style="border-top-color:${colour.get(e.id)}">
  <div class="card-h">${chip(e.id)}</div>
  ${e.description ? `<p class="muted">${esc(e.description)}</p>` : ""}
  <dl><div><dt>Runs</dt><dd>${e.run_count}</dd></div><div><dt>Errors</dt><dd>${e.error_count} <small>(${pct(e.error_rate)})</small></dd></div>
  <div><dt>Missing</dt><dd>${e.missing_count}</dd></div><div><dt>p50</dt><dd>${secs(e.latency_p50)}</dd></div></dl>
  ${Object.entries(e.extra?.metadata ?? {})
    .map(([k, v]) => `<span class="tag">${esc(k)}: ${esc(typeof v === "string" ? v : JSON.stringify(v))}</span>`)
    .join(" ")}
</div>`,
    )
    .join("\n");

  const keyTable = (k: KeyComparison) => {
    const moves = k.experiments
      .filter((e) => e.vs_baseline && e.vs_baseline.transitions.some((t) => t.from !== t.to))
      .map(
        (e) =>
          `<p class="moves">${chip(c.baseline_id)} → ${chip(e.experiment_id)}: ${e
            .vs_baseline!.transitions.map((t) => `<span class="tag ${t.from === t.to ? "" : "move"}">${esc(t.from)} → ${esc(t.to)} <b>${t.count}</b></span>`)
            .join(" ")}</p>`,
      )
      .join("\n");
    const counts = (vs: VersusBaseline | null) =>
      vs ? `<span class="good-t">${vs.improved}</span> / <span class="bad-t">${vs.regressed}</span> / ${vs.unchanged}` : "";
    const gaps = (vs: VersusBaseline | null) => (vs ? `${vs.missing} / ${vs.unscored}` : "");
    // A key scored only with labels (no numeric score anywhere): label shares and how they moved.
    if (k.experiments.every((e) => e.stats?.avg == null)) {
      const rows = k.experiments
        .map(({ experiment_id: id, stats, vs_baseline: vs }) => {
          const changed = vs ? vs.transitions.filter((t) => t.from !== t.to).reduce((n, t) => n + t.count, 0) : null;
          const same = vs ? vs.transitions.filter((t) => t.from === t.to).reduce((n, t) => n + t.count, 0) : null;
          const labelled = Object.values(stats?.values ?? {}).reduce((n, v) => n + v, 0);
          return `<tr><td>${chip(id)}</td><td class="n">${labelled}</td><td class="shares">${labelShares(stats)}</td>
<td class="n">${changed ?? ""}</td><td class="n">${same ?? ""}</td><td class="n">${vs ? vs.missing : ""}</td></tr>`;
        })
        .join("\n");
      return `<section class="panel"><h3>${esc(k.key)} <small>labels</small></h3>
<table><thead><tr><th>Experiment</th><th>Labelled</th><th>Labels <small>count, share</small></th><th>Changed vs baseline</th><th>Same label</th><th>Missing</th></tr></thead>
<tbody>${rows}</tbody></table>${moves}</section>`;
    }
    const rows = k.experiments
      .map(({ experiment_id: id, stats, vs_baseline: vs }) => {
        const t = vs ? tone(vs.delta, k.higher_is_better, vs) : "";
        const sd = stats?.stdev == null ? "" : ` <small class="sd">± ${num(stats.stdev)}</small>`;
        return `<tr><td>${chip(id)}</td><td class="n">${stats?.n ?? 0}</td><td class="n">${num(stats?.avg)}${sd}</td>
<td class="n delta ${t}">${vs ? signed(vs.delta) : ""}</td><td class="n ci">${vs ? ci(vs) : ""}</td>
<td class="n">${counts(vs)}</td><td class="n">${gaps(vs)}</td><td class="labels">${labels(stats)}</td></tr>`;
      })
      .join("\n");
    return `<section class="panel"><h3>${esc(k.key)} <small>${k.higher_is_better ? "higher is better" : "lower is better"}</small></h3>
<table><thead><tr><th>Experiment</th><th>n</th><th>Mean <small>± sd</small></th><th>Δ vs baseline</th><th>${level} <small>paired</small></th><th>Improved / regressed / same</th><th>Missing / unscored</th><th>Labels</th></tr></thead>
<tbody>${rows}</tbody></table>${moves}</section>`;
  };

  const latencyRows = c.latency.experiments
    .map(({ experiment_id: id, p50, p99, avg, vs_baseline: vs }) => {
      const t = vs ? tone(vs.delta, false, vs) : "";
      return `<tr><td>${chip(id)}</td><td class="n">${secs(p50)}</td><td class="n">${secs(p99)}</td><td class="n">${secs(avg)}</td>
<td class="n delta ${t}">${vs ? `${signed(vs.delta)} s` : ""}</td><td class="n ci">${vs ? ci(vs) : ""}</td>
<td class="n delta ${vs ? tone(vs.p50_delta, false) : ""}">${vs ? `${signed(vs.p50_delta)} s` : ""}</td><td class="n delta ${vs ? tone(vs.p99_delta, false) : ""}">${vs ? `${signed(vs.p99_delta)} s` : ""}</td>
<td class="n">${vs ? `<span class="good-t">${vs.improved}</span> / <span class="bad-t">${vs.regressed}</span>` : ""}</td></tr>`;
    })
    .join("\n");

  const sessionKeys = [...new Set(c.experiments.flatMap((e) => Object.keys(e.session_feedback_stats)))];
  const sessionTable =
    sessionKeys.length === 0
      ? ""
      : `<section class="panel"><h3>Experiment-level scores</h3><table><thead><tr><th>Experiment</th>${sessionKeys.map((k) => `<th>${esc(k)}</th>`).join("")}</tr></thead><tbody>
${c.experiments.map((e) => `<tr><td>${chip(e.id)}</td>${sessionKeys.map((k) => `<td class="n">${num(e.session_feedback_stats[k]?.avg)} <span class="labels">${labels(e.session_feedback_stats[k] ?? null)}</span></td>`).join("")}</tr>`).join("\n")}
</tbody></table></section>`;

  const max = options.maxExamples ?? 1000;
  const ordered = orderExamples(c);
  const shown = ordered.slice(0, max);
  const short = shortIds(c.examples.map((ex) => ex.example_id));
  const exampleRows = shown.map((ex, i) => exampleRow(c, ex, chip, short.get(ex.example_id)!, i === 0)).join("\n");
  const more = ordered.length > shown.length ? `<p class="muted">${ordered.length - shown.length} more examples are in the CSV export.</p>` : "";

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}</style></head>
<body><main>
<header><h1>${esc(title)}</h1>
<p class="muted">Dataset <b>${esc(c.dataset.name)}</b> · ${c.examples.length} examples compared · ${c.experiments.length} experiments · baseline ${esc(name.get(c.baseline_id)!)} · intervals: ${level}, paired bootstrap over examples both scored</p></header>
<section class="cards">${cards}</section>
<section class="charts">${scoreChart(c, colour)}${latencyChart(c, colour)}</section>
<h2>Scores by key</h2>
${c.keys.map(keyTable).join("\n") || '<p class="muted">No evaluation scores were uploaded.</p>'}
${sessionTable}
<h2>Latency</h2>
<section class="panel"><table><thead><tr><th>Experiment</th><th>p50</th><th>p99</th><th>Mean</th><th>Δ mean</th><th>${level} <small>paired</small></th><th>Δ p50</th><th>Δ p99</th><th>Faster / slower</th></tr></thead>
<tbody>${latencyRows}</tbody></table></section>
<h2>Examples <small>regressions first; click a row for inputs and outputs</small></h2>
<section class="examples" style="--n:${c.experiments.length}"><div class="ex-head"><span>Example</span><span>Inputs</span>${c.experiments.map((e) => `<span>${chip(e.id)}<small>${esc(c.keys.map((k) => k.key).join(" · "))}</small></span>`).join("")}</div>
${exampleRows}</section>${more}
</main></body></html>
`;
}

/** Examples with a regression first, then improvements, then failures or gaps, then the rest. */
function orderExamples(c: Comparison): ExampleComparison[] {
  const rank = new Map<string, number>();
  for (const k of c.keys) {
    for (const e of k.experiments) {
      for (const id of e.vs_baseline?.regressed_examples ?? []) rank.set(id, 0);
      for (const id of e.vs_baseline?.improved_examples ?? []) if (!rank.has(id)) rank.set(id, 1);
    }
  }
  const score = (ex: ExampleComparison) => rank.get(ex.example_id) ?? (ex.runs.some((r) => r.status !== "success") ? 2 : 3);
  return c.examples
    .map((ex, i) => ({ ex, i, s: score(ex) }))
    .sort((a, b) => a.s - b.s || a.i - b.i)
    .map((x) => x.ex);
}

function exampleRow(c: Comparison, ex: ExampleComparison, chip: (id: string) => string, shortId: string, open: boolean): string {
  const baseCell = ex.runs.find((r) => r.experiment_id === c.baseline_id)!;
  const badge = (cell: ExampleRunCell) => {
    if (cell.status === "missing") return `<span class="pill missing">missing</span>`;
    const parts = c.keys.map((k) => {
      const s = cell.scores[k.key];
      if (!s) return "";
      const b = baseCell.scores[k.key]?.score;
      const t = cell === baseCell || s.score == null || b == null ? "flat" : tone(s.score - b, k.higher_is_better);
      return `<span class="pill ${t}" title="${esc(k.key)}">${esc(s.label ?? num(s.score, 2))}</span>`;
    });
    return (cell.status === "error" ? `<span class="pill bad sure" title="${esc(cell.error ?? "")}">error</span>` : "") + parts.join("");
  };
  const summaryCells = ex.runs.map((cell) => `<span class="cell">${badge(cell)}</span>`).join("");
  const column = (cell: ExampleRunCell) =>
    `<div class="col"><h4>${chip(cell.experiment_id)} <small>${cell.latency == null ? "" : secs(cell.latency)}</small></h4>${
      cell.status === "missing"
        ? '<p class="muted">Not run by this experiment.</p>'
        : `${cell.error ? `<pre class="err">${esc(cell.error)}</pre>` : ""}<pre>${json(cell.outputs)}</pre>`
    }</div>`;
  return `<details${open ? " open" : ""}><summary><code title="${esc(ex.example_id)}">${esc(shortId)}</code><span class="inp">${esc(preview(ex.inputs))}</span>${summaryCells}</summary>
<div class="grid"><div class="col"><h4>Example <code class="id">${esc(ex.example_id)}</code></h4><h4>Inputs</h4><pre>${json(ex.inputs)}</pre><h4>Expected</h4><pre>${json(ex.expected_outputs)}</pre></div>${ex.runs.map(column).join("")}</div></details>`;
}

/** Grouped bars: mean score per numeric key, one bar per experiment. */
function scoreChart(c: Comparison, colour: Map<string, string>): string {
  const keys = c.keys.filter((k) => k.experiments.some((e) => e.stats?.avg != null));
  if (keys.length === 0) return "";
  const top = Math.max(1, ...keys.flatMap((k) => k.experiments.map((e) => e.stats?.avg ?? 0)));
  const W = 560, H = 260, L = 40, B = 40, T = 16;
  const groupW = (W - L - 10) / keys.length;
  const barW = Math.min(36, (groupW - 16) / c.experiments.length);
  const y = (v: number) => T + (H - T - B) * (1 - v / top);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => `<line x1="${L}" x2="${W - 10}" y1="${y(f * top)}" y2="${y(f * top)}" class="gl"/><text x="${L - 6}" y="${y(f * top) + 4}" class="ax" text-anchor="end">${num(f * top, 2)}</text>`)
    .join("");
  const bars = keys
    .map((k, g) => {
      const x0 = L + g * groupW + (groupW - barW * c.experiments.length) / 2;
      return (
        k.experiments
          .map((e, i) => {
            const v = e.stats?.avg;
            if (v == null) return "";
            const x = x0 + i * barW;
            return `<rect x="${x + 2}" y="${y(v)}" width="${barW - 4}" height="${H - B - y(v)}" rx="3" fill="${colour.get(e.experiment_id)}"><title>${esc(k.key)}: ${num(v)}</title></rect><text x="${x + barW / 2}" y="${y(v) - 4}" class="val" text-anchor="middle">${num(v, 2)}</text>`;
          })
          .join("") + `<text x="${L + g * groupW + groupW / 2}" y="${H - B + 18}" class="ax" text-anchor="middle">${esc(k.key)}</text>`
      );
    })
    .join("");
  return `<figure class="panel"><figcaption>Mean score by key</figcaption><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="Mean score by key">${grid}${bars}</svg></figure>`;
}

/** Horizontal bars: p50 latency per experiment, with a tick at p99. */
function latencyChart(c: Comparison, colour: Map<string, string>): string {
  const rows = c.latency.experiments.filter((e) => e.p50 != null);
  if (rows.length === 0) return "";
  const name = new Map(c.experiments.map((e) => [e.id, e.name]));
  const top = Math.max(...rows.map((e) => e.p99 ?? e.p50!)) || 1;
  const W = 560, L = 150, R = 150, rowH = 34, T = 10;
  const H = T + rows.length * rowH + 30;
  const x = (v: number) => L + (W - L - R) * (v / top);
  const bars = rows
    .map((e, i) => {
      const yy = T + i * rowH;
      const label = name.get(e.experiment_id)!;
      return `<text x="${L - 8}" y="${yy + 19}" class="ax" text-anchor="end">${esc(label.length > 20 ? `${label.slice(0, 19)}…` : label)}</text>
<rect x="${L}" y="${yy + 6}" width="${Math.max(1, x(e.p50!) - L)}" height="18" rx="3" fill="${colour.get(e.experiment_id)}"><title>p50 ${secs(e.p50)}</title></rect>
${e.p99 != null ? `<line x1="${x(e.p99)}" x2="${x(e.p99)}" y1="${yy + 2}" y2="${yy + 28}" class="p99"/><line x1="${x(e.p50!)}" x2="${x(e.p99)}" y1="${yy + 15}" y2="${yy + 15}" class="p99 thin"/>` : ""}
<text x="${x(e.p99 ?? e.p50!) + 6}" y="${yy + 19}" class="val">${secs(e.p50)} · p99 ${secs(e.p99)}</text>`;
    })
    .join("");
  return `<figure class="panel"><figcaption>Latency: p50 bar, p99 tick</figcaption><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="Latency by experiment"><line x1="${L}" x2="${L}" y1="${T}" y2="${H - 24}" class="gl"/>${bars}<text x="${L}" y="${H - 6}" class="ax">0 s</text><text x="${W - R}" y="${H - 6}" class="ax" text-anchor="end">${secs(top)}</text></svg></figure>`;
}

const CSS = `
:root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7fb;--good:#047857;--good-bg:#d1fae5;--bad:#b91c1c;--bad-bg:#fee2e2}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1200px;margin:0 auto;padding:28px 24px 60px}h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px}h2 small,h3 small{color:var(--muted);font-weight:400;font-size:12px;margin-left:6px}
h3{font-size:15px;margin:0 0 10px}.muted{color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:14px;margin:18px 0}
.card,.panel{background:#fff;border:1px solid var(--line);border-radius:10px;padding:14px 16px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.card{border-top:4px solid}.card p{margin:4px 0 8px;font-size:13px}.card dl{display:grid;grid-template-columns:repeat(4,1fr);gap:4px;margin:8px 0}
.card dt{font-size:11px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}.card dd{margin:0;font-weight:600;font-variant-numeric:tabular-nums}.card dd small{font-weight:400;color:var(--muted)}
.exp{display:inline-flex;align-items:center;gap:6px;font-weight:600;white-space:nowrap}.exp i{width:10px;height:10px;border-radius:3px;display:inline-block}
.base{font-style:normal;font-size:10px;text-transform:uppercase;letter-spacing:.05em;background:#eef2ff;color:#4338ca;border-radius:4px;padding:1px 5px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:14px}figure{margin:0}figcaption{font-weight:600;margin-bottom:6px}svg{width:100%;height:auto}
.gl{stroke:var(--line)}.ax{fill:var(--muted);font-size:11px}.val{fill:var(--fg);font-size:11px;font-weight:600}.p99{stroke:var(--fg);stroke-width:2}.p99.thin{stroke-width:1;stroke-dasharray:3 2}
.panel{margin-bottom:14px;overflow-x:auto}table{border-collapse:collapse;width:100%}th,td{padding:7px 6px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
th{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}th small{text-transform:none;font-weight:400}.sd{color:var(--muted);font-weight:400}tr:last-child td{border-bottom:0}
.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.ci{color:var(--muted);font-size:12px}
.delta{font-weight:700}.delta.good{color:var(--good)}.delta.bad{color:var(--bad)}.delta.sure.good{background:var(--good-bg)}.delta.sure.bad{background:var(--bad-bg)}.delta.flat{color:var(--muted)}
.labels,.shares{font-size:12px;color:var(--muted)}.shares .tag{color:var(--fg)}.shares small{color:var(--muted)}.labels span{white-space:nowrap}.labels b{color:var(--fg)}.good-t{color:var(--good)}.bad-t{color:var(--bad)}
.tag{display:inline-block;background:#f3f4f6;border-radius:5px;padding:1px 6px;margin:1px 2px;font-size:12px}.tag.move{background:#fef3c7}.moves{margin:10px 0 0;font-size:13px}
.examples{overflow-x:auto}.examples details{background:#fff;border:1px solid var(--line);border-radius:8px;margin-bottom:6px}
summary,.ex-head{cursor:pointer;padding:8px 12px;display:grid;grid-template-columns:minmax(0,auto) minmax(80px,1fr) repeat(var(--n),minmax(0,220px));align-items:center;gap:10px}.ex-head>span{min-width:0;overflow:hidden}.exp{max-width:100%}
.ex-head{cursor:default;padding-bottom:4px;font-size:12px}.ex-head small{display:block;color:var(--muted);font-weight:400;font-size:11px;margin-left:16px;white-space:normal}summary code{color:var(--muted);font-size:12px;white-space:nowrap}code.id{font-weight:400;color:var(--muted);word-break:break-all}
.inp{min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-family:ui-monospace,Menlo,monospace;font-size:12px}
.cell{display:flex;gap:3px;flex-wrap:wrap}
.pill{font-size:11px;border-radius:999px;padding:1px 7px;background:#f3f4f6;color:var(--fg);white-space:nowrap}.pill.good{background:var(--good-bg);color:var(--good)}.pill.bad{background:var(--bad-bg);color:var(--bad)}.pill.missing{background:#fff;border:1px dashed #9ca3af;color:var(--muted)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:12px;padding:4px 12px 12px;border-top:1px solid var(--line)}
.col h4{margin:8px 0 4px;font-size:12px}pre{background:#f9fafb;border:1px solid var(--line);border-radius:6px;padding:8px;margin:0 0 6px;font-size:12px;white-space:pre-wrap;word-break:break-word;max-height:320px;overflow:auto}
pre.err{background:var(--bad-bg);color:var(--bad);border-color:#fecaca}
`;

/**
 * The comparison's example matrix as CSV (RFC 4180): one row per example; per experiment its
 * status, outputs (JSON), error, latency and one column per feedback key (mean score, or the
 * label for categorical-only keys).
 */
export function compareCsv(comparison: Comparison): string {
  const c = comparison;
  const keys = c.keys.map((k) => k.key);
  const header = ["example_id", "inputs", "expected_outputs"];
  for (const e of c.experiments) {
    header.push(...["status", "outputs", "error", "latency_s", ...keys].map((col) => `${e.name}: ${col}`));
  }
  const lines = [header];
  for (const ex of c.examples) {
    const row: Array<string | number | null> = [ex.example_id, JSON.stringify(ex.inputs), JSON.stringify(ex.expected_outputs)];
    for (const cell of ex.runs) {
      row.push(cell.status, cell.status === "missing" ? null : JSON.stringify(cell.outputs), cell.error, cell.latency);
      for (const key of keys) row.push(cell.scores[key]?.score ?? cell.scores[key]?.label ?? null);
    }
    lines.push(row.map(csvField));
  }
  return lines.map((l) => l.join(",")).join("\r\n") + "\r\n";
}

function csvField(v: string | number | null): string {
  if (v === null) return "";
  if (typeof v === "number") return String(v);
  // A leading = + @ would run as a formula in spreadsheets: keep it text.
  const s = /^[=+@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
