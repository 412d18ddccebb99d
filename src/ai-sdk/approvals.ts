/**
 * Interrupts as the AI SDK's tool approvals, and the client's answers as the resume (D108).
 *
 * - The interrupt of LangChain's human-in-the-loop middleware (`{ actionRequests, reviewConfigs }`,
 *   asked before the tools an AI message calls) is an approval request on each of those tool
 *   calls: approved is `{ type: "approve" }`, denied `{ type: "reject", message: reason }`.
 * - Any other interrupt whose value names a tool call the client shows (`tool_call: { id }` or
 *   `tool_call_id`, as a graph asking before it runs a tool writes it) is an approval request on
 *   that call, answered with `true` or `false`.
 * - Any other interrupt is a tool call of its own, the dynamic tool `interrupt` whose input is the
 *   interrupt's value, with an approval request: approved or denied resumes with `true` or
 *   `false`; an output the client gives the call (`addToolOutput`) resumes with that output.
 *
 * A denied approval's tool call is answered `tool-output-denied`.
 */
import type { UIMessage, UIMessageChunk } from "ai";
import { isPlainObject, jsonEqual } from "../json.js";
import type { Interrupt } from "../types.js";

/** The tool name of an interrupt surfaced as a tool call of its own. */
export const INTERRUPT_TOOL = "interrupt";

/** The tool call id of such an interrupt. */
export const interruptCallId = (interruptId: string) => `interrupt-${interruptId}`;
/** The approval id of action `index` of a human-in-the-loop interrupt. */
const actionApprovalId = (interruptId: string, index: number) => `${interruptId}:${index}`;

/** A tool call the response made known to the client: its id, name and arguments. */
export interface KnownToolCall {
  id: string;
  name: string;
  args: unknown;
}

interface ActionRequest {
  name: string;
  args: unknown;
  description?: string;
}

/** The action requests of a human-in-the-loop middleware interrupt, or undefined for any other value. */
function actionRequests(value: unknown): ActionRequest[] | undefined {
  if (!isPlainObject(value) || !Array.isArray(value.actionRequests) || !Array.isArray(value.reviewConfigs)) return undefined;
  const requests = value.actionRequests;
  if (!requests.length || !requests.every((r) => isPlainObject(r) && typeof r.name === "string")) return undefined;
  return requests as ActionRequest[];
}

/**
 * The tool calls a human-in-the-loop interrupt asks about, matched in order by name and
 * arguments among `calls` (the last AI message's), or undefined when one has no match.
 */
function matchCalls(requests: ActionRequest[], calls: readonly KnownToolCall[]): KnownToolCall[] | undefined {
  const used = new Set<string>();
  const matched: KnownToolCall[] = [];
  for (const request of requests) {
    const call = calls.find((c) => !used.has(c.id) && c.name === request.name && jsonEqual(c.args, request.args));
    if (!call) return undefined;
    used.add(call.id);
    matched.push(call);
  }
  return matched;
}

/** The tool call id an interrupt's value names (`tool_call: { id }` or `tool_call_id`), if any. */
function namedCall(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  const id = isPlainObject(value.tool_call) ? value.tool_call.id : value.tool_call_id;
  return typeof id === "string" && id ? id : undefined;
}

/**
 * The chunks asking the client about `interrupts`: approval requests on the calls of
 * `lastCalls` a human-in-the-loop interrupt names, or on the call of `knownCalls` an interrupt's
 * value names, and for every other interrupt a tool call of its own with an approval request,
 * in a step of its own.
 */
export function approvalChunks(
  interrupts: readonly Interrupt[],
  lastCalls: readonly KnownToolCall[],
  knownCalls: ReadonlySet<string>,
): { inStep: UIMessageChunk[]; ownStep: UIMessageChunk[] } {
  const inStep: UIMessageChunk[] = [];
  const ownStep: UIMessageChunk[] = [];
  for (const { id, value } of interrupts) {
    if (typeof id !== "string") continue;
    const requests = actionRequests(value);
    const calls = requests && matchCalls(requests, lastCalls);
    if (requests && calls) {
      calls.forEach((call, i) => {
        const reason = requests[i]!.description;
        inStep.push({ type: "tool-approval-request", approvalId: actionApprovalId(id, i), toolCallId: call.id, ...(typeof reason === "string" ? { reason } : {}) });
      });
      continue;
    }
    const named = namedCall(value);
    if (named && knownCalls.has(named)) {
      inStep.push({ type: "tool-approval-request", approvalId: id, toolCallId: named });
      continue;
    }
    const toolCallId = interruptCallId(id);
    ownStep.push(
      { type: "tool-input-available", toolCallId, toolName: INTERRUPT_TOOL, input: value, dynamic: true },
      { type: "tool-approval-request", approvalId: id, toolCallId },
    );
  }
  return { inStep, ownStep };
}

/** How the client answered the pending interrupts, read from the assistant message it sent back. */
export interface Answers {
  /** The resume of the run: the value, or by interrupt id when several interrupts are pending. */
  resume: unknown;
  /** Tool calls whose approval was denied (answered with `tool-output-denied`). */
  denied: string[];
}

type ToolPart = Extract<UIMessage["parts"][number], { toolCallId: string }>;
const isToolPart = (part: UIMessage["parts"][number]): part is ToolPart => part.type === "dynamic-tool" || part.type.startsWith("tool-");

/**
 * The resume answering `pending` from `message`'s tool parts, or a string saying why it cannot
 * be read: an interrupt is answered when all of its approvals are (or its tool call has an
 * output); at least one must be, and when several are pending the answered ones are resumed by id.
 */
export function readAnswers(pending: readonly Interrupt[], message: UIMessage): Answers | string {
  const parts = message.parts.filter(isToolPart);
  const byApproval = new Map<string, ToolPart>();
  for (const part of parts) if (part.approval?.id !== undefined) byApproval.set(part.approval.id, part);
  const values = new Map<string, unknown>();
  const denied: string[] = [];
  for (const { id, value } of pending) {
    if (typeof id !== "string") continue;
    const requests = actionRequests(value);
    const answered = requests?.map((_, i) => byApproval.get(actionApprovalId(id, i)));
    if (requests && answered!.some((p) => p !== undefined)) {
      if (answered!.some((p) => p?.state !== "approval-responded")) return "Answer every tool approval of the step before sending";
      values.set(id, {
        decisions: answered!.map((p) => {
          const { approved, reason } = p!.approval as { approved: boolean; reason?: string };
          if (approved) return { type: "approve" };
          denied.push(p!.toolCallId);
          return { type: "reject", ...(reason ? { message: reason } : {}) };
        }),
      });
      continue;
    }
    const approval = byApproval.get(id);
    const part = approval ?? parts.find((p) => p.toolCallId === interruptCallId(id));
    if (part?.state === "output-available") values.set(id, part.output);
    else if (part?.state === "approval-responded") {
      const { approved } = part.approval as { approved: boolean };
      values.set(id, approved);
      if (!approved && part.toolCallId !== interruptCallId(id)) denied.push(part.toolCallId);
    }
  }
  if (!values.size) return "The message answers none of the questions this chat waits on (approve or deny a tool call, or give the interrupt tool an output)";
  const resume = pending.length === 1 ? values.values().next().value : Object.fromEntries(values);
  return { resume, denied };
}
