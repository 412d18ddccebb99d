/**
 * Two runtimes over one store act as one service (D20): the contract section run on one
 * `memoryStore()` instance shared by two runtimes, and on one IndexedDB database opened twice
 * (as two tabs). Written against the runtime's public API; the store is touched directly only
 * to leave behind what a runtime that died mid-run leaves.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import type { Runtime } from "../../src/index.js";
import { END, START, StateGraph } from "../../src/graph/index.js";
import type { CompiledGraph } from "../../src/graph/types.js";
import type { Store } from "../../src/persistence/types.js";
import { expectCode } from "./contract.js";
import { Gate, testGraphs } from "./graphs.js";

/** Two stores over the same data (the same instance twice, or two connections). */
export type StorePair = () => Promise<[Store, Store]>;

/** `ordered`: appends its input `n` to `order`; records how many of its runs overlap, across runtimes. */
function orderedGraph(probe: { active: number; max: number }): CompiledGraph {
  return new StateGraph({ order: { reducer: (a: number[], b: number[]) => [...a, ...b], default: (): number[] => [] }, n: { default: () => -1 } })
    .addNode("step", async (state) => {
      probe.active++;
      probe.max = Math.max(probe.max, probe.active);
      await new Promise((r) => setTimeout(r, 2));
      probe.active--;
      return { order: [state.n] };
    })
    .addEdge(START, "step")
    .addEdge("step", END)
    .compile();
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function sharedStoreContract(name: string, pair: StorePair): void {
  describe(`two runtimes over one store: ${name}`, () => {
    let gate: Gate;
    let probe: { active: number; max: number };
    let a: Runtime;
    let b: Runtime;
    let stores: [Store, Store];
    const graphs = () => ({ ...testGraphs(gate), ordered: orderedGraph(probe) });

    beforeEach(async () => {
      gate = new Gate();
      probe = { active: 0, max: 0 };
      stores = await pair();
      a = await createRuntime({ graphs: graphs(), store: stores[0] });
      b = await createRuntime({ graphs: graphs(), store: stores[1] });
    });
    afterEach(async () => {
      gate.release();
      await a.close();
      await b.close();
    });

    it("a run created in A is visible in B, joinable from B with replay, and its thread busy for both", async () => {
      const t = await a.threads.create();
      const run = await a.runs.create(t.thread_id, "slow", { input: {}, streamResumable: true });
      await gate.reached(1);
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ run_id: run.run_id, status: "running" });
      expect((await b.runs.list(t.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
      expect(await b.threads.get(t.thread_id)).toMatchObject({ status: "busy" });
      const replay = collect(b.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
      const joined = b.runs.join(t.thread_id, run.run_id);
      gate.release();
      expect(await joined).toMatchObject({ log: [`first:${run.run_id}`, "wait", "last"] });
      const events = await replay;
      expect(events[0]).toMatchObject({ id: "0", event: "metadata", data: { run_id: run.run_id } });
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i));
      expect(events.at(-1)).toMatchObject({ event: "values", data: { log: [`first:${run.run_id}`, "wait", "last"] } });
      expect(await a.threads.get(t.thread_id)).toMatchObject({ status: "idle" });
    });

    it("B cancels a run executing in A; A stops it promptly", async () => {
      const t = await a.threads.create();
      const run = await a.runs.create(t.thread_id, "slow", { input: {} });
      await gate.reached(1);
      await b.runs.cancel(t.thread_id, run.run_id, true);
      expect(await a.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "interrupted" });
      expect(await b.threads.get(t.thread_id)).toMatchObject({ status: "idle" });
      // Idempotent (D26): cancelling again changes nothing.
      await b.runs.cancel(t.thread_id, run.run_id);
      expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "interrupted" });
    });

    it("reject holds across runtimes: B cannot start a run beside A's", async () => {
      const t = await a.threads.create();
      await a.runs.create(t.thread_id, "slow", { input: {} });
      await gate.reached(1);
      await expectCode(b.runs.create(t.thread_id, "echo", { input: {}, multitaskStrategy: "reject" }), "conflict");
      await expectCode(b.runs.wait(t.thread_id, "echo", { input: {} }), "conflict");
    });

    it("an enqueue burst submitted through both runs one at a time, in submission order", async () => {
      const t = await a.threads.create();
      const runs = [];
      for (let n = 0; n < 12; n++) {
        const via = n % 2 ? b : a;
        runs.push(await via.runs.create(t.thread_id, "ordered", { input: { n }, multitaskStrategy: "enqueue" }));
      }
      await b.runs.join(t.thread_id, runs.at(-1)!.run_id);
      for (const run of runs) expect((await a.runs.get(t.thread_id, run.run_id)).status).toBe("success");
      expect((await a.threads.getState(t.thread_id)).values).toMatchObject({ order: Array.from({ length: 12 }, (_, n) => n) });
      expect(probe.max).toBe(1);
    });

    it("interrupt from B ends A's running run and starts the new one after it", async () => {
      const t = await a.threads.create();
      const first = await a.runs.create(t.thread_id, "slow", { input: {} });
      await gate.reached(1);
      const out = await b.runs.wait(t.thread_id, "chain", { input: {}, multitaskStrategy: "interrupt" });
      expect(out).toMatchObject({ log: [`first:${first.run_id}`, "a", "b", "c"] });
      expect(await a.runs.get(t.thread_id, first.run_id)).toMatchObject({ status: "interrupted" });
    });

    it("closing A leaves B serving everything: it resumes the run A was executing (a drain) and runs the ones A had queued", async () => {
      const t = await a.threads.create();
      const slow = await a.runs.create(t.thread_id, "slow", { input: {} });
      await gate.reached(1);
      const queued = await a.runs.create(t.thread_id, "chain", { input: {}, multitaskStrategy: "enqueue" });
      await a.close();
      await gate.reached(2); // resumed in B, at the step A was in
      gate.release();
      expect(await b.runs.join(t.thread_id, queued.run_id)).toMatchObject({ log: [`first:${slow.run_id}`, "wait", "last", "a", "b", "c"] });
      expect(await b.runs.get(t.thread_id, slow.run_id)).toMatchObject({ status: "success", attempt: 2 });
      const other = await b.threads.create();
      expect(await b.runs.wait(other.thread_id, "chain", { input: {} })).toMatchObject({ log: ["a", "b", "c"] });
      expect(await b.threads.search({ limit: 10 })).toHaveLength(2);
    });
  });
}
