/**
 * The v2 contract suite: the official SDK's `client.threads.stream()` (ThreadStream) against
 * graphdock over SSE, WebSocket and the in-process transport.
 */
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { FIRST, SECOND, fixture, human, until, type Fixture, type Kind } from "./helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

const KINDS: Kind[] = ["sse", "websocket", "in-process"];
let n = 0;
const newThread = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;

type Msg = { type?: string; content?: unknown; id?: string; getType?: () => string };
const typeOf = (m: Msg) => (typeof m.getType === "function" ? m.getType() : m.type);
const textOf = (m: Msg) => (typeof m.content === "string" ? m.content : "");

for (const kind of KINDS) {
  describe(`ThreadStream over ${kind}`, () => {
    it("streams token-level messages, values and the output", async () => {
      const threadId = newThread();
      const thread = f.stream(kind, threadId);
      const texts: string[] = [];
      const deltas: string[] = [];
      const reading = (async () => {
        for await (const msg of thread.messages) {
          for await (const d of msg.text) deltas.push(d);
          texts.push(await msg.text);
        }
      })();
      const values: unknown[] = [];
      const readingValues = (async () => {
        for await (const v of thread.values) values.push(v);
      })();
      const { run_id } = (await thread.run.start({ input: human("hello there") })) as { run_id: string };
      expect(run_id).toMatch(/\w/);
      const output = (await thread.output) as { messages: Msg[] };
      await readingValues;
      expect(output.messages.map(typeOf)).toEqual(["human", "ai"]);
      expect(textOf(output.messages[1]!)).toContain("You said: hello there");
      await until(() => texts.length === 1);
      expect(texts[0]).toBe(textOf(output.messages[1]!));
      expect(deltas.length).toBeGreaterThan(3); // token by token
      expect(deltas.join("")).toBe(texts[0]);
      expect(values.length).toBeGreaterThanOrEqual(2);
      await thread.close();
      void reading;
    });

    it("reports tool calls, an interrupt answered with input.respond, and a second run", async () => {
      const threadId = newThread();
      const thread = f.stream(kind, threadId);
      const calls: Array<{ name: string; input: unknown }> = [];
      const readingTools = (async () => {
        for await (const call of thread.toolCalls) calls.push({ name: call.name, input: call.input });
      })();
      await thread.run.start({ input: human("what is 6 * 7?") });
      await thread.output;
      expect(thread.interrupted).toBe(true);
      expect(thread.interrupts).toHaveLength(1);
      const interrupt = thread.interrupts[0]!;
      expect((interrupt.payload as { question: string }).question).toContain("calculator");
      await until(() => calls.length === 1);
      expect(calls[0]).toEqual({ name: "calculator", input: { expression: "6 * 7" } });

      await thread.input.respond({ namespace: [], interrupt_id: interrupt.interruptId, response: true } as never);
      await until(async () => (await f.runtime.threads.get(threadId)).status === "idle");
      const state = await f.runtime.threads.getState<{ messages: Msg[] }>(threadId);
      expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect(textOf(state.values.messages[3]!)).toBe("The answer is 42.");
      await thread.close();
      void readingTools;

      // A second run on the same thread, through a new ThreadStream.
      const again = f.stream(kind, threadId);
      await again.run.start({ input: human("thanks") });
      const out = (await again.output) as { messages: Msg[] };
      expect(out.messages).toHaveLength(6);
      expect(textOf(out.messages[5]!)).toContain("You said: thanks");
      await again.close();
    });

    it("a new ThreadStream answering an interrupt gets the resumed run's output, its stream opened before the answer lands", async () => {
      const threadId = newThread();
      const thread = f.stream(kind, threadId);
      await thread.run.start({ input: human("what is 9 * 9?") });
      await thread.output;
      const interruptId = thread.interrupts[0]!.interruptId;
      await thread.close();
      // The answer is held until the new stream's subscription is in place, so the server sees
      // the subscription first (the order a loaded server may see the SDK's two requests in).
      let subscribed!: () => void;
      const streamOpen = new Promise<void>((resolve) => (subscribed = resolve));
      const again = heldAnswer(kind, threadId, streamOpen, subscribed);
      await again.input.respond({ namespace: [], interrupt_id: interruptId, response: true } as never);
      const out = (await again.output) as { messages: Msg[] };
      expect(out.messages.map(typeOf)).toEqual(["human", "ai", "tool", "ai"]);
      expect(textOf(out.messages[3]!)).toBe("The answer is 81.");
      await again.close();
    });

    it("forks from a checkpoint", async () => {
      const threadId = newThread();
      const thread = f.stream(kind, threadId, "echo");
      await thread.run.start({ input: human("first") });
      await thread.output;
      await thread.close();
      const t2 = f.stream(kind, threadId, "echo");
      await t2.run.start({ input: human("second") });
      await t2.output;
      const { checkpoints } = (await t2.state.listCheckpoints({ limit: 10 } as never)) as { checkpoints: Array<{ id: string; step: number }> };
      expect(checkpoints.length).toBeGreaterThan(3);
      // The checkpoint after the first run: 2 messages.
      const target = checkpoints.find((c) => c.step === 1)!;
      expect(target).toBeDefined();
      await t2.close();
      const t3 = f.stream(kind, threadId, "echo");
      await t3.run.start({ input: human("forked"), forkFrom: target.id } as never);
      const out = (await t3.output) as { messages: Msg[] };
      expect(out.messages.map(textOf)).toEqual(["first", "echo: first", "forked", "echo: forked"]);
      await t3.close();
    });
  });
}

/**
 * A ThreadStream whose `input.respond` reaches graphdock only once its event subscription is in
 * place (`subscribed` is called when it is; `streamOpen` resolves then).
 */
function heldAnswer(kind: Kind, threadId: string, streamOpen: Promise<void>, subscribed: () => void) {
  const isAnswer = (body: unknown) => typeof body === "string" && body.includes('"input.respond"');
  if (kind === "sse") {
    const fetchHeld: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith("/commands") && isAnswer(init?.body)) await streamOpen;
      const response = await fetch(input, init);
      if (url.endsWith("/stream/events")) subscribed();
      return response;
    };
    return f.client.threads.stream(threadId, { assistantId: "agent", fetch: fetchHeld } as never);
  }
  if (kind === "websocket") {
    const webSocketFactory = (url: string) => {
      const ws = new WebSocket(url);
      const send = ws.send.bind(ws);
      ws.on("message", (d) => {
        if ((JSON.parse(d.toString()) as { result?: { subscription_id?: string } }).result?.subscription_id) subscribed();
      });
      (ws as { send: (d: string) => void }).send = (d: string) => void (isAnswer(d) ? streamOpen.then(() => send(d)) : send(d));
      return ws as unknown as globalThis.WebSocket;
    };
    return f.client.threads.stream(threadId, { assistantId: "agent", transport: "websocket", webSocketFactory } as never);
  }
  const transport = new InProcessTransport(f.runtime);
  const open = transport.openEventStream.bind(transport);
  const send = transport.send.bind(transport);
  transport.openEventStream = (params) => {
    const handle = open(params);
    void handle.ready.then(subscribed, () => undefined);
    return handle;
  };
  transport.send = async (command) => {
    if (command.method === "input.respond") await streamOpen;
    return send(command);
  };
  return f.client.threads.stream(threadId, { assistantId: "agent", transport });
}

describe("reconnect, filters, legacy runs", () => {
  it("replays after a dropped SSE connection: the reply arrives whole, once", async () => {
    const threadId = newThread();
    let dropped = false;
    const fetchDropping: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = String(input instanceof Request ? input.url : input);
      if (!url.endsWith("/stream/events") || dropped || !response.body) return response;
      dropped = true;
      const reader = response.body.getReader();
      let chunks = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          // Drop once the first half of the reply went through.
          if (++chunks > 1 && new TextDecoder().decode(value).includes("three")) {
            await reader.cancel();
            controller.error(new Error("connection dropped"));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const thread = f.stream("sse", threadId, "talker", { fetch: fetchDropping });
    const texts: string[] = [];
    const reading = (async () => {
      for await (const msg of thread.messages) texts.push(await msg.text);
    })();
    await thread.run.start({ input: human("talk") });
    await f.gate.reached(1);
    await until(() => dropped);
    await new Promise((r) => setTimeout(r, 100));
    f.gate.release();
    const out = (await thread.output) as { messages: Msg[] };
    expect(textOf(out.messages[1]!)).toBe([...FIRST, ...SECOND].join(""));
    await until(() => texts.length >= 1);
    expect(texts).toEqual([[...FIRST, ...SECOND].join("")]);
    await thread.close();
    void reading;
  });

  it("replays after a dropped WebSocket: the client resubscribes and dedups", async () => {
    const threadId = newThread();
    const before = f.sockets.length;
    const thread = f.stream("websocket", threadId, "talker");
    const texts: string[] = [];
    const reading = (async () => {
      for await (const msg of thread.messages) texts.push(await msg.text);
    })();
    await thread.run.start({ input: human("talk") });
    await f.gate.reached(2);
    await new Promise((r) => setTimeout(r, 50));
    const socket = f.sockets[before]!;
    socket.terminate(); // the connection drops mid-reply
    await until(() => f.sockets.length > before + 1 && f.sockets[f.sockets.length - 1]!.readyState === 1);
    await new Promise((r) => setTimeout(r, 50));
    f.gate.release();
    const out = (await thread.output) as { messages: Msg[] };
    expect(textOf(out.messages[1]!)).toBe([...FIRST, ...SECOND].join(""));
    await until(() => texts.length >= 1);
    expect(texts).toEqual([[...FIRST, ...SECOND].join("")]);
    await thread.close();
    void reading;
  });

  for (const kind of KINDS) {
    it(`two clients observe one thread with different channel filters (${kind} + sse)`, async () => {
      const threadId = newThread();
      await f.runtime.threads.create({ threadId });
      const a = f.stream(kind, threadId, "echo");
      const b = f.stream("sse", threadId, "echo");
      const subA = await a.subscribe({ channels: ["messages", "lifecycle"] });
      const subB = await b.subscribe({ channels: ["values"] });
      const gotA: string[] = [];
      const gotB: string[] = [];
      const readA = (async () => {
        for await (const e of subA) {
          gotA.push(e.method);
          if (e.method === "lifecycle" && (e.params.data as { event: string }).event === "completed") break;
        }
      })();
      const readB = (async () => {
        for await (const e of subB) {
          gotB.push(e.method);
          if (gotB.length === 2) break;
        }
      })();
      await a.run.start({ input: human("both") });
      await Promise.all([readA, readB]);
      expect(new Set(gotA)).toEqual(new Set(["messages", "lifecycle"]));
      expect(gotA.filter((m) => m === "messages").length).toBeGreaterThanOrEqual(3);
      expect(gotB).toEqual(["values", "values"]);
      await a.close();
      await b.close();
    });

    it(`sees a run started by the legacy API (${kind})`, async () => {
      const threadId = newThread();
      await f.runtime.threads.create({ threadId });
      const thread = f.stream(kind, threadId, "echo");
      const sub = await thread.subscribe({ channels: ["lifecycle", "values", "messages"] });
      const got: Array<{ method: string; data: unknown }> = [];
      const reading = (async () => {
        for await (const e of sub) {
          got.push({ method: e.method, data: e.params.data });
          if (e.method === "lifecycle" && (e.params.data as { event: string }).event === "completed") break;
        }
      })();
      // The legacy SDK call, over HTTP.
      let last: { messages: Msg[] } | undefined;
      for await (const part of f.client.runs.stream(threadId, "echo", { input: human("legacy"), streamMode: ["values", "messages-tuple"] })) {
        if (part.event === "values") last = part.data as { messages: Msg[] };
      }
      expect(textOf(last!.messages[1]!)).toBe("echo: legacy");
      await reading;
      expect(got[0]).toMatchObject({ method: "lifecycle", data: { event: "running" } });
      expect(got.some((e) => e.method === "messages")).toBe(true);
      const lastValues = got.filter((e) => e.method === "values").pop()!.data as { messages: Msg[] };
      expect(lastValues.messages.map(textOf)).toEqual(["legacy", "echo: legacy"]);
      await thread.close();
    });
  }
});

