/**
 * The stored form of a run (schema 5, src/postgres/run-doc.ts): what the row's columns hold and
 * the kwargs at their defaults are left out of the document, and the run reads back exactly as
 * written, key order included.
 */
import { expect, it } from "vitest";
import { runDoc, runFromRow } from "../../src/postgres/run-doc.js";
import type { RunRecord } from "../../src/types.js";

const run = (kwargs: Record<string, unknown>, over: Partial<RunRecord> = {}): RunRecord => ({
  run_id: "r1",
  thread_id: "t1",
  assistant_id: "a1",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:01.000Z",
  status: "success",
  metadata: { owner: "ann" },
  kwargs,
  multitask_strategy: "reject",
  ...over,
});

// As the runtime writes them (src/runtime/admission.ts), `temporary` added at the end.
const defaults = () => ({
  input: null,
  command: null,
  config: { configurable: {} },
  context: {},
  stream_mode: ["values"],
  interrupt_before: null,
  interrupt_after: null,
  checkpoint_id: null,
  webhook: null,
  feedback_keys: null,
  subgraphs: false,
  resumable: false,
  on_disconnect: "continue",
  after_seconds: 0,
  temporary: false,
});

/** The row the store writes for `r`, as it reads back (json columns parsed). */
const row = (r: RunRecord) => ({
  run_id: r.run_id,
  thread_id: r.thread_id,
  assistant_id: r.assistant_id,
  created_at: r.created_at,
  status: r.status,
  updated_at: r.updated_at,
  doc: JSON.parse(JSON.stringify(runDoc(r))),
});

const exact = (a: unknown) => JSON.stringify(a);

it("stores a run created with default options as its input alone and reads it back exactly", () => {
  const r = run({ ...defaults(), input: { messages: [{ role: "user", content: "hi" }] } });
  const doc = runDoc(r);
  expect(doc).toEqual({ metadata: { owner: "ann" }, kw: { input: { messages: [{ role: "user", content: "hi" }] } } });
  expect(exact(runFromRow(row(r)))).toBe(exact(r));
});

it("keeps options that differ from the defaults, defaults that are missing, extra keys and marker-like values", () => {
  const kwargs: Record<string, unknown> = {
    ...defaults(),
    input: { "\u0001g": 1 },
    command: { "\u0001e": { resume: true } },
    stream_mode: ["values", "messages"],
    config: { configurable: { model: "x" }, tags: ["a"] },
    future_option: { "\u0001x": 2 },
  };
  delete kwargs.webhook;
  const r = run(kwargs, { execution: { graph_id: "g", config: { configurable: {} }, context: null, temporary: false, not_before: 0 } });
  const back = runFromRow(row(r));
  expect(back).toEqual(r);
  expect(Object.keys(back.kwargs)).toEqual(Object.keys(kwargs));
  expect(exact(back)).toBe(exact(r));
});

it("reads back kwargs that are not an object, and documents written before schema 5 (the columns win)", () => {
  const odd = run({ ...defaults() }, {});
  (odd as { kwargs: unknown }).kwargs = null;
  expect(runFromRow(row(odd))).toEqual(odd);
  // A schema-4 row: the whole record in the document; a claim set status and updated_at on the row.
  const old = run({ ...defaults(), input: { n: 1 } }, { status: "pending" });
  expect(runFromRow({ ...row(old), status: "running", updated_at: "2026-01-02", doc: JSON.parse(JSON.stringify(old)) })).toEqual({
    ...old,
    status: "running",
    updated_at: "2026-01-02",
  });
  expect(runFromRow({ ...row(old), updated_at: null, doc: JSON.parse(JSON.stringify(old)) })).toEqual(old);
});

it("does not share default objects between the runs it reads", () => {
  const a = runFromRow(row(run(defaults())));
  (a.kwargs.config as { configurable: Record<string, unknown> }).configurable.x = 1;
  expect(runFromRow(row(run(defaults()))).kwargs.config).toEqual({ configurable: {} });
});

it("leaves out empty metadata and the reject strategy where the runtime writes them, and reads every other arrangement back exactly", () => {
  const input = { messages: [{ role: "user", content: "hi" }] };
  const plain = run({ ...defaults(), input }, { metadata: {} });
  expect(runDoc(plain)).toEqual({ kw: { input } });
  expect(exact(runFromRow(row(plain)))).toBe(exact(plain));
  const variants: RunRecord[] = [
    run({ ...defaults(), input }, { metadata: {}, multitask_strategy: "interrupt" }),
    run({ ...defaults(), input }, { metadata: {}, multitask_strategy: null }),
    // Defaults away from their places: kept.
    { ...plain, multitask_strategy: "reject", metadata: {}, kwargs: plain.kwargs } as RunRecord,
  ];
  const reordered: Record<string, unknown> = { ...plain };
  delete reordered.metadata;
  delete reordered.kwargs;
  const moved = { ...reordered, kwargs: plain.kwargs, metadata: {} } as unknown as RunRecord;
  const noStrategy = { ...plain } as Partial<RunRecord>;
  delete noStrategy.multitask_strategy;
  const noMetadata = { ...plain } as Partial<RunRecord>;
  delete noMetadata.metadata;
  for (const r of [...variants, moved, noStrategy as RunRecord, noMetadata as RunRecord]) expect(exact(runFromRow(row(r)))).toBe(exact(r));
  expect(runDoc(moved)).toHaveProperty("metadata", {});
});
