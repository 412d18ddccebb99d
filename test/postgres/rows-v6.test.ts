/**
 * Checkpoint rows of schema 6: versions stored less the step (src/postgres/cp-versions.ts) and the
 * run id in a uuid column (src/postgres/cp-run-id.ts) only where they read back exactly. Every
 * kind of version, step and run id a checkpointer may write reads back as written, from another
 * store instance, and metadata filters (run id included) select the same checkpoints.
 */
import { expect, it } from "vitest";
import { pgTestStores } from "./stores.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";

const { open, sql } = pgTestStores({ max: 3 });

const uuid = (i: number) => `0192f0d0-0000-7000-8000-${String(i).padStart(12, "0")}`;

/** Checkpoint `i` of a chain; `v` its versions, `meta` its metadata. */
const cp = (i: number, v: Record<string, number>, meta: Record<string, unknown>): StoredCheckpoint => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint: { v: 1, id: `cp${i}`, ts: "2026-01-01T00:00:00.000Z", channel_values: { n: i }, channel_versions: v, versions_seen: { node: v } },
  // Metadata as an untyped caller (a LangGraph checkpointer over JSON) may send it: any step, or none.
  metadata: JSON.parse(JSON.stringify({ graph_id: "g", parents: {}, ...meta })),
  parent_checkpoint_id: i ? `cp${i - 1}` : null,
  pending_writes: [],
});

it("reads back every kind of version, step and run id exactly, and filters on the run id", async () => {
  const schema = `rows6_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  const puts = [
    // Integer versions and a step: stored relative.
    cp(0, { n: 1, x: 1 }, { run_id: uuid(1), source: "input", step: -1 }),
    cp(1, { n: 2, x: 1 }, { run_id: uuid(1), source: "loop", step: 0 }),
    cp(2, { n: 3, x: 2 }, { run_id: uuid(2), source: "loop", step: 1 }),
    // String versions (the LangGraph checkpointers'), a float, a huge integer, no step, a step that is not an integer.
    cp(3, JSON.parse(`{"n": "00000000000000000000000000000004.0.5", "x": 2}`), { run_id: uuid(3), source: "loop", step: 2 }),
    cp(4, { n: 4.5, x: 2 }, { run_id: uuid(3), source: "loop", step: 3 }),
    cp(5, { n: Number.MAX_SAFE_INTEGER, x: 2 }, { run_id: uuid(3), source: "loop", step: -5 }),
    cp(6, { n: 7, x: 2 }, { run_id: uuid(4), source: "loop" }),
    cp(7, { n: 8, x: 2 }, { run_id: uuid(4), source: "loop", step: 1.5 }),
    cp(8, { n: 9, x: 2 }, { run_id: uuid(4), source: "loop", step: "7" }),
    // Run ids the column cannot hold as they are: upper case, not a UUID, not a string; none at all.
    cp(9, { n: 10, x: 2 }, { run_id: uuid(5).toUpperCase(), source: "loop", step: 8 }),
    cp(10, { n: 11, x: 2 }, { run_id: "run-6", source: "loop", step: 9 }),
    cp(11, { n: 12, x: 2 }, { run_id: 7, source: "loop", step: 10 }),
    cp(12, { n: 13, x: 2 }, { source: "loop", step: 11 }),
    cp(13, { n: 14, x: 2 }, { run_id: uuid(8), source: "loop", step: 12 }),
  ];
  for (const p of puts) await a.commit([{ op: "checkpoint.put", checkpoint: p }]);
  for (const p of puts) expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: p.checkpoint.id })).toEqual(p);
  expect(await b.listCheckpoints("t")).toEqual([...puts].reverse());
  const ids = async (filter: Record<string, unknown>, limit?: number) => (await b.listCheckpoints("t", { filter, limit })).map((x) => x.checkpoint.id);
  expect(await ids({ run_id: uuid(1) })).toEqual(["cp1", "cp0"]);
  expect(await ids({ run_id: uuid(3) })).toEqual(["cp5", "cp4", "cp3"]);
  expect(await ids({ run_id: uuid(3) }, 1)).toEqual(["cp5"]);
  expect(await ids({ run_id: uuid(5).toUpperCase() })).toEqual(["cp9"]);
  expect(await ids({ run_id: uuid(5) })).toEqual([]);
  expect(await ids({ run_id: "run-6" })).toEqual(["cp10"]);
  expect(await ids({ run_id: 7 })).toEqual(["cp11"]);
  expect(await ids({ run_id: uuid(8), graph_id: "g", source: "loop" })).toEqual(["cp13"]);
  expect(await ids({ source: "input" })).toEqual(["cp0"]);
  // Some rows did store their versions relative and their run id in the column.
  const c = await sql();
  const { rows } = await c.query<{ id: string; vrel: boolean; run: string | null }>(`SELECT "${schema}".cp_key_text(checkpoint_id) AS id, vrel, run_id::text AS run FROM "${schema}".checkpoints ORDER BY seq`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(byId.get("cp2")).toEqual({ id: "cp2", vrel: true, run: uuid(2) });
  // Strings stay as they are (the numbers beside them move); a float, an unsafe difference or no integer step: as they are.
  expect(byId.get("cp3")!.vrel).toBe(true);
  for (const id of ["cp4", "cp5", "cp6", "cp7", "cp8"]) expect(byId.get(id)!.vrel).toBe(false);
  for (const id of ["cp9", "cp10", "cp11", "cp12"]) expect(byId.get(id)!.run).toBeNull();
});

it("keeps apart and reads back checkpoint keys of every form: UUIDs, upper-case UUIDs, 16-byte and other ids", async () => {
  const schema = `keys6_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  const lower = "0192f0d0-0000-7000-8000-0000000000ff";
  const threads = [lower, lower.toUpperCase(), "sixteen-byte-id!", "fifteen-byte-id", "seventeen-byte-id", "données-ü", "t"];
  const ids = [lower, lower.toUpperCase(), "0123456789abcdef", "x", "ünïcødé-ïd-16b"];
  const put = (thread: string, id: string, parent: string | null, i: number): StoredCheckpoint => ({
    thread_id: thread,
    checkpoint_ns: "",
    checkpoint: { v: 1, id, ts: "2026-01-01T00:00:00.000Z", channel_values: { n: i }, channel_versions: { n: i + 1 }, versions_seen: {} },
    metadata: { source: "loop", step: i, parents: {}, thread },
    parent_checkpoint_id: parent,
    pending_writes: [],
  });
  const all: StoredCheckpoint[] = [];
  for (const thread of threads) {
    let parent: string | null = null;
    for (const [i, id] of ids.entries()) {
      const p = put(thread, id, parent, i);
      await a.commit([{ op: "checkpoint.put", checkpoint: p }]);
      all.push(p);
      parent = id;
    }
  }
  for (const p of all) expect(await b.getCheckpoint({ thread_id: p.thread_id, checkpoint_id: p.checkpoint.id })).toEqual(p);
  for (const thread of threads) {
    expect(await b.listCheckpoints(thread)).toEqual(all.filter((p) => p.thread_id === thread).reverse());
    expect(await b.listCheckpoints(thread, { before: ids[3] })).toEqual(all.filter((p) => p.thread_id === thread).slice(0, 3).reverse());
  }
  // A delete gives the children of what it removes their parent's id (as bytes), read back as text.
  await a.commit([{ op: "checkpoint.delete", thread_id: "sixteen-byte-id!", checkpoint_ns: "", checkpoint_ids: [ids[2]!] }]);
  expect(await b.getCheckpoint({ thread_id: "sixteen-byte-id!", checkpoint_id: ids[2] })).toBeUndefined();
  expect((await b.getCheckpoint({ thread_id: "sixteen-byte-id!", checkpoint_id: ids[3] }))!.parent_checkpoint_id).toBe(ids[2]);
  // A lower-case UUID takes 16 bytes; the others their text, a 16-byte one with a zero byte after it.
  const c = await sql();
  const { rows } = await c.query<{ n: number }>(
    `SELECT octet_length(checkpoint_id) AS n FROM "${schema}".checkpoints WHERE thread_id = "${schema}".cp_key($1) ORDER BY seq`,
    [lower],
  );
  expect(rows.map((r) => r.n)).toEqual([16, 36, 17, 1, Buffer.byteLength(ids[4]!)]);
  await a.commit([{ op: "thread.delete", thread_id: lower }]);
  expect(await b.listCheckpoints(lower)).toEqual([]);
  expect(await b.listCheckpoints(lower.toUpperCase())).toHaveLength(ids.length);
});
