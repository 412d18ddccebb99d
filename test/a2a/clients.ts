/**
 * The two official A2A clients the tests speak through: `@a2a-js/sdk` 1.x (A2A 1.0) and 0.3.14
 * (A2A 0.3, installed as `a2a-sdk-v03`), behind one small interface whose answers are normalized
 * for assertions (state names as 0.3 writes them, parts as texts and data).
 */
import { Role, TaskState, taskStateToJSON, type Part as V1Part, type Task as V1Task, type StreamResponse } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { ClientFactory as ClientFactory03, ClientFactoryOptions as Options03, DefaultAgentCardResolver as Resolver03, JsonRpcTransportFactory as Transport03 } from "a2a-sdk-v03/client";
import type { Part as V03Part, Task as V03Task } from "a2a-sdk-v03";

/** A part as the tests write it. */
export type TestPart = { text: string } | { data: unknown };

/** A task, normalized. */
export interface SeenTask {
  id: string;
  contextId: string;
  state: string;
  /** Parts of the status message. */
  status: TestPart[];
  /** Parts of each artifact. */
  artifacts: TestPart[][];
}

/** A stream event, normalized. */
export type SeenEvent =
  | { kind: "task"; task: SeenTask }
  | { kind: "status"; state: string; final?: boolean }
  | { kind: "artifact"; parts: TestPart[]; append: boolean; lastChunk: boolean };

export interface A2aTestClient {
  version: "1.0" | "0.3";
  card: Record<string, unknown>;
  send(parts: TestPart[], options?: { contextId?: string; taskId?: string; immediate?: boolean }): Promise<SeenTask>;
  stream(parts: TestPart[], options?: { contextId?: string; taskId?: string }): AsyncGenerator<SeenEvent>;
  get(id: string): Promise<SeenTask>;
  cancel(id: string): Promise<SeenTask>;
}

/** A fetch that adds `headers` to every request (the credentials of the caller). */
export const withHeaders = (headers: Record<string, string>, base: typeof fetch = fetch): typeof fetch =>
  ((input: string | URL | Request, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return base(input, { ...init, headers: h });
  }) as typeof fetch;

const v1State = (state: TaskState | undefined) =>
  taskStateToJSON(state ?? TaskState.TASK_STATE_UNSPECIFIED).replace("TASK_STATE_", "").toLowerCase().replace("_", "-");
const v1Parts = (parts: V1Part[] | undefined): TestPart[] =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? { text: p.content.value } : { data: p.content?.$case === "data" ? p.content.value : p.content }));
const v1Task = (t: V1Task): SeenTask => ({
  id: t.id,
  contextId: t.contextId,
  state: v1State(t.status?.state),
  status: v1Parts(t.status?.message?.parts),
  artifacts: t.artifacts.map((a) => v1Parts(a.parts)),
});
const toV1 = (parts: TestPart[]): V1Part[] =>
  parts.map((p) => ({ content: "text" in p ? { $case: "text", value: p.text } : { $case: "data", value: p.data }, metadata: undefined, filename: "", mediaType: "" }));

/** The 1.x client of the agent whose card is at `cardUrl`. */
export async function v1Client(cardUrl: string, fetchImpl: typeof fetch): Promise<A2aTestClient> {
  const resolver = new DefaultAgentCardResolver({ fetchImpl });
  const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: resolver }).createFromUrl(cardUrl, "");
  const card = (await (await fetchImpl(cardUrl, { headers: { "A2A-Version": "1.0" } })).json()) as Record<string, unknown>;
  const request = (parts: TestPart[], o: { contextId?: string; taskId?: string; immediate?: boolean } = {}) =>
    ({
      tenant: "",
      metadata: undefined,
      message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: toV1(parts), contextId: o.contextId ?? "", taskId: o.taskId ?? "", metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: o.immediate ? { returnImmediately: true, acceptedOutputModes: [], taskPushNotificationConfig: undefined } : undefined,
    }) as Parameters<typeof client.sendMessage>[0];
  return {
    version: "1.0",
    card,
    async send(parts, o) {
      const result = await client.sendMessage(request(parts, o));
      if (!("status" in result)) throw new Error("expected a task, got a message");
      return v1Task(result);
    },
    async *stream(parts, o) {
      for await (const e of client.sendMessageStream(request(parts, o)) as AsyncGenerator<StreamResponse>) {
        const p = e.payload!;
        if (p.$case === "task") yield { kind: "task", task: v1Task(p.value) };
        else if (p.$case === "statusUpdate") yield { kind: "status", state: v1State(p.value.status?.state) };
        else if (p.$case === "artifactUpdate") yield { kind: "artifact", parts: v1Parts(p.value.artifact?.parts), append: p.value.append, lastChunk: p.value.lastChunk };
      }
    },
    get: async (id) => v1Task(await client.getTask({ id, tenant: "", historyLength: undefined })),
    cancel: async (id) => v1Task(await client.cancelTask({ id, tenant: "", metadata: undefined })),
  };
}

const v03Parts = (parts: V03Part[] | undefined): TestPart[] =>
  (parts ?? []).map((p) => (p.kind === "text" ? { text: p.text } : p.kind === "data" ? { data: p.data } : { data: p }));
const v03Task = (t: V03Task): SeenTask => ({
  id: t.id,
  contextId: t.contextId,
  state: t.status.state,
  status: v03Parts(t.status.message?.parts),
  artifacts: (t.artifacts ?? []).map((a) => v03Parts(a.parts)),
});

/** The 0.3.14 client of the agent whose card is at `cardUrl`. */
export async function v03Client(cardUrl: string, fetchImpl: typeof fetch): Promise<A2aTestClient> {
  const options = Options03.createFrom(Options03.default, { transports: [new Transport03({ fetchImpl })], cardResolver: new Resolver03({ fetchImpl }) });
  const client = await new ClientFactory03(options).createFromUrl(cardUrl, "");
  const card = (await (await fetchImpl(cardUrl)).json()) as Record<string, unknown>;
  const params = (parts: TestPart[], o: { contextId?: string; taskId?: string; immediate?: boolean } = {}) => ({
    message: {
      kind: "message" as const,
      messageId: crypto.randomUUID(),
      role: "user" as const,
      parts: parts.map((p): V03Part => ("text" in p ? { kind: "text", text: p.text } : { kind: "data", data: p.data as Record<string, unknown> })),
      ...(o.contextId ? { contextId: o.contextId } : {}),
      ...(o.taskId ? { taskId: o.taskId } : {}),
    },
    ...(o.immediate ? { configuration: { blocking: false } } : {}),
  });
  return {
    version: "0.3",
    card,
    async send(parts, o) {
      const result = await client.sendMessage(params(parts, o));
      if (result.kind !== "task") throw new Error("expected a task, got a message");
      return v03Task(result);
    },
    async *stream(parts, o) {
      for await (const e of client.sendMessageStream(params(parts, o))) {
        if (e.kind === "task") yield { kind: "task", task: v03Task(e) };
        else if (e.kind === "status-update") yield { kind: "status", state: e.status.state, final: e.final };
        else if (e.kind === "artifact-update") yield { kind: "artifact", parts: v03Parts(e.artifact.parts), append: e.append ?? false, lastChunk: e.lastChunk ?? false };
      }
    },
    get: async (id) => v03Task(await client.getTask({ id })),
    cancel: async (id) => v03Task(await client.cancelTask({ id })),
  };
}
