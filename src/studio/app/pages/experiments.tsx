/**
 * `/studio/experiments`: the datasets and their uploaded experiments (runs, error rate, latency,
 * mean scores), a selection to compare (the first one chosen is the baseline), and an upload of
 * experiment files (the body of `POST /api/v1/datasets/upload-experiment`).
 */
import { useState } from "preact/hooks";
import type { DatasetRecord, ExperimentRecord } from "../../../upload/types.js";
import { ErrorNote, Link, Loading, Table, TableScroll } from "../components/common.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { num, seconds, shortId, when } from "../format.js";
import type { Route } from "../router.js";

export default function ExperimentsPage({ route }: { route: Route }) {
  const { api, router, notify } = useStudio();
  const datasets = useLoad((signal) => api.datasets(signal), []);
  const datasetId = route.query.get("dataset") ?? datasets.data?.[0]?.id ?? null;
  const upload = useAction();
  document.title = "Experiments · graphdock studio";

  const onFiles = (files: FileList | null) =>
    upload.run(async () => {
      let last: string | undefined;
      for (const file of Array.from(files ?? [])) {
        let body: unknown;
        try {
          body = JSON.parse(await file.text());
        } catch (err) {
          throw new Error(`${file.name} is not JSON: ${(err as Error).message}`);
        }
        const result = await api.upload(body);
        last = result.dataset.id;
      }
      notify(`Uploaded ${files?.length ?? 0} experiment file(s)`);
      datasets.reload();
      if (last) router.go(`experiments?dataset=${encodeURIComponent(last)}`, true);
    });

  return (
    <section class="page two-columns" aria-labelledby="experiments-heading">
      <aside class="sidebar" aria-labelledby="datasets-heading">
        <h1 id="experiments-heading">Experiments</h1>
        <div class="field">
          <label for="experiment-files">Upload experiment files (JSON)</label>
          <input id="experiment-files" type="file" accept="application/json,.json" multiple disabled={upload.busy} onChange={(e) => onFiles((e.target as HTMLInputElement).files)} data-testid="upload" />
        </div>
        <ErrorNote error={upload.error} testId="upload-error" />
        <h2 id="datasets-heading">Datasets</h2>
        <ErrorNote error={datasets.error} />
        {!datasets.data && !datasets.error && <Loading what="datasets" />}
        {datasets.data && !datasets.data.length && <p class="muted">No datasets yet: upload an experiment.</p>}
        <ul class="plain-list" data-testid="datasets">
          {datasets.data?.map((d) => (
            <li key={d.id}>
              <Link to={`experiments?dataset=${encodeURIComponent(d.id)}`} replace class={d.id === datasetId ? "item selected" : "item"} aria-current={d.id === datasetId ? "true" : undefined} data-testid="dataset">
                <span class="item-title">{d.name}</span>
                <span class="muted small">
                  {d.example_count} examples · {d.session_count} experiments
                </span>
              </Link>
            </li>
          ))}
        </ul>
      </aside>
      <div class="content">{datasetId && <DatasetExperiments key={datasetId} dataset={datasets.data?.find((d) => d.id === datasetId)} datasetId={datasetId} />}</div>
    </section>
  );
}

function DatasetExperiments(props: { datasetId: string; dataset: DatasetRecord | undefined }) {
  const { api, router } = useStudio();
  const experiments = useLoad((signal) => api.experiments(props.datasetId, signal), [props.datasetId]);
  const [chosen, setChosen] = useState<string[]>([]);
  const list = experiments.data ?? [];
  const keys = [...new Set(list.flatMap((e) => Object.keys(e.feedback_stats ?? {})))];
  const toggle = (id: string, on: boolean) => setChosen((c) => (on ? [...c, id] : c.filter((x) => x !== id)));
  return (
    <section aria-labelledby="dataset-heading">
      <h2 id="dataset-heading">{props.dataset?.name ?? "Dataset"}</h2>
      {props.dataset && (
        <p class="muted">
          {props.dataset.example_count} examples · last experiment {when(props.dataset.last_session_start_time)}
        </p>
      )}
      <ErrorNote error={experiments.error} />
      {!experiments.data && !experiments.error && <Loading what="experiments" />}
      {list.length > 0 && (
        <>
          <TableScroll label="Experiments">
            <Table caption="Experiments of the dataset; choose two or more to compare" head={["Compare", "Experiment", "Started", "Runs", "Errors", "Latency p50", ...keys]} testId="experiments">
                {list.map((e: ExperimentRecord) => (
                  <tr key={e.id}>
                    <td>
                      <input
                        type="checkbox"
                        id={`choose-${e.id}`}
                        checked={chosen.includes(e.id)}
                        onChange={(ev) => toggle(e.id, (ev.target as HTMLInputElement).checked)}
                        aria-label={`Compare ${e.name}`}
                        data-testid="choose-experiment"
                      />
                      {chosen[0] === e.id && <span class="badge">baseline</span>}
                    </td>
                    <td>
                      <label for={`choose-${e.id}`}>{e.name}</label> <code class="small muted">{shortId(e.id)}</code>
                    </td>
                    <td>{when(e.start_time)}</td>
                    <td>{e.run_count}</td>
                    <td>{e.error_rate === null ? "—" : `${num(e.error_rate * 100, 1)}%`}</td>
                    <td>{seconds(e.latency_p50)}</td>
                    {keys.map((k) => (
                      <td key={k}>{num(e.feedback_stats?.[k]?.avg)}</td>
                    ))}
                  </tr>
                ))}
            </Table>
          </TableScroll>
          <div class="actions">
            <button
              type="button"
              disabled={chosen.length < 2}
              onClick={() => router.go(`experiments/compare?ids=${chosen.map(encodeURIComponent).join(",")}`)}
              data-testid="compare"
            >
              Compare {chosen.length >= 2 ? `${chosen.length} experiments` : "(choose two or more)"}
            </button>
          </div>
        </>
      )}
    </section>
  );
}
