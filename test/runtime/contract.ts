/**
 * The runtime contract suite: what a caller of the SDK-shaped surface may rely on, written only
 * against methods and options of the official `@langchain/langgraph-sdk` `Client`, so the same
 * suite runs in process (`createRuntime`) and through HTTP (the SDK client on the fetch
 * handler), on every store. Errors are asserted with `expectCode`, which accepts both forms.
 */
import type { RuntimeClient } from "../../src/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostedGraph } from "../../src/runtime/graph-port.js";
import { Gate, testGraphs } from "./graphs.js";

type AssistantMethods = "create" | "get" | "update" | "delete" | "search" | "count" | "getVersions" | "setLatest" | "getGraph" | "getSchemas" | "getSubgraphs";
type ThreadMethods = "create" | "get" | "update" | "delete" | "search" | "count" | "copy" | "getState" | "updateState" | "getHistory";
type RunMethods = "stream" | "create" | "wait" | "join" | "joinStream" | "cancel" | "list" | "get" | "delete" | "createBatch";

/**
 * The methods of the SDK `Client` the suite uses, typed as the runtime types them: what the
 * agent-server API returns (the SDK's own types say otherwise in places, e.g. a nullable
 * `description` or `checkpoint`). The SDK client over HTTP is handed in as this type.
 */
export interface ContractClient {
  assistants: Pick<RuntimeClient["assistants"], AssistantMethods>;
  threads: Pick<RuntimeClient["threads"], ThreadMethods>;
  runs: Pick<RuntimeClient["runs"], RunMethods>;
}
export interface ContractHarness {
  client: ContractClient;
  close(): Promise<void>;
}
export interface ContractOptions {
  graphs: Record<string, HostedGraph>;
}

type Code = "not_found" | "conflict" | "invalid_input" | "unauthenticated" | "forbidden";
const STATUS: Record<Code, number> = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403 };

/** Asserts a rejection with `code`: an `GraphdockError` in process, the SDK's `HTTPError` over HTTP. */
export async function expectCode(promise: Promise<unknown> | (() => Promise<unknown>), code: Code): Promise<void> {
  let error: unknown;
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (err) {
    error = err;
  }
  expect(error, `expected a ${code} error`).toBeDefined();
  const e = error as { code?: unknown; status?: unknown; message?: string };
  if (e.code !== undefined) expect(e.code, e.message).toBe(code);
  else expect(e.status, e.message).toBe(STATUS[code]);
}

/**
 * A joined stream of a run that is not there: `not_found` in process; over HTTP an open stream
 * with one `error` event saying 404, as the agent server answers a join.
 */
async function expectNotFoundStream(iter: AsyncIterable<{ event: string; data: unknown }>, inProcess: boolean): Promise<void> {
  if (inProcess) return expectCode(collect(iter), "not_found");
  expect(await collect(iter)).toMatchObject([{ event: "error", data: { message: expect.stringMatching(/^404: /) } }]);
}

const DEFAULT_AGENT = "fe096781-5601-53d2-b2f6-0d3403f7e9ca";
const DEFAULT_ECHO = "046b5dc7-2108-582c-9c6c-31d556d138f0";
const UNKNOWN = "00000000-0000-4000-8000-0000000000ff";
const hi = (text = "hi") => ({ messages: [{ role: "user", content: text }] });
// Records come back as the SDK types them; tests read values loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const v = (x: unknown) => x as Loose;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function runtimeContract(
  name: string,
  create: (opts: ContractOptions) => Promise<ContractHarness>,
  capabilities: {
    inProcess?: boolean;
    /** The graphs to run the suite with (default: graphdock's, test/runtime/graphs.ts). */
    graphs?: (gate: Gate) => Record<string, HostedGraph>;
    /**
     * Run breakpoints are matched by LangGraph (hosted LangGraph.js graphs, D40): a name that is
     * no node of the graph is ignored instead of refused.
     */
    breakpointsUnchecked?: boolean;
  } = {},
): void {
  describe(`runtime contract: ${name}`, () => {
    let h: ContractHarness;
    let c: ContractClient;
    let gate: Gate;
    beforeEach(async () => {
      gate = new Gate();
      h = await create({ graphs: (capabilities.graphs ?? testGraphs)(gate) });
      c = h.client;
    });
    afterEach(async () => {
      gate.release();
      await h.close();
    });

    /** Runs the slow graph on a new thread and waits until it blocks. */
    async function busyThread(extra: Record<string, unknown> = {}) {
      const thread = await c.threads.create();
      const run = await c.runs.create(thread.thread_id, "slow", { input: {}, ...extra });
      await gate.reached(1);
      return { thread, run };
    }

    describe("assistants", () => {
      it("creates a default assistant per graph with the D5 ids, found by id or graph id, searched and counted", async () => {
        const agent = await c.assistants.get("agent");
        expect(agent.assistant_id).toBe(DEFAULT_AGENT);
        const echo = await c.assistants.get(DEFAULT_ECHO);
        expect(echo).toMatchObject({ graph_id: "echo", name: "echo", config: {}, metadata: { created_by: "system" }, version: 1 });
        const system = await c.assistants.search({ metadata: { created_by: "system" }, limit: 100 });
        expect(system.map((a) => a.graph_id).sort()).toEqual(["agent", "approval", "chain", "echo", "failing", "slow"]);
        expect(await c.assistants.count()).toBe(6);
        expect(await c.assistants.count({ graphId: "echo" })).toBe(1);
      });

      it("creates version 1, refuses a duplicate id unless ifExists do_nothing, and rejects unknown graphs and bad input", async () => {
        const a = await c.assistants.create({ graphId: "echo", name: "Bot", config: { configurable: { m: 1 } }, context: { tone: "dry" }, metadata: { team: "x" } });
        expect(a).toMatchObject({ graph_id: "echo", name: "Bot", version: 1, context: { tone: "dry" }, metadata: { team: "x" } });
        // Unset, the description is null (as typed), in process and over HTTP alike.
        expect(a.description).toBeNull();
        expect(typeof a.created_at).toBe("string");
        expect(await c.assistants.get(a.assistant_id)).toMatchObject({ assistant_id: a.assistant_id, name: "Bot" });
        await expectCode(c.assistants.create({ graphId: "echo", assistantId: a.assistant_id }), "conflict");
        const same = await c.assistants.create({ graphId: "chain", assistantId: a.assistant_id, ifExists: "do_nothing" });
        expect(same).toMatchObject({ assistant_id: a.assistant_id, graph_id: "echo", name: "Bot" });
        await expectCode(c.assistants.create({ graphId: "nope" }), "not_found");
        await expectCode(c.assistants.create({ graphId: 42 as unknown as string }), "invalid_input");
        await expectCode(c.assistants.get(UNKNOWN), "not_found");
      });

      it("versions per D6: updates build max+1 from what is supplied; setLatest restores every field", async () => {
        const a = await c.assistants.create({ graphId: "echo", name: "v1", config: { configurable: { m: 1 } }, context: { k: 1 }, metadata: { x: 1 } });
        const u = await c.assistants.update(a.assistant_id, { context: { k: 2 } });
        expect(u).toMatchObject({ version: 2, name: "v1", graph_id: "echo", context: { k: 2 }, config: {}, metadata: {} });
        const u3 = await c.assistants.update(a.assistant_id, { name: "v3", metadata: { x: 3 } });
        expect(u3).toMatchObject({ version: 3, name: "v3", context: {}, metadata: { x: 3 } });
        const versions = await c.assistants.getVersions(a.assistant_id);
        expect(versions.map((x) => x.version)).toEqual([3, 2, 1]);
        expect(versions[2]).toMatchObject({ name: "v1", context: { k: 1 }, config: { configurable: { m: 1 } }, metadata: { x: 1 } });
        expect((await c.assistants.getVersions(a.assistant_id, { metadata: { x: 3 } })).map((x) => x.version)).toEqual([3]);
        const back = await c.assistants.setLatest(a.assistant_id, 1);
        expect(back).toMatchObject({ version: 1, name: "v1", context: { k: 1 }, config: { configurable: { m: 1 } }, metadata: { x: 1 } });
        expect(await c.assistants.get(a.assistant_id)).toMatchObject({ version: 1, name: "v1" });
        expect((await c.assistants.update(a.assistant_id, {})).version).toBe(4);
        await expectCode(c.assistants.setLatest(a.assistant_id, 9), "not_found");
        await expectCode(c.assistants.update(UNKNOWN, { name: "x" }), "not_found");
        await expectCode(c.assistants.getVersions(UNKNOWN), "not_found");
      });

      it("gives concurrent updates of one assistant distinct versions", async () => {
        const a = await c.assistants.create({ graphId: "echo" });
        const updated = await Promise.all(["x", "y", "z"].map((name) => c.assistants.update(a.assistant_id, { name })));
        expect(updated.map((u) => u.version).sort()).toEqual([2, 3, 4]);
        expect((await c.assistants.getVersions(a.assistant_id)).map((x) => x.version)).toEqual([4, 3, 2, 1]);
        expect((await c.assistants.get(a.assistant_id)).version).toBe(4);
      });

      it("searches by graph id, name substring and metadata, with sorting and paging", async () => {
        await c.assistants.create({ graphId: "chain", name: "Alpha Bot", metadata: { tier: "gold" } });
        await c.assistants.create({ graphId: "chain", name: "beta bot", metadata: { tier: "silver" } });
        await c.assistants.create({ graphId: "echo", name: "Gamma", metadata: { tier: "gold", tags: ["a", "b"] } });
        const chain = await c.assistants.search({ graphId: "chain", sortBy: "name", sortOrder: "asc", limit: 10 });
        expect(chain.map((a) => a.name)).toEqual(["Alpha Bot", "beta bot", "chain"]);
        expect((await c.assistants.search({ name: "BOT", limit: 10 })).map((a) => a.name).sort()).toEqual(["Alpha Bot", "beta bot"]);
        expect((await c.assistants.search({ metadata: { tier: "gold" }, sortBy: "name", sortOrder: "desc" })).map((a) => a.name)).toEqual(["Gamma", "Alpha Bot"]);
        expect((await c.assistants.search({ metadata: { tags: ["b"] } })).map((a) => a.name)).toEqual(["Gamma"]);
        const page = await c.assistants.search({ graphId: "chain", sortBy: "name", sortOrder: "asc", limit: 1, offset: 1 });
        expect(page.map((a) => a.name)).toEqual(["beta bot"]);
        expect(await c.assistants.count({ name: "bot" })).toBe(2);
        expect(await c.assistants.count({ metadata: { tier: "gold" } })).toBe(2);
      });

      it("deletes an assistant with all its versions and runs", async () => {
        const a = await c.assistants.create({ graphId: "echo" });
        await c.assistants.update(a.assistant_id, { name: "2" });
        const t = await c.threads.create();
        const run = await c.runs.create(t.thread_id, a.assistant_id, { input: hi() });
        await c.runs.join(t.thread_id, run.run_id);
        await c.assistants.delete(a.assistant_id);
        await expectCode(c.runs.get(t.thread_id, run.run_id), "not_found");
        expect((await c.threads.get(t.thread_id)).status).toBe("idle");
        await expectCode(c.assistants.get(a.assistant_id), "not_found");
        await expectCode(c.assistants.getVersions(a.assistant_id), "not_found");
        await expectCode(c.assistants.delete(a.assistant_id), "not_found");
      });

      it("describes the graph and its schemas", async () => {
        const graph = await c.assistants.getGraph("chain");
        const ids = graph.nodes.map((n) => n.id);
        expect(ids).toEqual(expect.arrayContaining(["a", "b", "c"]));
        expect(graph.edges).toEqual(expect.arrayContaining([expect.objectContaining({ source: "a", target: "b" })]));
        const schemas = await c.assistants.getSchemas(DEFAULT_ECHO);
        expect(schemas.graph_id).toBe("echo");
        expect(schemas).toHaveProperty("state_schema");
        await expectCode(c.assistants.getGraph(UNKNOWN), "not_found");
      });

      it("lists no subgraphs (graphdock graphs have none), for any namespace; unknown assistants are not found", async () => {
        expect(await c.assistants.getSubgraphs("chain")).toEqual({});
        expect(await c.assistants.getSubgraphs(DEFAULT_ECHO, { namespace: "inner", recurse: true })).toEqual({});
        await expectCode(c.assistants.getSubgraphs(UNKNOWN), "not_found");
        await expectCode(c.assistants.getSubgraphs(UNKNOWN, { namespace: "inner" }), "not_found");
      });

      it("refuses to delete a graph's default assistant, which stays usable", async () => {
        await expectCode(c.assistants.delete(DEFAULT_ECHO), "conflict");
        await expectCode(c.assistants.delete("echo"), "conflict");
        expect((await c.assistants.get("echo")).assistant_id).toBe(DEFAULT_ECHO);
        expect(v(await c.runs.wait(null, "echo", { input: hi() })).messages).toHaveLength(2);
      });
    });

    describe("threads", () => {
      it("creates idle threads with empty values (D8), honours threadId and ifExists", async () => {
        const t = await c.threads.create({ metadata: { user: "u1" } });
        expect(t).toMatchObject({ status: "idle", values: {}, metadata: { user: "u1" } });
        expect(await c.threads.get(t.thread_id)).toMatchObject({ thread_id: t.thread_id, status: "idle" });
        const id = "00000000-0000-4000-8000-00000000abcd";
        expect((await c.threads.create({ threadId: id, graphId: "echo" })).metadata).toMatchObject({ graph_id: "echo" });
        await expectCode(c.threads.create({ threadId: id }), "conflict");
        expect((await c.threads.create({ threadId: id, ifExists: "do_nothing" })).thread_id).toBe(id);
        await expectCode(c.threads.create({ threadId: "not-a-uuid" }), "invalid_input");
        await expectCode(c.threads.get(UNKNOWN), "not_found");
      });

      it("merges metadata on update and deletes threads", async () => {
        const t = await c.threads.create({ metadata: { a: 1 } });
        const u = await c.threads.update(t.thread_id, { metadata: { b: 2 } });
        expect(u.metadata).toEqual({ a: 1, b: 2 });
        await c.threads.delete(t.thread_id);
        await expectCode(c.threads.get(t.thread_id), "not_found");
        await expectCode(c.threads.delete(t.thread_id), "not_found");
        await expectCode(c.threads.update(UNKNOWN, { metadata: {} }), "not_found");
      });

      it("searches by status, metadata, values and ids, sorted and paged, without values; counts", async () => {
        const a = await c.threads.create({ metadata: { k: "x", n: { deep: 1 } } });
        const b = await c.threads.create({ metadata: { k: "x" } });
        const d = await c.threads.create({ metadata: { k: "y" } });
        await c.runs.wait(b.thread_id, "echo", { input: hi("find me") });
        const byMeta = await c.threads.search({ metadata: { k: "x" }, sortBy: "created_at", sortOrder: "asc" });
        expect(byMeta.map((t) => t.thread_id)).toEqual([a.thread_id, b.thread_id]);
        expect(byMeta.every((t) => !("values" in t))).toBe(true);
        expect((await c.threads.search({ metadata: { n: { deep: 1 } } })).map((t) => t.thread_id)).toEqual([a.thread_id]);
        expect((await c.threads.search({ values: { messages: [{ content: "find me" }] } })).map((t) => t.thread_id)).toEqual([b.thread_id]);
        expect((await c.threads.search({ ids: [a.thread_id, d.thread_id], sortBy: "thread_id", sortOrder: "asc" })).map((t) => t.thread_id)).toEqual(
          [a.thread_id, d.thread_id].sort(),
        );
        const newestFirst = await c.threads.search({ limit: 2 });
        expect(newestFirst.map((t) => t.thread_id)).toEqual([d.thread_id, b.thread_id]);
        expect((await c.threads.search({ limit: 1, offset: 2 })).map((t) => t.thread_id)).toEqual([a.thread_id]);
        expect(await c.threads.count({ metadata: { k: "x" } })).toBe(2);
        expect(await c.threads.count({ status: "idle" })).toBe(3);
        expect(await c.threads.count({ status: "busy" })).toBe(0);
        await expectCode(c.threads.search({ limit: "ten" as unknown as number }), "invalid_input");
      });

      it("prepopulates a thread from supersteps; bad supersteps create nothing", async () => {
        const t = await c.threads.create({
          graphId: "echo",
          supersteps: [
            { updates: [{ values: {}, asNode: "__input__" }] },
            { updates: [{ values: { messages: [{ type: "human", content: "hello" }] }, asNode: "__start__" }] },
            { updates: [{ values: { messages: [{ type: "ai", content: "Hello!" }] }, asNode: "echo" }] },
          ],
        });
        expect(t.status).toBe("idle");
        expect(v(t.values).messages.map((m: Loose) => m.content)).toEqual(["hello", "Hello!"]);
        const history = await c.threads.getHistory(t.thread_id);
        expect(history.map((s) => [s.metadata?.step, s.metadata?.source])).toEqual([
          [1, "update"],
          [0, "update"],
          [-1, "input"],
        ]);
        await expectCode(c.threads.create({ supersteps: [{ updates: [{ values: {}, asNode: "echo" }] }] }), "invalid_input");
        const id = "00000000-0000-4000-8000-00000000beef";
        await expectCode(c.threads.create({ threadId: id, graphId: "echo", supersteps: [{ updates: [{ values: {}, asNode: "nope" }] }] }), "invalid_input");
        await expectCode(c.threads.get(id), "not_found");
      });

      it("copies a thread into an independent one with the same history", async () => {
        const t = await c.threads.create({ metadata: { owner: "me" } });
        await c.runs.wait(t.thread_id, "echo", { input: hi("one") });
        const copy = await c.threads.copy(t.thread_id);
        expect(copy.thread_id).not.toBe(t.thread_id);
        expect(copy.status).toBe("idle");
        expect(copy.metadata).toMatchObject({ owner: "me" });
        const [orig, copied] = [await c.threads.getHistory(t.thread_id), await c.threads.getHistory(copy.thread_id)];
        expect(copied.map((s) => s.checkpoint.checkpoint_id)).toEqual(orig.map((s) => s.checkpoint.checkpoint_id));
        expect(copied.map((s) => s.values)).toEqual(orig.map((s) => s.values));
        expect(copied.every((s) => s.checkpoint.thread_id === copy.thread_id && s.metadata?.thread_id === copy.thread_id)).toBe(true);
        await c.runs.wait(copy.thread_id, "echo", { input: hi("two") });
        expect(await c.threads.getHistory(t.thread_id)).toHaveLength(orig.length);
        expect(v((await c.threads.getState(t.thread_id)).values).messages).toHaveLength(2);
        expect(v((await c.threads.getState(copy.thread_id)).values).messages).toHaveLength(4);
        await expectCode(c.threads.copy(UNKNOWN), "not_found");
      });

      it("reads state: empty for a fresh thread, latest or at a checkpoint", async () => {
        const t = await c.threads.create();
        const empty = await c.threads.getState(t.thread_id);
        expect(empty).toMatchObject({ values: {}, next: [], tasks: [], checkpoint: null });
        expect(await c.threads.getHistory(t.thread_id)).toEqual([]);
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const state = await c.threads.getState(t.thread_id);
        expect(state).toMatchObject({ values: { log: ["a", "b", "c"] }, next: [], tasks: [] });
        expect(state.metadata).toMatchObject({ source: "loop", step: 3, graph_id: "chain", thread_id: t.thread_id });
        const history = await c.threads.getHistory(t.thread_id, { limit: 10 });
        const afterA = history.find((s) => s.metadata?.step === 1)!;
        expect(afterA.next).toEqual(["b"]);
        const at = await c.threads.getState(t.thread_id, afterA.checkpoint.checkpoint_id!);
        expect(at).toMatchObject({ values: { log: ["a"] }, next: ["b"] });
        const bySelector = await c.threads.getState(t.thread_id, { thread_id: t.thread_id, checkpoint_ns: "", checkpoint_id: afterA.checkpoint.checkpoint_id, checkpoint_map: null });
        expect(bySelector.values).toEqual({ log: ["a"] });
        await expectCode(c.threads.getState(t.thread_id, UNKNOWN), "not_found");
        await expectCode(c.threads.getState(UNKNOWN), "not_found");
      });

      it("lists history newest first with limit, before, metadata and checkpoint", async () => {
        const t = await c.threads.create();
        const r1 = await c.runs.create(t.thread_id, "chain", { input: {}, metadata: { tag: "first" } });
        await c.runs.join(t.thread_id, r1.run_id);
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const all = await c.threads.getHistory(t.thread_id, { limit: 100 });
        expect(all.map((s) => s.metadata?.step)).toEqual([8, 7, 6, 5, 4, 3, 2, 1, 0, -1]);
        const two = await c.threads.getHistory(t.thread_id, { limit: 2 });
        expect(two.map((s) => s.metadata?.step)).toEqual([8, 7]);
        const before = await c.threads.getHistory(t.thread_id, { limit: 2, before: { configurable: { checkpoint_id: two[1]!.checkpoint.checkpoint_id } } });
        expect(before.map((s) => s.metadata?.step)).toEqual([6, 5]);
        const ofRun = await c.threads.getHistory(t.thread_id, { limit: 100, metadata: { run_id: r1.run_id } });
        expect(ofRun.map((s) => s.metadata?.step)).toEqual([3, 2, 1, 0, -1]);
        expect(ofRun.every((s) => s.metadata?.tag === "first")).toBe(true);
        const from = await c.threads.getHistory(t.thread_id, { limit: 2, checkpoint: { checkpoint_id: all[3]!.checkpoint.checkpoint_id } });
        expect(from.map((s) => s.metadata?.step)).toEqual([5, 4]);
        await expectCode(c.threads.getHistory(t.thread_id, { before: { configurable: { checkpoint_id: UNKNOWN } } }), "not_found");
        await expectCode(c.threads.getHistory(t.thread_id, { before: UNKNOWN as never }), "not_found");
        await expectCode(c.threads.getHistory(t.thread_id, { checkpoint: { checkpoint_id: UNKNOWN } }), "not_found");
      });

      it("names a checkpoint by id, checkpoint object or config wherever one is named; anything else is refused (D27)", async () => {
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const all = await c.threads.getHistory(t.thread_id, { limit: 100 });
        const id = all[1]!.checkpoint.checkpoint_id!;
        const steps = (h: Array<{ metadata: unknown }>) => h.map((s) => v(s.metadata).step);
        // `before` in all three forms pages the same way (a pager that passes the object no longer loops).
        for (const before of [id, { checkpoint_id: id }, { thread_id: t.thread_id, checkpoint_ns: "", checkpoint_id: id }, { configurable: { checkpoint_id: id } }]) {
          expect(steps(await c.threads.getHistory(t.thread_id, { limit: 2, before: before as never }))).toEqual([all[2]!.metadata!.step, all[3]!.metadata!.step]);
        }
        for (const checkpoint of [id, { checkpoint_id: id }, { configurable: { checkpoint_id: id } }]) {
          expect(v(await c.threads.getState(t.thread_id, checkpoint as never)).checkpoint.checkpoint_id).toBe(id);
        }
        for (const bad of [{}, { id }, 42, { configurable: {} }]) {
          await expectCode(c.threads.getHistory(t.thread_id, { before: bad as never }), "invalid_input");
          await expectCode(c.threads.getState(t.thread_id, bad as never), "invalid_input");
        }
      });

      it("updates state as a node, refuses while busy and rejects unknown nodes", async () => {
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "chain", { input: {}, interruptBefore: ["c"] });
        expect((await c.threads.get(t.thread_id)).status).toBe("interrupted");
        const res = v(await c.threads.updateState(t.thread_id, { values: { log: ["edited"] }, asNode: "b" }));
        const checkpointId = res.checkpoint?.checkpoint_id ?? res.configurable?.checkpoint_id;
        expect(typeof checkpointId).toBe("string");
        const state = await c.threads.getState(t.thread_id);
        expect(state).toMatchObject({ values: { log: ["edited"] }, next: ["c"] });
        expect(state.metadata).toMatchObject({ source: "update" });
        expect(state.checkpoint?.checkpoint_id).toBe(checkpointId);
        expect((await c.threads.get(t.thread_id)).values).toEqual({ log: ["edited"] });
        await expectCode(c.threads.updateState(t.thread_id, { values: {}, asNode: "nope" }), "invalid_input");
        const busy = await busyThread();
        await expectCode(c.threads.updateState(busy.thread.thread_id, { values: { log: ["x"] }, asNode: "first" }), "conflict");
        await expectCode(c.threads.updateState(UNKNOWN, { values: {} }), "not_found");
      });
    });

    describe("runs", () => {
      it("streams metadata first, then the requested modes, with ids from 0", async () => {
        const t = await c.threads.create();
        const events = v(
          await collect(c.runs.stream(t.thread_id, "echo", { input: hi(), streamMode: ["values", "updates", "messages-tuple", "custom"] })),
        ) as Array<{ id?: string; event: string; data: Loose }>;
        expect(events[0]!.event).toBe("metadata");
        expect(events[0]!.data).toMatchObject({ run_id: expect.any(String), attempt: 1 });
        expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
        const names = new Set(events.map((e) => e.event));
        expect([...names].sort()).toEqual(["custom", "messages", "metadata", "updates", "values"]);
        const last = events.filter((e) => e.event === "values").at(-1)!;
        expect(last.data.messages.map((m: Loose) => m.content)).toEqual(["hi", "echo: hi"]);
        expect(events.find((e) => e.event === "updates")!.data).toHaveProperty("echo");
        expect(events.find((e) => e.event === "custom")!.data).toEqual({ echoed: "hi" });
        const msg = events.find((e) => e.event === "messages")!.data;
        expect(msg[0]).toMatchObject({ id: expect.any(String), content: "echo: hi" });
        expect(msg[1]).toMatchObject({ langgraph_node: "echo" });
        const run = await c.runs.get(t.thread_id, events[0]!.data.run_id);
        expect(run).toMatchObject({ status: "success", thread_id: t.thread_id, assistant_id: DEFAULT_ECHO });
        expect((await c.threads.get(t.thread_id)).status).toBe("idle");
      });

      it("streams only values by default and passes run ids and config to the graph", async () => {
        const a = await c.assistants.create({ graphId: "echo", config: { configurable: { model: "m1", temp: 0 } }, context: { tone: "dry", lang: "en" } });
        const t = await c.threads.create();
        const events = v(
          await collect(
            c.runs.stream(t.thread_id, a.assistant_id, {
              input: hi(),
              config: { configurable: { temp: 1, langgraph_auth_user: { identity: "forged" } } },
              context: { lang: "fr" },
              metadata: { origin: "test" },
            }),
          ),
        ) as Array<{ event: string; data: Loose }>;
        expect(new Set(events.map((e) => e.event))).toEqual(new Set(["metadata", "values"]));
        const runId = events[0]!.data.run_id;
        const seen = events.at(-1)!.data.seen;
        expect(seen.configurable).toMatchObject({ model: "m1", temp: 1, run_id: runId, thread_id: t.thread_id, graph_id: "echo", assistant_id: a.assistant_id });
        expect(seen.configurable).not.toHaveProperty("langgraph_auth_user");
        expect(seen.context).toEqual({ tone: "dry", lang: "fr" });
        const state = await c.threads.getState(t.thread_id);
        expect(state.metadata).toMatchObject({ run_id: runId, origin: "test", assistant_id: a.assistant_id });
        expect((await c.threads.get(t.thread_id)).metadata).toMatchObject({ graph_id: "echo", assistant_id: a.assistant_id });
      });

      it("merges config assistant -> thread -> run and carries nothing run-only over", async () => {
        const a = await c.assistants.create({ graphId: "echo", config: { configurable: { k: "assistant", m: "assistant", n: "assistant" } } });
        const t = await c.threads.create();
        // The first run's merged config becomes the thread's, minus what belongs to that run only.
        await c.runs.wait(t.thread_id, a.assistant_id, {
          input: hi(),
          config: { configurable: { m: "thread", n: "thread", user_id: "u1", __secret: 1 } },
        });
        const thread = v(await c.threads.get(t.thread_id));
        expect(thread.config.configurable).toMatchObject({ k: "assistant", m: "thread", n: "thread" });
        for (const key of ["user_id", "__secret", "run_id"]) expect(thread.config.configurable).not.toHaveProperty(key);
        const events = v(await collect(c.runs.stream(t.thread_id, a.assistant_id, { input: hi(), config: { configurable: { n: "run" } } })));
        const seen = events.at(-1).data.seen.configurable;
        expect(seen).toMatchObject({ k: "assistant", m: "thread", n: "run", run_id: events[0].data.run_id, thread_id: t.thread_id });
        expect(seen).not.toHaveProperty("user_id");
        expect(seen).not.toHaveProperty("__secret");
      });

      it("reports a failing run as an error event, error statuses and __error__", async () => {
        const t = await c.threads.create();
        const events = v(await collect(c.runs.stream(t.thread_id, "failing", { input: {} }))) as Array<{ event: string; data: Loose }>;
        expect(events.at(-1)).toMatchObject({ event: "error", data: { error: "CustomError", message: "Boo!" } });
        expect((await c.runs.list(t.thread_id))[0]!.status).toBe("error");
        expect((await c.threads.get(t.thread_id)).status).toBe("error");
        expect(await c.runs.wait(t.thread_id, "failing", { input: {}, raiseError: false })).toEqual({ __error__: { error: "CustomError", message: "Boo!" } });
        await expect(c.runs.wait(t.thread_id, "failing", { input: {} })).rejects.toThrow("CustomError: Boo!");
        const next = await c.runs.wait(t.thread_id, "echo", { input: hi() });
        expect(v(next).messages).toHaveLength(2);
        expect((await c.threads.get(t.thread_id)).status).toBe("idle");
      });

      it("rejects before any event when the run cannot be created", async () => {
        const t = await c.threads.create();
        await expectCode(collect(c.runs.stream(t.thread_id, UNKNOWN, { input: {} })), "not_found");
        await expectCode(collect(c.runs.stream(t.thread_id, "nope", { input: {} })), "not_found");
        await expectCode(collect(c.runs.stream(UNKNOWN, "echo", { input: {} })), "not_found");
        await expectCode(collect(c.runs.stream(t.thread_id, "echo", { input: {}, streamMode: "bogus" as never })), "invalid_input");
        await expectCode(c.runs.create(t.thread_id, "echo", { input: {}, multitaskStrategy: "later" as never }), "invalid_input");
        expect(await c.runs.list(t.thread_id)).toEqual([]);
        expect((await c.threads.get(t.thread_id)).status).toBe("idle");
      });

      // graphdock's own graphs refuse such a name (the bad-input test below); LangGraph ignores it (D40).
      if (capabilities.breakpointsUnchecked) {
        it("a breakpoint naming no node of the graph is ignored, as LangGraph ignores it", async () => {
          const t = await c.threads.create();
          const done = v(await c.runs.wait(t.thread_id, "chain", { input: {}, interruptBefore: ["nope"], interruptAfter: ["nope"] }));
          expect(done.log).toEqual(["a", "b", "c"]);
          expect((await c.threads.get(t.thread_id)).status).toBe("idle");
        });
      }

      it("refuses bad run input with invalid_input before the run exists: nothing listed, thread status unchanged", async () => {
        const idle = await c.threads.create();
        const failed = await c.threads.create();
        await c.runs.wait(failed.thread_id, "failing", { input: {}, raiseError: false });
        const paused = await c.threads.create();
        await c.runs.wait(paused.thread_id, "approval", { input: {} });
        const bad: Array<[string, Record<string, unknown>]> = [
          ["resume with nothing interrupted", { command: { resume: "yes" } }],
          ["goto an unknown node", { command: { goto: "nope" } }],
          ["goto an unknown node with input", { command: { goto: { node: "nope", input: {} } } }],
          ["a number as input", { input: 5 }],
          ["a breakpoint that is not a list of names", { input: {}, interruptBefore: [5] }],
          ...(capabilities.breakpointsUnchecked ? [] : [["a breakpoint on an unknown node", { input: {}, interruptBefore: ["nope"] }] as [string, Record<string, unknown>]]),
        ];
        for (const [thread, status, assistant] of [
          [idle, "idle", "chain"],
          [failed, "error", "chain"],
        ] as const) {
          const runsBefore = await c.runs.list(thread.thread_id);
          for (const [label, payload] of bad) {
            await expectCode(c.runs.create(thread.thread_id, assistant, payload), "invalid_input").catch((e: Error) => {
              throw new Error(`${label} (runs.create, ${status} thread): ${e.message}`);
            });
            await expectCode(c.runs.wait(thread.thread_id, assistant, payload), "invalid_input");
            await expectCode(collect(c.runs.stream(thread.thread_id, assistant, payload)), "invalid_input");
          }
          expect(await c.runs.list(thread.thread_id)).toEqual(runsBefore);
          expect((await c.threads.get(thread.thread_id)).status).toBe(status);
        }
        // On a paused thread the static checks still apply; a resume is fine.
        await expectCode(c.runs.wait(paused.thread_id, "approval", { command: { goto: "nope" } }), "invalid_input");
        await expectCode(c.runs.wait(paused.thread_id, "approval", { input: 5 as never }), "invalid_input");
        expect((await c.threads.get(paused.thread_id)).status).toBe("interrupted");
        expect(await c.runs.list(paused.thread_id)).toHaveLength(1);
        expect(await c.runs.wait(paused.thread_id, "approval", { command: { resume: "yes" } })).toEqual({ plan: "plan!", approved: "yes" });
        // Stateless runs and threads created on the fly: nothing is left behind.
        await expectCode(c.runs.wait(null, "chain", { input: 5 as never }), "invalid_input");
        const fresh = "00000000-0000-4000-8000-00000000beef";
        await expectCode(c.runs.wait(fresh, "chain", { command: { resume: 1 }, ifNotExists: "create" }), "invalid_input");
        await expectCode(c.threads.get(fresh), "not_found");
        // A batch is checked whole: a bad payload creates none of them.
        const threads = await c.threads.count();
        await expectCode(
          c.runs.createBatch([
            { assistantId: "chain", input: {}, onCompletion: "continue" },
            { assistantId: "chain", input: 5 as never, onCompletion: "continue" },
          ]),
          "invalid_input",
        );
        expect(await c.threads.count()).toBe(threads);
      });

      it("judges an enqueued resume against the state the run ahead of it leaves", async () => {
        const ask = { context: { ask: true } };
        const { thread, run } = await busyThread(ask);
        // Nothing is interrupted yet, but the run ahead will pause: the resume waits its turn.
        const resume = await c.runs.create(thread.thread_id, "slow", { command: { resume: "ok" }, multitaskStrategy: "enqueue", ...ask });
        // The static checks still apply to an enqueued run.
        await expectCode(c.runs.create(thread.thread_id, "slow", { command: { goto: "nope" }, multitaskStrategy: "enqueue" }), "invalid_input");
        gate.release();
        expect(v(await c.runs.join(thread.thread_id, resume.run_id)).log).toEqual([`first:${run.run_id}`, "wait", "ok"]);
        expect((await c.runs.list(thread.thread_id)).map((r) => [r.run_id, r.status])).toEqual([
          [resume.run_id, "success"],
          [run.run_id, "success"],
        ]);
        expect((await c.threads.get(thread.thread_id)).status).toBe("idle");
      });

      it("creates the thread with ifNotExists create", async () => {
        const id = "00000000-0000-4000-8000-00000000cafe";
        const out = await c.runs.wait(id, "echo", { input: hi(), ifNotExists: "create", metadata: { via: "run" } });
        expect(v(out).messages).toHaveLength(2);
        expect((await c.threads.get(id)).metadata).toMatchObject({ graph_id: "echo", assistant_id: DEFAULT_ECHO, via: "run" });
      });

      it("runs in the background: create is pending, join returns the final values, list is newest first", async () => {
        const t = await c.threads.create();
        const r1 = await c.runs.create(t.thread_id, "chain", { input: {} });
        expect(r1).toMatchObject({ status: "pending", thread_id: t.thread_id, multitask_strategy: "reject" });
        expect(await c.runs.join(t.thread_id, r1.run_id)).toEqual({ log: ["a", "b", "c"] });
        expect((await c.runs.get(t.thread_id, r1.run_id)).status).toBe("success");
        const r2 = await c.runs.create(t.thread_id, "chain", { input: {} });
        await c.runs.join(t.thread_id, r2.run_id);
        expect((await c.runs.list(t.thread_id)).map((r) => r.run_id)).toEqual([r2.run_id, r1.run_id]);
        expect((await c.runs.list(t.thread_id, { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual([r1.run_id]);
        expect(await c.runs.list(t.thread_id, { status: "error" })).toEqual([]);
        expect(await c.runs.join(t.thread_id, r1.run_id)).toEqual({ log: ["a", "b", "c", "a", "b", "c"] });
        await expectCode(c.runs.get(t.thread_id, UNKNOWN), "not_found");
        await expectCode(c.runs.list(UNKNOWN), "not_found");
        await expectCode(c.runs.join(t.thread_id, UNKNOWN), "not_found");
      });

      it("pauses at interrupt(), reports it, and resumes with a command", async () => {
        const t = await c.threads.create();
        const paused = v(await c.runs.wait(t.thread_id, "approval", { input: {} }));
        expect(paused.plan).toBe("plan!");
        expect(paused.__interrupt__).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{32}$/), value: { question: "approve plan!?" } }]);
        const thread = await c.threads.get(t.thread_id);
        expect(thread.status).toBe("interrupted");
        const [taskId, interrupts] = Object.entries(thread.interrupts)[0]!;
        expect(interrupts).toEqual(paused.__interrupt__);
        const state = await c.threads.getState(t.thread_id);
        expect(state.next).toEqual(["review"]);
        expect(state.tasks[0]).toMatchObject({ id: taskId, name: "review", interrupts: paused.__interrupt__ });
        const runs = await c.runs.list(t.thread_id);
        expect(runs[0]!.status).toBe("success");
        const done = await c.runs.wait(t.thread_id, "approval", { command: { resume: "yes" } });
        expect(done).toEqual({ plan: "plan!", approved: "yes" });
        expect(await c.threads.get(t.thread_id)).toMatchObject({ status: "idle", interrupts: {} });
      });

      it("stops at static breakpoints and continues with null input", async () => {
        const t = await c.threads.create();
        const events = v(await collect(c.runs.stream(t.thread_id, "chain", { input: {}, interruptBefore: ["b"] }))) as Array<{ event: string; data: Loose }>;
        expect(events.at(-1)).toMatchObject({ event: "values", data: { __interrupt__: [] } });
        expect(await c.threads.get(t.thread_id)).toMatchObject({ status: "interrupted", values: { log: ["a"] } });
        expect((await c.threads.getState(t.thread_id)).next).toEqual(["b"]);
        expect(await c.runs.wait(t.thread_id, "chain", { input: null })).toEqual({ log: ["a", "b", "c"] });
        expect((await c.threads.get(t.thread_id)).status).toBe("idle");
      });

      it("forks from a past checkpoint", async () => {
        const t = await c.threads.create();
        await c.runs.wait(t.thread_id, "chain", { input: {} });
        const afterA = (await c.threads.getHistory(t.thread_id)).find((s) => s.metadata?.step === 1)!;
        const forked = await c.runs.wait(t.thread_id, "chain", { input: null, checkpointId: afterA.checkpoint.checkpoint_id! });
        expect(forked).toEqual({ log: ["a", "b", "c"] });
        const history = await c.threads.getHistory(t.thread_id, { limit: 100 });
        const branch = history.filter((s) => s.metadata?.run_id !== history.at(-1)!.metadata?.run_id);
        expect(branch.length).toBeGreaterThan(0);
        expect(branch.at(-1)!.parent_checkpoint?.checkpoint_id).toBe(afterA.checkpoint.checkpoint_id);
        await expectCode(c.runs.wait(t.thread_id, "chain", { input: null, checkpointId: UNKNOWN }), "not_found");
      });

      it("multitask reject (default) refuses a second run while one is in flight", async () => {
        const { thread, run } = await busyThread();
        expect((await c.threads.get(thread.thread_id)).status).toBe("busy");
        expect((await c.runs.get(thread.thread_id, run.run_id)).status).toBe("running");
        await expectCode(c.runs.create(thread.thread_id, "echo", { input: hi() }), "conflict");
        await expectCode(collect(c.runs.stream(thread.thread_id, "echo", { input: hi() })), "conflict");
        gate.release();
        expect(v(await c.runs.join(thread.thread_id, run.run_id)).log).toEqual([`first:${run.run_id}`, "wait", "last"]);
        expect((await c.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
        expect((await c.threads.get(thread.thread_id)).status).toBe("idle");
      });

      it("multitask enqueue runs the next run after the current one, in order", async () => {
        const { thread, run } = await busyThread();
        const second = await c.runs.create(thread.thread_id, "chain", { input: {}, multitaskStrategy: "enqueue" });
        const third = await c.runs.create(thread.thread_id, "chain", { input: {}, multitaskStrategy: "enqueue" });
        expect((await c.runs.get(thread.thread_id, second.run_id)).status).toBe("pending");
        gate.release();
        const out = v(await c.runs.join(thread.thread_id, third.run_id));
        expect(out.log).toEqual([`first:${run.run_id}`, "wait", "last", "a", "b", "c", "a", "b", "c"]);
        const statuses = await c.runs.list(thread.thread_id);
        expect(statuses.map((r) => [r.run_id, r.status])).toEqual([
          [third.run_id, "success"],
          [second.run_id, "success"],
          [run.run_id, "success"],
        ]);
        expect((await c.threads.get(thread.thread_id)).status).toBe("idle");
      });

      it("multitask interrupt cancels the running run and keeps its checkpoints", async () => {
        const { thread, run } = await busyThread();
        const next = await c.runs.create(thread.thread_id, "chain", { input: {}, multitaskStrategy: "interrupt" });
        const out = v(await c.runs.join(thread.thread_id, next.run_id));
        expect(out.log).toEqual([`first:${run.run_id}`, "a", "b", "c"]);
        expect((await c.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
        expect((await c.runs.get(thread.thread_id, next.run_id)).status).toBe("success");
        expect((await c.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_id: run.run_id } })).length).toBeGreaterThan(0);
        expect((await c.threads.get(thread.thread_id)).status).toBe("idle");
      });

      it("multitask rollback deletes the running run and every checkpoint it wrote (D9)", async () => {
        const thread = await c.threads.create();
        const earlier = await c.runs.create(thread.thread_id, "chain", { input: {} });
        await c.runs.join(thread.thread_id, earlier.run_id);
        const before = await c.threads.getHistory(thread.thread_id, { limit: 100 });
        const run = await c.runs.create(thread.thread_id, "slow", { input: {} });
        await gate.reached(1);
        const next = await c.runs.create(thread.thread_id, "chain", { input: {}, multitaskStrategy: "rollback" });
        const out = v(await c.runs.join(thread.thread_id, next.run_id));
        expect(out.log).toEqual(["a", "b", "c", "a", "b", "c"]);
        await expectCode(c.runs.get(thread.thread_id, run.run_id), "not_found");
        expect(await c.threads.getHistory(thread.thread_id, { limit: 100, metadata: { run_id: run.run_id } })).toEqual([]);
        const after = await c.threads.getHistory(thread.thread_id, { limit: 100 });
        expect(after.slice(after.length - before.length).map((s) => s.checkpoint.checkpoint_id)).toEqual(before.map((s) => s.checkpoint.checkpoint_id));
        expect((await c.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([next.run_id, earlier.run_id]);
      });

      it("cancels a running run (interrupt or rollback) and a pending one; a finished run is left as it is (D26), an unknown one is not found", async () => {
        const { thread, run } = await busyThread();
        const queued = await c.runs.create(thread.thread_id, "chain", { input: {}, multitaskStrategy: "enqueue" });
        await c.runs.cancel(thread.thread_id, queued.run_id);
        expect((await c.runs.get(thread.thread_id, queued.run_id)).status).toBe("interrupted");
        await c.runs.cancel(thread.thread_id, run.run_id, true);
        expect((await c.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
        expect((await c.threads.get(thread.thread_id)).status).toBe("idle");
        expect(v(await c.threads.getState(thread.thread_id)).values.log).toEqual([`first:${run.run_id}`]);
        const updated = (await c.runs.get(thread.thread_id, run.run_id)).updated_at;
        await c.runs.cancel(thread.thread_id, run.run_id);
        await c.runs.cancel(thread.thread_id, run.run_id, true, "rollback");
        expect(await c.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "interrupted", updated_at: updated });
        await expectCode(c.runs.cancel(thread.thread_id, UNKNOWN), "not_found");

        const second = await c.runs.create(thread.thread_id, "slow", { input: {} });
        await gate.reached(2);
        await c.runs.cancel(thread.thread_id, second.run_id, true, "rollback");
        await expectCode(c.runs.get(thread.thread_id, second.run_id), "not_found");
        expect(v(await c.threads.getState(thread.thread_id)).values.log).toEqual([`first:${run.run_id}`]);
      });

      it("runs statelessly: the temporary thread is deleted unless kept", async () => {
        const out = await c.runs.wait(null, "echo", { input: hi("once") });
        expect(v(out).messages.map((m: Loose) => m.content)).toEqual(["once", "echo: once"]);
        expect(await c.threads.count()).toBe(0);
        const events = v(await collect(c.runs.stream(null, "chain", { input: {} }))) as Array<{ event: string; data: Loose }>;
        expect(events[0]!.event).toBe("metadata");
        expect(events.at(-1)!.data).toEqual({ log: ["a", "b", "c"] });
        expect(await c.threads.count()).toBe(0);
        const kept = await c.runs.create(null, "chain", { input: {}, onCompletion: "keep" as never });
        expect(await c.runs.join(kept.thread_id, kept.run_id)).toEqual({ log: ["a", "b", "c"] });
        expect((await c.threads.get(kept.thread_id)).metadata).toMatchObject({ graph_id: "chain", assistant_id: expect.any(String) });
        const batch = await c.runs.createBatch([
          { assistantId: "chain", input: {}, onCompletion: "keep" as never },
          { assistantId: "echo", input: hi(), onCompletion: "keep" as never },
        ]);
        expect(batch.map((r) => r.status)).toEqual(["pending", "pending"]);
        expect(await c.runs.join(batch[0]!.thread_id, batch[0]!.run_id)).toEqual({ log: ["a", "b", "c"] });
        await expectCode(c.runs.createBatch([{ assistantId: "chain" }, { assistantId: UNKNOWN }]), "not_found");
        expect(await c.threads.count()).toBe(3);
      });

      it("replays a resumable run's events from lastEventId", async () => {
        const t = await c.threads.create();
        const run = await c.runs.create(t.thread_id, "chain", { input: {}, streamMode: ["values", "updates"], streamResumable: true });
        await c.runs.join(t.thread_id, run.run_id);
        const all = await collect(c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
        expect(all[0]).toMatchObject({ id: "0", event: "metadata", data: { run_id: run.run_id } });
        expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i)));
        expect(all.filter((e) => e.event === "updates").map((e) => Object.keys(v(e.data)))).toEqual([["a"], ["b"], ["c"]]);
        const tail = await collect(c.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "2" }));
        expect(tail).toEqual(all.slice(3));
        await expectNotFoundStream(c.runs.joinStream(t.thread_id, UNKNOWN), capabilities.inProcess === true);
      });

      it("joins a live stream from now on", async () => {
        const { thread, run } = await busyThread({ streamMode: ["updates", "custom"] });
        const joined = c.runs.joinStream(thread.thread_id, run.run_id)[Symbol.asyncIterator]();
        const first = joined.next();
        // The join attaches some time after the call (over a socket, after a round trip): the
        // blocked run emits a custom event at each ping until the joiner has seen one, so the
        // joiner is attached before the run goes on. A client call between pings lets the
        // join's request through on every transport.
        let attached = false;
        const attach = () => (attached = true);
        void first.then(attach, attach);
        while (!attached) {
          gate.ping();
          await c.threads.get(thread.thread_id);
        }
        gate.release();
        const events = [(await first).value];
        for (let next = await joined.next(); !next.done; next = await joined.next()) events.push(next.value);
        expect(events[0]).toMatchObject({ event: "custom", data: { waiting: true } });
        const updates = events.filter((e) => e.event === "updates").map((e) => Object.keys(v(e.data))[0]);
        expect(updates).not.toContain("first");
        expect(updates.at(-1)).toBe("last");
      });

      it("deletes finished runs only", async () => {
        const { thread, run } = await busyThread();
        await expectCode(c.runs.delete(thread.thread_id, run.run_id), "conflict");
        gate.release();
        await c.runs.join(thread.thread_id, run.run_id);
        await c.runs.delete(thread.thread_id, run.run_id);
        await expectCode(c.runs.get(thread.thread_id, run.run_id), "not_found");
        await expectCode(c.runs.delete(thread.thread_id, run.run_id), "not_found");
      });

      it("deleting a thread cancels its runs", async () => {
        const { thread } = await busyThread();
        await c.threads.delete(thread.thread_id);
        await expectCode(c.threads.get(thread.thread_id), "not_found");
        expect(await c.runs.wait(null, "chain", { input: {} })).toEqual({ log: ["a", "b", "c"] });
      });

      if (capabilities.inProcess) {
        it("a consumer leaving a stream with onDisconnect cancel cancels the run", async () => {
          const t = await c.threads.create();
          let runId = "";
          for await (const e of c.runs.stream(t.thread_id, "slow", { input: {}, onDisconnect: "cancel", streamMode: ["updates"] })) {
            if (e.event === "metadata") runId = v(e.data).run_id;
            await gate.reached(1);
            break;
          }
          await c.runs.join(t.thread_id, runId);
          expect((await c.runs.get(t.thread_id, runId)).status).toBe("interrupted");
        });
      }
    });
  });
}
