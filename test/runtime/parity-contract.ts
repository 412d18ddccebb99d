/**
 * The parity contract (features of the LangGraph servers): graph entries (promises, factories),
 * declared schemas, default-assistant defaults, thread streams, patchState, select (D28),
 * re-answering an interrupt, and the wire shapes clients parse. Written against the official SDK
 * `Client`'s methods only, so the same suite runs in process and over HTTP
 * (test/http/parity.test.ts).
 */
import type { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { END, START, StateGraph, messagesState, type CompiledGraph } from "../../src/graph/index.js";
import type { AssistantDefaults, GraphEntry } from "../../src/runtime/index.js";
import { expectCode } from "./contract.js";
import { Gate, approvalGraph, chainGraph, echoGraph, failingGraph, slowGraph } from "./graphs.js";

type ThreadMethods = "create" | "get" | "search" | "getState" | "updateState" | "getHistory" | "patchState" | "joinStream";
/** The subset of the SDK `Client` the suite uses. */
export interface ParityClient {
  assistants: Pick<Client["assistants"], "create" | "get" | "getSchemas">;
  threads: Pick<Client["threads"], ThreadMethods>;
  runs: Pick<Client["runs"], "stream" | "create" | "wait" | "join" | "list" | "cancel">;
}
export interface ParityHarness {
  client: ParityClient;
  close(): Promise<void>;
}
export interface ParityOptions {
  graphs: Record<string, GraphEntry>;
  assistantDefaults?: Record<string, AssistantDefaults>;
}

// Records come back as the SDK types them; tests read values loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** A graph declaring zod schemas: `answer` repeats the topic and the context's user. */
export function schemaGraph(): CompiledGraph {
  return new StateGraph(
    { ...messagesState, topic: { default: () => "" }, answer: { default: () => "" } },
    {
      input: z.object({ messages: z.array(z.any()).optional(), topic: z.string().min(1) }),
      output: z.object({ answer: z.string() }),
      config: z.object({ model: z.enum(["small", "large"]).default("small") }),
      context: z.object({ userId: z.string() }),
    },
  )
    .addNode("respond", (state, ctx) => ({ answer: `${state.topic} for ${(ctx.context as { userId: string }).userId}` }))
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile();
}

/** A factory: the graph it builds writes the run's `configurable.model` and thread id. */
function modelFactory(calls: Array<Record<string, unknown>>) {
  return (config: { configurable?: Record<string, unknown> }) => {
    calls.push({ ...config.configurable });
    const model = String(config.configurable?.model ?? "none");
    return new StateGraph({ built: { default: () => "" } })
      .addNode("build", (_s, ctx) => ({ built: `${model} on ${String(ctx.config.configurable.thread_id)}` }))
      .addEdge(START, "build")
      .addEdge("build", END)
      .compile();
  };
}

async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    const step = await it.next();
    if (step.done) break;
    out.push(step.value);
  }
  return out;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function parityContract(name: string, create: (opts: ParityOptions) => Promise<ParityHarness>): void {
  describe(`parity contract: ${name}`, () => {
    let h: ParityHarness | undefined;
    let gate: Gate;
    const factoryCalls: Array<Record<string, unknown>> = [];
    async function start(extra: Partial<ParityOptions> = {}): Promise<ParityClient> {
      gate = new Gate();
      factoryCalls.length = 0;
      h = await create({
        graphs: {
          echo: echoGraph(),
          chain: chainGraph(),
          approval: approvalGraph(),
          failing: failingGraph(),
          slow: slowGraph(gate),
          schemas: schemaGraph(),
          factory: modelFactory(factoryCalls),
          promised: Promise.resolve(chainGraph()),
        },
        ...extra,
      });
      return h.client;
    }
    afterEach(async () => {
      gate?.release();
      await h?.close();
      h = undefined;
    });

    describe("schemas", () => {
      it("getSchemas reports the declared input, output, config and context zod schemas as draft-07 JSON Schema", async () => {
        const c = await start();
        const s: Loose = await c.assistants.getSchemas("schemas");
        expect(s.graph_id).toBe("schemas");
        expect(s.input_schema).toMatchObject({
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: { topic: { type: "string", minLength: 1 } },
          required: ["topic"],
        });
        expect(s.output_schema).toMatchObject({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] });
        expect(s.config_schema).toMatchObject({ type: "object", properties: { model: { type: "string", enum: ["small", "large"], default: "small" } } });
        expect(s.context_schema).toMatchObject({ type: "object", properties: { userId: { type: "string" } }, required: ["userId"] });
        expect(s.state_schema).toMatchObject({ type: "object", properties: { topic: { type: "string" }, answer: { type: "string" } } });
      });

      it("the messages channel is marked langgraph_type: messages in the state and input schemas, as LangGraph marks it", async () => {
        const c = await start();
        const s: Loose = await c.assistants.getSchemas("schemas");
        expect(s.state_schema.properties.messages).toMatchObject({ type: "array", langgraph_type: "messages" });
        expect(s.input_schema.properties.messages).toMatchObject({ type: "array", langgraph_type: "messages" });
        expect(s.input_schema.properties.topic.langgraph_type).toBeUndefined();
        // A graph without declared schemas: the state stands in for input and output; no config or context schema.
        const plain: Loose = await c.assistants.getSchemas("echo");
        expect(plain.input_schema.properties.messages.langgraph_type).toBe("messages");
        expect(plain.config_schema).toBeNull();
        expect(plain.context_schema).toBeNull();
      });

      it("a run whose input does not match the input schema is refused before it exists", async () => {
        const c = await start();
        const t = await c.threads.create();
        await expectCode(c.runs.wait(t.thread_id, "schemas", { input: { topic: "" }, context: { userId: "u1" } }), "invalid_input");
        expect(await c.runs.list(t.thread_id)).toEqual([]);
        expect(await c.runs.wait(t.thread_id, "schemas", { input: { topic: "tides" }, context: { userId: "u1" } })).toMatchObject({ answer: "tides for u1" });
      });

      it("a run whose context does not match the context schema is refused; the assistant's context counts toward it", async () => {
        const c = await start();
        const t = await c.threads.create();
        await expectCode(c.runs.wait(t.thread_id, "schemas", { input: { topic: "tides" } }), "invalid_input");
        const assistant = await c.assistants.create({ graphId: "schemas", context: { userId: "from-assistant" } });
        expect(await c.runs.wait(t.thread_id, assistant.assistant_id, { input: { topic: "tides" } })).toMatchObject({ answer: "tides for from-assistant" });
      });
    });

    describe("graph entries and default assistants", () => {
      it("default assistants take their config and context from assistantDefaults, and runs see them", async () => {
        const c = await start({ assistantDefaults: { echo: { config: { configurable: { model: "large" }, tags: ["t1"] }, context: { tone: "dry" } } } });
        expect(await c.assistants.get("echo")).toMatchObject({ config: { configurable: { model: "large" }, tags: ["t1"] }, context: { tone: "dry" } });
        const t = await c.threads.create();
        const out: Loose = await c.runs.wait(t.thread_id, "echo", { input: { messages: [{ role: "user", content: "hi" }] }, context: { lang: "en" } });
        expect(out.seen.configurable).toMatchObject({ model: "large" });
        expect(out.seen.context).toEqual({ tone: "dry", lang: "en" });
        // Graphs without defaults keep empty ones.
        expect(await c.assistants.get("chain")).toMatchObject({ config: {}, context: {} });
      });

      it("a graph factory is called with the run's config and builds the graph that runs", async () => {
        const c = await start();
        const t = await c.threads.create();
        expect(await c.runs.wait(t.thread_id, "factory", { input: {}, config: { configurable: { model: "m-7" } } })).toEqual({ built: `m-7 on ${t.thread_id}` });
        expect(factoryCalls.some((call) => call.model === "m-7" && call.thread_id === t.thread_id && call.graph_id === "factory")).toBe(true);
        // State reads and schemas of a factory graph work too (the factory gets the thread's or assistant's config).
        expect((await c.threads.getState(t.thread_id)).values).toEqual({ built: `m-7 on ${t.thread_id}` });
        expect(((await c.assistants.getSchemas("factory")) as Loose).state_schema.properties).toHaveProperty("built");
      });

      it("a promise of a graph is awaited when the runtime is created and then runs as the graph", async () => {
        const c = await start();
        const t = await c.threads.create();
        expect(await c.runs.wait(t.thread_id, "promised", { input: {} })).toEqual({ log: ["a", "b", "c"] });
      });
    });

    describe("threads", () => {
      it("getState and getHistory return exactly the selected fields; values.<key> selects one state key", async () => {
        const c = await start();
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "schemas", { input: { topic: "tides" }, context: { userId: "u1" } });
        const state: Loose = await c.threads.getState(t.thread_id, undefined, { select: ["values.answer", "next"] });
        expect(state).toEqual({ values: { answer: "tides for u1" }, next: [] });
        const full: Loose = await c.threads.getState(t.thread_id);
        const at: Loose = await c.threads.getState(t.thread_id, full.checkpoint.checkpoint_id, { select: ["checkpoint", "values"] });
        expect(at).toEqual({ checkpoint: full.checkpoint, values: full.values });
        const history: Loose[] = await c.threads.getHistory(t.thread_id, { limit: 2, select: ["metadata", "values.topic"] });
        expect(history).toHaveLength(2);
        for (const entry of history) expect(Object.keys(entry).sort()).toEqual(["metadata", "values"]);
        expect(history[0].values).toEqual({ topic: "tides" });
      });

      it("threads.search with select returns exactly the selected fields, values included when asked (D28)", async () => {
        const c = await start();
        const t = await c.threads.create({ metadata: { tag: "sel" } });
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const [found]: Loose[] = await c.threads.search({ metadata: { tag: "sel" }, select: ["thread_id", "values"] });
        expect(found).toEqual({ thread_id: t.thread_id, values: { log: ["a", "b", "c"] } });
        const [plain]: Loose[] = await c.threads.search({ metadata: { tag: "sel" } });
        expect(plain).not.toHaveProperty("values");
      });

      it("a select naming an unknown field is refused with invalid_input", async () => {
        const c = await start();
        const t = await c.threads.create();
        await expectCode(c.threads.getState(t.thread_id, undefined, { select: ["nope" as Loose] }), "invalid_input");
        await expectCode(c.threads.getHistory(t.thread_id, { select: ["nope" as Loose] }), "invalid_input");
        await expectCode(c.threads.search({ select: ["nope" as Loose] }), "invalid_input");
      });

      it("patchState merges metadata into the latest checkpoint's metadata, keeping its id and values", async () => {
        const c = await start();
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const before: Loose = await c.threads.getState(t.thread_id);
        await c.threads.patchState(t.thread_id, { reviewed: true, by: "ops" });
        await c.threads.patchState({ configurable: { thread_id: t.thread_id } }, { by: "lead" });
        const after: Loose = await c.threads.getState(t.thread_id);
        expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
        expect(after.values).toEqual(before.values);
        expect(after.metadata).toMatchObject({ ...before.metadata, reviewed: true, by: "lead" });
        const [head]: Loose[] = await c.threads.getHistory(t.thread_id, { limit: 1, metadata: { reviewed: true } });
        expect(head.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
      });

      it("patchState on a thread without state is not_found, and while a run is in flight it is conflict", async () => {
        const c = await start();
        const empty = await c.threads.create();
        await expectCode(c.threads.patchState(empty.thread_id, { x: 1 }), "not_found");
        await expectCode(c.threads.patchState(empty.thread_id, "not metadata" as Loose), "invalid_input");
        const t = await c.threads.create();
        const run = await c.runs.create(t.thread_id, "slow", { input: {} });
        await gate.reached();
        await expectCode(c.threads.patchState(t.thread_id, { x: 1 }), "conflict");
        gate.release();
        await c.runs.join(t.thread_id, run.run_id);
        await c.threads.patchState(t.thread_id, { x: 1 });
        expect(((await c.threads.getState(t.thread_id)) as Loose).metadata.x).toBe(1);
      });

      it("a thread stream carries the run in flight and each run created after it, each from its metadata event", async () => {
        const c = await start();
        const t = await c.threads.create();
        const first = await c.runs.create(t.thread_id, "slow", { input: {}, streamMode: ["custom"] });
        await gate.reached();
        const stream = c.threads.joinStream(t.thread_id)[Symbol.asyncIterator]();
        // The stream attaches asynchronously: ping the waiting run until its event comes through.
        const pending = stream.next();
        let arrived = false;
        void pending.then(() => (arrived = true));
        while (!arrived) {
          gate.ping();
          await new Promise((resolve) => setImmediate(resolve));
        }
        const seen: Loose[] = [(await pending).value];
        expect(seen[0]).toMatchObject({ event: "custom", data: { waiting: true } });
        gate.release();
        await c.runs.join(t.thread_id, first.run_id);
        const second = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["updates"] });
        await c.runs.join(t.thread_id, second.run_id);
        const third = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["values"] });
        // Read until the third run's metadata event: the stream stays open across runs.
        for (;;) {
          const [e] = await take(stream, 1);
          seen.push(e);
          if (e.event === "metadata" && e.data.run_id === third.run_id) break;
        }
        await stream.return?.(undefined);
        const runOf = (e: Loose) => String(e.id).split(":")[0];
        expect(seen.every((e) => /^[0-9a-f-]{36}:\d+$/.test(String(e.id)))).toBe(true);
        // The first run's events (it was streaming when the stream joined), then each later run from its metadata event.
        expect([...new Set(seen.map(runOf))]).toEqual([first.run_id, second.run_id, third.run_id]);
        expect(seen.filter((e) => e.event === "metadata").map((e) => e.data.run_id)).toEqual([second.run_id, third.run_id]);
        expect(seen.filter((e) => runOf(e) === second.run_id).map((e) => e.event)).toEqual(["metadata", "updates", "updates", "updates"]);
      });

      it("a thread stream with lastEventId '-' replays the thread's retained runs first", async () => {
        const c = await start();
        const t = await c.threads.create();
        const done = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["updates"], streamResumable: true });
        await c.runs.join(t.thread_id, done.run_id);
        const stream = c.threads.joinStream(t.thread_id, { lastEventId: "-" })[Symbol.asyncIterator]();
        const replayed: Loose[] = await take(stream, 4);
        await stream.return?.(undefined);
        expect(replayed.map((e) => [e.id, e.event])).toEqual([
          [`${done.run_id}:0`, "metadata"],
          [`${done.run_id}:1`, "updates"],
          [`${done.run_id}:2`, "updates"],
          [`${done.run_id}:3`, "updates"],
        ]);
      });

      it("a thread stream with lastEventId '<run id>:<n>' resumes after that event, then goes on with the later runs", async () => {
        const c = await start();
        const t = await c.threads.create();
        const one = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["updates"], streamResumable: true });
        await c.runs.join(t.thread_id, one.run_id);
        const two = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["updates"], streamResumable: true });
        await c.runs.join(t.thread_id, two.run_id);
        const stream = c.threads.joinStream(t.thread_id, { lastEventId: `${one.run_id}:2` })[Symbol.asyncIterator]();
        const events: Loose[] = await take(stream, 5);
        await stream.return?.(undefined);
        expect(events.map((e) => e.id)).toEqual([`${one.run_id}:3`, `${two.run_id}:0`, `${two.run_id}:1`, `${two.run_id}:2`, `${two.run_id}:3`]);
        await expectCode(() => take(c.threads.joinStream(t.thread_id, { lastEventId: "garbage" })[Symbol.asyncIterator](), 1), "invalid_input");
      });

      it("a thread stream of an unknown thread is not_found, and an unserved stream mode is refused", async () => {
        const c = await start();
        await expectCode(() => take(c.threads.joinStream("00000000-0000-4000-8000-0000000000ff")[Symbol.asyncIterator](), 1), "not_found");
        const t = await c.threads.create();
        await expectCode(() => take(c.threads.joinStream(t.thread_id, { streamMode: "lifecycle" })[Symbol.asyncIterator](), 1), "invalid_input");
      });

      it("an interrupt is answered again from the checkpoint that holds it: the run forks from there with the new answer", async () => {
        const c = await start();
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "approval", { input: {} });
        const paused: Loose = await c.threads.getState(t.thread_id);
        expect(paused.next).toEqual(["review"]);
        expect(await c.runs.wait(t.thread_id, "approval", { command: { resume: "yes" } })).toEqual({ plan: "plan!", approved: "yes" });
        const answered: Loose = await c.threads.getState(t.thread_id);
        // Answer the same interrupt again, from the checkpoint that holds it.
        const again = await c.runs.wait(t.thread_id, "approval", { command: { resume: "no" }, checkpoint: paused.checkpoint });
        expect(again).toEqual({ plan: "plan!", approved: "no" });
        const history: Loose[] = await c.threads.getHistory(t.thread_id, { limit: 3 });
        expect(history[1].metadata.source).toBe("fork");
        expect(history[1].parent_checkpoint.checkpoint_id).toBe(paused.checkpoint.checkpoint_id);
        // The first answer's branch is untouched.
        expect(((await c.threads.getState(t.thread_id, answered.checkpoint.checkpoint_id)) as Loose).values.approved).toBe("yes");
        // By interrupt id as well.
        const iid = paused.tasks[0].interrupts[0].id;
        expect(await c.runs.wait(t.thread_id, "approval", { command: { resume: { [iid]: "maybe" } }, checkpoint: paused.checkpoint })).toEqual({
          plan: "plan!",
          approved: "maybe",
        });
      });
    });

    describe("wire shapes clients parse", () => {
      it("the metadata event carries exactly run_id and attempt", async () => {
        const c = await start();
        const t = await c.threads.create();
        const [first]: Loose[] = await collect(c.runs.stream(t.thread_id, "chain", { input: {} }));
        expect(first.event).toBe("metadata");
        expect(first.data).toEqual({ run_id: expect.any(String), attempt: 1 });
      });

      it("a static breakpoint leaves thread.interrupts naming the pending task with no interrupts", async () => {
        const c = await start();
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "chain", { input: {}, interruptBefore: ["b"] });
        const state: Loose = await c.threads.getState(t.thread_id);
        const thread: Loose = await c.threads.get(t.thread_id);
        expect(thread.status).toBe("interrupted");
        expect(thread.interrupts).toEqual({ [state.tasks[0].id]: [] });
        await c.runs.wait(t.thread_id, "chain", { input: null });
        expect(((await c.threads.get(t.thread_id)) as Loose).interrupts).toEqual({});
      });

      it("a failed task reports its error message in state.tasks[].error", async () => {
        const c = await start();
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "failing", { input: {}, raiseError: false } as Loose);
        const state: Loose = await c.threads.getState(t.thread_id);
        expect(state.tasks).toMatchObject([{ name: "boom", error: "Boo!", interrupts: [] }]);
      });

      it("runs.wait of a failed run raises '<error>: <message>', or resolves {__error__: {error, message}} with raiseError false", async () => {
        const c = await start();
        const t = await c.threads.create();
        await expect(c.runs.wait(t.thread_id, "failing", { input: {} })).rejects.toThrow("CustomError: Boo!");
        expect(await c.runs.wait(t.thread_id, "failing", { input: {}, raiseError: false } as Loose)).toEqual({
          __error__: { error: "CustomError", message: "Boo!" },
        });
      });
    });
  });
}
