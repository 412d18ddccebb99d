/**
 * What a chat request runs on its thread (D107), decided from the request's last message and the
 * thread's state, before anything is written (a request that cannot be served changes nothing):
 *
 * - a new user message: the next turn, with only that message as input (the thread holds the
 *   history); the thread is created on first use;
 * - a user message the thread already holds (the hook's edit, `sendMessage({ messageId })`): a
 *   fork from the checkpoint before that message, with the new text as input;
 * - `regenerate-message`: a fork from the checkpoint before the answer to the last user message,
 *   run again with no input;
 * - the assistant message sent back with approvals answered (or an interrupt's tool output): the
 *   interrupted run resumed with the answers.
 */
import { GraphdockError } from "../errors.js";
import { isPlainObject } from "../json.js";
import type { HttpClient } from "../http/types.js";
import type { Interrupt } from "../types.js";
import type { RunPayload, ThreadState } from "../runtime/types.js";
import { readAnswers } from "./approvals.js";
import { ChatRequestError, userInput, type ChatRequest } from "./request.js";

/** A run to start for a chat request, and what its stream already shows. */
export interface Plan {
  payload: RunPayload;
  /** True when the response continues the client's last assistant message (answers to approvals). */
  continuation: boolean;
  /** Ids of the messages the thread held before the run: the client shows them already. */
  before: Set<string>;
  /** Tool calls the client's message shows (a continuation's): their outputs may be streamed. */
  knownCalls: Set<string>;
  /** Tool calls whose approval was denied. */
  denied: string[];
}

const refuse = (message: string) => new ChatRequestError(message);

const messagesOf = (values: unknown): Array<Record<string, unknown>> => {
  const list = isPlainObject(values) ? values.messages : undefined;
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
};
const idsOf = (values: unknown) => new Set(messagesOf(values).map((m) => m.id).filter((id): id is string => typeof id === "string"));

/** The thread's state, or undefined when the thread does not exist (yet). */
async function stateOf(client: HttpClient, threadId: string): Promise<ThreadState | undefined> {
  try {
    return await client.threads.getState(threadId);
  } catch (err) {
    if (GraphdockError.is(err, "not_found")) return undefined;
    throw err;
  }
}

const HISTORY_PAGE = 100;
/** How many pages of history a fork point is looked for in. */
const HISTORY_PAGES = 20;

/**
 * The checkpoint before the step that added message `messageId` to the branch of `head`: its
 * parents are followed (the history lists every branch's checkpoints, newest first, so a parent
 * is always on a later page) to the first without the message.
 */
async function checkpointWithout(client: HttpClient, threadId: string, head: ThreadState, messageId: string): Promise<ThreadState | undefined> {
  const read = new Map<string, ThreadState>();
  let cursor = head.checkpoint_id;
  let pages = 0;
  for (let state: ThreadState | undefined = head; state; ) {
    if (!idsOf(state.values).has(messageId)) return state;
    const parent = state.parent_checkpoint_id;
    if (!parent) return undefined;
    while (!read.has(parent) && cursor && pages++ < HISTORY_PAGES) {
      const page = await client.threads.getHistory(threadId, { limit: HISTORY_PAGE, before: { configurable: { checkpoint_id: cursor } } });
      for (const s of page) if (s.checkpoint_id) read.set(s.checkpoint_id, s);
      cursor = page.length === HISTORY_PAGE ? page.at(-1)!.checkpoint_id : null;
    }
    state = read.get(parent);
  }
  return undefined;
}

const pendingOf = (state: ThreadState): Interrupt[] => state.interrupts ?? [];

/** The run for `request` on thread `threadId`; throws {@link ChatRequestError} when it has none. */
export async function planRun(client: HttpClient, threadId: string, request: ChatRequest): Promise<Plan> {
  const { last, trigger } = request;
  const state = await stateOf(client, threadId);
  const messages = messagesOf(state?.values);
  const before = idsOf(state?.values);
  const base = { before, knownCalls: new Set<string>(), denied: [] as string[], continuation: false };
  const metadata = { ...request.run.metadata, ai_sdk_chat_id: request.chatId };
  const run: RunPayload = { ...request.run, metadata };

  if (trigger === "regenerate-message") {
    if (last.role !== "user") throw refuse("regenerate-message: the last message must be the user message whose answer is made again");
    const at = messages.findIndex((m) => m.id === last.id);
    if (!state || at < 0) throw refuse(`regenerate-message: message ${last.id} is not in this chat`);
    const answer = messages[at + 1];
    const from = typeof answer?.id === "string" ? await checkpointWithout(client, threadId, state, answer.id) : state;
    if (!from?.checkpoint_id || !from.next.length) throw refuse(`regenerate-message: there is nothing to run again after message ${last.id}`);
    return { ...base, before: idsOf(from.values), payload: { ...run, input: null, checkpointId: from.checkpoint_id } };
  }

  if (last.role === "user") {
    const input = { messages: [userInput(last)] };
    if (!before.has(last.id)) return { ...base, payload: { ...run, input, ifNotExists: "create" } };
    // The thread holds this message already: it was edited, so the chat forks before it.
    const from = state && (await checkpointWithout(client, threadId, state, last.id));
    if (!from?.checkpoint_id) throw refuse(`Message ${last.id} cannot be edited: no checkpoint before it`);
    return { ...base, before: idsOf(from.values), payload: { ...run, input, checkpointId: from.checkpoint_id } };
  }

  if (last.role === "assistant") {
    const pending = state ? pendingOf(state) : [];
    if (!pending.length) throw refuse("This chat is not waiting for an answer: send a user message");
    const answers = readAnswers(pending, last);
    if (typeof answers === "string") throw refuse(answers);
    const knownCalls = new Set(last.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : [])));
    return { ...base, continuation: true, knownCalls, denied: answers.denied, payload: { ...run, command: { resume: answers.resume } } };
  }
  throw refuse("The last message must be a user message, or the assistant message answering its tool approvals");
}
