/**
 * Thousands of seeded hostile requests at the A2A endpoint over a socket (D3, D25 applied to
 * A2A), in both protocol versions: malformed or broken JSON-RPC, unknown methods, messages whose
 * parts are empty, files or of no kind, foreign or malformed task and context ids, odd versions,
 * methods and cards. No answer is 5xx or an internal JSON-RPC error, and the store's contents
 * read back unchanged (the seeded tasks include one waiting for input, which none may answer).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { a2aEndpoint } from "../../src/a2a/index.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { echoGraph } from "../http/graphs.js";
import { HOSTILE_IDS, jsonValue, prng, snapshot, type Rng } from "../http/hostile.js";
import { barrage, body, envelope, hostileString, quote, type ProtocolRequest } from "../http/protocol-hostile.js";
import { lgAskGraph } from "../http/protocol-fixtures.js";

let runtime: Runtime;
let server: ServeHandle;
const faults: unknown[] = [];
const seeded = { done: "", waiting: "", context: "" };

async function rpc(path: string, method: string, params: unknown) {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return ((await res.json()) as { result: { id: string; contextId: string; status: { state: string } } }).result;
}

beforeAll(async () => {
  runtime = await createRuntime({ graphs: { echo: echoGraph(), ask: lgAskGraph() } });
  server = await serve(runtime, { port: 0, mcp: false, a2a: false, aiSdk: false, endpoints: [a2aEndpoint({ onError: (e) => faults.push(e) })], onError: (e) => faults.push(e) });
  const done = await rpc("/a2a/echo", "message/send", { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "data", data: { text: "seed" } }] } });
  const waiting = await rpc("/a2a/ask", "message/send", { message: { kind: "message", messageId: "m2", role: "user", parts: [{ kind: "text", text: "hi" }] } });
  expect([done.status.state, waiting.status.state]).toEqual(["completed", "input-required"]);
  Object.assign(seeded, { done: done.id, waiting: waiting.id, context: waiting.contextId });
});
afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

/** Parts no path accepts: none, a file, a part of no kind (mixed with a good one or not). */
function poisonedParts(r: Rng, v1: boolean): string {
  const good = v1 ? '{"text":"hello"}' : '{"kind":"text","text":"hello"}';
  const file = v1 ? '{"url":"file:///etc/passwd","mediaType":"text/plain"}' : '{"kind":"file","file":{"uri":"file:///etc/passwd"}}';
  const noKind = v1 ? r.pick(["{}", '{"metadata":{}}']) : r.pick(['{"kind":"nope"}', "{}", '{"kind":"text"}']);
  return r.pick(["[]", `[${file}]`, `[${noKind}]`, `[${good},${file}]`, `[${noKind},${good}]`]);
}

/** A message: poisoned parts, or good parts with a task or context id that cannot take them. */
function message(r: Rng, v1: boolean): string {
  const fields: string[] = [`"messageId":${r.chance(0.9) ? quote(crypto.randomUUID()) : jsonValue(r)}`, `"role":${v1 ? '"ROLE_USER"' : '"user"'}`];
  if (!v1) fields.push('"kind":"message"');
  const poisoned = r.chance(0.6);
  if (poisoned) {
    fields.push(`"parts":${poisonedParts(r, v1)}`);
    if (r.chance(0.5)) fields.push(`"taskId":${quote(r.pick([seeded.waiting, seeded.done, ...HOSTILE_IDS]))}`);
    if (r.chance(0.5)) fields.push(`"contextId":${quote(r.pick([seeded.context, crypto.randomUUID(), ...HOSTILE_IDS]))}`);
  } else {
    fields.push(`"parts":[${v1 ? '{"data":{"text":"x"}}' : '{"kind":"data","data":{"text":"x"}}'}]`);
    // A task that is over, or no task of ours; or no task, in a context that is not a UUID.
    if (r.chance(0.6)) fields.push(`"taskId":${quote(r.pick([seeded.done, `${seeded.context}:nope`, ...HOSTILE_IDS.filter((id) => id.trim())]))}`);
    else fields.push(`"contextId":${quote(r.pick(HOSTILE_IDS.filter((id) => id.trim() && !/^[0-9a-f-]{36}$/.test(id))))}`);
  }
  if (r.chance(0.1)) fields.push(`"metadata":${jsonValue(r)}`);
  return `{${fields.join(",")}}`;
}

const V03_METHODS = ["message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe", "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard", "tasks/send", "__proto__"];
const V1_METHODS = ["SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "SubscribeToTask", "ListTasks", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "GetExtendedAgentCard", "constructor"];

function params(r: Rng, method: string, v1: boolean): string | undefined {
  if (r.chance(0.08)) return r.pick(["1", '"x"', "[]", "null", "true", '{"":1}']);
  if (/send|stream|Message/i.test(method)) {
    if (r.chance(0.1)) return `{"message":${r.pick(["1", '"x"', "[]", "null", "{}"])}}`;
    const configuration = r.chance(0.2) ? `,"configuration":${v1 ? '{"returnImmediately":true}' : r.pick(['{"blocking":false}', "1", '{"blocking":"x"}', '{"historyLength":-1}'])}` : "";
    return `{"message":${message(r, v1)}${configuration}}`;
  }
  const id = r.chance(0.5) ? quote(r.pick([seeded.done, seeded.waiting, `${seeded.context}:x`, ":", "a:"])) : r.chance(0.7) ? hostileString(r) : jsonValue(r);
  return `{"id":${id}${r.chance(0.2) ? `,"historyLength":${r.pick(["-1", "1e999", '"x"', "0"])}` : ""}${r.chance(0.1) ? `,"metadata":${jsonValue(r)}` : ""}}`;
}

function request(r: Rng): ProtocolRequest {
  if (r.chance(0.06)) {
    const id = r.chance(0.5) ? encodeURIComponent(r.pick(HOSTILE_IDS)) : r.pick(["echo", "", "%", "%ZZ"]);
    return { method: r.pick(["GET", "GET", "POST", "HEAD"]), path: `/.well-known/agent-card.json${r.chance(0.9) ? `?assistant_id=${id}` : ""}`, headers: r.chance(0.5) ? { "a2a-version": r.pick(["1.0", "0.3", "x"]) } : {}, label: "card" };
  }
  const version = r.chance(0.6) ? undefined : r.pick(["1.0", "0.3", "0.3.0", "1", "2.0", "", "💥".replace(/./gu, "x")]);
  const v1 = version?.startsWith("1") ?? r.chance(0.3);
  const method = r.chance(0.9) ? r.pick(v1 ? V1_METHODS : V03_METHODS) : r.pick([...V1_METHODS, ...V03_METHODS]);
  const { text, label } = body(r, () => envelope(r, method, params(r, method, v1)));
  const headers: Record<string, string> = { "content-type": r.chance(0.9) ? "application/json" : r.pick(["text/plain", "application/a2a+json", ""]) };
  if (version !== undefined) headers["a2a-version"] = version;
  const agent = r.chance(0.93) ? r.pick(["echo", "ask"]) : r.pick(["nope", "%", "%ZZ", "a/b", "", encodeURIComponent(r.pick(HOSTILE_IDS))]);
  const httpMethod = r.chance(0.95) ? "POST" : r.pick(["GET", "PUT", "DELETE"]);
  return { method: httpMethod, path: `/a2a/${agent}`, headers, body: Buffer.isBuffer(text) ? text : Buffer.from(text), label: `${httpMethod} ${method} v${version ?? "-"} ${label}` };
}

it("answers 3,000 seeded hostile A2A requests with no 5xx and no internal error, and changes nothing", { timeout: 240_000 }, async () => {
  const before = await snapshot(server.url);
  const r = prng(29_200);
  const result = await barrage(new URL(server.url), 3_000, () => request(r));
  console.log(`hostile A2A requests: ${JSON.stringify({ sent: result.sent, statuses: result.statuses, codes: result.codes })}`);
  expect(result.failures.slice(0, 20)).toEqual([]);
  expect(faults.map(String)).toEqual([]);
  expect(result.sent).toBe(3_000);
  expect(await snapshot(server.url)).toEqual(before);
  // The task waiting for input still waits.
  expect((await rpc("/a2a/ask", "tasks/get", { id: seeded.waiting })).status.state).toBe("input-required");
});
