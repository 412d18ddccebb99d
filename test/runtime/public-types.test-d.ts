/**
 * Type test: the public types say what the runtime returns. A thread that never ran has a null
 * checkpoint; an assistant's description is null when unset; `threads.search` leaves `values`
 * out; a `select` result has exactly the fields written in the call (all of them optional when
 * the list is not written out); `graphdock/postgres` takes a `pg.Pool` without pg's types in its
 * own declarations.
 */
import type pg from "pg";
import { describe, expectTypeOf, it } from "vitest";
import type { Assistant, AssistantVersion, CheckpointConfig, CheckpointState, Cron, Run, Runtime, Thread, ThreadState, ThreadStateSelectField, ThreadSummary } from "../../src/index.js";
import type { PostgresPool, PostgresStoreOptions } from "../../src/postgres/index.js";

declare const runtime: Runtime;
type Values = { messages: string[]; count: number };

describe("public types", () => {
  it("a state's checkpoint is nullable (a thread that never ran has none); a history entry's is not", async () => {
    expectTypeOf<ThreadState["checkpoint"]>().toEqualTypeOf<CheckpointConfig | null>();
    expectTypeOf(await runtime.threads.getState("t")).toEqualTypeOf<ThreadState>();
    expectTypeOf((await runtime.threads.getHistory("t"))[0]!.checkpoint).toEqualTypeOf<CheckpointConfig>();
    expectTypeOf<CheckpointState["checkpoint_id"]>().toEqualTypeOf<string>();
  });

  it("an assistant's description is what is stored: a string or null", async () => {
    expectTypeOf<Assistant["description"]>().toEqualTypeOf<string | null>();
    expectTypeOf<AssistantVersion["description"]>().toEqualTypeOf<string | null>();
    expectTypeOf((await runtime.assistants.get("a")).description).toEqualTypeOf<string | null>();
  });

  it("threads.search without select leaves values out", async () => {
    const found = await runtime.threads.search({ limit: 5 });
    expectTypeOf(found).toEqualTypeOf<ThreadSummary[]>();
    expectTypeOf<ThreadSummary>().not.toHaveProperty("values");
  });

  it("a select written out types the result by its fields", async () => {
    const [thread] = await runtime.threads.search({ select: ["thread_id", "status"] });
    expectTypeOf(thread!).toEqualTypeOf<Pick<Thread, "thread_id" | "status">>();
    const [withValues] = await runtime.threads.search<Values, ["thread_id", "values"]>({ select: ["thread_id", "values"] });
    expectTypeOf(withValues!.values).toEqualTypeOf<Values>();

    const [assistant] = await runtime.assistants.search({ select: ["assistant_id", "name"] });
    expectTypeOf(assistant!).toEqualTypeOf<Pick<Assistant, "assistant_id" | "name">>();
    const page = await runtime.assistants.search({ select: ["graph_id"], includePagination: true });
    expectTypeOf(page.assistants).toEqualTypeOf<Pick<Assistant, "graph_id">[]>();
    expectTypeOf(page.next).toEqualTypeOf<string | null>();

    const [run] = await runtime.runs.list("t", { select: ["run_id", "status"] });
    expectTypeOf(run!).toEqualTypeOf<Pick<Run, "run_id" | "status">>();
    const [cron] = await runtime.crons.search({ select: ["cron_id"] });
    expectTypeOf(cron!).toEqualTypeOf<Pick<Cron, "cron_id">>();
  });

  it("a state select types the snapshot by its fields; values.<key> keeps those keys of values", async () => {
    const state = await runtime.threads.getState<Values, ["next", "values.count"]>("t", undefined, { select: ["next", "values.count"] });
    expectTypeOf(state.next).toEqualTypeOf<string[]>();
    expectTypeOf(state.values).toEqualTypeOf<{ count?: number }>();
    expectTypeOf(state).not.toHaveProperty("checkpoint");
    const [entry] = await runtime.threads.getHistory("t", { select: ["checkpoint_id", "metadata"] });
    expectTypeOf(entry!.checkpoint_id).toEqualTypeOf<string | null>();
    expectTypeOf(entry!).not.toHaveProperty("values");
  });

  it("a select of unknown members makes every field optional", async () => {
    const fields: ThreadStateSelectField[] = ["next"];
    const state = await runtime.threads.getState("t", undefined, { select: fields });
    expectTypeOf(state.next).toEqualTypeOf<string[] | undefined>();
    expectTypeOf(state.checkpoint).toEqualTypeOf<CheckpointConfig | null | undefined>();
  });

  it("graphdock/postgres takes a pg.Pool, declared without pg's types", () => {
    expectTypeOf<pg.Pool>().toMatchTypeOf<PostgresPool>();
    expectTypeOf<PostgresStoreOptions["pool"]>().toEqualTypeOf<PostgresPool | undefined>();
  });
});
