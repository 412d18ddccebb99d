/**
 * Type test (D1): the runtime's namespaces are assignable where the official SDK client's are
 * used for the methods graphdock implements, so code written against `Client` compiles against
 * a runtime unchanged.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expectTypeOf, it } from "vitest";
import type { RunEvent, Runtime, RuntimeClient, RuntimeEvent } from "../../src/index.js";

type AssistantMethods = "create" | "get" | "update" | "delete" | "search" | "count" | "getVersions" | "setLatest" | "getGraph" | "getSchemas" | "getSubgraphs";
type ThreadMethods = "create" | "get" | "update" | "delete" | "search" | "count" | "copy" | "getState" | "updateState" | "getHistory";
type RunMethods = "stream" | "create" | "wait" | "join" | "joinStream" | "cancel" | "list" | "get" | "delete" | "createBatch";

/** What an app written against the SDK takes. */
interface SdkShaped {
  assistants: Pick<Client["assistants"], AssistantMethods>;
  threads: Pick<Client["threads"], ThreadMethods>;
  runs: Pick<Client["runs"], RunMethods>;
}

describe("SDK compatibility", () => {
  it("a runtime and a bound client stand in for the SDK client", () => {
    const useWithSdkCode = (_client: SdkShaped) => undefined;
    const check = (runtime: Runtime, bound: RuntimeClient) => {
      useWithSdkCode(runtime);
      useWithSdkCode(bound);
      const assistants: SdkShaped["assistants"] = runtime.assistants;
      const threads: SdkShaped["threads"] = runtime.threads;
      const runs: SdkShaped["runs"] = runtime.runs;
      return [assistants, threads, runs];
    };
    expectTypeOf(check).toBeFunction();
  });

  it("runtime.crons stands in for the SDK's client.crons (update, delete, search, count)", () => {
    const check = (runtime: Runtime) => {
      const crons: Pick<Client["crons"], "update" | "delete" | "search" | "count"> = runtime.crons;
      return crons;
    };
    expectTypeOf(check).toBeFunction();
  });

  it("run events and lifecycle events narrow on their name", () => {
    expectTypeOf<Extract<RunEvent, { event: "metadata" }>["data"]>().toEqualTypeOf<{ run_id: string; attempt: number }>();
    expectTypeOf<Extract<RunEvent, { event: "error" }>["data"]>().toEqualTypeOf<{ error: string; message: string }>();
    expectTypeOf<Extract<RuntimeEvent, { type: "thread.status" }>["status"]>().toEqualTypeOf<"idle" | "busy" | "interrupted" | "error">();
    const use = (runtime: Runtime) =>
      runtime.subscribe("run.finished", (e) => {
        expectTypeOf(e.type).toEqualTypeOf<"run.finished">();
        expectTypeOf(e.error).toEqualTypeOf<{ error: string; message: string } | undefined>();
      });
    expectTypeOf(use).returns.toEqualTypeOf<() => void>();
  });
});
