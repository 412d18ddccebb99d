/**
 * `/studio/threads/<id>`: one thread. The conversation as a chat with the run in progress
 * streaming into it token by token (a run started here, or one started elsewhere, seen through
 * the thread's stream), a composer to start a run with any assistant and stream modes, the
 * pending interrupts with a form to resume (and a `Command`'s update and goto), cancel; beside
 * it the checkpoint history as a timeline (older checkpoints load as it scrolls): a selected
 * checkpoint shows its state, next nodes, tasks and writes, and "Fork from here" edits that state
 * and runs from it.
 */
import type { Run, Thread, ThreadState } from "@langchain/langgraph-sdk";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { AssistantField } from "../components/assistant-field.js";
import { Chat } from "../components/chat.js";
import { ErrorNote, FormActions, Json, Link, Loading, SelectField, Status, TextField } from "../components/common.js";
import { Dialog } from "../components/dialog.js";
import { Tabs } from "../components/tabs.js";
import { VirtualList } from "../components/virtual-list.js";
import { toStudioError } from "../api.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { isObject, parseJson, pretty, shortId, when } from "../format.js";
import { messagesOf } from "../messages.js";
import { RunView } from "../run-stream.js";
import { threadLabel } from "./threads.js";

const STREAM_MODES = ["values", "messages-tuple", "updates", "custom", "events", "debug", "tasks", "checkpoints"] as const;
const DEFAULT_MODES = ["values", "messages-tuple", "updates"];
const HISTORY_PAGE = 50;
const TIMELINE_FIELDS = ["checkpoint", "parent_checkpoint", "metadata", "next", "created_at", "tasks"];

type State = ThreadState<Record<string, unknown>>;

/** Re-renders at most once per animation frame however many stream events arrive. */
function useFrameTick(): () => void {
  const [, setTick] = useState(0);
  const pending = useRef(false);
  return () => {
    if (pending.current) return;
    pending.current = true;
    requestAnimationFrame(() => {
      pending.current = false;
      setTick((t) => t + 1);
    });
  };
}

export default function ThreadPage({ params }: { params: string[] }) {
  const threadId = params[0]!;
  const { api, notify, requestSignIn } = useStudio();
  const thread = useLoad((signal) => api.client.threads.get(threadId, { signal } as never) as Promise<Thread>, [threadId]);
  const state = useLoad((signal) => api.client.threads.getState(threadId, undefined, { signal }) as Promise<State>, [threadId]);
  const assistants = useLoad((signal) => api.client.assistants.search({ limit: 100, signal }), []);
  const [historyVersion, setHistoryVersion] = useState(0);
  const rerender = useFrameTick();

  // The run being shown: ours (started from this page) or one started elsewhere (live).
  const view = useRef<RunView | null>(null);
  const [active, setActive] = useState<null | { source: "own" | "live"; runId: string | null }>(null);
  const own = useRef<{ abort: AbortController; runIds: Set<string>; starting: boolean }>({ abort: new AbortController(), runIds: new Set(), starting: false });
  const [runError, setRunError] = useState<string | null>(null);

  const refresh = () => {
    thread.reload();
    state.reload();
    setHistoryVersion((v) => v + 1);
  };

  // A run started elsewhere shows up through the thread's stream (every run on the thread; D117).
  useEffect(() => {
    const abort = new AbortController();
    let lastEventId: string | undefined;
    let liveRun: string | null = null;
    let settle: ReturnType<typeof setTimeout> | undefined;
    const settled = () => {
      clearTimeout(settle);
      settle = setTimeout(async () => {
        try {
          const t = (await api.client.threads.get(threadId, { signal: abort.signal } as never)) as Thread;
          if (t.status === "busy") return settled();
        } catch {
          // the refresh below shows any error
        }
        if (abort.signal.aborted || liveRun === null) return;
        liveRun = null;
        setActive((a) => (a?.source === "live" ? null : a));
        refresh();
      }, 600);
    };
    (async () => {
      for (let attempt = 0; !abort.signal.aborted; attempt++) {
        try {
          for await (const part of api.client.threads.joinStream(threadId, { lastEventId, signal: abort.signal })) {
            attempt = 0;
            if (part.id) lastEventId = part.id;
            const runId = part.id?.split(":")[0] ?? (isObject(part.data) && typeof part.data.run_id === "string" ? part.data.run_id : null);
            if (own.current.starting || (runId && own.current.runIds.has(runId))) continue;
            if (part.event === "metadata" && runId !== liveRun) {
              liveRun = runId;
              view.current = new RunView();
              setRunError(null);
              setActive({ source: "live", runId });
            }
            if (!view.current || liveRun === null) continue;
            view.current.apply(part.event, part.data);
            rerender();
            settled();
          }
        } catch (err) {
          if (abort.signal.aborted) return;
          const e = toStudioError(err);
          if (e.status === 401) return requestSignIn(e.message);
          // A server without thread streams (404, 405, 422): no live view, nothing else breaks.
          if (e.status >= 400 && e.status < 500) return;
        }
        await new Promise((r) => setTimeout(r, Math.min(10_000, 1000 * 2 ** attempt)));
      }
    })();
    return () => {
      abort.abort();
      clearTimeout(settle);
    };
  }, [threadId]);

  useEffect(() => () => own.current.abort.abort(), []);

  /** Starts a run from this page and streams it into the chat. */
  const startRun = async (assistantId: string, payload: Record<string, unknown>, modes: string[], subgraphs: boolean) => {
    setRunError(null);
    const abort = new AbortController();
    own.current.abort = abort;
    own.current.starting = true;
    view.current = new RunView();
    setActive({ source: "own", runId: null });
    try {
      const stream = api.client.runs.stream(threadId, assistantId, {
        ...payload,
        streamMode: modes as never,
        streamSubgraphs: subgraphs,
        signal: abort.signal,
      } as never);
      for await (const part of stream) {
        const v = view.current!;
        v.apply(part.event, part.data);
        if (part.event === "metadata" && v.runId) {
          own.current.runIds.add(v.runId);
          own.current.starting = false;
          setActive({ source: "own", runId: v.runId });
        }
        if (v.error) setRunError(v.error);
        rerender();
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        const e = toStudioError(err);
        if (e.status === 401) requestSignIn(e.message);
        setRunError(e.message);
      }
    } finally {
      own.current.starting = false;
      setActive(null);
      refresh();
    }
  };

  const cancel = async () => {
    const runId = active?.runId ?? view.current?.runId;
    if (!runId) return;
    try {
      await api.client.runs.cancel(threadId, runId);
      notify("Run cancelled");
    } catch (err) {
      setRunError(toStudioError(err).message);
    }
  };

  const t = thread.data;
  const s = state.data;
  const settledMessages = messagesOf(active && view.current?.values ? view.current.values : s?.values);
  const shownMessages = active && view.current ? [...settledMessages, ...view.current.messages.pending(settledMessages)] : settledMessages;
  const interrupts = active ? [] : interruptsOf(s, t);
  document.title = `${t ? threadLabel({ ...t, values: s?.values }) : "Thread"} · graphdock studio`;

  if (thread.error) {
    return (
      <section class="page">
        <h1>Thread</h1>
        <ErrorNote error={thread.error} />
        <p>
          <Link to="threads">Back to the threads</Link>
        </p>
      </section>
    );
  }
  const defaultAssistant = (isObject(t?.metadata) && (t!.metadata.assistant_id as string)) || (isObject(t?.metadata) && (t!.metadata.graph_id as string)) || assistants.data?.[0]?.assistant_id || "";
  return (
    <section class="page thread-page" aria-labelledby="thread-heading">
      <header class="detail-head">
        <p>
          <Link to="threads">Threads</Link> /
        </p>
        <h1 id="thread-heading">{t ? threadLabel({ ...t, values: s?.values }) : "Thread"}</h1>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{threadId}</code>
          </dd>
          <dt>Status</dt>
          <dd data-testid="thread-status">
            <Status status={active ? "busy" : t?.status} />
          </dd>
          <dt>Updated</dt>
          <dd>{when(t?.updated_at)}</dd>
        </dl>
      </header>
      <div class="thread-grid">
        <div class="thread-main">
          {active && (
            <p class="live" role="status" data-testid={active.source === "live" ? "live-run" : "own-run"}>
              <span class="pulse" aria-hidden="true" />
              {active.source === "live" ? "A run started elsewhere is streaming" : "Run streaming"}
              {active.runId ? ` (run ${shortId(active.runId)})` : ""}…
              <button type="button" class="secondary small" onClick={cancel} disabled={!active.runId} data-testid="cancel">
                Cancel run
              </button>
            </p>
          )}
          <ErrorNote error={runError} testId="run-error" />
          {!s && !state.error ? <Loading what="the conversation" /> : <Chat messages={shownMessages} />}
          <ErrorNote error={state.error} />
          {interrupts.length > 0 && (
            <ResumeForm
              interrupts={interrupts}
              assistantId={defaultAssistant}
              onResume={(command) => startRun(defaultAssistant, { command }, DEFAULT_MODES, false)}
            />
          )}
          <Composer
            defaultAssistant={defaultAssistant}
            busy={!!active}
            onSend={(assistantId, input, modes, subgraphs) => startRun(assistantId, { input }, modes, subgraphs)}
          />
        </div>
        <aside class="thread-side" aria-label="Thread details">
          <SidePanels
            threadId={threadId}
            historyVersion={historyVersion}
            head={s?.checkpoint?.checkpoint_id ?? null}
            events={view.current?.log ?? []}
            thread={t}
            busy={!!active}
            assistantId={defaultAssistant}
            onFork={(assistantId, payload) => startRun(assistantId, payload, DEFAULT_MODES, false)}
          />
        </aside>
      </div>
    </section>
  );
}

/** The interrupts waiting for an answer, from the state's tasks (or the thread's record). */
function interruptsOf(state: State | undefined, thread: Thread | undefined): Array<{ id?: string; value: unknown; task?: string }> {
  const fromTasks = (state?.tasks ?? []).flatMap((task) => ((task as { interrupts?: unknown[] }).interrupts ?? []).map((i) => ({ ...(i as object), task: task.name }) as { id?: string; value: unknown; task?: string }));
  if (fromTasks.length) return fromTasks;
  const map = (thread as { interrupts?: Record<string, unknown[]> } | undefined)?.interrupts;
  return isObject(map) ? Object.values(map).flat().map((i) => i as { id?: string; value: unknown }) : [];
}

function Composer(props: { defaultAssistant: string; busy: boolean; onSend(assistantId: string, input: unknown, modes: string[], subgraphs: boolean): void }) {
  const [assistant, setAssistant] = useState("");
  const [mode, setMode] = useState<"message" | "json">("message");
  const [text, setText] = useState("");
  const [modes, setModes] = useState<string[]>(DEFAULT_MODES);
  const [subgraphs, setSubgraphs] = useState(false);
  const chosen = assistant || props.defaultAssistant;
  const json = mode === "json" ? parseJson(text, "The input") : null;
  const problem = json && !json.ok ? json.message : null;
  const send = () => {
    if (props.busy || !chosen || problem || (mode === "message" && !text.trim())) return;
    const input = mode === "message" ? { messages: [{ role: "user", content: text }] } : (json as { value: unknown }).value ?? null;
    props.onSend(chosen, input, modes.length ? modes : ["values"], subgraphs);
    setText("");
  };
  return (
    <form
      class="composer"
      aria-label="Start a run"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <div class="toolbar wrap">
        <AssistantField value={assistant} fallback={props.defaultAssistant} onChange={setAssistant} testId="composer-assistant" />
        <fieldset class="inline-group">
          <legend>Input</legend>
          <label class="inline">
            <input type="radio" name="input-mode" checked={mode === "message"} onChange={() => setMode("message")} /> Message
          </label>
          <label class="inline">
            <input type="radio" name="input-mode" checked={mode === "json"} onChange={() => setMode("json")} data-testid="input-json" /> JSON
          </label>
        </fieldset>
        <details class="stream-options">
          <summary>Stream modes ({modes.join(", ") || "values"})</summary>
          <fieldset>
            <legend class="sr-only">Stream modes</legend>
            {STREAM_MODES.map((m) => (
              <label key={m} class="inline">
                <input
                  type="checkbox"
                  checked={modes.includes(m)}
                  onChange={(e) => setModes((all) => ((e.target as HTMLInputElement).checked ? [...all, m] : all.filter((x) => x !== m)))}
                  data-testid={`mode-${m}`}
                />{" "}
                {m}
              </label>
            ))}
            <label class="inline">
              <input type="checkbox" checked={subgraphs} onChange={(e) => setSubgraphs((e.target as HTMLInputElement).checked)} /> subgraphs
            </label>
          </fieldset>
        </details>
      </div>
      <TextField
        label={mode === "message" ? "Message" : "Input (JSON)"}
        value={text}
        onInput={setText}
        rows={mode === "message" ? 2 : 5}
        mono={mode === "json"}
        problem={problem}
        hint="Ctrl+Enter sends."
        testId="composer-input"
      />
      <div class="actions">
        <button type="submit" disabled={props.busy || !chosen || !!problem} data-testid="send">
          {props.busy ? "Running…" : "Send"}
        </button>
      </div>
      <KeyboardSend onSend={send} />
    </form>
  );
}

/** Ctrl/Cmd+Enter in the composer's text sends (a listener on the form, not a control). */
function KeyboardSend({ onSend }: { onSend(): void }) {
  const ref = useRef<HTMLSpanElement>(null);
  const latest = useRef(onSend);
  latest.current = onSend;
  useEffect(() => {
    const form = ref.current?.closest("form");
    const listener = (e: KeyboardEvent) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        latest.current();
      }
    };
    form?.addEventListener("keydown", listener);
    return () => form?.removeEventListener("keydown", listener);
  }, []);
  return <span ref={ref} hidden />;
}

function ResumeForm(props: { interrupts: Array<{ id?: string; value: unknown; task?: string }>; assistantId: string; onResume(command: Record<string, unknown>): void }) {
  const { api } = useStudio();
  const [resume, setResume] = useState("");
  const [update, setUpdate] = useState("");
  const [goto, setGoto] = useState("");
  const [withCommand, setWithCommand] = useState(false);
  const nodes = useLoad(
    async (signal) => (withCommand && props.assistantId ? ((await api.client.assistants.getGraph(props.assistantId, { signal })) as { nodes: Array<{ id: string | number }> }).nodes.map((n) => String(n.id)).filter((n) => !n.startsWith("__")) : []),
    [withCommand, props.assistantId],
  );
  const resumeValue = parseJson(resume, "The resume value");
  const updateValue = parseJson(update, "The update");
  const problem = (!resumeValue.ok && resumeValue.message) || (!updateValue.ok && updateValue.message) || (updateValue.ok && updateValue.value !== undefined && !isObject(updateValue.value) ? "The update must be a JSON object" : null);
  return (
    <section class="interrupts" aria-labelledby="interrupts-heading" data-testid="interrupts">
      <h2 id="interrupts-heading">Waiting for input</h2>
      {props.interrupts.map((i, n) => (
        <div key={i.id ?? n} class="interrupt" data-testid="interrupt">
          {i.task && <p class="muted small">In node {i.task}</p>}
          {isObject(i.value) && typeof i.value.question === "string" ? <p class="question">{i.value.question}</p> : null}
          <Json value={i.value} label="Interrupt value" />
        </div>
      ))}
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          const command: Record<string, unknown> = {};
          if (resume.trim()) command.resume = resumeValue.ok ? resumeValue.value : undefined;
          if (withCommand && update.trim()) command.update = updateValue.ok ? updateValue.value : undefined;
          if (withCommand && goto) command.goto = goto;
          if (!Object.keys(command).length) command.resume = null;
          props.onResume(command);
        }}
      >
        <TextField label="Resume value (JSON)" value={resume} onInput={setResume} rows={2} hint='For example true, "yes" or {"approved": true}.' problem={!resumeValue.ok ? resumeValue.message : null} testId="resume-value" />
        <label class="inline">
          <input type="checkbox" checked={withCommand} onChange={(e) => setWithCommand((e.target as HTMLInputElement).checked)} data-testid="command-toggle" /> Also update the state or go to a node (Command)
        </label>
        {withCommand && (
          <>
            <TextField label="Update (JSON object)" value={update} onInput={setUpdate} rows={3} problem={!updateValue.ok ? updateValue.message : null} testId="command-update" />
            <SelectField label="Go to" value={goto} onChange={setGoto} options={[["", "(no goto)"], ...(nodes.data ?? []).map((n): [string, string] => [n, n])]} testId="command-goto" />
          </>
        )}
        <div class="actions">
          <button type="submit" disabled={!!problem} data-testid="resume">
            Resume
          </button>
        </div>
      </form>
    </section>
  );
}

function SidePanels(props: {
  threadId: string;
  historyVersion: number;
  head: string | null;
  events: RunView["log"];
  thread: Thread | undefined;
  busy: boolean;
  assistantId: string;
  onFork(assistantId: string, payload: Record<string, unknown>): void;
}) {
  const [tab, setTab] = useState("timeline");
  return (
    <Tabs
      label="Thread details"
      current={tab}
      onSelect={setTab}
      tabs={[
        ["timeline", "Checkpoints"],
        ["runs", "Runs"],
        ["events", `Events (${props.events.length})`],
        ["thread", "Thread"],
      ]}
    >
      {tab === "timeline" && <Timeline threadId={props.threadId} version={props.historyVersion} head={props.head} busy={props.busy} assistantId={props.assistantId} onFork={props.onFork} />}
      {tab === "runs" && <ThreadRuns threadId={props.threadId} version={props.historyVersion} />}
      {tab === "events" && <EventLog events={props.events} />}
      {tab === "thread" && props.thread && <Json value={props.thread} label="Thread record" />}
    </Tabs>
  );
}

function Timeline(props: { threadId: string; version: number; head: string | null; busy: boolean; assistantId: string; onFork(assistantId: string, payload: Record<string, unknown>): void }) {
  const { api, requestSignIn } = useStudio();
  const [items, setItems] = useState<State[]>([]);
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [forking, setForking] = useState<State | null>(null);
  const loading = useRef(false);
  // Each reload supersedes the loads before it: an older answer arriving late is dropped.
  const generation = useRef(0);

  const load = async (before: State | undefined, replace: boolean) => {
    if (loading.current) return;
    loading.current = true;
    const mine = generation.current;
    try {
      const page = (await api.client.threads.getHistory(props.threadId, {
        limit: HISTORY_PAGE,
        ...(before ? { before: { configurable: { checkpoint_id: before.checkpoint.checkpoint_id } } } : {}),
        select: TIMELINE_FIELDS,
      } as never)) as State[];
      if (mine !== generation.current) return;
      setItems((old) => (replace ? page : [...old, ...page]));
      setDone(page.length < HISTORY_PAGE);
      setError(null);
    } catch (err) {
      if (mine !== generation.current) return;
      const e = toStudioError(err);
      if (e.status === 401) requestSignIn(e.message);
      setError(e.message);
    } finally {
      if (mine === generation.current) loading.current = false;
    }
  };
  useEffect(() => {
    generation.current++;
    loading.current = false;
    void load(undefined, true);
  }, [props.threadId, props.version]);

  const idOf = (s: State) => s.checkpoint?.checkpoint_id ?? "";
  const chosen = items.find((s) => idOf(s) === selected);
  // The current branch: the thread's head and its ancestors; other checkpoints are forks left behind.
  const onBranch = useMemo(() => {
    const byId = new Map(items.map((s) => [idOf(s), s]));
    const ids = new Set<string>();
    for (let id = props.head; id && !ids.has(id); id = byId.get(id)?.parent_checkpoint?.checkpoint_id ?? null) ids.add(id);
    return ids;
  }, [items, props.head]);
  return (
    <div class="timeline" data-testid="timeline">
      <ErrorNote error={error} />
      {!items.length && !error && <p class="muted">No checkpoints yet.</p>}
      <VirtualList
        items={items}
        rowHeight={60}
        label="Checkpoints, newest first"
        testId="checkpoint-list"
        class="rows compact"
        keyOf={(s) => idOf(s)}
        scrollTo={chosen ? items.indexOf(chosen) : undefined}
        onEnd={() => !done && items.length && void load(items[items.length - 1], false)}
        render={(s) => {
          const m = (s.metadata ?? {}) as Record<string, unknown>;
          const writes = isObject(m.writes) ? Object.keys(m.writes) : [];
          return (
            <button
              type="button"
              class={`checkpoint${idOf(s) === selected ? " selected" : ""}${onBranch.has(idOf(s)) ? "" : " other-branch"}`}
              aria-pressed={idOf(s) === selected}
              onClick={() => setSelected(idOf(s))}
              data-testid="checkpoint"
              data-branch={onBranch.has(idOf(s)) ? "current" : "other"}
            >
              <span class="step">
                step {String(m.step ?? "?")}
                {onBranch.has(idOf(s)) ? "" : " · other branch"}
              </span>
              <span class="what">
                {String(m.source ?? "")}
                {writes.length ? ` · ${writes.join(", ")}` : ""}
              </span>
              <span class="muted small">
                {s.next.length ? `next: ${s.next.join(", ")}` : "end"} · {shortId(idOf(s))}
              </span>
            </button>
          );
        }}
      />
      {chosen && (
        <CheckpointDetail
          threadId={props.threadId}
          summary={chosen}
          busy={props.busy}
          onFork={(full) => setForking(full)}
        />
      )}
      {forking && (
        <ForkDialog
          threadId={props.threadId}
          state={forking}
          assistantId={props.assistantId}
          onClose={() => setForking(null)}
          onFork={(assistantId, payload) => {
            setForking(null);
            props.onFork(assistantId, payload);
          }}
        />
      )}
    </div>
  );
}

function CheckpointDetail(props: { threadId: string; summary: State; busy: boolean; onFork(state: State): void }) {
  const { api } = useStudio();
  const id = props.summary.checkpoint.checkpoint_id!;
  const full = useLoad((signal) => api.client.threads.getState(props.threadId, id, { signal }) as Promise<State>, [props.threadId, id]);
  const [tab, setTab] = useState("state");
  const s = full.data;
  const writes = isObject(props.summary.metadata) ? (props.summary.metadata as Record<string, unknown>).writes : undefined;
  return (
    <section class="checkpoint-detail" aria-label={`Checkpoint ${shortId(id)}`} data-testid="checkpoint-detail">
      <div class="row spread">
        <h3>
          Checkpoint <code>{shortId(id)}</code>
        </h3>
        <button type="button" disabled={!s || props.busy} onClick={() => s && props.onFork(s)} data-testid="fork">
          Fork from here
        </button>
      </div>
      <ErrorNote error={full.error} />
      <Tabs
        label="Checkpoint"
        current={tab}
        onSelect={setTab}
        tabs={[
          ["state", "State"],
          ["next", "Next & tasks"],
          ["writes", "Writes"],
          ["metadata", "Metadata"],
        ]}
      >
        {tab === "state" && (s ? <Json value={s.values} label="State values" testId="checkpoint-values" /> : <Loading what="the state" />)}
        {tab === "next" && (
          <div>
            <p>Next: {props.summary.next.length ? props.summary.next.join(", ") : "nothing (the run ended here)"}</p>
            <Json value={s?.tasks ?? props.summary.tasks} label="Tasks" />
          </div>
        )}
        {tab === "writes" && <Json value={writes ?? null} label="Writes" />}
        {tab === "metadata" && <Json value={{ metadata: props.summary.metadata, checkpoint: props.summary.checkpoint, parent: props.summary.parent_checkpoint, created_at: props.summary.created_at }} label="Metadata" />}
      </Tabs>
    </section>
  );
}

function ForkDialog(props: { threadId: string; state: State; assistantId: string; onClose(): void; onFork(assistantId: string, payload: Record<string, unknown>): void }) {
  const { api } = useStudio();
  const original = useMemo(() => pretty(props.state.values), [props.state]);
  const [values, setValues] = useState(original);
  const [asNode, setAsNode] = useState("");
  const [message, setMessage] = useState("");
  const nodes = useLoad(
    async (signal) => (props.assistantId ? ((await api.client.assistants.getGraph(props.assistantId, { signal })) as { nodes: Array<{ id: string | number }> }).nodes.map((n) => String(n.id)).filter((n) => n !== "__end__") : []),
    [props.assistantId],
  );
  const parsed = parseJson(values, "The state");
  const problem = !parsed.ok ? parsed.message : !isObject(parsed.value) ? "The state must be a JSON object" : null;
  const action = useAction();
  const checkpointId = props.state.checkpoint.checkpoint_id!;
  return (
    <Dialog title={`Fork from checkpoint ${shortId(checkpointId)}`} onClose={props.onClose} wide testId="fork-dialog">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (problem) return;
          void action.run(async () => {
            let from = checkpointId;
            if (values !== original || asNode) {
              const result = (await api.client.threads.updateState(props.threadId, {
                values: parsed.ok ? parsed.value : {},
                checkpointId,
                ...(asNode ? { asNode } : {}),
              })) as { checkpoint?: { checkpoint_id?: string }; configurable?: { checkpoint_id?: string } };
              from = result.checkpoint?.checkpoint_id ?? result.configurable?.checkpoint_id ?? from;
            }
            props.onFork(props.assistantId, { input: message.trim() ? { messages: [{ role: "user", content: message }] } : null, checkpointId: from });
          });
        }}
      >
        <p class="muted">
          The thread goes on from this checkpoint with the state below (edit it to change what happened), as a new branch; the current branch stays in the
          history.
        </p>
        <TextField label="State (JSON)" value={values} onInput={setValues} rows={14} problem={problem} testId="fork-values" />
        <SelectField label="Write the edit as node" value={asNode} onChange={setAsNode} options={[["", "(the node that wrote last)"], ...(nodes.data ?? []).map((n): [string, string] => [n, n])]} />
        <TextField label="New message (optional)" value={message} onInput={setMessage} rows={2} mono={false} testId="fork-message" />
        <ErrorNote error={action.error} />
        <FormActions submit="Fork and run" disabled={!!problem || action.busy || !props.assistantId} testId="fork-run" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}

function ThreadRuns(props: { threadId: string; version: number }) {
  const { api, notify } = useStudio();
  const runs = useLoad((signal) => api.client.runs.list(props.threadId, { limit: 50, signal } as never) as Promise<Run[]>, [props.threadId, props.version]);
  const action = useAction();
  if (runs.error) return <ErrorNote error={runs.error} />;
  if (!runs.data) return <Loading what="runs" />;
  if (!runs.data.length) return <p class="muted">No runs yet.</p>;
  return (
    <>
      <ErrorNote error={action.error} />
      <ul class="plain-list runs" data-testid="thread-runs">
        {runs.data.map((r) => (
          <li key={r.run_id} class="run-item">
            <code>{shortId(r.run_id)}</code> <Status status={r.status} /> <span class="muted small">{when(r.created_at)}</span>
            {(r.status === "pending" || r.status === "running") && (
              <button
                type="button"
                class="secondary small"
                onClick={() =>
                  action.run(async () => {
                    await api.client.runs.cancel(props.threadId, r.run_id);
                    notify("Run cancelled");
                    runs.reload();
                  })
                }
              >
                Cancel
              </button>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function EventLog({ events }: { events: RunView["log"] }) {
  const [open, setOpen] = useState<number | null>(null);
  if (!events.length) return <p class="muted">The events of the run shown stream here.</p>;
  const chosen = events.find((e) => e.seq === open);
  return (
    <div data-testid="event-log">
      <VirtualList
        items={events}
        rowHeight={32}
        label="Stream events"
        class="rows compact"
        keyOf={(e) => String(e.seq)}
        render={(e) => (
          <button type="button" class="event-row" aria-pressed={e.seq === open} onClick={() => setOpen(e.seq)}>
            <code>{e.event}</code> <span class="muted small">{JSON.stringify(e.data)?.slice(0, 60)}</span>
          </button>
        )}
      />
      {chosen && <Json value={chosen.data} label={`Event ${chosen.event}`} />}
    </div>
  );
}
