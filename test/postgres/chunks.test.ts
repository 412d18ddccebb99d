/**
 * List log chunks (schema 6, src/postgres/chunks.ts): an append extends the log's last chunk
 * while it is small, so a chat's messages sit many to a row (which PostgreSQL compresses). Every
 * checkpoint still reads back exactly the prefix of the log it was put with, from another store
 * instance too; a chunk full by count or by bytes is followed by a new one.
 */
import { expect, it } from "vitest";
import { pgTestStores } from "./stores.js";
import { CHUNK_BYTES, CHUNK_ITEMS } from "../../src/postgres/chunks.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";

const { open, sql } = pgTestStores({ max: 3 });

const msg = (i: number, size = 20) => ({ id: `m${i}`, type: i % 2 ? "ai" : "human", content: `message ${i} `.padEnd(size, "x") });
const cp = (i: number, messages: unknown[]): StoredCheckpoint => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint: { v: 1, id: `cp${i}`, ts: `2026-01-01T00:00:00.000Z`, channel_values: { messages }, channel_versions: { messages: i + 1 }, versions_seen: {} },
  metadata: { source: "loop", step: i, parents: {} },
  parent_checkpoint_id: i ? `cp${i - 1}` : null,
  pending_writes: [],
});

it("extends a log's last chunk up to its size limits and reads every checkpoint's own prefix back", async () => {
  const schema = `chunks_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  // One message per step, then big messages (each chunk full by bytes after a few).
  const messages: unknown[] = [];
  const puts: StoredCheckpoint[] = [];
  const turns = CHUNK_ITEMS + 20;
  for (let i = 0; i < turns; i++) {
    messages.push(i < CHUNK_ITEMS + 10 ? msg(i) : msg(i, CHUNK_BYTES / 3));
    puts.push(cp(i, [...messages]));
    await a.commit([{ op: "checkpoint.put", checkpoint: puts[i]! }]);
  }
  for (let i = 0; i < turns; i++) expect(await b.getCheckpoint({ thread_id: "t", checkpoint_id: `cp${i}` })).toEqual(puts[i]);
  expect(await b.listCheckpoints("t")).toEqual([...puts].reverse());
  const c = await sql();
  const { rows } = await c.query<{ start: number; n: number; bytes: number }>(
    `SELECT start, json_array_length(items) AS n, octet_length(items::text) AS bytes FROM "${schema}".cp_chunks ORDER BY start`,
  );
  // The first chunk took CHUNK_ITEMS small messages; every chunk after it is within the byte limit or holds one append.
  expect(rows[0]).toMatchObject({ start: 0, n: CHUNK_ITEMS });
  expect(rows[1]!.start).toBe(CHUNK_ITEMS);
  for (const r of rows) expect(r.n === 1 || r.bytes <= CHUNK_BYTES).toBe(true);
  expect(rows.reduce((sum, r) => sum + r.n, 0)).toBe(turns);
  expect(rows.length).toBeLessThan(turns / 2);
  // A fork from an early checkpoint starts a log of its own; the old one reads as before.
  const fork: StoredCheckpoint = { ...cp(100, [msg(0), msg(999)]), parent_checkpoint_id: "cp0" };
  await b.commit([{ op: "checkpoint.put", checkpoint: fork }]);
  expect(await a.getCheckpoint({ thread_id: "t", checkpoint_id: "cp100" })).toEqual(fork);
  expect(await a.getCheckpoint({ thread_id: "t", checkpoint_id: `cp${turns - 1}` })).toEqual(puts[turns - 1]);
});
