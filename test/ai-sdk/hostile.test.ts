/**
 * Thousands of seeded hostile requests at /ai-sdk/chat over a socket: malformed, too deep or
 * broken JSON; chat requests with a poisoned field (id, messages, the last message's shape,
 * trigger, messageId, run options); requests that are well formed but cannot be served (a
 * regenerate of a message the chat does not hold, approvals of questions nobody asked, answers
 * to the waiting chats that do not match); reconnects to chats with nothing in flight; odd paths,
 * methods and headers. Every answer is a 4xx, a 204 (a reconnect) or a stream holding one `error`
 * part and nothing else, and the store reads back unchanged.
 */
import { Agent } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { aiSdkEndpoint } from "../../src/ai-sdk/index.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { deep, HOSTILE_IDS, jsonValue, malformed, prng, snapshot, type Rng } from "../http/hostile.js";
import { lgAskGraph } from "../http/protocol-fixtures.js";
import { send, type ProtocolRequest } from "../http/protocol-hostile.js";
import { chatAgent, NodeChat } from "./fixtures.js";

let runtime: Runtime;
let server: ServeHandle;
const faults: unknown[] = [];
/** Chats seeded through the endpoint: one that ended, two waiting on an interrupt. */
const chats = { done: "seeded-done", hitl: "seeded-hitl", ask: "seeded-ask" };

beforeAll(async () => {
  runtime = await createRuntime({ graphs: { agent: chatAgent(), ask: lgAskGraph() } });
  server = await serve(runtime, { port: 0, mcp: false, a2a: false, aiSdk: false, endpoints: [aiSdkEndpoint({ onError: (e) => faults.push(e) })], onError: (e) => faults.push(e) });
  const chat = (id: string, graph: string) => new NodeChat({ id, api: `${server.url}/ai-sdk/chat/${graph}` });
  const done = chat(chats.done, "agent");
  await done.sendMessage({ text: "weather in Rome" });
  const hitl = chat(chats.hitl, "agent");
  await hitl.sendMessage({ text: "email zoe" });
  const ask = chat(chats.ask, "ask");
  await ask.sendMessage({ text: "hi" });
  expect([done.status, hitl.status, ask.status]).toEqual(["ready", "ready", "ready"]);
});
afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

const q = (v: unknown) => JSON.stringify(v);
const text = (r: Rng) => ({ type: "text", text: r.pick(["hi", "", "weather in Paris", "email bob", "\u0000", "💥"]) });

/** A UI message of a hostile shape: the validator refuses it, or it has nothing to send. */
function badMessage(r: Rng): unknown {
  switch (r.int(9)) {
    case 0:
      return r.pick([null, 1, "x", [], true]);
    case 1:
      return { id: "m", role: r.pick(["robot", "", 1, null, "__proto__"]), parts: [text(r)] };
    case 2:
      return { id: r.pick([1, null, {}, []]), role: "user", parts: [text(r)] };
    case 3:
      return { id: "m", role: "user", parts: r.pick(["x", 1, null, {}]) };
    case 4:
      return { id: "m", role: "user", parts: [r.pick([{ type: "text" }, { type: "text", text: 5 }, { type: "file", url: 1 }, { type: "tool-x", toolCallId: 1 }, null, "x"])] };
    case 5:
      return { id: "m", role: "user", parts: r.pick([[], [{ type: "step-start" }], [{ type: "reasoning", text: "x" }]]) }; // nothing to send
    case 6:
      return JSON.parse(jsonValue(r)) as unknown;
    case 7:
      return { id: "m", role: "user", parts: [{ type: "dynamic-tool", toolName: "x", toolCallId: "c", state: r.pick(["nope", "output-available", 1]), input: {} }] };
    default:
      return { id: "m", role: "system", parts: [{ type: "text", text: 1 }] };
  }
}

/** An assistant message answering what nobody asked: unknown approval ids, unanswered or odd states. */
function strayAnswer(r: Rng): unknown {
  const approvalId = r.pick(["0:0", "nope", "", ...HOSTILE_IDS.slice(0, 8)]);
  const state = r.pick(["approval-requested", "approval-responded", "output-available", "input-available"]);
  const part = r.chance(0.5)
    ? { type: "tool-send_email", toolCallId: r.pick(["call_1", "x", "interrupt-x"]), state, input: { to: "x" }, ...(state === "output-available" ? { output: "x" } : {}), approval: { id: approvalId, approved: r.chance(0.5) } }
    : { type: "dynamic-tool", toolName: "interrupt", toolCallId: `interrupt-${approvalId}`, state, input: "q", ...(state === "output-available" ? { output: "Ada" } : {}), ...(state.startsWith("approval") ? { approval: { id: approvalId, approved: true } } : {}) };
  return { id: "a1", role: "assistant", parts: [{ type: "step-start" }, part] };
}

const good = (r: Rng) => ({ id: "u-new", role: "user", parts: [{ type: "text", text: r.pick(["weather in Paris", "hello"]) }] });

/** A chat body that cannot run: each carries a poison. */
function chatBody(r: Rng): string {
  const fields: Record<string, unknown> = { id: r.pick([...Object.values(chats), "fresh-chat", crypto.randomUUID()]), messages: [good(r)], trigger: "submit-message" };
  const poison = r.int(10);
  if (poison === 0) fields.id = r.pick([undefined, 1, "", "x".repeat(300), {}, null, []]);
  else if (poison === 1) fields.messages = r.pick([undefined, {}, [], "x", null, 1]);
  else if (poison === 2) fields.messages = [good(r), badMessage(r)];
  else if (poison === 3) fields.trigger = r.pick(["resume-stream", 1, "", {}, "submit"]);
  else if (poison === 4) fields.messageId = r.pick([1, {}, [], true]);
  else if (poison === 5) fields[r.pick(["config", "metadata"])] = r.pick(["x", 1, [], true]);
  else if (poison === 6) fields.on_disconnect = r.pick(["never", 1, "", {}]);
  else if (poison === 7) Object.assign(fields, { trigger: "regenerate-message", messages: [{ ...good(r), id: r.pick(["nope", ...HOSTILE_IDS.slice(0, 6)]) }] });
  else if (poison === 8) Object.assign(fields, { trigger: "regenerate-message", messages: [strayAnswer(r)] });
  else fields.messages = [good(r), strayAnswer(r)];
  if (r.chance(0.1)) fields[r.pick(["__proto__", "constructor", "extra"])] = JSON.parse(jsonValue(r)) as unknown;
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${q(k)}:${q(v)}`).join(",")}}`;
}

function request(r: Rng): ProtocolRequest {
  if (r.chance(0.05)) {
    // The hook's reconnect, for chats of every kind: nothing in flight, so 204 (or a 4xx).
    const chat = encodeURIComponent(r.pick([...Object.values(chats), ...HOSTILE_IDS]));
    const method = r.chance(0.9) ? "GET" : "POST";
    return { method, path: `/ai-sdk/chat/${r.pick(["agent", "ask", "nope"])}/${chat}/${r.pick(["stream", "stream", "x"])}`, headers: {}, label: `${method} resume ${chat}` };
  }
  const x = r.rand();
  let body: string | Buffer;
  let label: string;
  if (x < 0.1) [body, label] = [malformed(r), "malformed"];
  else if (x < 0.14) [body, label] = [deep(r, 129 + r.int(2000)), "deep"];
  else if (x < 0.18) [body, label] = [r.pick(["[]", '"x"', "1", "null", "true", "{}"]), "not an object"];
  else [body, label] = [chatBody(r), "chat"];
  const assistant = r.chance(0.93) ? r.pick(["agent", "ask"]) : r.pick(["nope", "%", "%ZZ", "a/b", "", encodeURIComponent(r.pick(HOSTILE_IDS))]);
  const method = r.chance(0.96) ? "POST" : r.pick(["GET", "PUT", "DELETE", "PATCH"]);
  const headers = { "content-type": r.chance(0.9) ? "application/json" : r.pick(["text/plain", "", "application/x-www-form-urlencoded"]) };
  const text = typeof body === "string" ? body : body.toString("utf8");
  return { method, path: `/ai-sdk/chat${assistant ? `/${assistant}` : ""}`, headers, body: Buffer.isBuffer(body) ? body : Buffer.from(body), label: `${method} ${assistant} ${label} ${text.slice(0, 160)}` };
}

/** The data events of a UI message stream. */
const dataEvents = (body: string) => body.split("\n\n").filter((e) => e.startsWith("data: ") && e !== "data: [DONE]").map((e) => JSON.parse(e.slice(6)) as { type: string });

it("answers 3,000 seeded hostile chat requests with a 4xx or one error part, and changes nothing", { timeout: 300_000 }, async () => {
  const before = await snapshot(server.url);
  const r = prng(29_300);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const failures: string[] = [];
  const statuses: Record<number, number> = {};
  const COUNT = 3_000;
  let sent = 0;
  const worker = async () => {
    while (sent < COUNT) {
      const req = request(r);
      sent++;
      const answer = await send(new URL(server.url), req, agent);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (answer.status === 200) {
        const events = dataEvents(answer.body);
        if (events.length !== 1 || events[0]!.type !== "error") failures.push(`not one error part for ${req.label}: ${answer.body.slice(0, 300)}`);
      } else if (!(answer.status === 204 && req.method === "GET" && req.path.endsWith("/stream")) && (answer.status < 400 || answer.status >= 500)) failures.push(`${answer.status} for ${req.label}: ${answer.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  agent.destroy();
  console.log(`hostile AI SDK chat requests: ${JSON.stringify({ sent, statuses })}`);
  expect(failures.slice(0, 20)).toEqual([]);
  expect(faults.map(String)).toEqual([]);
  expect(await snapshot(server.url)).toEqual(before);
});
