/**
 * Legacy run events -> v2 channel events (docs/protocol-v2.md, D24). One `RunTranslator` per run
 * observed on a thread: it turns the runtime's `RunEvent`s (values, updates, messages-tuple,
 * custom, tasks, checkpoints, error) into draft events of the v2 channels (`lifecycle`,
 * `values`, `updates`, `messages`, `tools`, `input`, `checkpoints`, `tasks`, `custom`). It is
 * pure bookkeeping: no I/O, no clock (the session stamps sequence numbers and timestamps).
 *
 * Subgraph events (`<mode>|<node>:<task id>|...`, the runs are streamed with subgraphs) land on
 * their namespace (`["node:task id", ...]`; `[]` is the root). The first event of a subgraph
 * namespace opens it with a `lifecycle` `started` event; the parent's update for that node (or
 * the run's end) closes it with `completed` (or `interrupted` / `failed`). An interrupt raised in
 * a subgraph is reported once, by the root. graphdock graphs have no LangChain callbacks, so
 * `tools` events are derived from the messages the graph writes (an AI message's tool calls,
 * then the tool messages answering them).
 */
import type { DraftEvent } from "./types.js";

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);

/** A serialized LangChain message (`{lc: 1, kwargs}`) or a plain one, as a plain record. */
function plainMessage(m: unknown): Rec | undefined {
  if (!isRec(m)) return undefined;
  if (m.lc === 1 && isRec(m.kwargs)) {
    const id = Array.isArray(m.id) ? String(m.id[m.id.length - 1] ?? "") : "";
    const type = typeof m.kwargs.type === "string" ? m.kwargs.type : id.replace(/MessageChunk$/, "Chunk").replace(/Message$/, "");
    return { ...m.kwargs, type: normalizeType(type) };
  }
  return m;
}

function normalizeType(type: string): string {
  switch (type) {
    case "AI":
    case "AIChunk":
      return type === "AI" ? "ai" : "AIMessageChunk";
    case "Human":
      return "human";
    case "System":
      return "system";
    case "Tool":
      return "tool";
    default:
      return type;
  }
}

const isChunk = (m: Rec) => typeof m.type === "string" && /chunk$/i.test(m.type);
const roleOf = (type: unknown): "ai" | "human" | "system" | undefined => {
  const t = String(type ?? "").replace(/MessageChunk$|Chunk$/i, "").toLowerCase();
  if (t === "ai" || t === "assistant" || t === "aimessage") return "ai";
  if (t === "human" || t === "user") return "human";
  if (t === "system") return "system";
  return undefined;
};

/** The pieces of one message chunk, in the order the blocks appear. */
type Piece = { kind: "text"; text: string } | { kind: "reasoning"; text: string } | { kind: "tool"; index: number; id: string | null; name: string | null; args: string };

function piecesOf(m: Rec): Piece[] {
  const out: Piece[] = [];
  const content = m.content;
  const kwargs = isRec(m.additional_kwargs) ? m.additional_kwargs : {};
  if (typeof kwargs.reasoning_content === "string" && kwargs.reasoning_content) out.push({ kind: "reasoning", text: kwargs.reasoning_content });
  if (typeof content === "string") {
    if (content) out.push({ kind: "text", text: content });
  } else if (Array.isArray(content)) {
    for (const block of content) {
      if (typeof block === "string") out.push({ kind: "text", text: block });
      else if (isRec(block)) {
        if (block.type === "text" && typeof block.text === "string") out.push({ kind: "text", text: block.text });
        else if (block.type === "reasoning" && typeof block.reasoning === "string") out.push({ kind: "reasoning", text: block.reasoning });
        else if (block.type === "thinking" && typeof block.thinking === "string") out.push({ kind: "reasoning", text: block.thinking });
      }
    }
  }
  const chunks = Array.isArray(m.tool_call_chunks) ? m.tool_call_chunks : [];
  chunks.forEach((c, i) => {
    if (!isRec(c)) return;
    out.push({
      kind: "tool",
      index: typeof c.index === "number" ? c.index : i,
      id: typeof c.id === "string" ? c.id : null,
      name: typeof c.name === "string" ? c.name : null,
      args: typeof c.args === "string" ? c.args : c.args === undefined || c.args === null ? "" : JSON.stringify(c.args),
    });
  });
  // A whole (non-chunk) AI message carries parsed tool calls instead of chunks.
  if (chunks.length === 0 && !isChunk(m) && Array.isArray(m.tool_calls)) {
    m.tool_calls.forEach((c, i) => {
      if (!isRec(c)) return;
      out.push({ kind: "tool", index: i, id: typeof c.id === "string" ? c.id : null, name: typeof c.name === "string" ? c.name : null, args: JSON.stringify(c.args ?? {}) });
    });
  }
  return out;
}

interface OpenBlock {
  index: number;
  key: string;
  kind: Piece["kind"];
  text: string;
  id: string | null;
  name: string | null;
}

interface OpenMessage {
  id: string;
  node: string | undefined;
  /** The namespace the message streams in. */
  ns: string[];
  block: OpenBlock | undefined;
  nextIndex: number;
  usage?: Rec;
}

/** Tool calls known on a thread across its runs (a resumed run answers a call made before). */
export interface ToolBook {
  calls: Map<string, { name: string; args: unknown; started: boolean; finished: boolean }>;
}

export const newToolBook = (): ToolBook => ({ calls: new Map() });

/** How a run ended, from its record (`run.finished`). */
export interface RunOutcome {
  status: string;
  error?: { error: string; message: string };
}

function parseArgs(args: string): { ok: true; value: Rec } | { ok: false } {
  if (args.trim() === "") return { ok: true, value: {} };
  try {
    const v = JSON.parse(args) as unknown;
    return isRec(v) ? { ok: true, value: v } : { ok: false };
  } catch {
    return { ok: false };
  }
}

export class RunTranslator {
  private readonly open = new Map<string, OpenMessage>();
  private anonymous = 0;
  private interrupted = false;
  private failedWith: string | undefined;
  private ended = false;
  /** The namespace of the event being translated. */
  private ns: string[] = [];
  /** Subgraph namespaces opened (`started`) and not closed yet, by their `|`-joined key. */
  private readonly openNs = new Map<string, string[]>();

  constructor(
    readonly runId: string,
    private readonly tools: ToolBook,
    private readonly graphName?: string,
  ) {}

  /** The root `running` lifecycle event that opens a run. */
  start(): DraftEvent[] {
    return [{ method: "lifecycle", namespace: [], data: { event: "running", ...(this.graphName ? { graph_name: this.graphName } : {}), run_id: this.runId } }];
  }

  /** Translates one legacy run event; a subgraph's (`<mode>|<namespace>`) lands on its namespace. */
  translate(event: string, data: unknown): DraftEvent[] {
    const [mode = event, ...ns] = event.split("|");
    this.ns = ns;
    const opened = ns.length > 0 ? this.openNamespace(ns) : [];
    // A subgraph's interrupt reaches the root too: the root reports it, once.
    if (ns.length > 0 && mode === "values" && isRec(data) && Object.keys(data).length === 1 && "__interrupt__" in data) return opened;
    // The parent's update for a subgraph node means the subgraph is done: close it first.
    const closed = mode === "updates" && isRec(data) ? this.closeNamespaces(ns, Object.keys(data)) : [];
    return [...opened, ...closed, ...this.translateMode(mode, data)];
  }

  /** `started` for a subgraph namespace seen for the first time (and for its unseen ancestors). */
  private openNamespace(ns: string[]): DraftEvent[] {
    const out: DraftEvent[] = [];
    for (let depth = 1; depth <= ns.length; depth++) {
      const path = ns.slice(0, depth);
      const key = path.join("|");
      if (this.openNs.has(key)) continue;
      this.openNs.set(key, path);
      const last = path[depth - 1]!;
      const name = last.includes(":") ? last.slice(0, last.lastIndexOf(":")) : last;
      out.push({ method: "lifecycle", namespace: path, data: { event: "started", graph_name: name } });
    }
    return out;
  }

  /**
   * Closes open subgraph namespaces: those directly under `parent` run by one of `nodes` (their
   * parent graph reported the node's update), or every one when `nodes` is undefined (the run
   * ended), deepest first, with `event`.
   */
  private closeNamespaces(parent: string[], nodes: string[] | undefined, event: Rec = { event: "completed" }): DraftEvent[] {
    const out: DraftEvent[] = [];
    const closing = [...this.openNs.entries()].filter(([, path]) => {
      if (nodes === undefined) return true;
      if (path.length !== parent.length + 1 || !parent.every((p, i) => path[i] === p)) return false;
      const last = path[path.length - 1]!;
      return nodes.includes(last.slice(0, last.lastIndexOf(":")));
    });
    // A closing namespace takes its still-open descendants with it.
    const keys = new Set(closing.map(([k]) => k));
    for (const [k] of this.openNs) if ([...keys].some((c) => k.startsWith(`${c}|`))) keys.add(k);
    for (const key of [...keys].sort((a, b) => b.split("|").length - a.split("|").length)) {
      const path = this.openNs.get(key)!;
      this.openNs.delete(key);
      for (const msg of [...this.open.values()]) if (msg.ns.join("|") === key) out.push(...this.finishMessage(msg));
      out.push({ method: "lifecycle", namespace: path, data: event });
    }
    return out;
  }

  private translateMode(event: string, data: unknown): DraftEvent[] {
    switch (event) {
      case "metadata":
        return [];
      case "values":
        return this.values(data);
      case "updates":
        return this.updates(data);
      case "messages":
        return Array.isArray(data) ? this.message(data[0], isRec(data[1]) ? data[1] : {}) : [];
      case "custom":
        return [{ method: "custom", namespace: this.ns, data: customData(data) }];
      case "tasks":
        return this.task(data);
      case "checkpoints":
        return this.checkpoint(data);
      case "error": {
        const e = isRec(data) ? data : {};
        this.failedWith = `${String(e.error ?? "Error")}: ${String(e.message ?? "")}`;
        return this.closeAll(this.failedWith);
      }
      default:
        return [];
    }
  }

  /** The events that close a run: open messages end, then the root terminal lifecycle event. */
  finish(outcome: RunOutcome | undefined): DraftEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const status = outcome?.status;
    let data: Rec;
    if (status === "error" || this.failedWith !== undefined || status === "timeout") {
      const message = outcome?.error ? `${outcome.error.error}: ${outcome.error.message}` : (this.failedWith ?? `run ${status ?? "failed"}`);
      data = { event: "failed", error: message };
    } else if (status === "interrupted") data = { event: "failed", error: "cancelled: the run was cancelled" };
    else if (this.interrupted) data = { event: "interrupted" };
    else data = { event: "completed" };
    const closing = data.event === "failed" ? this.closeAll(String(data.error)) : this.closeAll();
    const subgraphs = this.closeNamespaces([], undefined, data.event === "completed" ? { event: "completed" } : data);
    return [...closing, ...subgraphs, { method: "lifecycle", namespace: [], data: { ...data, run_id: this.runId } }];
  }

  private values(data: unknown): DraftEvent[] {
    if (!isRec(data)) return [];
    const keys = Object.keys(data);
    if (keys.length === 1 && keys[0] === "__interrupt__") {
      this.interrupted = true;
      const list = Array.isArray(data.__interrupt__) ? data.__interrupt__ : [];
      return list.filter(isRec).map((i, n) => ({
        method: "input.requested",
        namespace: this.ns,
        data: { interrupt_id: typeof i.id === "string" ? i.id : `interrupt-${this.runId}-${n}`, payload: i.value },
      }));
    }
    return [{ method: "values", namespace: this.ns, data }];
  }

  private updates(data: unknown): DraftEvent[] {
    if (!isRec(data)) return [];
    const out: DraftEvent[] = [];
    for (const [node, values] of Object.entries(data)) {
      if (node === "__interrupt__") continue;
      out.push(...this.closeNode(node));
      out.push({ method: "updates", namespace: this.ns, node, data: { node, values: values ?? {} } });
      out.push(...this.toolResults(node, values));
    }
    return out;
  }

  /** Tool messages a node wrote answer tool calls: `tool-started` (once) then finished/error. */
  private toolResults(node: string, values: unknown): DraftEvent[] {
    if (!isRec(values)) return [];
    const out: DraftEvent[] = [];
    for (const v of Object.values(values)) {
      const list = Array.isArray(v) ? v : [v];
      for (const raw of list) {
        const m = plainMessage(raw);
        if (!m) continue;
        if (roleOf(m.type) === "ai" && Array.isArray(m.tool_calls)) {
          for (const c of m.tool_calls) if (isRec(c) && typeof c.id === "string") this.remember(c.id, String(c.name ?? ""), c.args ?? {});
          continue;
        }
        if (m.type !== "tool" || typeof m.tool_call_id !== "string") continue;
        const id = m.tool_call_id;
        const known = this.tools.calls.get(id);
        if (known?.finished) continue;
        if (!known?.started) out.push(this.toolStarted(id, known?.name ?? String(m.name ?? "tool"), known?.args ?? {}, node));
        const entry = this.tools.calls.get(id)!;
        entry.finished = true;
        out.push(
          m.status === "error"
            ? { method: "tools", namespace: this.ns, node, data: { event: "tool-error", tool_call_id: id, message: typeof m.content === "string" ? m.content : JSON.stringify(m.content) } }
            : { method: "tools", namespace: this.ns, node, data: { event: "tool-finished", tool_call_id: id, output: m.content } },
        );
      }
    }
    return out;
  }

  private remember(id: string, name: string, args: unknown) {
    if (!this.tools.calls.has(id)) this.tools.calls.set(id, { name, args, started: false, finished: false });
  }

  private toolStarted(id: string, name: string, args: unknown, node: string | undefined): DraftEvent {
    const entry = this.tools.calls.get(id) ?? { name, args, started: false, finished: false };
    entry.started = true;
    this.tools.calls.set(id, entry);
    return { method: "tools", namespace: this.ns, ...(node ? { node } : {}), data: { event: "tool-started", tool_call_id: id, tool_name: name, input: args } };
  }

  private task(data: unknown): DraftEvent[] {
    if (!isRec(data)) return [];
    const out: DraftEvent[] = [{ method: "tasks", namespace: this.ns, data }];
    const starting = !("result" in data) && !("error" in data);
    if (starting && typeof data.name === "string") {
      // A task starting after an AI message asked for tools runs them: the calls start now.
      for (const [id, call] of this.tools.calls) if (!call.started && !call.finished) out.push(this.toolStarted(id, call.name, call.args, data.name));
    }
    return out;
  }

  private checkpoint(data: unknown): DraftEvent[] {
    if (!isRec(data)) return [];
    const cfg = isRec(data.config) && isRec(data.config.configurable) ? data.config.configurable : {};
    const parent = isRec(data.parent_config) && isRec(data.parent_config.configurable) ? data.parent_config.configurable : undefined;
    const meta = isRec(data.metadata) ? data.metadata : {};
    const id = typeof cfg.checkpoint_id === "string" ? cfg.checkpoint_id : undefined;
    if (!id) return [];
    return [
      {
        method: "checkpoints",
        namespace: this.ns,
        data: {
          id,
          ...(parent && typeof parent.checkpoint_id === "string" ? { parent_id: parent.checkpoint_id } : {}),
          step: typeof meta.step === "number" ? meta.step : 0,
          source: typeof meta.source === "string" ? meta.source : "loop",
        },
      },
    ];
  }

  // -- messages --------------------------------------------------------------------------

  private message(raw: unknown, meta: Rec): DraftEvent[] {
    const m = plainMessage(raw);
    if (!m) return [];
    const node = typeof meta.langgraph_node === "string" ? meta.langgraph_node : undefined;
    const role = roleOf(m.type);
    if (!role) {
      // Tool messages are reported on the tools channel (from the node's update).
      return [];
    }
    const out: DraftEvent[] = [];
    const chunk = isChunk(m);
    let id = typeof m.id === "string" && m.id ? m.id : undefined;
    if (!id) {
      const current = [...this.open.values()].find((o) => o.node === node && o.ns.join("|") === this.ns.join("|"));
      id = current?.id ?? `msg-${this.runId}-${++this.anonymous}`;
    }
    let msg = this.open.get(id);
    if (!msg) {
      // A new message on a node ends the one that node was streaming.
      for (const other of [...this.open.values()]) if (other.node === node && other.ns.join("|") === this.ns.join("|")) out.push(...this.finishMessage(other));
      msg = { id, node, ns: this.ns, block: undefined, nextIndex: 0 };
      this.open.set(id, msg);
      out.push(this.ev(msg, { event: "message-start", role, id }));
    }
    for (const piece of piecesOf(m)) out.push(...this.piece(msg, piece));
    const usage = isRec(m.usage_metadata) ? m.usage_metadata : undefined;
    if (usage) msg.usage = usage;
    if (!chunk) out.push(...this.finishMessage(msg));
    return out;
  }

  private piece(msg: OpenMessage, piece: Piece): DraftEvent[] {
    const out: DraftEvent[] = [];
    const key = piece.kind === "tool" ? `tool:${piece.index}` : piece.kind;
    if (!msg.block || msg.block.key !== key) {
      if (msg.block) out.push(this.finishBlock(msg));
      const block: OpenBlock = {
        index: msg.nextIndex++,
        key,
        kind: piece.kind,
        text: "",
        id: piece.kind === "tool" ? piece.id : null,
        name: piece.kind === "tool" ? piece.name : null,
      };
      msg.block = block;
      const content =
        piece.kind === "text"
          ? { type: "text", text: "" }
          : piece.kind === "reasoning"
            ? { type: "reasoning", reasoning: "" }
            : { type: "tool_call_chunk", id: block.id, name: block.name, args: "", index: block.index };
      out.push(this.ev(msg, { event: "content-block-start", index: block.index, content }));
    }
    const block = msg.block;
    if (piece.kind === "tool") {
      if (piece.id && !block.id) block.id = piece.id;
      if (piece.name && !block.name) block.name = piece.name;
    }
    const text = piece.kind === "tool" ? piece.args : piece.text;
    if (text) {
      block.text += text;
      const delta =
        piece.kind === "text" ? { type: "text-delta", text } : piece.kind === "reasoning" ? { type: "reasoning-delta", reasoning: text } : { type: "tool-call-delta", args: text };
      out.push(this.ev(msg, { event: "content-block-delta", index: block.index, delta }));
    }
    return out;
  }

  private finishBlock(msg: OpenMessage): DraftEvent {
    const b = msg.block!;
    msg.block = undefined;
    let content: Rec;
    if (b.kind === "text") content = { type: "text", text: b.text };
    else if (b.kind === "reasoning") content = { type: "reasoning", reasoning: b.text };
    else {
      const parsed = parseArgs(b.text);
      content = parsed.ok
        ? { type: "tool_call", id: b.id, name: b.name ?? "", args: parsed.value }
        : { type: "invalid_tool_call", id: b.id, name: b.name, args: b.text, error: "arguments are not a JSON object" };
      if (parsed.ok && b.id) this.remember(b.id, b.name ?? "", parsed.value);
    }
    return this.ev(msg, { event: "content-block-finish", index: b.index, content });
  }

  private finishMessage(msg: OpenMessage, error?: string): DraftEvent[] {
    this.open.delete(msg.id);
    const out: DraftEvent[] = [];
    if (msg.block) out.push(this.finishBlock(msg));
    if (error !== undefined) out.push(this.ev(msg, { event: "error", message: error }));
    else out.push(this.ev(msg, { event: "message-finish", ...(msg.usage ? { usage: msg.usage } : {}) }));
    return out;
  }

  private closeNode(node: string): DraftEvent[] {
    const out: DraftEvent[] = [];
    for (const msg of [...this.open.values()]) if (msg.node === node && msg.ns.join("|") === this.ns.join("|")) out.push(...this.finishMessage(msg));
    return out;
  }

  private closeAll(error?: string): DraftEvent[] {
    const out: DraftEvent[] = [];
    for (const msg of [...this.open.values()]) out.push(...this.finishMessage(msg, error));
    return out;
  }

  private ev(msg: OpenMessage, data: Rec): DraftEvent {
    return { method: "messages", namespace: msg.ns, ...(msg.node ? { node: msg.node } : {}), data };
  }
}

/** `custom` payloads: `{name, payload}` objects keep their name (channel `custom:<name>`). */
function customData(data: unknown): Rec {
  if (isRec(data) && typeof data.name === "string" && "payload" in data && Object.keys(data).length === 2) return { name: data.name, payload: data.payload };
  return { payload: data };
}

/** The channel an event belongs to (as the SDK infers it). */
export function channelOf(method: string, data: unknown): string | undefined {
  switch (method) {
    case "values":
    case "updates":
    case "messages":
    case "tools":
    case "lifecycle":
    case "checkpoints":
    case "tasks":
      return method;
    case "custom":
      return isRec(data) && typeof data.name === "string" ? `custom:${data.name}` : "custom";
    case "input.requested":
    case "input.answered":
      return "input";
    default:
      return undefined;
  }
}
