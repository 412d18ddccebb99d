/**
 * Schema migration (D22): a database written by schema version 1, 4 or 5 opens under the current
 * version, its data reads back as it was written, and new writes build on it.
 */
import pg from "pg";
import { afterEach, expect, inject, it } from "vitest";
import { PG_SCHEMA_VERSION, postgresStore, type PostgresStore } from "../../src/postgres/index.js";
import { migrate } from "../../src/postgres/schema.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";
import { diffLeaves } from "../../src/persistence/indexeddb/rows.js";

const url = inject("pgUrl");
const opened: PostgresStore[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()));
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** Creates `schema` as schema version `version` created it; a client for writing its rows by hand. */
async function atVersion(schema: string, version: number): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  clients.push(c);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const client = await pool.connect();
  try {
    await migrate(client, schema, version);
  } finally {
    client.release();
    await pool.end();
  }
  return c;
}

const msg = (i: number) => ({ id: `m${i}`, type: i % 2 ? "ai" : "human", content: `message ${i}` });

it("opens a schema-1 database: threads, checkpoints, writes, runs and leases read back, and new checkpoints extend the old ones", async () => {
  const schema = `mig_${process.pid}`;
  const c = await atVersion(schema, 1);
  const s = `"${schema}"`;
  expect((await c.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)).rows).toEqual([{ value: "1" }]);
  // What schema 1 stored: the thread's values inline, the checkpoint with its id inside and plain
  // metadata, its list channel as a prefix of a log, a pending write, a queued run, a lease.
  const values = { messages: [msg(0), msg(1)], topic: "weather" };
  await c.query(
    `INSERT INTO ${s}.threads (thread_id, status, created_at, updated_at, state_updated_at, metadata, vals, doc, revision)
     VALUES ('t1', 'busy', '2026-01-01', '2026-01-01', '2026-01-01', '{"owner": "ann"}', $1, $2, nextval('${s}.revisions'))`,
    [JSON.stringify(values), JSON.stringify({ thread_id: "t1", status: "busy", created_at: "2026-01-01", updated_at: "2026-01-01", state_updated_at: "2026-01-01", config: {}, interrupts: {} })],
  );
  await c.query(`INSERT INTO ${s}.cp_logs (log_id, thread_id, len) VALUES (nextval('${s}.cp_log_ids'), 't1', 2)`);
  const log = Number((await c.query(`SELECT log_id FROM ${s}.cp_logs`)).rows[0].log_id);
  await c.query(`INSERT INTO ${s}.cp_chunks (thread_id, log_id, start, items) VALUES ('t1', $1, 0, $2)`, [log, JSON.stringify(values.messages)]);
  const cp1: StoredCheckpoint = {
    thread_id: "t1",
    checkpoint_ns: "",
    checkpoint: { v: 1, id: "cp1", ts: "2026-01-01T00:00:00.000Z", channel_values: values, channel_versions: { messages: 2, topic: 1 }, versions_seen: { model: { messages: 1 } } },
    metadata: { source: "loop", step: 1, parents: {}, writes: { model: { messages: [msg(1)] } }, run_id: "r0" },
    parent_checkpoint_id: null,
    pending_writes: [["task1", "messages", [msg(2)]]],
  };
  await c.query(
    `INSERT INTO ${s}.checkpoints (thread_id, ns, checkpoint_id, seq, parent_id, metadata, checkpoint, refs)
     VALUES ('t1', '', 'cp1', nextval('${s}.cp_seq'), NULL, $1, $2, $3)`,
    [JSON.stringify(cp1.metadata), JSON.stringify({ ...cp1.checkpoint, channel_values: { messages: null, topic: "weather" } }), JSON.stringify({ messages: [log, 2] })],
  );
  await c.query(
    `INSERT INTO ${s}.cp_writes (thread_id, ns, checkpoint_id, task_id, seq, idx, channel, value) VALUES ('t1', '', 'cp1', 'task1', nextval('${s}.write_seq'), 1, 'messages', $1)`,
    [JSON.stringify([msg(2)])],
  );
  const run = {
    run_id: "r1",
    thread_id: "t1",
    assistant_id: "a",
    created_at: "2026-01-01",
    updated_at: "2026-01-01",
    status: "pending",
    metadata: {},
    kwargs: {},
    multitask_strategy: "enqueue",
    execution: { graph_id: "g", config: { configurable: {} }, context: null, temporary: false, not_before: 0 },
  };
  await c.query(
    `INSERT INTO ${s}.runs (run_id, thread_id, assistant_id, status, created_at, queue_seq, doc) VALUES ('r1', 't1', 'a', 'pending', '2026-01-01', nextval('${s}.run_queue'), $1)`,
    [JSON.stringify(run)],
  );
  const live = Date.now() + 60_000;
  await c.query(`INSERT INTO ${s}.leases (key, owner, expires_at, data) VALUES ('thread:t2', 'old', $1, '{}'), ('thread:t1', 'gone', 1000, '{}')`, [live]);

  const store = postgresStore({ connectionString: url, schema });
  opened.push(store);
  await store.open();
  expect((await c.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)).rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);

  expect(await store.getThread("t1")).toMatchObject({ status: "busy", metadata: { owner: "ann" }, values });
  expect(await store.queryThreads({ values: { topic: "weather" } })).toHaveLength(1);
  expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(cp1);
  expect(await store.listCheckpoints("t1", { filter: { run_id: "r0" } })).toEqual([cp1]);
  expect(await store.getRun("r1")).toEqual(run);
  // Old leases are judged at the database's clock from their expiry on the system clock.
  expect((await store.expiredLeases("thread:", Date.now())).map((l) => l.key)).toEqual(["thread:t1"]);
  expect((await store.getLease("thread:t2"))!.expires_at).toBeGreaterThan(Date.now());

  // New writes build on the old rows: a child checkpoint extends the old log; the run is claimed.
  const cp2: StoredCheckpoint = {
    ...cp1,
    checkpoint: { ...cp1.checkpoint, id: "cp2", channel_values: { ...values, messages: [...values.messages, msg(2)] }, channel_versions: { messages: 3, topic: 1 } },
    metadata: { source: "loop", step: 2, parents: {}, writes: { task1: { messages: [msg(2)] } }, run_id: "r1" },
    parent_checkpoint_id: "cp1",
    pending_writes: [],
  };
  await store.commit([{ op: "checkpoint.put", checkpoint: cp2 }]);
  const other = postgresStore({ connectionString: url, schema });
  opened.push(other);
  await other.open();
  expect(await other.listCheckpoints("t1")).toEqual([cp2, cp1]);
  expect(await other.claimRun({ thread_id: "t1", key: "thread:t1", owner: "me", now: Date.now(), expires_at: Date.now() + 30_000, updated_at: "2026-01-02", graph_ids: ["g"] })).toMatchObject({
    outcome: "claimed",
    run: { run_id: "r1", status: "running", updated_at: "2026-01-02" },
  });
});

it("opens a schema-4 database: shared checkpoint rows on a base, shared pending writes, chunks keyed by thread, whole run documents", async () => {
  const schema = `mig4_${process.pid}`;
  const c = await atVersion(schema, 4);
  const s = `"${schema}"`;
  // What schema 4 stored for a checkpoint of a chat: its messages in a log, its metadata as the
  // keys that differ from a base (and a reference to the message its step wrote), its checkpoint
  // as the leaves that differ from the base's, its pending writes one row each, shared.
  const m = [msg(0), msg(1)];
  await c.query(`INSERT INTO ${s}.cp_logs (log_id, thread_id, len) VALUES (7, 't1', 2)`);
  await c.query(`INSERT INTO ${s}.cp_chunks (thread_id, log_id, start, items) VALUES ('t1', 7, 0, $1)`, [JSON.stringify(m)]);
  const baseCp = { v: 1, ts: "2026-01-01T00:00:00.000Z", channel_values: { messages: null, topic: "weather" }, channel_versions: { messages: 2, topic: 1 }, versions_seen: {} };
  await c.query(`INSERT INTO ${s}.cp_meta (thread_id, base_id, record, cp) VALUES ('t1', 3, $1, $2)`, [
    JSON.stringify({ run_id: "r0", graph_id: "g", parents: {} }),
    JSON.stringify(baseCp),
  ]);
  const own = { step: 1, source: "loop", writes: { model: { messages: [{ "\u0001r": [7, 1] }] } } };
  const cpDiff = diffLeaves({ ...baseCp, ts: "2026-01-01T00:00:01.000Z", versions_seen: { model: { messages: 1 } } }, baseCp);
  await c.query(
    `INSERT INTO ${s}.checkpoints (thread_id, ns, checkpoint_id, seq, parent_id, metadata, checkpoint, refs, shared, meta_base)
     VALUES ('t1', '', 'cp1', nextval('${s}.cp_seq'), NULL, $1, $2, $3, true, 3)`,
    [JSON.stringify(own), JSON.stringify(cpDiff), JSON.stringify({ messages: [7, 2] })],
  );
  await c.query(
    `INSERT INTO ${s}.cp_writes (thread_id, ns, checkpoint_id, task_id, seq, idx, channel, value, shared) VALUES
       ('t1', '', 'cp1', 'task1', nextval('${s}.write_seq'), 1, 'messages', $1, true),
       ('t1', '', 'cp1', 'task1', currval('${s}.write_seq'), 2, 'odd', $2, true)`,
    [JSON.stringify([{ "\u0001r": [7, 1] }]), JSON.stringify({ "\u0001e": { "\u0001r": "mine" } })],
  );
  const cp1: StoredCheckpoint = {
    thread_id: "t1",
    checkpoint_ns: "",
    checkpoint: {
      v: 1,
      id: "cp1",
      ts: "2026-01-01T00:00:01.000Z",
      channel_values: { messages: m, topic: "weather" },
      channel_versions: { messages: 2, topic: 1 },
      versions_seen: { model: { messages: 1 } },
    },
    metadata: { run_id: "r0", graph_id: "g", parents: {}, step: 1, source: "loop", writes: { model: { messages: [msg(1)] } } },
    parent_checkpoint_id: null,
    pending_writes: [
      ["task1", "messages", [msg(1)]],
      ["task1", "odd", { "\u0001r": "mine" }],
    ],
  };
  const run = (id: string, status: string, over: Record<string, unknown> = {}) => ({
    run_id: id,
    thread_id: "t1",
    assistant_id: "a",
    created_at: `2026-01-01T00:00:0${id.slice(1)}.000Z`,
    updated_at: "2026-01-01T00:00:09.000Z",
    status,
    metadata: { owner: "ann" },
    kwargs: { input: { n: 1 }, command: null, stream_mode: ["values"] },
    multitask_strategy: "enqueue",
    ...over,
  });
  const done = run("r1", "success");
  const queued = run("r2", "pending", { execution: { graph_id: "g", config: { configurable: {} }, context: null, temporary: false, not_before: 0 } });
  for (const r of [done, queued]) {
    await c.query(
      `INSERT INTO ${s}.runs (run_id, thread_id, assistant_id, status, created_at, queue_seq, doc) VALUES ($1, 't1', 'a', $2, $3, nextval('${s}.run_queue'), $4)`,
      [r.run_id, r.status, r.created_at, JSON.stringify(r)],
    );
  }

  const store = postgresStore({ connectionString: url, schema });
  opened.push(store);
  await store.open();
  expect((await c.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)).rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
  expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "cp1" })).toEqual(cp1);
  expect(await store.listCheckpoints("t1", { filter: { graph_id: "g", source: "loop" } })).toEqual([cp1]);
  expect(await store.listCheckpoints("t1", { filter: { source: "input" } })).toEqual([]);
  expect(await store.getRun("r1")).toEqual(done);
  expect(await store.queryRuns({ thread_id: "t1" })).toEqual([queued, done]);
  expect(await store.claimRun({ thread_id: "t1", key: "thread:t1", owner: "me", now: Date.now(), expires_at: Date.now() + 30_000, updated_at: "2026-01-02", graph_ids: ["g"] })).toEqual({
    outcome: "claimed",
    run: { ...queued, status: "running", updated_at: "2026-01-02" },
  });

  // The engine's next step on the old rows: the task's writes on cp1 and the child, in one commit.
  const cp2: StoredCheckpoint = {
    ...cp1,
    checkpoint: { ...cp1.checkpoint, id: "cp2", channel_values: { messages: [...m, msg(2)], topic: "weather" }, channel_versions: { messages: 3, topic: 1 } },
    metadata: { ...cp1.metadata, step: 2, writes: { task2: { messages: [msg(2)] } } },
    parent_checkpoint_id: "cp1",
    pending_writes: [],
  };
  await store.commit([
    { op: "writes.put", thread_id: "t1", checkpoint_id: "cp1", task_id: "task2", writes: [["task2", "messages", [msg(2)]]] },
    { op: "checkpoint.put", checkpoint: cp2 },
  ]);
  const other = postgresStore({ connectionString: url, schema });
  opened.push(other);
  await other.open();
  expect(await other.listCheckpoints("t1")).toEqual([cp2, { ...cp1, pending_writes: [...cp1.pending_writes, ["task2", "messages", [msg(2)]]] }]);
  expect(await other.getRun("r2")).toEqual({ ...queued, status: "running", updated_at: "2026-01-02" });
});

it("opens a schema-5 database: compact rows read back as written, and new rows (schema 6) extend them and filter alike", async () => {
  const schema = `mig5_${process.pid}`;
  const c = await atVersion(schema, 5);
  const s = `"${schema}"`;
  // What schema 5 stored for two checkpoints of a chat: the messages in a log chunked per append
  // (keyed by log and start), a base, rows with the run id in their metadata, versions as they
  // are, the child naming its parent by seq, pending writes grouped by task in the row.
  const m = [msg(0), msg(1), msg(2)];
  const runA = "0192f0d0-0000-7000-8000-00000000000a";
  await c.query(`INSERT INTO ${s}.cp_logs (log_id, thread_id, len) VALUES (7, 't1', 3)`);
  await c.query(`INSERT INTO ${s}.cp_chunks (log_id, start, items) VALUES (7, 0, $1), (7, 2, $2)`, [JSON.stringify(m.slice(0, 2)), JSON.stringify(m.slice(2))]);
  const baseCp = { v: 1, ts: "2026-01-01T00:00:00.000Z", channel_values: { messages: null }, channel_versions: { messages: 2 }, versions_seen: {} };
  await c.query(`INSERT INTO ${s}.cp_meta (thread_id, base_id, record, cp) VALUES ('t1', 3, $1, $2)`, [
    JSON.stringify({ run_id: "0192f0d0-0000-7000-8000-000000000000", graph_id: "g", parents: {} }),
    JSON.stringify(baseCp),
  ]);
  const rows = [
    { id: "cp1", parentSeq: null, step: 1, n: 2, versions: { messages: 2 }, writes: { task1: [["messages", [{ "\u0001r": [7, 2] }]]] } },
    { id: "cp2", parentSeq: "p", step: 2, n: 3, versions: { messages: 3 }, writes: null },
  ];
  for (const r of rows) {
    const own = { run_id: runA, source: "loop", step: r.step, writes: { model: { messages: [{ "\u0001r": [7, r.n - 1] }] } } };
    const cpDiff = diffLeaves({ ...baseCp, ts: `2026-01-01T00:00:0${r.step}.000Z`, channel_versions: r.versions }, baseCp);
    await c.query(
      `INSERT INTO ${s}.checkpoints (seq, parent_seq, meta_base, shared, cp_shared, thread_id, ns, checkpoint_id, metadata, checkpoint, refs, writes)
       VALUES (nextval('${s}.cp_seq'), ${r.parentSeq ? `(SELECT seq FROM ${s}.checkpoints WHERE checkpoint_id = 'cp1')` : "NULL"}, 3, true, true, 't1', '', $1, $2, $3, $4, $5)`,
      [r.id, JSON.stringify(own), JSON.stringify(cpDiff), JSON.stringify({ messages: [7, r.n] }), r.writes && JSON.stringify(r.writes)],
    );
  }
  const cp = (i: number, over: Partial<StoredCheckpoint> = {}): StoredCheckpoint => ({
    thread_id: "t1",
    checkpoint_ns: "",
    checkpoint: { v: 1, id: `cp${i}`, ts: `2026-01-01T00:00:0${i}.000Z`, channel_values: { messages: m.slice(0, i + 1) }, channel_versions: { messages: i + 1 }, versions_seen: {} },
    metadata: { run_id: runA, graph_id: "g", parents: {}, source: "loop", step: i, writes: { model: { messages: [m[i]] } } },
    parent_checkpoint_id: i > 1 ? `cp${i - 1}` : null,
    pending_writes: [],
    ...over,
  });
  const cp1 = cp(1, { pending_writes: [["task1", "messages", [msg(2)]]] });
  const cp2 = cp(2);

  const store = postgresStore({ connectionString: url, schema });
  opened.push(store);
  await store.open();
  expect((await c.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)).rows).toEqual([{ value: String(PG_SCHEMA_VERSION) }]);
  expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: "cp1" })).toEqual(cp1);
  expect(await store.listCheckpoints("t1")).toEqual([cp2, cp1]);
  expect(await store.listCheckpoints("t1", { filter: { run_id: runA, source: "loop" } })).toEqual([cp2, cp1]);

  // A child written now (schema 6): versions less the step, its run id in the column, its message
  // appended to the old log's last chunk; the old rows read back as before, from another instance.
  const runB = "0192f0d0-0000-7000-8000-00000000000b";
  const m3 = msg(3);
  const cp3 = cp(3, {
    checkpoint: { ...cp(3).checkpoint, channel_values: { messages: [...m, m3] } },
    metadata: { run_id: runB, graph_id: "g", parents: {}, source: "loop", step: 3, writes: { model: { messages: [m3] } } },
  });
  // The next run's step: its run id differs from the (new) base's, so it goes to the column.
  const runC = "0192f0d0-0000-7000-8000-00000000000c";
  const m4 = msg(4);
  const cp4 = cp(4, {
    checkpoint: { ...cp(4).checkpoint, channel_values: { messages: [...m, m3, m4] } },
    metadata: { run_id: runC, graph_id: "g", parents: {}, source: "loop", step: 4, writes: { model: { messages: [m4] } } },
  });
  await store.commit([{ op: "checkpoint.put", checkpoint: cp3 }]);
  await store.commit([{ op: "checkpoint.put", checkpoint: cp4 }]);
  const other = postgresStore({ connectionString: url, schema });
  opened.push(other);
  await other.open();
  expect(await other.listCheckpoints("t1")).toEqual([cp4, cp3, cp2, cp1]);
  expect(await other.listCheckpoints("t1", { filter: { run_id: runC } })).toEqual([cp4]);
  expect(await other.listCheckpoints("t1", { filter: { run_id: runB } })).toEqual([cp3]);
  expect(await other.listCheckpoints("t1", { filter: { run_id: runA } })).toEqual([cp2, cp1]);
  expect(await other.listCheckpoints("t1", { filter: { graph_id: "g", source: "loop" }, limit: 3 })).toEqual([cp4, cp3, cp2]);
  const stored = await c.query(`SELECT ${s}.cp_key_text(checkpoint_id) AS checkpoint_id, vrel, run_id::text AS run_id, metadata::text AS metadata FROM ${s}.checkpoints ORDER BY seq`);
  expect(stored.rows.map((r) => [r.checkpoint_id, r.vrel, r.run_id])).toEqual([
    ["cp1", null, null],
    ["cp2", null, null],
    ["cp3", true, null],
    ["cp4", true, runC],
  ]);
  expect(stored.rows[3].metadata).not.toContain(runC);
  expect((await c.query(`SELECT start, json_array_length(items) AS n FROM ${s}.cp_chunks ORDER BY start`)).rows).toEqual([
    { start: 0, n: 2 },
    { start: 2, n: 3 },
  ]);
});
