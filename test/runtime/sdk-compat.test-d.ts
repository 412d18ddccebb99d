/**
 * Type test (D1): code written against the official SDK client moves to a runtime. Every method
 * graphdock implements takes the arguments the SDK's takes, and returns the SDK's records, except
 * where the SDK's types say something the agent server does not return: there the runtime's types
 * say what is returned (test/runtime/public-types.test-d.ts pins those).
 */
import type { Assistant as SdkAssistant, Checkpoint as SdkCheckpoint, Client, Cron as SdkCron, Run as SdkRun, Thread as SdkThread, ThreadState as SdkThreadState } from "@langchain/langgraph-sdk";
import { describe, expectTypeOf, it } from "vitest";
import type { Assistant, CheckpointState, Cron, Run, RunEvent, Runtime, RuntimeClient, RuntimeEvent, Thread, ThreadState } from "../../src/index.js";

type Args<F> = F extends (...args: infer A) => unknown ? A : never;

describe("SDK compatibility", () => {
  it("every method takes what the SDK client's takes", () => {
    const calls = (rt: RuntimeClient, sdk: Client) => {
      const a = (args: Args<Client["assistants"]["create"]>) => rt.assistants.create(...args);
      const b = (args: Args<Client["assistants"]["get"]>) => rt.assistants.get(...args);
      const c = (args: Args<Client["assistants"]["update"]>) => rt.assistants.update(...args);
      const d = (args: Args<Client["assistants"]["delete"]>) => rt.assistants.delete(...args);
      const e = (args: Args<Client["assistants"]["search"]>) => rt.assistants.search(...args);
      const f = (args: Args<Client["assistants"]["count"]>) => rt.assistants.count(...args);
      const g = (args: Args<Client["assistants"]["getVersions"]>) => rt.assistants.getVersions(...args);
      const h = (args: Args<Client["assistants"]["setLatest"]>) => rt.assistants.setLatest(...args);
      const i = (args: Args<Client["assistants"]["getGraph"]>) => rt.assistants.getGraph(...args);
      const j = (args: Args<Client["assistants"]["getSchemas"]>) => rt.assistants.getSchemas(...args);
      const k = (args: Args<Client["threads"]["create"]>) => rt.threads.create(...args);
      const l = (args: Args<Client["threads"]["get"]>) => rt.threads.get(...args);
      const m = (args: Args<Client["threads"]["delete"]>) => rt.threads.delete(...args);
      const n = (args: Args<Client["threads"]["search"]>) => rt.threads.search(...args);
      const o = (args: Args<Client["threads"]["count"]>) => rt.threads.count(...args);
      const p = (args: Args<Client["threads"]["copy"]>) => rt.threads.copy(...args);
      const q = (args: Args<Client["threads"]["getState"]>) => rt.threads.getState(...args);
      const r = (args: Args<Client["threads"]["updateState"]>) => rt.threads.updateState(...args);
      const s = (args: Args<Client["threads"]["getHistory"]>) => rt.threads.getHistory(...args);
      const t = (args: Args<Client["runs"]["stream"]>) => rt.runs.stream(...args);
      const u = (args: Args<Client["runs"]["create"]>) => rt.runs.create(...args);
      const v = (args: Args<Client["runs"]["wait"]>) => rt.runs.wait(...args);
      const w = (args: Args<Client["runs"]["list"]>) => rt.runs.list(...args);
      const x = (args: Args<Client["runs"]["get"]>) => rt.runs.get(...args);
      const y = (args: Args<Client["runs"]["cancel"]>) => rt.runs.cancel(...args);
      const z = (args: Args<Client["runs"]["join"]>) => rt.runs.join(...args);
      const aa = (args: Args<Client["runs"]["joinStream"]>) => rt.runs.joinStream(...args);
      const ab = (args: Args<Client["runs"]["delete"]>) => rt.runs.delete(...args);
      const ac = (args: Args<Client["crons"]["update"]>) => rt.crons.update(...args);
      const ad = (args: Args<Client["crons"]["delete"]>) => rt.crons.delete(...args);
      const ae = (args: Args<Client["crons"]["search"]>) => rt.crons.search(...args);
      const af = (args: Args<Client["crons"]["count"]>) => rt.crons.count(...args);
      return [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z, aa, ab, ac, ad, ae, af, sdk];
    };
    expectTypeOf(calls).toBeFunction();
  });

  it("records are the SDK's, except a nullable description and a never-run thread's null checkpoint", () => {
    expectTypeOf<Run>().toMatchTypeOf<SdkRun>();
    expectTypeOf<Thread>().toMatchTypeOf<SdkThread>();
    expectTypeOf<Cron>().toMatchTypeOf<SdkCron>();
    expectTypeOf<Omit<Assistant, "description">>().toMatchTypeOf<Omit<SdkAssistant, "description">>();
    expectTypeOf<Omit<ThreadState, "checkpoint" | "tasks">>().toMatchTypeOf<Omit<SdkThreadState, "checkpoint" | "tasks">>();
    expectTypeOf<NonNullable<ThreadState["checkpoint"]>>().toMatchTypeOf<SdkCheckpoint>();
    // A history entry always has its checkpoint.
    expectTypeOf<CheckpointState["checkpoint"]>().toMatchTypeOf<SdkCheckpoint>();
  });

  it("a runtime is the SDK-shaped client of its default caller", () => {
    expectTypeOf<Runtime>().toMatchTypeOf<RuntimeClient>();
  });

  it("run events and lifecycle events narrow on their name", () => {
    expectTypeOf<Extract<RunEvent, { event: "metadata" }>["data"]>().toEqualTypeOf<{ run_id: string; attempt: number }>();
    expectTypeOf<Extract<RunEvent, { event: "error" }>["data"]>().toEqualTypeOf<{ error: string; message: string }>();
    expectTypeOf<Extract<RuntimeEvent, { type: "thread.status" }>["status"]>().toEqualTypeOf<"idle" | "busy" | "interrupted" | "error">();
    const use = (runtime: Runtime) =>
      runtime.subscribe("run.finished", (e) => {
        expectTypeOf(e.type).toEqualTypeOf<"run.finished">();
        expectTypeOf(e.error).toEqualTypeOf<{ error: string; message: string; stack?: string } | undefined>();
        expectTypeOf(e.trace_id).toEqualTypeOf<string | undefined>();
      });
    expectTypeOf(use).returns.toEqualTypeOf<() => void>();
  });
});
