/**
 * `/studio/runs`: runs and crons. Runs of one thread (`?thread=<id>`) or the latest runs of the
 * most recently updated threads, with their status and a cancel; a dialog starts a background
 * run. Crons listed with their schedule and next run, paused and resumed by their `enabled` flag,
 * deleted, and created in a dialog.
 */
import type { Cron, Run, Thread } from "@langchain/langgraph-sdk";
import { useState } from "preact/hooks";
import { AssistantField } from "../components/assistant-field.js";
import { Dialog } from "../components/dialog.js";
import { ErrorNote, FormActions, InputField, Link, Loading, SelectField, Status, Table, TableScroll, TextField } from "../components/common.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { isObject, parseJson, shortId, when } from "../format.js";
import type { Route } from "../router.js";

/** Threads whose runs make up "recent runs": the most recently active (changed since created) of the last updated. */
const RECENT_THREADS = 10;
const SCANNED_THREADS = 100;
const CRON_PAGE = 50;

export default function RunsPage({ route }: { route: Route }) {
  document.title = "Runs & crons · graphdock studio";
  return (
    <section class="page" aria-labelledby="runs-heading">
      <h1 id="runs-heading">Runs &amp; crons</h1>
      <Runs route={route} />
      <Crons />
    </section>
  );
}

function Runs({ route }: { route: Route }) {
  const { api, router, notify } = useStudio();
  const threadId = route.query.get("thread") ?? "";
  const [draft, setDraft] = useState(threadId);
  const [creating, setCreating] = useState(false);
  const action = useAction();
  const runs = useLoad(
    async (signal) => {
      if (threadId) return (await api.client.runs.list(threadId, { limit: 100, signal } as never)) as Run[];
      // The SDK lists runs per thread only: read those of the threads that changed since created (D119).
      const threads = (await api.client.threads.search({ limit: SCANNED_THREADS, sortBy: "updated_at", sortOrder: "desc", select: ["thread_id", "created_at", "updated_at"], signal } as never)) as Thread[];
      const active = threads.filter((t) => t.updated_at !== t.created_at).slice(0, RECENT_THREADS);
      const lists = await Promise.all(active.map((t) => api.client.runs.list(t.thread_id, { limit: 10, signal } as never) as Promise<Run[]>));
      return lists.flat().sort((a, b) => b.created_at.localeCompare(a.created_at));
    },
    [threadId],
  );
  return (
    <section aria-labelledby="runs-list-heading" class="panel">
      <div class="row spread">
        <h2 id="runs-list-heading">{threadId ? "Runs of the thread" : "Latest runs of the most recently active threads"}</h2>
        <button type="button" onClick={() => setCreating(true)} data-testid="run-new">
          New run
        </button>
      </div>
      <form
        class="toolbar"
        role="search"
        aria-label="Runs of a thread"
        onSubmit={(e) => {
          e.preventDefault();
          router.go(draft.trim() ? `runs?thread=${encodeURIComponent(draft.trim())}` : "runs", true);
        }}
      >
        <InputField label="Thread id (empty: recent threads)" value={draft} onInput={setDraft} testId="runs-thread" />
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <ErrorNote error={runs.error ?? action.error} />
      {!runs.data && !runs.error && <Loading what="runs" />}
      {runs.data && !runs.data.length && <p class="muted">No runs.</p>}
      {runs.data && runs.data.length > 0 && (
        <TableScroll label="Runs">
          <Table caption="Runs" head={["Run", "Thread", "Assistant", "Status", "Created", ""]} testId="runs-table">
              {runs.data.map((r) => (
                <tr key={r.run_id}>
                  <td>
                    <code>{shortId(r.run_id)}</code>
                  </td>
                  <td>{r.thread_id ? <Link to={`threads/${encodeURIComponent(r.thread_id)}`}>{shortId(r.thread_id)}</Link> : "—"}</td>
                  <td>
                    <code>{shortId(r.assistant_id)}</code>
                  </td>
                  <td>
                    <Status status={r.status} />
                  </td>
                  <td>{when(r.created_at)}</td>
                  <td>
                    {(r.status === "pending" || r.status === "running") && r.thread_id && (
                      <button
                        type="button"
                        class="secondary small"
                        onClick={() =>
                          action.run(async () => {
                            await api.client.runs.cancel(r.thread_id!, r.run_id);
                            notify("Run cancelled");
                            runs.reload();
                          })
                        }
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
          </Table>
        </TableScroll>
      )}
      {creating && (
        <RunForm
          threadId={threadId}
          onClose={() => setCreating(false)}
          onCreated={(run) => {
            setCreating(false);
            notify(`Run ${shortId(run.run_id)} created`);
            runs.reload();
          }}
        />
      )}
    </section>
  );
}

function RunForm(props: { threadId: string; onClose(): void; onCreated(run: Run): void }) {
  const { api } = useStudio();
  const [assistant, setAssistant] = useState("");
  const [target, setTarget] = useState(props.threadId ? "existing" : "new");
  const [threadId, setThreadId] = useState(props.threadId);
  const [input, setInput] = useState('{"messages": [{"role": "user", "content": "Hello"}]}');
  const parsed = parseJson(input, "The input");
  const action = useAction();
  return (
    <Dialog title="New background run" onClose={props.onClose} testId="run-create">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!parsed.ok || !assistant) return;
          void action.run(async () => {
            const thread = target === "new" ? (await api.client.threads.create()).thread_id : target === "existing" ? threadId.trim() : null;
            props.onCreated(await api.client.runs.create(thread, assistant, { input: (parsed.value ?? null) as never }));
          });
        }}
      >
        <AssistantField value={assistant} onChange={setAssistant} testId="run-assistant" />
        <SelectField
          label="Thread"
          value={target}
          onChange={setTarget}
          options={[
            ["new", "A new thread"],
            ["existing", "An existing thread"],
            ["none", "No thread (stateless)"],
          ]}
        />
        {target === "existing" && <InputField label="Thread id" value={threadId} onInput={setThreadId} />}
        <TextField label="Input (JSON)" value={input} onInput={setInput} rows={4} problem={parsed.ok ? null : parsed.message} testId="run-input" />
        <ErrorNote error={action.error} />
        <FormActions submit="Start run" disabled={!parsed.ok || !assistant || action.busy} testId="run-submit" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

function Crons() {
  const { api, notify } = useStudio();
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const crons = useLoad(
    async (signal) => {
      const [items, total] = await Promise.all([
        api.client.crons.search({ limit: CRON_PAGE, offset, signal } as never) as Promise<Cron[]>,
        api.client.crons.count({ signal } as never) as Promise<number>,
      ]);
      return { items, total };
    },
    [offset],
  );
  const action = useAction();
  // A toggle shows at once; the list catches up when the update is saved.
  const [toggled, setToggled] = useState<Record<string, boolean>>({});
  const toggle = async (cron: Cron, enabled: boolean) => {
    setToggled((t) => ({ ...t, [cron.cron_id]: enabled }));
    await action.run(async () => {
      await api.client.crons.update(cron.cron_id, { enabled });
      notify(enabled ? "Cron resumed" : "Cron paused");
      crons.reload();
    });
    setToggled(({ [cron.cron_id]: _, ...rest }) => rest);
  };
  return (
    <section aria-labelledby="crons-heading" class="panel">
      <div class="row spread">
        <h2 id="crons-heading">Crons</h2>
        <button type="button" onClick={() => setCreating(true)} data-testid="cron-new">
          New cron
        </button>
      </div>
      <ErrorNote error={crons.error ?? action.error} />
      {!crons.data && !crons.error && <Loading what="crons" />}
      {crons.data && !crons.data.items.length && <p class="muted">No crons.</p>}
      {crons.data && crons.data.items.length > 0 && (
        <TableScroll label="Crons">
          <Table caption="Crons" head={["Schedule", "Assistant", "Thread", "Next run", "Enabled", ""]} testId="crons-table">
              {crons.data.items.map((c) => (
                <tr key={c.cron_id} data-testid="cron-row">
                  <td>
                    <code>{c.schedule}</code>
                    {c.timezone ? ` (${c.timezone})` : ""}
                  </td>
                  <td>
                    <code>{shortId(c.assistant_id)}</code>
                  </td>
                  <td>{c.thread_id ? <Link to={`threads/${encodeURIComponent(c.thread_id)}`}>{shortId(c.thread_id)}</Link> : "new each run"}</td>
                  <td>{(toggled[c.cron_id] ?? c.enabled) === false ? "paused" : when(c.next_run_date)}</td>
                  <td>
                    <label class="inline">
                      {/* Uncontrolled: the box keeps the user's click; a new record (key) redraws it. */}
                      <input key={`${c.cron_id}:${String(c.enabled)}`} type="checkbox" defaultChecked={c.enabled !== false} disabled={action.busy} onChange={(e) => toggle(c, (e.target as HTMLInputElement).checked)} data-testid="cron-enabled" />
                      <span class="sr-only">Cron {c.schedule} enabled</span>
                    </label>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() =>
                        action.run(async () => {
                          await api.client.crons.delete(c.cron_id);
                          notify("Cron deleted");
                          crons.reload();
                        })
                      }
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
          </Table>
        </TableScroll>
      )}
      {crons.data && crons.data.total > CRON_PAGE && (
        <nav class="pager" aria-label="Pages of crons">
          <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset((o) => Math.max(0, o - CRON_PAGE))}>
            Previous page
          </button>
          <span>
            {offset + 1}–{Math.min(offset + CRON_PAGE, crons.data.total)} of {crons.data.total}
          </span>
          <button type="button" class="secondary" disabled={offset + CRON_PAGE >= crons.data.total} onClick={() => setOffset((o) => o + CRON_PAGE)}>
            Next page
          </button>
        </nav>
      )}
      {creating && (
        <CronForm
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            notify("Cron created");
            crons.reload();
          }}
        />
      )}
    </section>
  );
}

function CronForm(props: { onClose(): void; onCreated(): void }) {
  const { api } = useStudio();
  const [assistant, setAssistant] = useState("");
  const [schedule, setSchedule] = useState("0 * * * *");
  const [timezone, setTimezone] = useState("");
  const [threadId, setThreadId] = useState("");
  const [input, setInput] = useState('{"messages": [{"role": "user", "content": "Hello"}]}');
  const [enabled, setEnabled] = useState(true);
  const parsed = parseJson(input, "The input");
  const problem = parsed.ok ? (parsed.value !== undefined && !isObject(parsed.value) ? "The input must be a JSON object" : null) : parsed.message;
  const action = useAction();
  return (
    <Dialog title="New cron" onClose={props.onClose} testId="cron-create">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem || !assistant) return;
          void action.run(async () => {
            const payload = { schedule, input: (parsed.ok ? parsed.value : undefined) as never, enabled, ...(timezone ? { timezone } : {}) };
            if (threadId.trim()) await api.client.crons.createForThread(threadId.trim(), assistant, payload);
            else await api.client.crons.create(assistant, payload);
            props.onCreated();
          });
        }}
      >
        <AssistantField value={assistant} onChange={setAssistant} testId="cron-assistant" />
        <InputField label="Schedule (cron expression)" value={schedule} onInput={setSchedule} testId="cron-schedule" />
        <InputField label="Timezone (IANA, empty: UTC)" value={timezone} onInput={setTimezone} />
        <InputField label="Thread id (empty: a new thread each run)" value={threadId} onInput={setThreadId} />
        <TextField label="Input (JSON)" value={input} onInput={setInput} rows={4} problem={problem} />
        <label class="inline">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} /> Enabled
        </label>
        <ErrorNote error={action.error} />
        <FormActions submit="Create cron" disabled={!!problem || !assistant || action.busy} testId="cron-submit" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
