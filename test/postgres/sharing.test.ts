/**
 * Content stored once (schema 2): a chat's messages live in the thread's list log; checkpoint
 * metadata, pending writes and the thread's values refer to them. What another store instance
 * (another process) reads back is exactly what was written, marker-like user objects included.
 */
import { expect, it } from "vitest";
import { pgTestStores } from "./stores.js";
import type { StoredCheckpoint, WriteOp } from "../../src/persistence/types.js";
import type { ThreadRecord } from "../../src/types.js";

const { open, sql } = pgTestStores({ max: 3 });

const SECRET = "a long message body that must be stored only once";
const msg = (i: number) => ({ id: `m${i}`, type: i % 2 ? "ai" : "human", content: `${SECRET} #${i}` });
// User objects that look like the store's own markers must read back as written.
const lookalikes = { "\u0001r": [1, 0], nested: { "\u0001e": { x: 1 } }, gone: { "\u0001g": 1 } };

const cp = (i: number, messages: unknown[], over: Partial<StoredCheckpoint> = {}): StoredCheckpoint => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint: {
    v: 1,
    id: `cp${i}`,
    ts: `2026-01-01T00:00:0${i}.000Z`,
    channel_values: { messages, topic: "weather", extra: lookalikes },
    channel_versions: { messages: i + 1, topic: 1 },
    versions_seen: { model: { messages: i } },
  },
  metadata: { source: "loop", step: i, parents: {}, writes: i ? { model: { messages: [messages.at(-1)] } } : null, run_id: `r${i >> 1}`, odd: lookalikes },
  parent_checkpoint_id: i ? `cp${i - 1}` : null,
  pending_writes: [],
  ...over,
});

it("stores each message once and reads every checkpoint, pending write and thread value back exactly, in another instance", async () => {
  const schema = `sh_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  const thread: ThreadRecord = {
    thread_id: "t",
    created_at: "x",
    updated_at: "x",
    state_updated_at: "x",
    metadata: {},
    status: "idle",
    config: {},
    values: {},
    interrupts: {},
  };
  await a.commit([{ op: "thread.put", thread, expect: { exists: false } }]);
  const puts: StoredCheckpoint[] = [cp(0, [msg(0)])];
  await a.commit([{ op: "checkpoint.put", checkpoint: puts[0]! }]);
  const written = new Map<string, unknown[]>();
  for (let i = 1; i <= 6; i++) {
    const messages = Array.from({ length: i + 1 }, (_, k) => msg(k));
    // A task wrote the new message (and a look-alike) on the parent; the step's checkpoint appends it.
    const writes = [["task", "messages", [msg(i)]] as const, ["task", "odd", lookalikes] as const];
    written.set(`cp${i - 1}`, writes.map((w) => [...w]));
    const put = cp(i, messages, i === 3 ? { pending_writes: [["t2", "messages", [msg(i)]]] } : {});
    puts.push(put);
    const step: WriteOp[] = [
      { op: "writes.put", thread_id: "t", checkpoint_id: `cp${i - 1}`, task_id: "task", writes },
      { op: "checkpoint.put", checkpoint: put },
    ];
    // Both ways the engine commits: together (a step), and one after the other.
    if (i % 2) await a.commit(step);
    else for (const op of step) await a.commit([op]);
  }
  // The thread's values mirror the latest checkpoint.
  const stored = (await a.getThread("t"))!;
  await a.commit([{ op: "thread.put", thread: { ...stored, values: puts[6]!.checkpoint.channel_values, status: "idle" }, expect: { sameAs: stored } }]);

  const expected = puts.map((p) => ({
    ...p,
    // In the order recorded: the put's own, then the task's (recorded on it before its child).
    pending_writes: [...p.pending_writes, ...(written.get(p.checkpoint.id) ?? [])] as StoredCheckpoint["pending_writes"],
  }));
  expect(await b.listCheckpoints("t")).toEqual([...expected].reverse());
  for (const e of expected) expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: e.checkpoint.id })).toEqual(e);
  expect((await b.getThread("t"))!.values).toEqual(puts[6]!.checkpoint.channel_values);
  expect(await b.queryThreads({ values: { topic: "weather" } })).toHaveLength(1);
  // Containment reaches into lists stored as references (jsonb `@>` semantics).
  expect(await b.countThreads({ values: { messages: [msg(2)] } })).toBe(1);
  expect(await b.countThreads({ values: { messages: [msg(99)] } })).toBe(0);
  expect(await b.listCheckpoints("t", { filter: { writes: { model: { messages: [msg(4)] } } } })).toEqual([expected[4]]);
  expect(await b.listCheckpoints("t", { filter: { run_id: "r1", odd: lookalikes } })).toEqual([expected[3], expected[2]]);

  // Each message's text is in the list log only: not in metadata, pending writes or the thread row.
  const c = await sql();
  const s = `"${schema}"`;
  const { rows } = await c.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM ${s}.checkpoints WHERE metadata::text LIKE $1 OR checkpoint::text LIKE $1 OR writes::text LIKE $1)
          + (SELECT count(*) FROM ${s}.threads WHERE vals::text LIKE $1) AS n`,
    [`%${SECRET} #5%`],
  );
  expect(Number(rows[0]!.n)).toBe(0);
  const { rows: inLog } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.cp_chunks WHERE items::text LIKE $1`, [`%${SECRET} #5%`]);
  expect(inLog[0]!.n).toBe(1);
});
