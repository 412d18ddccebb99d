/**
 * The v2 protocol on the wire: command responses and errors, the SSE framing (`id:` = event id,
 * per-thread seq), `since` replay and the missed-events signal, channels, and the WebSocket's
 * in-band subscriptions.
 */
import { createParser } from "eventsource-parser";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, echo } from "../../examples/node/agent.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { createFetchHandler, type FetchHandler } from "../../src/http/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { Gate, human, talker, wsConnect } from "./helpers.js";

type Json = Record<string, any>;

let runtime: Runtime;
let handler: FetchHandler;
beforeAll(async () => {
  runtime = await createRuntime({ graphs: { agent, echo } });
  handler = createFetchHandler(runtime, { heartbeatMs: 0 });
});
afterAll(() => runtime.close());

let ids = 0;
const command = async (threadId: string, method: string, params: Json = {}, h = handler) => {
  const res = await h(new Request(`http://x/threads/${threadId}/commands`, { method: "POST", body: JSON.stringify({ id: ++ids, method, params }) }));
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
};

/** Opens an SSE subscription; `read(n)` resolves the next n events (or signals). */
async function events(threadId: string, body: Json, h = handler, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await h(new Request(`http://x/threads/${threadId}/stream/events`, { method: "POST", body: JSON.stringify(body), headers, signal: abort.signal }));
  const got: Array<{ id?: string; event?: string; data: Json }> = [];
  let wake: (() => void) | undefined;
  const parser = createParser({
    onEvent: (e) => {
      got.push({ ...(e.id !== undefined ? { id: e.id } : {}), ...(e.event ? { event: e.event } : {}), data: JSON.parse(e.data) });
      wake?.();
    },
  });
  if (res.body) {
    void (async () => {
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(dec.decode(value));
        }
      } catch {
        // aborted
      }
    })();
  }
  return {
    res,
    got,
    async until(pred: (all: typeof got) => boolean, ms = 3000) {
      const end = Date.now() + ms;
      while (!pred(got)) {
        if (Date.now() > end) throw new Error(`timed out with ${JSON.stringify(got.map((g) => g.data.method ?? g.data.error))}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 20);
        });
      }
      return got;
    },
    close: () => abort.abort(),
  };
}

const completed = (all: Array<{ data: Json }>) => all.some((e) => e.data.method === "lifecycle" && e.data.params.data.event === "completed");
const tid = () => crypto.randomUUID();

describe("commands over HTTP", () => {
  it("answers typed errors", async () => {
    const t = tid();
    expect(await command(t, "nope")).toMatchObject({ type: "error", error: "unknown_command" });
    const bad = await handler(new Request(`http://x/threads/${t}/commands`, { method: "POST", body: JSON.stringify({ method: "run.start" }) }));
    expect(await bad.json()).toMatchObject({ type: "error", id: null, error: "invalid_argument" });
    expect(await command(t, "run.start", { input: {} })).toMatchObject({ type: "error", error: "invalid_argument" });
    expect(await command(t, "run.start", { assistant_id: "missing", input: {} })).toMatchObject({ type: "error" });
    expect(await command(t, "subscription.subscribe", { channels: ["values"] })).toMatchObject({ type: "error", error: "not_supported" });
  });

  it("starts a run, resumes its interrupt, and reads state, checkpoints and the agent tree", async () => {
    const t = tid();
    const started = await command(t, "run.start", { assistant_id: "agent", input: human("what is 2 + 3?") });
    expect(started).toMatchObject({ type: "success", result: { run_id: expect.any(String) }, meta: { applied_through_seq: expect.any(Number) } });
    await runtime.runs.join(t, started.result.run_id);
    const state = await command(t, "state.get", { namespace: [] });
    expect(state.result.checkpoint.id).toEqual(expect.any(String));
    expect(state.result.values.messages).toHaveLength(2);
    const interruptId = state.result.interrupts[0].id;
    expect(await command(t, "input.respond", { namespace: [], interrupt_id: "nope", response: true })).toMatchObject({ type: "error", error: "no_such_interrupt" });
    const resumed = await command(t, "input.respond", { namespace: [], interrupt_id: interruptId, response: true });
    expect(resumed.type).toBe("success");
    await runtime.runs.join(t, resumed.result.run_id);
    const after = await command(t, "state.get", { namespace: [], keys: ["messages"] });
    expect(after.result.values.messages.at(-1).content).toBe("The answer is 5.");
    const list = await command(t, "state.listCheckpoints", { limit: 3 });
    expect(list.result.checkpoints).toHaveLength(3);
    expect(list.result.checkpoints[0]).toMatchObject({ id: after.result.checkpoint.id, step: expect.any(Number), timestamp: expect.any(String) });
    const tree = await command(t, "agent.getTree", {});
    expect(tree.result.tree).toMatchObject({ namespace: [], status: "completed", graph_name: "agent" });
    expect(await command(t, "state.fork", { checkpoint_id: "nope" })).toMatchObject({ type: "error", error: "no_such_checkpoint" });
    const fork = await command(t, "state.fork", { checkpoint_id: list.result.checkpoints[2].id });
    expect(fork.result).toMatchObject({ run_id: expect.any(String), thread_id: t });
    await runtime.runs.join(t, fork.result.run_id);
    const injected = await command(t, "input.inject", { namespace: [], message: { role: "user", content: "hello" } });
    await runtime.runs.join(t, injected.result.run_id);
    const last = await command(t, "state.get", { namespace: [] });
    expect(last.result.values.messages.at(-1).content).toContain("You said: hello");
  });

  it("resumes an interrupted thread with run.start (protocol 4a)", async () => {
    const t = tid();
    const a = await command(t, "run.start", { assistant_id: "agent", input: human("what is 1 + 1?") });
    await runtime.runs.join(t, a.result.run_id);
    const b = await command(t, "run.start", { assistant_id: "agent", input: true });
    await runtime.runs.join(t, b.result.run_id);
    const state = await command(t, "state.get", { namespace: [] });
    expect(state.result.values.messages.at(-1).content).toBe("The answer is 2.");
  });
});

describe("input.inject", () => {
  it("during a run: queues the message as the next run's input, which starts once the running one ends", async () => {
    const gate = new Gate();
    const rt = await createRuntime({ graphs: { talker: talker(gate) } });
    const h = createFetchHandler(rt, { heartbeatMs: 0 });
    try {
      const t = tid();
      const first = await command(t, "run.start", { assistant_id: "talker", input: human("talk") }, h);
      await gate.reached(1);
      const injected = await command(t, "input.inject", { namespace: [], message: { role: "user", content: "and then?" } }, h);
      expect(injected).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
      expect(injected.result.run_id).not.toBe(first.result.run_id);
      // Queued behind the running run, not mixed into it.
      expect((await rt.runs.get(t, injected.result.run_id)).status).toBe("pending");
      gate.release();
      await rt.runs.join(t, first.result.run_id);
      await gate.reached(2);
      gate.release();
      await rt.runs.join(t, injected.result.run_id);
      const state = await command(t, "state.get", { namespace: [] }, h);
      expect(state.result.values.messages.map((m: Json) => [m.type, m.content])).toEqual([
        ["human", "talk"],
        ["ai", "one two three four five"],
        ["human", "and then?"],
        ["ai", "one two three four five"],
      ]);
      expect(await command(t, "input.inject", { namespace: [], message: { role: "tool", content: "x" } }, h)).toMatchObject({ type: "error", error: "invalid_argument" });
    } finally {
      gate.release();
      await rt.close();
    }
  });
});

describe("event streams over SSE", () => {
  it("is 404 for a thread that does not exist, 422 for a bad filter", async () => {
    expect((await handler(new Request(`http://x/threads/${tid()}/stream/events`, { method: "POST", body: JSON.stringify({ channels: ["values"] }) }))).status).toBe(404);
    const t = (await runtime.threads.create()).thread_id;
    expect((await handler(new Request(`http://x/threads/${t}/stream/events`, { method: "POST", body: JSON.stringify({ channels: [] }) }))).status).toBe(422);
  });

  it("frames events with id = event_id and per-thread seq, on every channel", async () => {
    const t = (await runtime.threads.create()).thread_id;
    const all = await events(t, { channels: ["values", "updates", "messages", "tools", "lifecycle", "input", "checkpoints", "tasks", "custom"] });
    expect(all.res.headers.get("content-type")).toContain("text/event-stream");
    await command(t, "run.start", { assistant_id: "agent", input: human("what is 3 * 3?") });
    const got = await all.until((g) => g.some((e) => e.data.method === "lifecycle" && e.data.params.data.event === "interrupted"));
    const seqs = got.map((e) => e.data.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    for (const e of got) expect(e.id).toBe(e.data.event_id);
    const methods = new Set(got.map((e) => e.data.method));
    for (const m of ["lifecycle", "values", "updates", "messages", "tools", "checkpoints", "tasks", "input.requested"]) expect(methods, m).toContain(m);
    const requested = got.find((e) => e.data.method === "input.requested")!.data.params.data;
    expect(requested).toMatchObject({ interrupt_id: expect.any(String), payload: { question: expect.stringContaining("calculator") } });
    const toolStart = got.find((e) => e.data.method === "tools")!.data.params.data;
    expect(toolStart).toMatchObject({ event: "tool-started", tool_name: "calculator", input: { expression: "3 * 3" } });
    const blocks = got.filter((e) => e.data.method === "messages").map((e) => e.data.params.data.event);
    expect(blocks).toEqual(["message-start", "content-block-start", "content-block-delta", "content-block-finish", "message-finish"]);
    const finish = got.find((e) => e.data.params.data.event === "content-block-finish")!.data.params.data;
    expect(finish.content).toMatchObject({ type: "tool_call", name: "calculator", args: { expression: "3 * 3" } });
    // Answer it: the tool finishes, the reply streams.
    await command(t, "input.respond", { namespace: [], interrupt_id: requested.interrupt_id, response: true });
    const rest = await all.until(completed);
    expect(rest.some((e) => e.data.method === "input.answered")).toBe(true);
    expect(rest.find((e) => e.data.params?.data?.event === "tool-finished")!.data.params.data).toMatchObject({ tool_call_id: toolStart.tool_call_id, output: "9" });
    all.close();
  });

  it("replays after since, from the latest run without it, and signals missed events", async () => {
    const t = (await runtime.threads.create()).thread_id;
    const first = await command(t, "run.start", { assistant_id: "echo", input: human("one") });
    await runtime.runs.join(t, first.result.run_id);
    const second = await command(t, "run.start", { assistant_id: "echo", input: human("two") });
    await runtime.runs.join(t, second.result.run_id);
    await new Promise((r) => setTimeout(r, 20));
    // Without since: the latest run only, from its first event.
    const latest = await events(t, { channels: ["lifecycle"] });
    const got = await latest.until((g) => g.length >= 2);
    expect(got.map((e) => e.data.params.data.event)).toEqual(["running", "completed"]);
    expect(got[0]!.data.params.data.run_id).toBe(second.result.run_id);
    latest.close();
    // since 0: everything.
    const everything = await events(t, { channels: ["lifecycle"], since: 0 });
    expect((await everything.until((g) => g.length >= 4)).map((e) => e.data.params.data.event)).toEqual(["running", "completed", "running", "completed"]);
    everything.close();
    // since = the first run's terminal: the second run only.
    const firstEnd = everything.got[1]!.data.seq;
    const after = await events(t, { channels: ["lifecycle"], since: firstEnd });
    expect((await after.until((g) => g.length >= 2)).every((e) => e.data.seq > firstEnd)).toBe(true);
    after.close();
    // Last-Event-ID works like since.
    const resumed = await events(t, { channels: ["lifecycle"] }, handler, { "last-event-id": everything.got[2]!.data.event_id });
    expect((await resumed.until((g) => g.length >= 1)).map((e) => e.data.seq)).toEqual([everything.got[3]!.data.seq]);
    resumed.close();
  });

  it("signals missed events when since is older than the buffer", async () => {
    const small = await createRuntime({ graphs: { echo } });
    const h = createFetchHandler(small, { heartbeatMs: 0, protocolV2: { replayBufferSize: 5 } });
    const t = (await small.threads.create()).thread_id;
    const run = await command(t, "run.start", { assistant_id: "echo", input: human("overflow") }, h);
    await small.runs.join(t, run.result.run_id);
    await new Promise((r) => setTimeout(r, 20));
    const s = await events(t, { channels: ["values", "updates", "messages", "lifecycle", "checkpoints", "tasks", "custom"], since: 1 }, h);
    const got = await s.until((g) => g.some((e) => e.data.method === "lifecycle"));
    expect(got[0]).toMatchObject({ event: "error", data: { type: "error", id: null, missed_events: expect.any(Number), oldest_seq: expect.any(Number) } });
    expect(got[0]!.data.missed_events).toBe(got[0]!.data.oldest_seq - 2);
    expect(got.length).toBe(6); // the signal, then the 5 events still kept
    s.close();
    await small.close();
  });
});

describe("sessions", () => {
  it("start a values subscription from the current state when the log has none", async () => {
    const t = (await runtime.threads.create()).thread_id;
    await runtime.runs.wait(t, "echo", { input: human("before any v2 client") });
    const s = await events(t, { channels: ["values"] });
    const [first] = await s.until((g) => g.length >= 1);
    expect(first!.data).toMatchObject({ method: "values", seq: 0 });
    expect(first!.data.params.data.messages.map((m: Json) => m.content)).toEqual(["before any v2 client", "echo: before any v2 client"]);
    s.close();
  });

  it("work over a runtime without subscribe (runs started by v2 replay from their start)", async () => {
    const bare = createFetchHandler({ client: (r?: Parameters<Runtime["client"]>[0]) => runtime.client(r) }, { heartbeatMs: 0 });
    const t = (await runtime.threads.create()).thread_id;
    const s = await events(t, { channels: ["lifecycle", "messages"] }, bare);
    await command(t, "run.start", { assistant_id: "echo", input: human("bare") }, bare);
    const got = await s.until(completed);
    expect(got[0]!.data.params.data.event).toBe("running");
    expect(got.filter((e) => e.data.method === "messages").map((e) => e.data.params.data.event)).toContain("content-block-delta");
    s.close();
  });
});

describe("the WebSocket transport", () => {
  let server: ServeHandle;
  beforeAll(async () => {
    server = await serve(runtime, { port: 0, heartbeatMs: 0 });
  });
  afterAll(() => server.close());

  const connect = (threadId: string) => wsConnect(server.url, threadId);

  it("subscribes, replays, unsubscribes and reconnects in band", async () => {
    const t = tid();
    const c = await connect(t);
    const started = await c.send("run.start", { assistant_id: "echo", input: human("ws") });
    expect(started).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    const sub = await c.send("subscription.subscribe", { channels: ["lifecycle", "values"] });
    expect(sub.result).toMatchObject({ subscription_id: expect.any(String), replayed_events: expect.any(Number) });
    await runtime.runs.join(t, started.result.run_id);
    for (let i = 0; i < 1000 && !c.got.some((m) => m.method === "lifecycle" && m.params.data.event === "completed"); i++) await new Promise((r) => setTimeout(r, 10));
    const evs = c.got.filter((m) => m.type === "event");
    expect(evs.map((e) => e.method)).toEqual(["lifecycle", "values", "values", "lifecycle"]);
    // reconnect from the first event: the rest again.
    const re = await c.send("subscription.reconnect", { run_id: started.result.run_id, last_event_id: evs[0]!.event_id });
    expect(re.result).toMatchObject({ restored: true, missed_events: 0 });
    expect(c.got.filter((m) => m.type === "event")).toHaveLength(evs.length * 2 - 1);
    expect(await c.send("subscription.unsubscribe", { subscription_id: sub.result.subscription_id })).toMatchObject({ type: "success" });
    expect(await c.send("subscription.unsubscribe", { subscription_id: sub.result.subscription_id })).toMatchObject({ type: "error", error: "no_such_subscription" });
    c.ws.close();
  });

  it("refuses a path that is not a thread's event stream", async () => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/threads/x/nope`);
    const err = await new Promise((resolve) => ws.once("error", resolve).once("unexpected-response", (_req, res) => resolve(res.statusCode)));
    expect(err).toBe(404);
  });
});
