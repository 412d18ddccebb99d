/**
 * Checkpoint keys (src/postgres/cp-keys.ts): statements pass keys encoded here and read key
 * columns decoded here, while rows written before were keyed by the schema's SQL functions
 * (`cp_key`, `cp_key_text`). Both encodings must agree byte for byte, or a stored checkpoint is
 * not found again; and every kind of id a checkpointer may use reads back as written.
 */
import { expect, it } from "vitest";
import { cpKey, keyText } from "../../src/postgres/cp-keys.js";
import { pgTestStores } from "./stores.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";

const { open, sql } = pgTestStores({ max: 3 });

const ids = [
  "1f1e7e6c-3d05-6221-8009-014c6fb68f52", // a canonical UUID: 16 bytes
  "1F1E7E6C-3D05-6221-8009-014C6FB68F52", // upper case: not canonical, kept as text
  "0123456789abcdef", // 16 bytes of text: a zero byte after them
  "ééééééééé", // 18 bytes of UTF-8
  "ééééééé12", // 16 bytes of UTF-8 in 9 characters
  "", // empty
  "thread 🧵 with spaces",
  "1f1e7e6c-3d05-6221-8009-014c6fb68f5", // one digit short of a UUID
];

it("encodes ids as the schema's cp_key does and decodes keys as its cp_key_text does", async () => {
  const schema = `cpkeys_${process.pid}`;
  await open(schema);
  const c = await sql();
  for (const id of ids) {
    const { rows } = await c.query<{ k: Buffer; t: string }>(`SELECT "${schema}".cp_key($1) AS k, "${schema}".cp_key_text("${schema}".cp_key($1)) AS t`, [id]);
    expect(cpKey(id).equals(rows[0]!.k), id).toBe(true);
    expect(keyText(rows[0]!.k)).toBe(id);
    expect(keyText(cpKey(id))).toBe(id);
  }
});

it("stores and finds checkpoints, their parents and pending writes under every kind of id", async () => {
  const schema = `cpkeys2_${process.pid}`;
  const [a, b] = [await open(schema), await open(schema)];
  for (const thread of ids.filter((x) => x !== "")) {
    let parent: string | null = null;
    const puts: StoredCheckpoint[] = [];
    for (const id of ids) {
      const p: StoredCheckpoint = {
        thread_id: thread,
        checkpoint_ns: "",
        checkpoint: { v: 1, id, ts: "2026-01-01T00:00:00.000Z", channel_values: { messages: [id, thread] }, channel_versions: { messages: 1 }, versions_seen: {} },
        metadata: { source: "loop", step: puts.length, parents: {} },
        parent_checkpoint_id: parent,
        pending_writes: [],
      };
      await a.commit([{ op: "checkpoint.put", checkpoint: p }]);
      puts.push(p);
      parent = id;
    }
    // A task's writes on the last checkpoint (by its key), then read back from another store.
    await a.commit([{ op: "writes.put", thread_id: thread, checkpoint_id: parent!, task_id: "t1", writes: [["t1", "messages", "w"]] }]);
    puts[puts.length - 1] = { ...puts[puts.length - 1]!, pending_writes: [["t1", "messages", "w"]] };
    for (const p of puts) expect(await b.getCheckpoint({ thread_id: thread, checkpoint_id: p.checkpoint.id })).toEqual(p);
    expect(await b.getCheckpoint({ thread_id: thread })).toEqual(puts[puts.length - 1]);
    expect(await b.listCheckpoints(thread)).toEqual([...puts].reverse());
  }
});
