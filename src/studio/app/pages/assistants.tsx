/**
 * `/studio`: the graphs and their assistants. For the selected assistant: its graph drawn
 * (subgraphs expanded to the chosen depth), its schemas, its versions with a diff between any two
 * (and "make latest"), and a form that saves a new version; a dialog creates an assistant.
 */
import type { Assistant, AssistantVersion } from "@langchain/langgraph-sdk";
import { useState } from "preact/hooks";
import { Dialog } from "../components/dialog.js";
import { ErrorNote, FormActions, InputField, Json, Link, Loading, SelectField, Table, TextField } from "../components/common.js";
import { GraphView, type DrawnGraph } from "../components/graph-view.js";
import { Tabs } from "../components/tabs.js";
import { TextDiff } from "../components/text-diff.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { isObject, parseJson, pretty, shortId, when } from "../format.js";
import type { Route } from "../router.js";

const PAGE = 100;

export default function AssistantsPage({ route }: { route: Route }) {
  const { api, router } = useStudio();
  const [limit, setLimit] = useState(PAGE);
  const [creating, setCreating] = useState(false);
  const list = useLoad((signal) => api.client.assistants.search({ limit: limit + 1, sortBy: "updated_at", sortOrder: "desc", signal }), [limit]);
  const selectedId = route.query.get("assistant") ?? list.data?.[0]?.assistant_id ?? null;
  const tab = route.query.get("tab") ?? "graph";
  const select = (id: string, t = tab) => router.go(`?assistant=${encodeURIComponent(id)}&tab=${t}`, true);
  document.title = "Assistants · graphdock studio";

  const assistants = list.data?.slice(0, limit) ?? [];
  const graphs = [...new Set(assistants.map((a) => a.graph_id))].sort();
  return (
    <section class="page two-columns">
      <aside class="sidebar" aria-labelledby="assistants-heading">
        <div class="row spread">
          <h1 id="assistants-heading">Assistants</h1>
          <button type="button" onClick={() => setCreating(true)} data-testid="assistant-new">
            New assistant
          </button>
        </div>
        <ErrorNote error={list.error} />
        {!list.data && !list.error && <Loading what="assistants" />}
        {graphs.map((graph) => (
          <div key={graph} class="group">
            <h2 class="group-title">
              Graph <code>{graph}</code>
            </h2>
            <ul class="plain-list" data-testid="assistant-list">
              {assistants
                .filter((a) => a.graph_id === graph)
                .map((a) => (
                  <li key={a.assistant_id}>
                    <Link
                      to={`?assistant=${encodeURIComponent(a.assistant_id)}&tab=${tab}`}
                      replace
                      class={a.assistant_id === selectedId ? "item selected" : "item"}
                      aria-current={a.assistant_id === selectedId ? "true" : undefined}
                      data-testid="assistant-item"
                    >
                      <span class="item-title">{a.name || shortId(a.assistant_id)}</span>
                      <span class="muted small">
                        v{a.version} · {shortId(a.assistant_id)}
                      </span>
                    </Link>
                  </li>
                ))}
            </ul>
          </div>
        ))}
        {(list.data?.length ?? 0) > limit && (
          <button type="button" class="secondary" onClick={() => setLimit((l) => l + PAGE)}>
            Show more assistants
          </button>
        )}
      </aside>
      <div class="content">
        {selectedId ? (
          <AssistantDetail key={selectedId} assistantId={selectedId} tab={tab} onTab={(t) => select(selectedId, t)} onChanged={list.reload} />
        ) : (
          list.data && <p class="muted">No assistants yet. Register a graph, or create an assistant for one.</p>
        )}
      </div>
      {creating && (
        <AssistantForm
          graphs={graphs}
          onClose={() => setCreating(false)}
          onSaved={(a) => {
            setCreating(false);
            list.reload();
            select(a.assistant_id, "graph");
          }}
        />
      )}
    </section>
  );
}

function AssistantDetail(props: { assistantId: string; tab: string; onTab(tab: string): void; onChanged(): void }) {
  const { api } = useStudio();
  const assistant = useLoad((signal) => api.client.assistants.get(props.assistantId, { signal }), [props.assistantId]);
  const a = assistant.data;
  if (assistant.error) return <ErrorNote error={assistant.error} />;
  if (!a) return <Loading what="the assistant" />;
  return (
    <article aria-labelledby="assistant-title" data-testid="assistant-detail">
      <header class="detail-head">
        <h2 id="assistant-title">{a.name || a.assistant_id}</h2>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{a.assistant_id}</code>
          </dd>
          <dt>Graph</dt>
          <dd>
            <code>{a.graph_id}</code>
          </dd>
          <dt>Version</dt>
          <dd data-testid="assistant-version">{a.version}</dd>
          <dt>Updated</dt>
          <dd>{when(a.updated_at)}</dd>
        </dl>
        {a.description && <p>{a.description}</p>}
      </header>
      <Tabs
        label="Assistant"
        current={props.tab}
        onSelect={props.onTab}
        tabs={[
          ["graph", "Graph"],
          ["schemas", "Schemas"],
          ["versions", "Versions"],
          ["edit", "Edit"],
        ]}
      >
        {props.tab === "graph" && <GraphTab assistant={a} />}
        {props.tab === "schemas" && <SchemasTab assistant={a} />}
        {props.tab === "versions" && (
          <VersionsTab
            assistant={a}
            onChanged={() => {
              assistant.reload();
              props.onChanged();
            }}
          />
        )}
        {props.tab === "edit" && (
          <EditTab
            assistant={a}
            onSaved={(next) => {
              assistant.set(next);
              props.onChanged();
            }}
          />
        )}
      </Tabs>
    </article>
  );
}

function GraphTab({ assistant }: { assistant: Assistant }) {
  const { api } = useStudio();
  const [xray, setXray] = useState("false");
  const graph = useLoad(
    (signal) => api.client.assistants.getGraph(assistant.assistant_id, { xray: xray === "true" ? true : xray === "false" ? false : Number(xray), signal }) as Promise<DrawnGraph>,
    [assistant.assistant_id, xray],
  );
  return (
    <div>
      <div class="toolbar">
        <SelectField
          label="Subgraphs"
          value={xray}
          onChange={setXray}
          testId="xray"
          options={[
            ["false", "Collapsed"],
            ["1", "Expanded one level"],
            ["true", "Fully expanded"],
          ]}
        />
      </div>
      <ErrorNote error={graph.error} />
      {graph.data ? <GraphView graph={graph.data} title={`Graph ${assistant.graph_id}`} /> : !graph.error && <Loading what="the graph" />}
    </div>
  );
}

const SCHEMAS: Array<[key: string, label: string]> = [
  ["input_schema", "Input"],
  ["output_schema", "Output"],
  ["state_schema", "State"],
  ["config_schema", "Config"],
  ["context_schema", "Context"],
];

function SchemasTab({ assistant }: { assistant: Assistant }) {
  const { api } = useStudio();
  const schemas = useLoad((signal) => api.client.assistants.getSchemas(assistant.assistant_id, { signal }) as unknown as Promise<Record<string, unknown>>, [assistant.assistant_id]);
  if (schemas.error) return <ErrorNote error={schemas.error} />;
  if (!schemas.data) return <Loading what="the schemas" />;
  return (
    <div class="schemas" data-testid="schemas">
      {SCHEMAS.map(([key, label]) => (
        <details key={key} open={key === "input_schema"}>
          <summary>
            {label} schema{schemas.data![key] ? "" : " (none)"}
          </summary>
          {schemas.data![key] ? <Json value={schemas.data![key]} label={`${label} schema`} /> : <p class="muted">The graph declares none.</p>}
        </details>
      ))}
    </div>
  );
}

/** What a version diff compares. */
const versionText = (v: AssistantVersion | undefined) =>
  v ? pretty({ name: (v as { name?: string }).name, description: (v as { description?: string | null }).description ?? null, config: v.config, context: (v as { context?: unknown }).context ?? {}, metadata: v.metadata }) : "";

function VersionsTab({ assistant, onChanged }: { assistant: Assistant; onChanged(): void }) {
  const { api, notify } = useStudio();
  const versions = useLoad((signal) => api.client.assistants.getVersions(assistant.assistant_id, { limit: 100, signal }), [assistant.assistant_id, assistant.version]);
  const list = versions.data ?? [];
  const [a, setA] = useState<string>("");
  const [b, setB] = useState<string>("");
  const action = useAction();
  if (versions.error) return <ErrorNote error={versions.error} />;
  if (!versions.data) return <Loading what="the versions" />;
  const byNumber = (n: string) => list.find((v) => String(v.version) === n);
  const left = a || String(list[1]?.version ?? list[0]?.version ?? "");
  const right = b || String(list[0]?.version ?? "");
  const options = list.map((v): [string, string] => [String(v.version), `v${v.version} · ${when(v.created_at)}`]);
  return (
    <div data-testid="versions">
      <Table caption="Versions of the assistant" head={["Version", "Name", "Created", ""]}>
          {list.map((v) => (
            <tr key={v.version}>
              <td>
                v{v.version}
                {v.version === assistant.version ? " (latest)" : ""}
              </td>
              <td>{(v as { name?: string }).name ?? ""}</td>
              <td>{when(v.created_at)}</td>
              <td>
                {v.version !== assistant.version && (
                  <button
                    type="button"
                    class="secondary small"
                    disabled={action.busy}
                    onClick={() =>
                      action.run(async () => {
                        await api.client.assistants.setLatest(assistant.assistant_id, v.version);
                        notify(`Version ${v.version} is now the latest`);
                        onChanged();
                      })
                    }
                  >
                    Make latest
                  </button>
                )}
              </td>
            </tr>
          ))}
      </Table>
      <ErrorNote error={action.error} />
      <h3>Compare two versions</h3>
      <div class="toolbar">
        <SelectField label="From" value={left} onChange={setA} options={options} testId="diff-from" />
        <SelectField label="To" value={right} onChange={setB} options={options} testId="diff-to" />
      </div>
      <TextDiff before={versionText(byNumber(left))} after={versionText(byNumber(right))} label={`Changes from version ${left} to ${right}`} testId="version-diff" />
    </div>
  );
}

/** The JSON fields of the assistant form. */
function useJsonFields(initial: Record<string, unknown>) {
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(Object.entries(initial).map(([k, v]) => [k, pretty(v ?? {})])));
  const problems: Record<string, string | null> = {};
  const values: Record<string, unknown> = {};
  for (const [k, text] of Object.entries(texts)) {
    const parsed = parseJson(text, k);
    if (!parsed.ok) problems[k] = parsed.message;
    else if (parsed.value !== undefined && !isObject(parsed.value)) problems[k] = `${k} must be a JSON object`;
    else values[k] = parsed.value ?? {};
  }
  return { texts, set: (k: string, v: string) => setTexts((t) => ({ ...t, [k]: v })), problems, values, valid: Object.keys(problems).length === 0 };
}

function EditTab({ assistant, onSaved }: { assistant: Assistant; onSaved(a: Assistant): void }) {
  const { api, notify } = useStudio();
  const [name, setName] = useState(assistant.name ?? "");
  const [description, setDescription] = useState((assistant as { description?: string | null }).description ?? "");
  const json = useJsonFields({ config: assistant.config, context: (assistant as { context?: unknown }).context ?? {}, metadata: assistant.metadata });
  const [initialTexts] = useState(json.texts);
  const action = useAction();
  return (
    <form
      class="form"
      data-testid="assistant-edit"
      onSubmit={(e) => {
        e.preventDefault();
        if (!json.valid) return;
        void action.run(async () => {
          // Only what changed: the rest of the new version is the current one's.
          const changes: Record<string, unknown> = {};
          if (name !== (assistant.name ?? "")) changes.name = name;
          if (description !== ((assistant as { description?: string | null }).description ?? "")) changes.description = description;
          for (const key of ["config", "context", "metadata"]) if (json.texts[key] !== initialTexts[key]) changes[key] = json.values[key];
          const next = await api.client.assistants.update(assistant.assistant_id, changes as never);
          notify(`Saved version ${next.version}`);
          onSaved(next);
        });
      }}
    >
      <p class="muted">Saving creates a new version and makes it the latest.</p>
      <InputField label="Name" value={name} onInput={setName} testId="edit-name" />
      <InputField label="Description" value={description} onInput={setDescription} />
      <TextField label="Config (JSON)" value={json.texts.config!} onInput={(v) => json.set("config", v)} problem={json.problems.config} rows={5} />
      <TextField label="Context (JSON)" value={json.texts.context!} onInput={(v) => json.set("context", v)} problem={json.problems.context} rows={4} testId="edit-context" />
      <TextField label="Metadata (JSON)" value={json.texts.metadata!} onInput={(v) => json.set("metadata", v)} problem={json.problems.metadata} rows={3} />
      <ErrorNote error={action.error} />
      <div class="actions">
        <button type="submit" disabled={action.busy || !json.valid} data-testid="edit-save">
          Save new version
        </button>
      </div>
    </form>
  );
}

function AssistantForm(props: { graphs: string[]; onClose(): void; onSaved(a: Assistant): void }) {
  const { api, notify } = useStudio();
  const [graphId, setGraphId] = useState(props.graphs[0] ?? "");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const json = useJsonFields({ config: {}, context: {}, metadata: {} });
  const action = useAction();
  return (
    <Dialog title="New assistant" onClose={props.onClose} testId="assistant-create">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!json.valid || !graphId) return;
          void action.run(async () => {
            const created = await api.client.assistants.create({
              graphId,
              name: name || undefined,
              description: description || undefined,
              config: json.values.config as never,
              context: json.values.context as never,
              metadata: json.values.metadata as never,
            } as never);
            notify(`Created assistant ${created.name}`);
            props.onSaved(created);
          });
        }}
      >
        {props.graphs.length ? (
          <SelectField label="Graph" value={graphId} onChange={setGraphId} options={props.graphs.map((g) => [g, g])} testId="create-graph" />
        ) : (
          <InputField label="Graph id" value={graphId} onInput={setGraphId} testId="create-graph" />
        )}
        <InputField label="Name" value={name} onInput={setName} testId="create-name" />
        <InputField label="Description" value={description} onInput={setDescription} />
        <TextField label="Config (JSON)" value={json.texts.config!} onInput={(v) => json.set("config", v)} problem={json.problems.config} rows={3} />
        <TextField label="Context (JSON)" value={json.texts.context!} onInput={(v) => json.set("context", v)} problem={json.problems.context} rows={3} testId="create-context" />
        <TextField label="Metadata (JSON)" value={json.texts.metadata!} onInput={(v) => json.set("metadata", v)} problem={json.problems.metadata} rows={3} />
        <ErrorNote error={action.error} />
        <FormActions submit="Create" disabled={action.busy || !json.valid || !graphId} testId="create-submit" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
