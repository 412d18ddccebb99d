/**
 * Durable runs of a hosted LangGraph.js graph (D23, D60): a runtime stops mid-run (its store
 * "killed", as a process dies) and another on the store resumes the run from its last
 * checkpoint as attempt 2, through LangGraph's own resume (null input on the thread). Also after
 * a JSON-file store is reopened in a new runtime.
 */
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { createRuntime, memoryStore, type Runtime } from "../../src/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { killable } from "../runtime/durable.js";

const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** one -> two -> three; `two` blocks until aborted in attempt 1. Counts executions and the attempts nodes read. */
function stepsGraph(probe: { runs: Record<string, number>; attempts: Record<string, number[]> }) {
  const step = (name: string) => async (_s: typeof State.State, config: LangGraphRunnableConfig) => {
    const attempt = Number(config.metadata?.run_attempt);
    probe.runs[name] = (probe.runs[name] ?? 0) + 1;
    (probe.attempts[name] ??= []).push(attempt);
    if (name === "two" && attempt === 1) {
      await new Promise<never>((_, reject) => config.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
    }
    return { log: [name] };
  };
  return new StateGraph(State)
    .addNode("one", step("one"))
    .addNode("two", step("two"))
    .addNode("three", step("three"))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "three")
    .addEdge("three", END)
    .compile();
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const untilTwo = async (probe: { runs: Record<string, number> }, runtime: Runtime, threadId: string) => {
  await vi.waitFor(() => expect(probe.runs.two).toBe(1));
  await vi.waitFor(async () => expect((await runtime.threads.getState(threadId)).values).toMatchObject({ log: ["one"] }));
};

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

it("a LangGraph.js run cut off mid-step is resumed by another runtime as attempt 2: completed steps not run again, its stream open across attempts", async () => {
  const probe = { runs: {}, attempts: {} } as { runs: Record<string, number>; attempts: Record<string, number[]> };
  const store = memoryStore();
  const dying = killable(store);
  const a = await createRuntime({ graphs: { steps: stepsGraph(probe) }, store: dying.store, leaseMs: 300 });
  const b = await createRuntime({ graphs: { steps: stepsGraph(probe) }, store, leaseMs: 300 });
  try {
    const t = await b.threads.create();
    const run = await a.runs.create(t.thread_id, "steps", { input: { log: [] }, streamResumable: true });
    await untilTwo(probe, b, t.thread_id);
    const events = collect(b.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
    dying.kill();
    expect(await b.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
    expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
    expect(probe.runs).toEqual({ one: 1, two: 2, three: 1 });
    expect(probe.attempts).toEqual({ one: [1], two: [1, 2], three: [2] });
    const seen = await events;
    expect(seen.filter((e) => e.event === "metadata").map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
    expect(seen.some((e) => e.event === "error")).toBe(false);
    expect(seen.at(-1)).toMatchObject({ event: "values", data: { log: ["one", "two", "three"] } });
    // Checkpoints record the attempt that wrote them (and each step's number).
    const history = await b.threads.getHistory(t.thread_id, { limit: 10 });
    const byStep = Object.fromEntries(history.map((s) => [s.metadata?.step as number, s.metadata?.run_attempt]));
    expect(byStep).toMatchObject({ 1: 1, 2: 2, 3: 2 });
  } finally {
    await b.close();
  }
});

it("a LangGraph.js run in flight when its process died is resumed at once when the JSON-file store is opened again", async () => {
  const probe = { runs: {}, attempts: {} } as { runs: Record<string, number>; attempts: Record<string, number[]> };
  const dir = mkdtempSync(join(tmpdir(), "graphdock-lg-durable-"));
  dirs.push(dir);
  const dying = killable(jsonFileStore(dir));
  const a = await createRuntime({ graphs: { steps: stepsGraph(probe) }, store: dying.store });
  const t = await a.threads.create();
  const run = await a.runs.create(t.thread_id, "steps", { input: { log: [] } });
  await untilTwo(probe, a, t.thread_id);
  dying.kill();
  // The directory is still locked by this process's dead store: copy it, as a restart would find it.
  const copy = mkdtempSync(join(tmpdir(), "graphdock-lg-durable-copy-"));
  dirs.push(copy);
  const { cpSync } = await import("node:fs");
  cpSync(dir, copy, { recursive: true });
  const b = await createRuntime({ graphs: { steps: stepsGraph(probe) }, store: jsonFileStore(copy) });
  try {
    expect(await b.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: ["one", "two", "three"] });
    expect(await b.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
    expect(probe.runs).toEqual({ one: 1, two: 2, three: 1 });
  } finally {
    await b.close();
  }
});
