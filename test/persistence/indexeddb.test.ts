import "fake-indexeddb/auto";
import { readFileSync } from "node:fs";
import { openDB } from "idb";
import { describe, expect, it } from "vitest";
import { AgentdockError } from "../../src/errors.js";
import { indexedDbStore, INDEXEDDB_FORMAT } from "../../src/persistence/indexeddb/index.js";
import type { ExternalChange, Store, StoredCheckpoint } from "../../src/persistence/types.js";
import { chain, checkpoint, cpId, messages, storeContract, thread } from "./contract.js";

let n = 0;
const names = new WeakMap<Store, string>();

async function openAt(name: string): Promise<Store> {
  const store = indexedDbStore(name);
  names.set(store, name);
  await store.open();
  return store;
}

storeContract({
  name: "indexedDbStore (fake-indexeddb)",
  create: () => openAt(`contract-${n++}`),
  reopen: async (store) => {
    await store.close();
    return openAt(names.get(store)!);
  },
});

describe("indexedDbStore", () => {
  it("reads and extends checkpoints that need more lists than its list cache holds", async () => {
    const name = `small-cache-${n++}`;
    const open = async () => {
      const store = indexedDbStore(name, { cacheLists: 1 });
      await store.open();
      return store;
    };
    const values = (k: number) => ({ messages: messages(4 + k), notes: messages(6 + k).map((m) => ({ ...m, id: `note-${m.id}` })) });
    const first = checkpoint("t1", cpId(0), null, values(0));
    const second = checkpoint("t1", cpId(1), cpId(0), values(1));
    let store = await open();
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "checkpoint.put", checkpoint: first }]);
    await store.close();
    store = await open(); // a cold cache: both lists must come from the database
    await store.commit([{ op: "checkpoint.put", checkpoint: second }]);
    expect((await store.getCheckpoint("t1", cpId(0)))!.checkpoint.channel_values).toEqual(values(0));
    expect((await store.getCheckpoint("t1"))!.checkpoint.channel_values).toEqual(values(1));
    await store.close();
  });

  it("refuses a database written by a newer schema or storage format", async () => {
    const name = `newer-${n++}`;
    (await openDB(name, 7)).close();
    const err = await openAt(name).catch((e: unknown) => e);
    expect(AgentdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(name);

    const name2 = `newer-${n++}`;
    const store = await openAt(name2);
    await store.close();
    const db = await openDB(name2, 2);
    await db.put("meta", { key: "format", value: 99 });
    db.close();
    await expect(openAt(name2)).rejects.toThrow(/storage format 99/);
  });

  it("lets two instances on one database (two tabs) see each other's commits at once", async () => {
    const name = `tabs-${n++}`;
    const a = await openAt(name);
    const b = await openAt(name);
    const cps = chain("t1", 8);
    // Tabs take turns extending the same thread; each sees the other's list items.
    for (const [i, cp] of cps.entries()) {
      const tab = i % 2 ? b : a;
      await tab.commit([{ op: "checkpoint.put", checkpoint: cp }, { op: "thread.put", thread: thread("t1", { values: cp.checkpoint.channel_values }) }]);
      const other = i % 2 ? a : b;
      expect(await other.getCheckpoint("t1")).toEqual(cp);
      expect((await other.getThread("t1"))?.values).toEqual(cp.checkpoint.channel_values);
    }
    await a.close();
    await b.close();
  });

  it("keeps both of two concurrent forks from two instances intact", async () => {
    const name = `forks-${n++}`;
    const a = await openAt(name);
    const b = await openAt(name);
    const base = chain("t1", 6);
    await a.commit(base.map((checkpoint) => ({ op: "checkpoint.put", checkpoint })));
    const parent = base[5]!;
    const fork = (id: number, text: string) => ({
      ...parent,
      checkpoint: { ...parent.checkpoint, id: cpId(id), channel_values: { messages: [...(parent.checkpoint.channel_values.messages as unknown[]), { type: "ai", content: text }], step: id } },
      parent_checkpoint_id: parent.checkpoint.id,
    });
    const left = fork(10, "left");
    const right = fork(11, "right");
    await Promise.all([
      a.commit([{ op: "checkpoint.put", checkpoint: left }]),
      b.commit([{ op: "checkpoint.put", checkpoint: right }]),
    ]);
    for (const store of [a, b]) {
      expect(await store.getCheckpoint("t1", cpId(10))).toEqual(left);
      expect(await store.getCheckpoint("t1", cpId(11))).toEqual(right);
      expect(await store.getCheckpoint("t1", parent.checkpoint.id)).toEqual(parent);
    }
    await a.close();
    await b.close();
  });

  it("tells the other instances which threads changed", async () => {
    const name = `notify-${n++}`;
    const a = await openAt(name);
    const b = await openAt(name);
    const seen = new Promise<ExternalChange>((resolve) => b.onExternalChange!(resolve));
    let mine = 0;
    const off = a.onExternalChange!(() => mine++);
    await a.commit([{ op: "thread.put", thread: thread("t7") }, { op: "checkpoint.put", checkpoint: chain("t8", 1)[0]! }]);
    expect((await seen).threadIds?.sort()).toEqual(["t7", "t8"]);
    off();
    expect(mine).toBe(0);
    await a.close();
    await b.close();
  });

  it("serializes withLock sections across instances on the same database", async () => {
    const name = `lock-${n++}`;
    const a = await openAt(name);
    const b = await openAt(name);
    const order: string[] = [];
    const section = (store: Store, tag: string) =>
      store.withLock!("thread:t1", async () => {
        order.push(`${tag} in`);
        await new Promise((r) => setTimeout(r, 5));
        order.push(`${tag} out`);
        return tag;
      });
    const results = await Promise.all([section(a, "a"), section(b, "b"), section(a, "c")]);
    expect(results).toEqual(["a", "b", "c"]);
    expect(order).toEqual(["a in", "a out", "b in", "b out", "c in", "c out"]);
    // A failing section releases the lock.
    await expect(a.withLock!("thread:t1", async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(await b.withLock!("thread:t1", async () => "free")).toBe("free");
    await a.close();
    await b.close();
  });

  it("steps aside when another connection upgrades the database, then refuses the newer schema", async () => {
    const name = `upgrade-${n++}`;
    const store = await openAt(name);
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    const newer = await openDB(name, 3);
    newer.close();
    const err = await store.getThread("t1").catch((e: unknown) => e);
    expect(AgentdockError.is(err, "conflict")).toBe(true);
    await store.close();
  });

  it("pages history with limit and before on a long thread", async () => {
    const store = await openAt(`long-${n++}`);
    const cps = chain("t1", 300);
    for (const cp of cps) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const page = await store.listCheckpoints("t1", { limit: 10, before: cpId(200) });
    expect(page).toEqual(cps.slice(190, 200).reverse());
    await store.close();
  });
});

describe("indexedDbStore schema 1 -> 2 migration", () => {
  // Written by the schema-1 store (one record per checkpoint, list item and run) through a
  // runtime: two threads with 4 and 2 echo turns, their runs, an assistant and two documents.
  const fixture = JSON.parse(readFileSync(new URL("./fixtures/indexeddb-format-1.json", import.meta.url), "utf8")) as {
    rows: Record<string, unknown[]>;
    expected: {
      assistants: unknown[];
      versions: unknown[];
      threads: Array<{ thread_id: string }>;
      checkpoints: Record<string, unknown[]>;
      runs: Array<{ run_id: string }>;
      docs: { datasets: unknown[]; examples: unknown[] };
    };
  };

  /** Recreates the schema-1 database with the fixture's rows. */
  async function schema1(name: string) {
    const db = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore("meta", { keyPath: "key" });
        db.createObjectStore("assistants", { keyPath: "assistant_id" });
        db.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
        db.createObjectStore("threads", { keyPath: "thread_id" });
        db.createObjectStore("checkpoints", { keyPath: ["thread_id", "seq"] }).createIndex("by_id", ["thread_id", "id"], { unique: true });
        db.createObjectStore("items", { keyPath: ["t", "l", "i"] });
        db.createObjectStore("runs", { keyPath: "run_id" }).createIndex("by_thread", "thread_id");
        db.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
      },
    });
    for (const [store, rows] of Object.entries(fixture.rows)) for (const row of rows) await db.put(store, row);
    db.close();
  }

  const byId = (key: string) => (a: object, b: object) =>
    String((a as Record<string, unknown>)[key]).localeCompare(String((b as Record<string, unknown>)[key]));

  it("reads back everything a schema-1 database held, and keeps writing to it", async () => {
    const name = `migrate-${n++}`;
    await schema1(name);
    const store = await openAt(name);
    const { expected } = fixture;
    expect(await store.listAssistants()).toEqual(expected.assistants);
    expect(await store.listAssistantVersions((expected.assistants[0] as { assistant_id: string }).assistant_id)).toEqual(expected.versions);
    expect((await store.listThreads()).sort(byId("thread_id"))).toEqual([...expected.threads].sort(byId("thread_id")));
    for (const [threadId, cps] of Object.entries(expected.checkpoints)) {
      expect(cps.length).toBeGreaterThan(5);
      expect(await store.listCheckpoints(threadId)).toEqual(cps);
      expect(await store.listCheckpoints(threadId, { limit: 2, before: (cps[1] as StoredCheckpoint).checkpoint.id })).toEqual(cps.slice(2, 4));
      expect(await store.getCheckpoint(threadId)).toEqual(cps[0]);
    }
    expect((await store.listRuns()).sort(byId("run_id"))).toEqual([...expected.runs].sort(byId("run_id")));
    for (const run of expected.runs) expect(await store.getRun(run.run_id)).toEqual(run);
    expect(await store.listDocs("datasets")).toEqual(expected.docs.datasets);
    expect(await store.listDocs("examples", "d1")).toEqual(expected.docs.examples);

    // The schema-1 stores are gone; new checkpoints extend the migrated lists.
    const [threadId, cps] = Object.entries(expected.checkpoints)[0]!;
    const latest = cps[0] as StoredCheckpoint;
    const messages = latest.checkpoint.channel_values.messages as unknown[];
    const next: StoredCheckpoint = {
      ...latest,
      checkpoint: { ...latest.checkpoint, id: cpId(900), channel_values: { messages: [...messages, { type: "human", content: "after", id: "m-after" }] } },
      parent_checkpoint_id: latest.checkpoint.id,
      pending_writes: [],
    };
    await store.commit([{ op: "checkpoint.put", checkpoint: next }]);
    await store.close();
    const again = await openAt(name);
    expect(await again.getCheckpoint(threadId)).toEqual(next);
    expect(await again.getCheckpoint(threadId, latest.checkpoint.id)).toEqual(latest);
    await again.close();
    const db = await openDB(name);
    expect([...db.objectStoreNames].sort()).toEqual(["assistants", "chunks", "cpslots", "docs", "meta", "pages", "runslots", "stamps", "threads", "versions"]);
    expect((await db.get("meta", "format"))?.value).toBe(INDEXEDDB_FORMAT);
    db.close();
  });
});
