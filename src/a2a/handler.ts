/**
 * The A2A request handler (the SDK's `A2ARequestHandler`) of one request: the caller's runtime
 * and one assistant. Messages start runs (or answer an interrupted task's), tasks are read from
 * runs (src/a2a/tasks.ts), cancel cancels the run. The SDK's JSON-RPC transports call it for
 * both protocol versions.
 */
import type { AgentCard, Part, SendMessageRequest, StreamResponse, Task, TaskArtifactUpdateEvent } from "@a2a-js/sdk";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import { GraphdockError } from "../errors.js";
import { UUID_RE } from "../ids.js";
import { contentText, coerceMessage, isAiMessage } from "../graph/messages.js";
import { isPlainObject } from "../json.js";
import type { HttpClient } from "../http/types.js";
import type { RunEvent, RunPayload } from "../runtime/types.js";
import type { A2aSdk } from "./sdk.js";
import { currentRun, parseTaskId, readTask, resultArtifact, TASK_METADATA_KEY, taskIdOf, type TaskRef } from "./tasks.js";

export interface HandlerContext {
  sdk: A2aSdk;
  client: HttpClient;
  assistantId: string;
  card(): Promise<AgentCard>;
  /** Reports an internal fault (the caller then gets an opaque internal error). */
  report(err: unknown): void;
}

/** What a message does: start a task on a thread, or answer the interrupt of task `ref`. */
interface Plan {
  threadId: string;
  ref?: TaskRef;
  payload: RunPayload;
}

const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });

export function requestHandler(h: HandlerContext): A2ARequestHandler {
  const { sdk, client, assistantId } = h;
  const E = sdk.errors;

  /** Runtime errors as the protocol's: `missing` for what was not found, the caller's mistakes said, faults opaque. */
  const protocolError = (err: unknown, missing: (message: string) => Error): Error => {
    if (err instanceof E.A2AError) return err;
    if (GraphdockError.is(err)) {
      if (err.code === "not_found") return missing(err.message);
      if (err.code === "invalid_input") return new E.RequestMalformedError(err.message);
      return new E.UnsupportedOperationError(err.message);
    }
    h.report(err);
    return new Error("Internal error");
  };
  const notFound = (id: string) => () => new E.TaskNotFoundError(`Task ${id} not found`);
  const malformed = (message: string) => new E.RequestMalformedError(message);

  /** A task id this server gave (else the task is not found). */
  const refOf = (id: unknown): TaskRef => {
    if (typeof id !== "string") throw malformed("The task id must be a string");
    const ref = id ? parseTaskId(id) : undefined;
    if (!ref) throw new E.TaskNotFoundError(`Task ${id} not found`);
    return ref;
  };

  const task = async (ref: TaskRef): Promise<Task> => {
    const found = await readTask(sdk, client, ref);
    if (!found) throw new E.TaskNotFoundError(`Task ${taskIdOf(ref)} not found`);
    return found;
  };

  function checkedParts(parts: Part[]): Part[] {
    if (!parts.length) throw malformed("message.parts is empty: send at least one text or data part");
    for (const part of parts) {
      const kind = part.content?.$case;
      if (kind === "raw" || kind === "url") throw new E.ContentTypeNotSupportedError("File parts are not supported: send text or data parts");
      if (kind !== "text" && kind !== "data") throw malformed("Each part must be a text or a data part");
      if (kind === "text" && typeof part.content!.value !== "string") throw malformed("A text part's text must be a string");
      if (kind === "data" && part.content!.value === undefined) throw malformed("A data part must hold data");
    }
    return parts;
  }

  /** A new task's graph input: data parts' keys, and the text as a user message in `messages`. */
  function inputOf(parts: Part[]): Record<string, unknown> {
    let input: Record<string, unknown> = {};
    const texts: string[] = [];
    for (const { content } of parts) {
      if (content?.$case === "text") texts.push(content.value);
      else if (content?.$case === "data") {
        if (!isPlainObject(content.value)) throw malformed("A data part that starts a task must hold a JSON object: its keys are the agent's input");
        input = { ...input, ...content.value };
      }
    }
    if (texts.length) input.messages = [...(Array.isArray(input.messages) ? input.messages : []), { role: "user", content: texts.join("\n") }];
    return input;
  }

  /** The answer to an interrupt: the first data part's value, else the text. */
  function answerOf(parts: Part[]): unknown {
    for (const { content } of parts) if (content?.$case === "data") return content.value;
    return parts.map(({ content }) => (content?.$case === "text" ? content.value : "")).join("\n");
  }

  const resume = (ref: TaskRef, parts: Part[]): Plan => ({
    threadId: ref.threadId,
    ref,
    payload: { command: { resume: answerOf(parts) }, metadata: { [TASK_METADATA_KEY]: taskIdOf(ref) } },
  });

  /**
   * What a message does: answer the interrupt of the task it names (which must be waiting for
   * input), or of its context's newest task when that one waits (the next message answers); else
   * start a task, in its context or a new one.
   */
  async function plan(params: SendMessageRequest): Promise<Plan> {
    const message = params.message;
    if (!message) throw malformed("params.message is required");
    const parts = checkedParts(message.parts ?? []);
    const { contextId, taskId } = message;
    if ((contextId !== undefined && typeof contextId !== "string") || (taskId !== undefined && typeof taskId !== "string")) {
      throw malformed("message.contextId and message.taskId must be strings");
    }
    if (taskId) {
      const ref = refOf(taskId);
      if (contextId && contextId !== ref.threadId) throw malformed(`contextId ${contextId} is not the context of task ${taskId}`);
      const current = await task(ref);
      if (current.status?.state !== sdk.TaskState.TASK_STATE_INPUT_REQUIRED) {
        throw new E.UnsupportedOperationError(`Task ${taskId} is not waiting for input: a message may only name a task that is (input-required); send it without taskId to start a new task`);
      }
      return resume(ref, parts);
    }
    if (contextId && !UUID_RE.test(contextId)) throw malformed(`contextId must be a context id this agent gave (a UUID), got ${JSON.stringify(contextId.slice(0, 100))}`);
    if (contextId) {
      const thread = await client.threads.get(contextId).catch((err) => {
        if (GraphdockError.is(err, "not_found")) return undefined;
        throw err;
      });
      if (thread?.status === "interrupted") {
        const [newest] = await client.runs.list(contextId, { limit: 1 });
        const waiting = newest && parseTaskId(String(newest.metadata?.[TASK_METADATA_KEY] ?? taskIdOf({ threadId: contextId, runId: newest.run_id })));
        if (waiting) return resume(waiting, parts);
      }
    }
    return { threadId: contextId || crypto.randomUUID(), payload: { input: inputOf(parts), ifNotExists: "create" } };
  }

  const statusEvent = (t: Task): StreamResponse => ({
    payload: { $case: "statusUpdate", value: { taskId: t.id, contextId: t.contextId, status: t.status, metadata: undefined } },
  });
  const artifactEvent = (t: Pick<Task, "id" | "contextId">, artifact: TaskArtifactUpdateEvent["artifact"], append: boolean, lastChunk: boolean): StreamResponse => ({
    payload: { $case: "artifactUpdate", value: { taskId: t.id, contextId: t.contextId, artifact, append, lastChunk, metadata: undefined } },
  });

  /**
   * A run's events as task updates: the AI message's text as it streams (appended to the result
   * artifact), then the final artifact (replacing it) and the final status, read as `tasks/get` reads them.
   */
  async function* follow(ref: TaskRef, events: AsyncIterator<RunEvent>): AsyncGenerator<StreamResponse> {
    const t = { id: taskIdOf(ref), contextId: ref.threadId };
    let streamed = false;
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const ev = next.value;
      if (ev.event !== "messages" || !isAiMessage(ev.data[0])) continue;
      const delta = contentText(coerceMessage(ev.data[0]).content);
      if (!delta) continue;
      yield artifactEvent(t, resultArtifact([text(delta)]), streamed, false);
      streamed = true;
    }
    const final = await task(ref);
    for (const artifact of final.artifacts) yield artifactEvent(final, artifact, false, true);
    yield statusEvent(final);
  }

  return {
    getAgentCard: () => h.card(),
    async getAuthenticatedExtendedAgentCard() {
      throw new E.ExtendedAgentCardNotConfiguredError("This agent has no extended card");
    },

    async sendMessage(params) {
      try {
        const p = await plan(params);
        let runId = "";
        const payload = { ...p.payload, onRunCreated: ({ run_id }: { run_id: string }) => (runId = run_id) };
        if (params.configuration?.returnImmediately) await client.runs.create(p.threadId, assistantId, payload);
        else await client.runs.wait(p.threadId, assistantId, { ...payload, raiseError: false });
        return await task(p.ref ?? { threadId: p.threadId, runId });
      } catch (err) {
        throw protocolError(err, malformed);
      }
    },

    async *sendMessageStream(params) {
      let p: Plan;
      let events: AsyncIterator<RunEvent>;
      let first: IteratorResult<RunEvent>;
      try {
        p = await plan(params);
        events = client.runs.stream(p.threadId, assistantId, { ...p.payload, streamMode: ["messages-tuple"] })[Symbol.asyncIterator]();
        first = await events.next(); // the run exists (or was refused) once its metadata event comes
      } catch (err) {
        throw protocolError(err, malformed);
      }
      const runId = first.done ? "" : (first.value.data as { run_id: string }).run_id;
      const ref = p.ref ?? { threadId: p.threadId, runId };
      try {
        yield { payload: { $case: "task", value: await task(ref) } };
        yield* follow(ref, events);
      } catch (err) {
        throw protocolError(err, malformed);
      } finally {
        await events.return?.();
      }
    },

    async getTask(params) {
      try {
        return await task(refOf(params.id));
      } catch (err) {
        throw protocolError(err, notFound(params.id));
      }
    },

    async cancelTask(params) {
      try {
        const ref = refOf(params.id);
        const found = await currentRun(client, ref);
        if (!found) throw new E.TaskNotFoundError(`Task ${params.id} not found`);
        if (found.run.status !== "pending" && found.run.status !== "running") {
          const state = (await task(ref)).status?.state;
          throw new E.TaskNotCancelableError(`Task ${params.id} cannot be canceled: it is ${sdk.TaskState[state ?? 0] ?? "over"}`);
        }
        await client.runs.cancel(ref.threadId, found.run.run_id, true, "interrupt");
        return await task(ref);
      } catch (err) {
        throw protocolError(err, notFound(params.id));
      }
    },

    async *resubscribe(params) {
      let ref: TaskRef;
      let events: AsyncIterator<RunEvent> | undefined;
      try {
        ref = refOf(params.id);
        const found = await currentRun(client, ref);
        if (!found) throw new E.TaskNotFoundError(`Task ${params.id} not found`);
        if (found.run.status === "pending" || found.run.status === "running") {
          events = client.runs.joinStream(ref.threadId, found.run.run_id, { streamMode: ["messages-tuple"] })[Symbol.asyncIterator]();
        }
        yield { payload: { $case: "task", value: await task(ref) } };
        if (events) yield* follow(ref, events);
      } catch (err) {
        throw protocolError(err, notFound(params.id));
      } finally {
        await events?.return?.();
      }
    },

    async listTasks() {
      throw new E.UnsupportedOperationError("Listing tasks is not supported: get a task by its id");
    },
    async createTaskPushNotificationConfig() {
      throw new E.PushNotificationNotSupportedError("Push notifications are not supported: use message/stream or tasks/get");
    },
    async getTaskPushNotificationConfig() {
      throw new E.PushNotificationNotSupportedError("Push notifications are not supported");
    },
    async listTaskPushNotificationConfigs() {
      throw new E.PushNotificationNotSupportedError("Push notifications are not supported");
    },
    async deleteTaskPushNotificationConfig() {
      throw new E.PushNotificationNotSupportedError("Push notifications are not supported");
    },
  };
}
