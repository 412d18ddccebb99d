/**
 * A conversation through the AG-UI LangGraph adapter (`@ag-ui/langgraph`, CopilotKit's agent for
 * LangGraph servers) with the weather agent: a question that makes the agent call its tool,
 * which pauses for approval (an interrupt); the approval (resume), after which the tool answers
 * and the model reports; a question answered slowly, abandoned after its first words (abort);
 * and the next question on the same thread. It records the AG-UI events of each turn in a form
 * two servers' conversations can be compared in (ids the servers mint and key order left out).
 */
import type { BaseEvent } from "@ag-ui/client";
import { LangGraphAgent } from "@ag-ui/langgraph";

export interface AguiTurn {
  label: string;
  events: BaseEvent[];
  /** Why the adapter gave up on the turn, if it did. */
  error?: string;
}

/** The agent of `graphId` on the server at `url`, on its own thread. */
export function aguiAgent(url: string, graphId: string, threadId: string): LangGraphAgent {
  return new LangGraphAgent({ deploymentUrl: url, graphId, threadId, agentId: graphId, description: graphId });
}

/** One turn: the events the agent's subscribers see, until it finishes (or `stop` says to abort). */
async function turn(agent: LangGraphAgent, label: string, parameters: Parameters<LangGraphAgent["runAgent"]>[0], stop?: (e: BaseEvent) => boolean): Promise<AguiTurn> {
  const events: BaseEvent[] = [];
  let stopped = false;
  try {
    await agent.runAgent(parameters, {
      onEvent: ({ event }) => {
        if (stopped) return;
        events.push(event);
        if (stop?.(event)) {
          stopped = true;
          agent.abortRun();
        }
      },
    });
    return { label, events };
  } catch (err) {
    return { label, events, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The whole conversation on a new thread of `graphId`. */
export async function converse(url: string, graphId: string, threadId: string): Promise<AguiTurn[]> {
  const agent = aguiAgent(url, graphId, threadId);
  const turns: AguiTurn[] = [];
  agent.addMessage({ id: "q1", role: "user", content: "What is the weather in Paris?" });
  turns.push(await turn(agent, "ask (tool call, approval interrupt)", {}));
  turns.push(await turn(agent, "approve (resume)", { forwardedProps: { command: { resume: "yes" } } }));
  agent.addMessage({ id: "q2", role: "user", content: "Greet me slowly" });
  turns.push(await turn(agent, "abandon after the first words (abort)", {}, (e) => e.type === "TEXT_MESSAGE_CONTENT"));
  agent.addMessage({ id: "q3", role: "user", content: "Hello again" });
  turns.push(await turn(agent, "the next question on the same thread", {}));
  return turns;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const UUIDS = new RegExp(UUID.source, "gi");
type Rec = Record<string, unknown>;

/** A message of a snapshot by what a user sees of it. */
function shownMessage(m: Rec): Rec {
  const calls = (m.tool_calls ?? m.toolCalls) as Rec[] | undefined;
  return {
    kind: m.type ?? m.role,
    // An id the server minted (a uuid, or LangGraph's run-<uuid>-tool-<call>) as `<id>`.
    id: typeof m.id === "string" && UUID.test(m.id) ? "<id>" : m.id,
    content: m.content,
    ...(calls?.length ? { calls: calls.map((c) => (c.function ? [(c.function as Rec).name, (c.function as Rec).arguments, c.id] : [c.name, c.args, c.id])) } : {}),
    ...(m.tool_call_id ?? m.toolCallId ? { answers: m.tool_call_id ?? m.toolCallId } : {}),
  };
}

/**
 * An AG-UI event as compared: its type and what a client acts on (message and tool call ids,
 * deltas, names, the interrupt, the outcome; snapshots by their messages and other keys); a
 * `RAW` event by the LangGraph event it wraps; ids the server mints replaced by `<id>`.
 */
export function comparable(e: BaseEvent): Rec {
  const x = e as unknown as Rec;
  const out: Rec = { type: x.type };
  for (const k of ["messageId", "toolCallId", "toolCallName", "parentMessageId", "role", "delta", "name", "value", "outcome"]) {
    if (x[k] !== undefined) out[k] = typeof x[k] === "string" ? (x[k] as string).replace(UUIDS, "<id>") : x[k];
  }
  if (x.type === "STATE_SNAPSHOT") {
    const { messages, ...rest } = (x.snapshot ?? {}) as Rec;
    out.snapshot = { messages: Array.isArray(messages) ? messages.map(shownMessage) : messages, keys: Object.keys(rest).sort() };
  }
  if (x.type === "MESSAGES_SNAPSHOT") out.messages = (x.messages as Rec[]).map(shownMessage);
  if (x.type === "RAW") out.raw = Array.isArray(x.event) ? "messages-tuple" : (x.event as Rec).event;
  return out;
}

/** The turns as compared. */
export const comparableTurns = (turns: AguiTurn[]) => turns.map((t) => ({ label: t.label, error: t.error, events: t.events.map(comparable) }));
