/**
 * A run's events as the AI SDK's UI message stream (D109). Each AI message of the run is a step:
 * its text streams as `text-start/delta/end` (from the `messages-tuple` token chunks, or whole
 * when the message was not streamed), its tool calls as `tool-input-start/delta` then
 * `tool-input-available` (the graph runs them: `providerExecuted`), and the tool messages that
 * answer them as `tool-output-available` or `tool-output-error`. The `updates` events give each
 * message complete once its node ends, and the run's interrupts; messages the thread held before
 * the run are the client's already and are skipped.
 */
import type { UIMessageChunk } from "ai";
import { coerceMessage, contentText, type AIMessage, type Message, type ToolMessage } from "../graph/messages.js";
import { isPlainObject } from "../json.js";
import type { Interrupt } from "../types.js";
import type { RunEvent } from "../runtime/types.js";
import { approvalChunks, type KnownToolCall } from "./approvals.js";

interface AiMessageState {
  text: "none" | "open" | "done";
  /** Tool call ids by the index their streamed chunks carry. */
  byIndex: Map<number, string>;
}

/** What a translator needs to know of the request. */
export interface TranslateOptions {
  /** Messages the client shows already (the thread's before the run). */
  before: ReadonlySet<string>;
  /** Tool calls the client's message shows already (a continuation's). */
  knownCalls: ReadonlySet<string>;
  /** Tool calls whose approval was denied: answered with `tool-output-denied`, their tool messages skipped. */
  denied: readonly string[];
}

const isAiType = (type: unknown) => type === "AIMessageChunk" || type === "ai";

/** `raw` as a message, or undefined when it is none the chat can show. */
function asMessage(raw: unknown): Message | undefined {
  try {
    return coerceMessage(raw);
  } catch {
    return undefined;
  }
}

/** Turns one run's events into UI message chunks, in order. */
export class RunTranslator {
  readonly #before: ReadonlySet<string>;
  readonly #denied: ReadonlySet<string>;
  readonly #messages = new Map<string, AiMessageState>();
  /** Tool calls the client knows (their parts exist), and those whose input is complete. */
  readonly #calls: Set<string>;
  readonly #available = new Set<string>();
  readonly #answered = new Set<string>();
  #step: string | undefined;
  #openText: string | undefined;
  #lastCalls: KnownToolCall[] = [];
  #interrupts: Interrupt[] = [];

  constructor(options: TranslateOptions) {
    this.#before = options.before;
    this.#denied = new Set(options.denied);
    this.#calls = new Set(options.knownCalls);
    for (const id of options.knownCalls) this.#available.add(id);
  }

  /** The chunks that open the response: the denials the request's answers made. */
  start(): UIMessageChunk[] {
    return [...this.#denied].map((toolCallId): UIMessageChunk => ({ type: "tool-output-denied", toolCallId }));
  }

  /** The chunks of one run event. */
  event(ev: RunEvent): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    if (ev.event === "messages") this.#token(ev.data[0], out);
    else if (ev.event === "updates") this.#updates(ev.data, out);
    return out;
  }

  /** The chunks that end a run that did not fail: open text closed, interrupts asked, `finish`. */
  end(): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    this.#closeText(out);
    const { inStep, ownStep } = approvalChunks(this.#interrupts, this.#lastCalls, this.#calls);
    out.push(...inStep);
    if (ownStep.length) {
      this.#closeStep(out);
      out.push({ type: "start-step" }, ...ownStep);
      this.#step = "";
    }
    this.#closeStep(out);
    out.push({ type: "finish", finishReason: this.#interrupts.length ? "tool-calls" : "stop" });
    return out;
  }

  #state(id: string): AiMessageState {
    let s = this.#messages.get(id);
    if (!s) this.#messages.set(id, (s = { text: "none", byIndex: new Map() }));
    return s;
  }

  /** Opens the step of AI message `id` (closing the one before). */
  #enterStep(id: string, out: UIMessageChunk[]) {
    if (this.#step === id) return;
    this.#closeStep(out);
    out.push({ type: "start-step" });
    this.#step = id;
  }

  #closeStep(out: UIMessageChunk[]) {
    this.#closeText(out);
    if (this.#step !== undefined) out.push({ type: "finish-step" });
    this.#step = undefined;
  }

  #closeText(out: UIMessageChunk[]) {
    if (this.#openText === undefined) return;
    out.push({ type: "text-end", id: this.#openText });
    this.#state(this.#openText).text = "done";
    this.#openText = undefined;
  }

  #text(id: string, delta: string, out: UIMessageChunk[]) {
    const s = this.#state(id);
    if (s.text === "done" || !delta) return;
    this.#enterStep(id, out);
    if (s.text === "none") {
      this.#closeText(out);
      out.push({ type: "text-start", id });
      s.text = "open";
      this.#openText = id;
    }
    out.push({ type: "text-delta", id, delta });
  }

  /** A `messages-tuple` event: a token chunk of an AI message, or a whole message. */
  #token(raw: unknown, out: UIMessageChunk[]) {
    if (!isPlainObject(raw) || !isAiType(raw.type) || typeof raw.id !== "string" || this.#before.has(raw.id)) return;
    const id = raw.id;
    if (raw.type === "ai") {
      const m = asMessage(raw);
      if (m?.type === "ai") this.#aiMessage(m, out);
      return;
    }
    this.#text(id, contentText(raw.content), out);
    const chunks = Array.isArray(raw.tool_call_chunks) ? raw.tool_call_chunks : [];
    const s = this.#state(id);
    for (const chunk of chunks) {
      if (!isPlainObject(chunk)) continue;
      const index = typeof chunk.index === "number" ? chunk.index : 0;
      let callId = s.byIndex.get(index);
      if (callId === undefined && typeof chunk.id === "string" && chunk.id && typeof chunk.name === "string" && chunk.name && !this.#calls.has(chunk.id)) {
        callId = chunk.id;
        s.byIndex.set(index, callId);
        this.#enterStep(id, out);
        this.#calls.add(callId);
        out.push({ type: "tool-input-start", toolCallId: callId, toolName: chunk.name, providerExecuted: true });
      }
      if (callId !== undefined && !this.#available.has(callId) && typeof chunk.args === "string" && chunk.args) {
        out.push({ type: "tool-input-delta", toolCallId: callId, inputTextDelta: chunk.args });
      }
    }
  }

  /** An AI message complete: the text it has not streamed, its tool calls' inputs. */
  #aiMessage(m: AIMessage, out: UIMessageChunk[]) {
    const s = this.#state(m.id);
    if (s.text === "none") this.#text(m.id, contentText(m.content), out);
    if (this.#openText === m.id) this.#closeText(out);
    s.text = "done";
    const calls = (m.tool_calls ?? []).filter((c) => typeof c.id === "string" && c.id);
    if (calls.length) this.#lastCalls = calls.map((c) => ({ id: c.id!, name: c.name, args: c.args }));
    for (const call of calls) {
      if (this.#available.has(call.id!)) continue;
      this.#enterStep(m.id, out);
      this.#calls.add(call.id!);
      this.#available.add(call.id!);
      out.push({ type: "tool-input-available", toolCallId: call.id!, toolName: call.name, input: call.args, providerExecuted: true });
    }
  }

  /** A tool message: the output (or error) of a call the client knows. */
  #toolMessage(m: ToolMessage, out: UIMessageChunk[]) {
    const callId = m.tool_call_id;
    if (!this.#calls.has(callId) || this.#answered.has(callId) || this.#denied.has(callId)) return;
    this.#answered.add(callId);
    this.#closeText(out);
    if (m.status === "error") out.push({ type: "tool-output-error", toolCallId: callId, errorText: contentText(m.content) || "The tool failed", providerExecuted: true });
    else out.push({ type: "tool-output-available", toolCallId: callId, output: m.content, providerExecuted: true });
  }

  /** An `updates` event: each node's messages, complete; the run's interrupts. */
  #updates(data: Record<string, unknown>, out: UIMessageChunk[]) {
    for (const [node, update] of Object.entries(data)) {
      if (node === "__interrupt__") {
        if (Array.isArray(update)) this.#interrupts.push(...(update.filter((i) => isPlainObject(i) && typeof i.id === "string") as Interrupt[]));
        continue;
      }
      if (!isPlainObject(update) || update.messages === undefined) continue;
      for (const raw of Array.isArray(update.messages) ? update.messages : [update.messages]) {
        const m = asMessage(raw);
        if (!m || typeof m.id !== "string" || this.#before.has(m.id)) continue;
        if (m.type === "ai") this.#aiMessage(m, out);
        else if (m.type === "tool") this.#toolMessage(m, out);
      }
    }
  }
}
