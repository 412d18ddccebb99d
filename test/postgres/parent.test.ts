/**
 * Schema 5 names a checkpoint's parent by the parent row's seq and stores `ts` against the id:
 * what is put reads back exactly (ids and times included), also after parents are deleted, from
 * another store instance (no cache), and for parents that were never stored.
 */
import { expect, it } from "vitest";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import type { StoredCheckpoint } from "../../src/persistence/types.js";
import { pgTestStores } from "./stores.js";

const { open, sql } = pgTestStores();

const cp = (id: string, parent: string | null, step: number, ts = new Date().toISOString()): StoredCheckpoint => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint: { v: 1, id, ts, channel_values: { n: step }, channel_versions: { n: step + 1 }, versions_seen: { inc: { n: step } } },
  metadata: { source: "loop", step, parents: {} },
  parent_checkpoint_id: parent,
  pending_writes: [],
});

it("reads parents and ts back exactly, after deletes and from another instance", async () => {
  const schema = `parent_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  const ids = Array.from({ length: 6 }, () => uuid6(-1));
  const put: StoredCheckpoint[] = [
    cp(ids[0]!, null, 0),
    cp(ids[1]!, ids[0]!, 1),
    cp(ids[2]!, ids[1]!, 2, "2024-05-01T10:00:00+02:00"),
    cp(ids[3]!, "never-stored", 3),
    cp(ids[4]!, ids[2]!, 4),
    cp("plain-id", ids[4]!, 5, "not a time"),
    cp(ids[5]!, "plain-id", 6),
  ];
  for (const c of put) await a.commit([{ op: "checkpoint.put", checkpoint: c }]);
  const byId = (list: StoredCheckpoint[]) => Object.fromEntries(list.map((c) => [c.checkpoint.id, c]));
  expect(byId(await b.listCheckpoints("t"))).toEqual(byId(put));
  for (const c of put) expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: c.checkpoint.id })).toEqual(c);

  // Deleting parents (one alone, then two together) leaves their children naming them.
  await b.commit([{ op: "checkpoint.delete", thread_id: "t", checkpoint_ids: [ids[1]!] }]);
  await a.commit([{ op: "checkpoint.delete", thread_id: "t", checkpoint_ids: [ids[2]!, ids[4]!] }]);
  const left = put.filter((c) => ![ids[1], ids[2], ids[4]].includes(c.checkpoint.id));
  expect(byId(await a.listCheckpoints("t"))).toEqual(byId(left));
  expect((await a.getCheckpoint({ thread_id: "t", checkpoint_id: "plain-id" }))?.parent_checkpoint_id).toBe(ids[4]);
  expect((await b.getCheckpoint({ thread_id: "t", checkpoint_id: ids[5]! }))?.parent_checkpoint_id).toBe("plain-id");

  // A replaced checkpoint keeps its place; its child still names it.
  const again = cp(ids[0]!, null, 0);
  await a.commit([{ op: "checkpoint.put", checkpoint: again }]);
  const child = cp(uuid6(-1), ids[0]!, 9);
  await b.commit([{ op: "checkpoint.put", checkpoint: child }]);
  await a.commit([{ op: "checkpoint.put", checkpoint: { ...again, metadata: { ...again.metadata, step: 7 } } }]);
  expect(await a.getCheckpoint({ thread_id: "t", checkpoint_id: child.checkpoint.id })).toEqual(child);

  // The engine's step commit: a task's writes on the parent and the child, in one commit (one
  // statement from the instance that put the parent).
  const step = cp(uuid6(-1), child.checkpoint.id, 10);
  await b.commit([
    { op: "writes.put", thread_id: "t", checkpoint_id: child.checkpoint.id, task_id: "task1", writes: [["task1", "n", 10]] },
    { op: "checkpoint.put", checkpoint: step },
  ]);
  expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: step.checkpoint.id })).toEqual(step);
  expect((await b.getCheckpoint({ thread_id: "t", checkpoint_id: child.checkpoint.id }))?.pending_writes).toEqual([["task1", "n", 10]]);

  // Parents present when put are stored as 8-byte seqs, the others as their ids.
  const c = await sql();
  const { rows } = await c.query<{ id: string; parent_id: string | null; by_seq: boolean }>(
    // Keys are bytes (schema 6, src/postgres/cp-keys.ts), read as text through the schema's function.
    `SELECT "${schema}".cp_key_text(checkpoint_id) AS id, "${schema}".cp_key_text(parent_id) AS parent_id, parent_seq IS NOT NULL AS by_seq
       FROM "${schema}".checkpoints WHERE "${schema}".cp_key_text(checkpoint_id) = ANY($1)`,
    [[ids[3]!, ids[5]!, child.checkpoint.id, step.checkpoint.id]],
  );
  expect(Object.fromEntries(rows.map((r) => [r.id, [r.parent_id, r.by_seq]]))).toEqual({
    [ids[3]!]: ["never-stored", false],
    [ids[5]!]: [null, true],
    [child.checkpoint.id]: [null, true],
    [step.checkpoint.id]: [null, true],
  });
});

it("stores a row's pending writes with each task's id once when its writes are together, and reads any order back exactly", async () => {
  const schema = `pwrites_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  const together = { ...cp(uuid6(-1), null, 0), pending_writes: [["t1", "a", 1], ["t1", "b", { id: "m" }], ["t2", "a", null]] as StoredCheckpoint["pending_writes"] };
  const apart = { ...cp(uuid6(-1), null, 1), pending_writes: [["t1", "a", 1], ["t2", "b", 2], ["t1", "c", 3]] as StoredCheckpoint["pending_writes"] };
  for (const c of [together, apart]) await a.commit([{ op: "checkpoint.put", checkpoint: c }]);
  for (const c of [together, apart]) expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: c.checkpoint.id })).toEqual(c);
  const c = await sql();
  const { rows } = await c.query<{ id: string; writes: string }>(`SELECT "${schema}".cp_key_text(checkpoint_id) AS id, writes::text AS writes FROM "${schema}".checkpoints`);
  const stored = Object.fromEntries(rows.map((r) => [r.id, r.writes]));
  expect(stored[together.checkpoint.id]).toBe(`{"t1":[["a",1],["b",{"id":"m"}]],"t2":[["a",null]]}`);
  expect(stored[apart.checkpoint.id]).toBe(JSON.stringify(apart.pending_writes));
  // A task's writes from another instance (merged in SQL) and from this one: they replace that task's and go last.
  await b.commit([{ op: "writes.put", thread_id: "t", checkpoint_id: together.checkpoint.id, task_id: "t1", writes: [["t1", "z", 9]] }]);
  await a.commit([{ op: "writes.put", thread_id: "t", checkpoint_id: together.checkpoint.id, task_id: "t3", writes: [["t3", "y", 8], ["t3", "x", 7]] }]);
  await b.commit([{ op: "writes.put", thread_id: "t", checkpoint_id: apart.checkpoint.id, task_id: "t2", writes: [["t2", "d", 4]] }]);
  const expected = [["t2", "a", null], ["t1", "z", 9], ["t3", "y", 8], ["t3", "x", 7]];
  for (const s of [a, b]) {
    expect((await s.getCheckpoint({ thread_id: "t", checkpoint_id: together.checkpoint.id }))?.pending_writes).toEqual(expected);
    expect((await s.getCheckpoint({ thread_id: "t", checkpoint_id: apart.checkpoint.id }))?.pending_writes).toEqual([["t1", "a", 1], ["t1", "c", 3], ["t2", "d", 4]]);
  }
});
