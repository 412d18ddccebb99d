/**
 * Compact rows (schema 5): a chat through the runtime stores each message's text once (in its
 * thread's list log), while history, state and runs read back as on the memory store; checkpoint
 * metadata that PostgreSQL's jsonb cannot hold is refused, leaving the store as it was.
 */
import pg from "pg";
import { afterEach, expect, inject, it } from "vitest";
import { echo } from "../../examples/node/agent.js";
import { createRuntime, memoryStore, type Runtime } from "../../src/index.js";
import { GraphdockError } from "../../src/errors.js";
import { postgresStore } from "../../src/postgres/index.js";
import { uuid6Millis } from "../../src/postgres/ts.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";

const url = inject("pgUrl");
const runtimes: Runtime[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()));
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

/** A chat of `turns` turns; what the runtime answers about it, ids and times left out. */
async function chat(rt: Runtime, turns: number) {
  const t = await rt.threads.create({ threadId: "00000000-0000-4000-8000-000000000001" });
  for (let i = 0; i < turns; i++) {
    await rt.runs.wait(t.thread_id, "echo", { input: { messages: [{ role: "user", content: `turn ${i}: a message worth storing once` }] } });
  }
  const strip = (v: unknown): unknown =>
    JSON.parse(JSON.stringify(v), (k, x) => (["id", "checkpoint_id", "parent_checkpoint_id", "run_id", "created_at", "updated_at", "ts", "thread_ts", "task_id"].includes(k) || /^[0-9a-f-]{36}$/.test(k) ? undefined : x));
  const history = await rt.threads.getHistory(t.thread_id, { limit: 100 });
  const state = await rt.threads.getState(t.thread_id);
  const runs = await rt.runs.list(t.thread_id, { limit: 100 });
  return { threadId: t.thread_id, history: strip(history), state: strip(state), runs: strip(runs) };
}

it("stores each message of a chat once and reads history, state and runs back as the memory store does", async () => {
  const schema = `compact_${process.pid}`;
  const pgRt = await createRuntime({ graphs: { echo }, store: postgresStore({ connectionString: url, schema }) });
  runtimes.push(pgRt);
  const memRt = await createRuntime({ graphs: { echo }, store: memoryStore() });
  runtimes.push(memRt);
  const onPg = await chat(pgRt, 4);
  const onMemory = await chat(memRt, 4);
  expect(onPg.history).toEqual(onMemory.history);
  expect(onPg.state).toEqual(onMemory.state);
  expect(onPg.runs).toEqual(onMemory.runs);
  // The input step's message is in its checkpoint's __start__ channel, metadata writes and
  // pending writes; the answer in the next checkpoint's metadata writes and its parent's pending
  // writes: all references to the list log.
  expect(JSON.stringify(onPg.history)).toContain("turn 2: a message worth storing once");
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  const s = `"${schema}"`;
  const count = async (sql: string) => Number((await c.query<{ n: string }>(sql, ["%turn 2: a message%"])).rows[0]!.n);
  expect(await count(`SELECT count(*) AS n FROM ${s}.checkpoints WHERE metadata::text LIKE $1 OR checkpoint::text LIKE $1 OR writes::text LIKE $1`)).toBe(0);
  expect(await count(`SELECT count(*) AS n FROM ${s}.threads WHERE vals::text LIKE $1`)).toBe(0);
  // The user's message and its echo, once each (a log's chunks may hold several messages).
  const occurrences = await c.query<{ n: number }>(
    `SELECT COALESCE(sum((length(items::text) - length(replace(items::text, $1, ''))) / length($1)), 0)::int AS n FROM ${s}.cp_chunks`,
    ["turn 2: a message"],
  );
  expect(occurrences.rows[0]!.n).toBe(2);
  // Appends extend a log's last chunk: 8 messages in one chunk.
  expect(await count(`SELECT count(*) AS n FROM ${s}.cp_chunks WHERE $1::text IS NOT NULL`)).toBe(1);
  // Every parent is named by its row's seq, and read back as the id of the checkpoint before it.
  const parents = await c.query<{ by_id: number; none: number }>(
    `SELECT count(parent_id)::int AS by_id, count(*) FILTER (WHERE parent_id IS NULL AND parent_seq IS NULL)::int AS none FROM ${s}.checkpoints`,
  );
  expect(parents.rows[0]).toEqual({ by_id: 0, none: 1 });
  const history = await pgRt.threads.getHistory(onPg.threadId, { limit: 100 });
  expect(history).toHaveLength(12);
  history.forEach((h, i) => expect(h.parent_checkpoint?.checkpoint_id ?? null).toBe(history[i + 1]?.checkpoint.checkpoint_id ?? null));
  // Each checkpoint's ts (its state's created_at), stored as an offset from its id's time, reads back as the time its id was made (or a millisecond after).
  for (const h of history) {
    const at = Date.parse(h.created_at!);
    expect(new Date(at).toISOString()).toBe(h.created_at);
    expect(at - uuid6Millis(h.checkpoint.checkpoint_id!)!).toBeGreaterThanOrEqual(0);
    expect(at - uuid6Millis(h.checkpoint.checkpoint_id!)!).toBeLessThan(1000);
  }
  // The run's document: its input, and no field its columns hold.
  const { rows } = await c.query<{ doc: Record<string, unknown> }>(`SELECT doc FROM ${s}.runs WHERE doc::text LIKE '%turn 2:%'`);
  expect(rows).toHaveLength(1);
  expect(Object.keys(rows[0]!.doc).filter((k) => ["run_id", "thread_id", "assistant_id", "created_at", "status", "updated_at", "kwargs"].includes(k))).toEqual([]);
});

it("refuses checkpoint metadata jsonb cannot hold (\\u0000) and leaves the store as it was", async () => {
  const store = postgresStore({ connectionString: url, schema: `compact0_${process.pid}` });
  await store.open();
  try {
    const cp = (id: string, metadata: StoredCheckpoint["metadata"]): StoredCheckpoint => ({
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint: { v: 1, id, ts: "2026-01-01T00:00:00.000Z", channel_values: { messages: [{ id: "m1", text: "a\u0000b" }] }, channel_versions: {}, versions_seen: {} },
      metadata,
      parent_checkpoint_id: null,
      pending_writes: [],
    });
    const good = cp("cp1", { source: "input", step: -1, parents: {} });
    await store.commit([{ op: "checkpoint.put", checkpoint: good }]);
    const err = await store.commit([{ op: "checkpoint.put", checkpoint: cp("cp2", { source: "loop", step: 0, parents: {}, note: "a\u0000b" }) }]).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input"), String(err)).toBe(true);
    expect(await store.listCheckpoints("t")).toEqual([good]);
    expect(await store.listCheckpoints("t", { filter: { source: "input" } })).toEqual([good]);
  } finally {
    await store.close();
  }
});

it("keeps pending writes in order when store instances (processes) write them on one checkpoint, concurrently too", async () => {
  const schema = `compactw_${process.pid}`;
  const [a, b] = [postgresStore({ connectionString: url, schema }), postgresStore({ connectionString: url, schema })];
  await a.open();
  await b.open();
  try {
    const cp: StoredCheckpoint = {
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint: { v: 1, id: "cp1", ts: "2026-01-01T00:00:00.000Z", channel_values: { messages: [{ id: "m1", text: "hi" }] }, channel_versions: {}, versions_seen: {} },
      metadata: { source: "loop", step: 0, parents: {} },
      parent_checkpoint_id: null,
      pending_writes: [["t0", "x", 0]],
    };
    await a.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const put = (s: typeof a, task: string, value: unknown) =>
      s.commit([{ op: "writes.put", thread_id: "t", checkpoint_id: "cp1", task_id: task, writes: [[task, "x", value], [task, "y", { id: "m1", text: "hi" }]] }]);
    // `a` knows the row as it wrote it; `b` does not; each then sees the other's writes.
    await put(b, "t1", 1);
    await put(a, "t2", 2);
    await put(b, "t1", 3);
    await put(a, "t0", 4);
    const expected = [
      ["t2", "x", 2],
      ["t2", "y", { id: "m1", text: "hi" }],
      ["t1", "x", 3],
      ["t1", "y", { id: "m1", text: "hi" }],
      ["t0", "x", 4],
      ["t0", "y", { id: "m1", text: "hi" }],
    ];
    expect((await a.getCheckpoint({ thread_id: "t" }))!.pending_writes).toEqual(expected);
    expect((await b.getCheckpoint({ thread_id: "t" }))!.pending_writes).toEqual(expected);
    // Twenty tasks at once from both instances: every task's writes land, none lost.
    await Promise.all(Array.from({ length: 20 }, (_, i) => put(i % 2 ? a : b, `p${i}`, i)));
    const all = (await a.getCheckpoint({ thread_id: "t" }))!.pending_writes;
    expect(all).toHaveLength(expected.length + 40);
    for (let i = 0; i < 20; i++) expect(all.filter((w) => w[0] === `p${i}`)).toEqual([[`p${i}`, "x", i], [`p${i}`, "y", { id: "m1", text: "hi" }]]);
    // A missing checkpoint: not_found, nothing written.
    const err = await b.commit([{ op: "writes.put", thread_id: "t", checkpoint_id: "nope", task_id: "t9", writes: [["t9", "x", 1]] }]).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "not_found"), String(err)).toBe(true);
  } finally {
    await a.close();
    await b.close();
  }
});

it("stores a long chat's steady rows without their versions, source or run id text, and a short chat with two bases", async () => {
  const schema = `compact6_${process.pid}`;
  // A clock that steps back a few milliseconds now and then: ids stay increasing, so a checkpoint's `ts`
  // is then a little off its id's time (as on a busy machine), which must not start bases of new shapes.
  let tick = 0;
  const clock = () => Date.now() + 3 - (tick++ % 4);
  const pgRt = await createRuntime({ graphs: { echo }, store: postgresStore({ connectionString: url, schema }), clock });
  runtimes.push(pgRt);
  const memRt = await createRuntime({ graphs: { echo }, store: memoryStore() });
  runtimes.push(memRt);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  const s = `"${schema}"`;
  const short = await chat(pgRt, 1);
  expect((await c.query(`SELECT count(*)::int AS n FROM ${s}.cp_meta`)).rows[0].n).toBeLessThanOrEqual(2);
  await pgRt.threads.delete(short.threadId);
  const onPg = await chat(pgRt, 14);
  const onMemory = await chat(memRt, 14);
  expect(onPg.history).toEqual(onMemory.history);
  expect(onPg.state).toEqual(onMemory.state);
  // The rows of the last five turns (after the 24 rows a chain takes before bases per shape, and
  // one turn making them): the versions less the step match their shape's base (an input step's
  // row stores only its input, a reference); the source is its base's; the run id is in its column.
  const { rows } = await c.query<{ metadata: Record<string, unknown>; checkpoint: unknown[]; vrel: boolean; run_id: string | null }>(
    `SELECT metadata, checkpoint, vrel, run_id::text AS run_id FROM ${s}.checkpoints ORDER BY seq OFFSET 27`,
  );
  expect(rows).toHaveLength(15);
  expect(rows.filter((r) => r.metadata.writes === undefined)).toHaveLength(5);
  for (const r of rows) {
    expect(r.vrel).toBe(true);
    // `writes: null` (the step after an input) is its base's too.
    expect(Object.keys(r.metadata).sort()).toEqual(r.metadata.writes === undefined ? ["step"] : ["step", "writes"]);
    expect(r.checkpoint.length).toBeLessThanOrEqual(2);
    expect(JSON.stringify(r.checkpoint)).not.toContain("versions");
    expect(r.run_id).toMatch(/^[0-9a-f-]{36}$/);
  }
  // The history's run ids are the runs' (read back from the column).
  const runs = await pgRt.runs.list(onPg.threadId, { limit: 100 });
  const history = await pgRt.threads.getHistory(onPg.threadId, { limit: 3 });
  for (const h of history) expect(h.metadata?.run_id).toBe(runs[0]!.run_id);
});
