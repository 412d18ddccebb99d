import "fake-indexeddb/auto";
import { readFileSync } from "node:fs";
import { openDB } from "idb";
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { DB_VERSION, indexedDbStore, INDEXEDDB_FORMAT } from "../../src/persistence/indexeddb/index.js";
import type { Store, StoredCheckpoint, WriteOp } from "../../src/persistence/types.js";
import { assistant, chain, checkpoint, cpId, messages, run, storeContract, thread } from "./contract.js";
import { twoTabsSuite } from "./indexeddb-tabs.js";

let n = 0;

async function openAt(name: string, options = {}): Promise<Store> {
  const store = indexedDbStore(name, options);
  await store.open();
  return store;
}

const puts = (cps: StoredCheckpoint[]): WriteOp[] => cps.map((c) => ({ op: "checkpoint.put", checkpoint: c }));
const ids = (cps: readonly StoredCheckpoint[]) => cps.map((c) => c.checkpoint.id);
const isConflict = (e: unknown) => GraphdockError.is(e, "conflict");
const isInvalid = (e: unknown) => GraphdockError.is(e, "invalid_input");

const names = new WeakMap<Store, string>();
storeContract({
  name: "indexedDbStore (fake-indexeddb)",
  create: async () => {
    const name = `contract-${n++}`;
    const store = await openAt(name);
    names.set(store, name);
    return store;
  },
  reopen: async (store) => {
    await store.close();
    const again = await openAt(names.get(store)!);
    names.set(again, names.get(store)!);
    return again;
  },
});

twoTabsSuite("indexedDbStore (fake-indexeddb)", (name) => openAt(name));

describe("indexedDbStore", () => {
  it("answers thread, assistant and run queries, runs in queue order", async () => {
    const store = await openAt(`query-${n++}`);
    await store.commit([
      { op: "assistant.put", assistant: assistant("a1") },
      { op: "assistant.put", assistant: assistant("a2", { graph_id: "other", created_at: "2026-01-02T00:00:00.000Z" }) },
      { op: "thread.put", thread: thread("t1", { values: { messages: messages(6), k: 1 } }) },
      { op: "thread.put", thread: thread("t2", { status: "busy", created_at: "2026-01-03T00:00:00.000Z" }) },
      { op: "run.put", run: run("r-b", "t1", { status: "pending" }) },
      { op: "run.put", run: run("r-a", "t1", { status: "pending" }) },
      { op: "run.put", run: run("r-c", "t2", { status: "running" }) },
    ]);
    expect((await store.queryAssistants({ graph_id: "other" })).map((a) => a.assistant_id)).toEqual(["a2"]);
    expect(await store.countAssistants({})).toBe(2);
    expect((await store.queryThreads({})).map((t) => t.thread_id)).toEqual(["t2", "t1"]);
    expect((await store.queryThreads({ status: "idle" }))[0]!.values).toEqual({ messages: messages(6), k: 1 });
    expect((await store.queryThreads({ values: { k: 1 } })).map((t) => t.thread_id)).toEqual(["t1"]);
    expect(await store.countThreads({ values: { messages: [messages(1)[0]] } })).toBe(1);
    expect(await store.countThreads({ status: "busy" })).toBe(1);
    expect((await store.queryRuns({ thread_id: "t1", sortBy: "queue" })).map((r) => r.run_id)).toEqual(["r-b", "r-a"]);
    expect((await store.queryRuns({ status: "pending", sortBy: "queue" })).map((r) => r.run_id)).toEqual(["r-b", "r-a"]);
    expect((await store.queryRuns({ status: ["pending", "running"], sortBy: "queue", sortOrder: "desc" })).map((r) => r.run_id)).toEqual([
      "r-c",
      "r-a",
      "r-b",
    ]);
    // Updating a run keeps its place in the queue.
    await store.commit([{ op: "run.put", run: run("r-b", "t1", { status: "running" }) }]);
    expect((await store.queryRuns({ sortBy: "queue" })).map((r) => r.run_id)).toEqual(["r-b", "r-a", "r-c"]);
    expect(await store.countRuns({ status: "running" })).toBe(2);
    expect(await store.getRun("r-b")).toEqual(run("r-b", "t1", { status: "running" }));
    await store.close();
  });

  it("checks expectations inside the commit and writes nothing when one fails", async () => {
    const store = await openAt(`expect-${n++}`);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "run.put", run: run("r1", "t1", { status: "pending" }) }]);
    const read = (await store.getThread("t1"))!;
    await store.commit([{ op: "thread.put", thread: thread("t1", { status: "busy" }), expect: { sameAs: read, status: ["idle"] } }]);
    await expect(store.commit([{ op: "thread.put", thread: thread("t1"), expect: { sameAs: read } }])).rejects.toSatisfy(isConflict);
    await expect(
      store.commit([{ op: "run.put", run: run("r2", "t1") }, { op: "run.put", run: run("r1", "t1"), expect: { status: ["running"] } }]),
    ).rejects.toSatisfy(isConflict);
    expect(await store.getRun("r2")).toBeUndefined();
    await expect(store.commit([{ op: "thread.delete", thread_id: "t1", expect: { status: ["idle"] } }])).rejects.toSatisfy(isConflict);
    await expect(store.commit([{ op: "run.delete", run_id: "r9", expect: { exists: true } }])).rejects.toSatisfy(isConflict);
    const fresh = (await store.queryThreads({ ids: ["t1"] }))[0]!;
    await store.commit([{ op: "thread.delete", thread_id: "t1", expect: { sameAs: fresh, exists: true } }]);
    expect(await store.getThread("t1")).toBeUndefined();
    expect(await store.getRun("r1")).toBeUndefined();
    await store.close();
  });

  it("rejects values that cannot be stored with invalid_input and writes nothing", async () => {
    const store = await openAt(`invalid-${n++}`);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    for (const bad of [() => 1, cyclic, 10n, Number.NaN, Infinity, deep, new Date(0), Symbol("s")]) {
      await expect(
        store.commit([{ op: "assistant.put", assistant: assistant("ok") }, { op: "thread.put", thread: thread("t1", { metadata: { bad } }) }]),
      ).rejects.toSatisfy(isInvalid);
    }
    expect(await store.getAssistant("ok")).toBeUndefined();
    expect(await store.getThread("t1")).toBeUndefined();
    await store.close();
  });

  it("keeps leases and cancel requests; lists expired leases by prefix", async () => {
    const store = await openAt(`leases-${n++}`);
    const lease = (key: string, owner: string, expires_at: number) => ({ key, owner, expires_at, data: { run_id: "r1" } });
    await store.commit([
      { op: "lease.put", lease: lease("thread:t1", "A", 100), expect: { state: "free", now: 50 } },
      { op: "lease.put", lease: lease("thread:t2", "B", 300) },
      { op: "lease.put", lease: lease("cron:x", "B", 10) },
      { op: "run.put", run: run("r1", "t1") },
      { op: "cancel.put", request: { run_id: "r1", thread_id: "t1", action: "interrupt", requested_at: "x" } },
    ]);
    await expect(store.commit([{ op: "lease.put", lease: lease("thread:t1", "B", 200), expect: { state: "free", now: 60 } }])).rejects.toSatisfy(isConflict);
    await expect(store.commit([{ op: "lease.put", lease: lease("thread:t1", "B", 200), expect: { state: "held", now: 60 } }])).rejects.toSatisfy(isConflict);
    await store.commit([{ op: "lease.put", lease: lease("thread:t1", "A", 150), expect: { state: "held", now: 60 } }]);
    expect((await store.expiredLeases("thread:", 200)).map((l) => l.key)).toEqual(["thread:t1"]);
    expect((await store.expiredLeases("thread:", 1000)).map((l) => l.key)).toEqual(["thread:t1", "thread:t2"]);
    expect(await store.expiredLeases("thread:", 1000, 1)).toHaveLength(1);
    await store.commit([{ op: "lease.put", lease: lease("thread:t1", "B", 400), expect: { state: "free", now: 200 } }]);
    await store.commit([{ op: "lease.delete", key: "thread:t1", owner: "A" }]);
    expect((await store.getLease("thread:t1"))?.owner).toBe("B");
    await store.commit([{ op: "lease.delete", key: "thread:t1", owner: "B" }]);
    expect(await store.getLease("thread:t1")).toBeUndefined();
    expect((await store.getCancelRequest("r1"))?.action).toBe("interrupt");
    await store.commit([{ op: "run.delete", run_id: "r1" }]);
    expect(await store.getCancelRequest("r1")).toBeUndefined();
    await store.close();
  });

  it("keeps checkpoint namespaces apart", async () => {
    const store = await openAt(`ns-${n++}`);
    const sub = chain("t1", 3).map((c) => ({ ...c, checkpoint_ns: "child:1" }));
    await store.commit([...puts(chain("t1", 4)), ...puts(sub)]);
    expect(await store.listCheckpointNamespaces("t1")).toEqual(["", "child:1"]);
    expect(await store.listCheckpointNamespaces("t9")).toEqual([]);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe(cpId(3));
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:1" })).toEqual(sub[2]);
    expect(ids(await store.listCheckpoints("t1", { checkpoint_ns: "child:1", limit: 2 }))).toEqual([cpId(2), cpId(1)]);
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_ns: "child:1", checkpoint_id: cpId(2), task_id: "k", writes: [["k", "x", 1]] }]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:1" }))?.pending_writes).toEqual([["k", "x", 1]]);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.pending_writes).toEqual([]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ns: "child:1", checkpoint_ids: [cpId(2)] }]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_ns: "child:1" }))?.checkpoint.id).toBe(cpId(1));
    await store.commit([{ op: "thread.delete", thread_id: "t1" }]);
    expect(await store.listCheckpointNamespaces("t1")).toEqual([]);
    await store.close();
  });

  it("stores a message that is also a list item once, also when the list gets it a step later", async () => {
    const store = await openAt(`share-${n++}`);
    const text = "x".repeat(2000);
    const human = { type: "human", content: `${text} human`, id: "h1" };
    const ai = { type: "ai", content: `${text} ai`, id: "a1" };
    const base = messages(4);
    const input = checkpoint("t1", cpId(0), null, { messages: base, __start__: { messages: [human] } }, { writes: { __start__: { messages: [human] } } });
    const loop = checkpoint("t1", cpId(1), cpId(0), { messages: [...base, human] });
    const done = checkpoint("t1", cpId(2), cpId(1), { messages: [...base, human, ai] }, { writes: { echo: { messages: [ai] } } });
    await store.commit(puts([input]));
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(0), task_id: "s", writes: [["s", "messages", [human]]] }, ...puts([loop])]);
    await store.commit([{ op: "writes.put", thread_id: "t1", checkpoint_id: cpId(1), task_id: "e", writes: [["e", "messages", [ai]]] }, ...puts([done])]);
    const db = await openDB(`share-${n - 1}`);
    let stored = "";
    for (const s of db.objectStoreNames) for (const v of await db.getAll(s)) stored += JSON.stringify(v);
    db.close();
    expect(stored.split(human.content).length - 1).toBe(1);
    expect(stored.split(ai.content).length - 1).toBe(1);
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(0) })).toEqual({ ...input, pending_writes: [["s", "messages", [human]]] });
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(1) })).toEqual({ ...loop, pending_writes: [["e", "messages", [ai]]] });
    expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(done);
    await store.close();
  });

  it("ends a read of a log that is not open at once with ifAbsent: end, and reads the queue through the thread-status index", async () => {
    const store = await openAt(`absent-${n++}`);
    const read = async (after?: number) => {
      const out: number[] = [];
      for await (const e of store.events.read("nope", { after, ifAbsent: "end" } as { after?: number })) out.push(e.seq);
      return out;
    };
    expect(await read(-1)).toEqual([]);
    expect(await read()).toEqual([]);
    await store.commit([
      { op: "run.put", run: run("q1", "t1", { status: "pending" }) },
      { op: "run.put", run: run("q2", "t2", { status: "pending" }) },
      { op: "run.put", run: run("q3", "t1", { status: "running" }) },
      { op: "run.put", run: run("q4", "t1", { status: "success" }) },
      { op: "run.put", run: run("q5", "t1", { status: "pending" }) },
    ]);
    await store.commit([{ op: "run.put", run: run("q1", "t1", { status: "running" }) }]);
    const q = { thread_id: "t1", status: ["pending", "running"] as const, sortBy: "queue" as const };
    expect((await store.queryRuns(q)).map((r) => r.run_id)).toEqual(["q1", "q3", "q5"]);
    expect(await store.countRuns(q)).toBe(3);
    expect((await store.queryRuns({ thread_id: "t1", status: "pending" })).map((r) => r.run_id)).toEqual(["q5"]);
    await store.close();
  });

  it("is not changed by a caller changing what it committed or read", async () => {
    const store = await openAt(`mutate-${n++}`);
    const cps = chain("t1", 3).map((c) => JSON.parse(JSON.stringify(c)) as StoredCheckpoint);
    await store.commit(puts(cps));
    const list = cps[2]!.checkpoint.channel_values.messages as Array<Record<string, unknown>>;
    list[0]!.content = "changed by the caller";
    const read = await store.getCheckpoint({ thread_id: "t1" });
    expect(read).toEqual(chain("t1", 3)[2]);
    try {
      (read!.checkpoint.channel_values.messages as Array<Record<string, unknown>>)[1]!.content = "changed";
    } catch {
      // frozen
    }
    expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(chain("t1", 3)[2]);
    await store.close();
  });

  it("reads and extends checkpoints that need more lists than its list cache holds", async () => {
    const name = `small-cache-${n++}`;
    const values = (k: number) => ({ messages: messages(4 + k), notes: messages(6 + k).map((m) => ({ ...m, id: `note-${m.id}` })) });
    const first = checkpoint("t1", cpId(0), null, values(0));
    const second = checkpoint("t1", cpId(1), cpId(0), values(1));
    let store = await openAt(name, { cacheLists: 1 });
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "checkpoint.put", checkpoint: first }]);
    await store.close();
    store = await openAt(name, { cacheLists: 1 });
    await store.commit([{ op: "checkpoint.put", checkpoint: second }]);
    expect((await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(0) }))!.checkpoint.channel_values).toEqual(values(0));
    expect((await store.getCheckpoint({ thread_id: "t1" }))!.checkpoint.channel_values).toEqual(values(1));
    await store.close();
  });

  it("refuses a database written by a newer schema or storage format", async () => {
    const name = `newer-${n++}`;
    (await openDB(name, 7)).close();
    const err = await openAt(name).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(name);

    const name2 = `newer-${n++}`;
    const store = await openAt(name2);
    await store.close();
    const db = await openDB(name2, DB_VERSION);
    await db.put("meta", { key: "format", value: 99 });
    db.close();
    await expect(openAt(name2)).rejects.toThrow(/storage format 99/);
  });

  it("lets two instances on one database (two tabs) see each other's commits at once", async () => {
    const name = `tabs-${n++}`;
    const a = await openAt(name);
    const b = await openAt(name);
    const cps = chain("t1", 8);
    for (const [i, cp] of cps.entries()) {
      const tab = i % 2 ? b : a;
      await tab.commit([{ op: "checkpoint.put", checkpoint: cp }, { op: "thread.put", thread: thread("t1", { values: cp.checkpoint.channel_values }) }]);
      const other = i % 2 ? a : b;
      expect(await other.getCheckpoint({ thread_id: "t1" })).toEqual(cp);
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
    await a.commit(puts(base));
    const parent = base[5]!;
    const fork = (id: number, text: string): StoredCheckpoint => ({
      ...parent,
      checkpoint: { ...parent.checkpoint, id: cpId(id), channel_values: { messages: [...(parent.checkpoint.channel_values.messages as unknown[]), { type: "ai", content: text }], step: id } },
      parent_checkpoint_id: parent.checkpoint.id,
    });
    const left = fork(10, "left");
    const right = fork(11, "right");
    await Promise.all([a.commit(puts([left])), b.commit(puts([right]))]);
    for (const store of [a, b]) {
      expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(10) })).toEqual(left);
      expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(11) })).toEqual(right);
      expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: parent.checkpoint.id })).toEqual(parent);
    }
    await a.close();
    await b.close();
  });

  it("steps aside when another connection upgrades the database, then refuses the newer schema", async () => {
    const name = `upgrade-${n++}`;
    const store = await openAt(name);
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    const newer = await openDB(name, DB_VERSION + 1);
    newer.close();
    const err = await store.getThread("t1").catch((e: unknown) => e);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    await store.close();
  });

  it("pages history with limit and before on a long thread", async () => {
    const store = await openAt(`long-${n++}`);
    const cps = chain("t1", 300);
    for (const cp of cps) await store.commit(puts([cp]));
    expect(await store.listCheckpoints("t1", { limit: 10, before: cpId(200) })).toEqual(cps.slice(190, 200).reverse());
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(77) })).toEqual(cps[77]);
    expect(await store.listCheckpoints("t1", { filter: { step: 5 } })).toEqual([cps[5]]);
    await store.close();
  });
});

describe("indexedDbStore migration from schema 1 (through schema 2)", () => {
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
    expect(await store.queryAssistants({})).toEqual(expected.assistants);
    const assistantId = (expected.assistants[0] as { assistant_id: string }).assistant_id;
    expect(await store.queryAssistantVersions({ assistant_id: assistantId, sortOrder: "asc" })).toEqual(expected.versions);
    expect((await store.queryThreads({})).sort(byId("thread_id"))).toEqual([...expected.threads].sort(byId("thread_id")));
    for (const [threadId, cps] of Object.entries(expected.checkpoints)) {
      expect(cps.length).toBeGreaterThan(5);
      expect(await store.listCheckpoints(threadId)).toEqual(cps);
      expect(await store.listCheckpoints(threadId, { limit: 2, before: (cps[1] as StoredCheckpoint).checkpoint.id })).toEqual(cps.slice(2, 4));
      expect(await store.getCheckpoint({ thread_id: threadId })).toEqual(cps[0]);
    }
    expect((await store.queryRuns({})).sort(byId("run_id"))).toEqual([...expected.runs].sort(byId("run_id")));
    for (const r of expected.runs) expect(await store.getRun(r.run_id)).toEqual(r);
    expect(await store.listDocs("datasets")).toEqual(expected.docs.datasets);
    expect(await store.listDocs("examples", "d1")).toEqual(expected.docs.examples);

    // The old stores are gone; new checkpoints extend the migrated lists.
    const [threadId, cps] = Object.entries(expected.checkpoints)[0]!;
    const latest = cps[0] as StoredCheckpoint;
    const msgs = latest.checkpoint.channel_values.messages as unknown[];
    const next: StoredCheckpoint = {
      ...latest,
      checkpoint: { ...latest.checkpoint, id: cpId(900), channel_values: { messages: [...msgs, { type: "human", content: "after", id: "m-after" }] } },
      parent_checkpoint_id: latest.checkpoint.id,
      pending_writes: [],
    };
    await store.commit(puts([next]));
    await store.close();
    const again = await openAt(name);
    expect(await again.getCheckpoint({ thread_id: threadId })).toEqual(next);
    expect(await again.getCheckpoint({ thread_id: threadId, checkpoint_id: latest.checkpoint.id })).toEqual(latest);
    await again.close();
    const db = await openDB(name);
    expect([...db.objectStoreNames].sort()).toEqual(
      ["assistants", "bases", "cancels", "crons", "cps", "docs", "events", "items", "leases", "logs", "meta", "runs", "store_items", "threads", "versions"].sort(),
    );
    expect((await db.get("meta", "format"))?.value).toBe(INDEXEDDB_FORMAT);
    db.close();
  });
});

describe("indexedDbStore migration from schema 2", () => {
  const fixture = JSON.parse(readFileSync(new URL("./fixtures/indexeddb-format-2.json", import.meta.url), "utf8")) as {
    rows: Record<string, Array<[IDBValidKey | null, unknown]>>;
    expected: {
      assistants: Array<{ assistant_id: string }>;
      versions: Record<string, unknown[]>;
      threads: Array<{ thread_id: string }>;
      checkpoints: Record<string, StoredCheckpoint[]>;
      runs: Array<{ run_id: string; thread_id: string }>;
      docs: { datasets: unknown[]; examples: unknown[] };
    };
  };

  /** Recreates the schema-2 database (as the previous release created it) with the fixture's rows. */
  async function schema2(name: string) {
    const db = await openDB(name, 2, {
      upgrade(db) {
        db.createObjectStore("meta", { keyPath: "key" });
        db.createObjectStore("assistants", { keyPath: "assistant_id" });
        db.createObjectStore("versions", { keyPath: ["assistant_id", "version"] });
        db.createObjectStore("threads", { keyPath: "thread_id" });
        db.createObjectStore("docs", { keyPath: ["collection", "id"] }).createIndex("by_seq", ["collection", "seq"]);
        for (const s of ["pages", "stamps", "cpslots", "runslots", "chunks"]) db.createObjectStore(s);
      },
    });
    for (const [store, rows] of Object.entries(fixture.rows)) {
      for (const [key, value] of rows) await (key === null ? db.put(store, value) : db.put(store, value, key));
    }
    db.close();
  }

  it("reads back everything a schema-2 database held, keeps the queue and history order, and keeps writing", async () => {
    const name = `migrate2-${n++}`;
    await schema2(name);
    const store = await openAt(name);
    const { expected } = fixture;
    const byId = (key: string) => (a: object, b: object) => String((a as Record<string, unknown>)[key]).localeCompare(String((b as Record<string, unknown>)[key]));
    expect((await store.queryAssistants({})).sort(byId("assistant_id"))).toEqual([...expected.assistants].sort(byId("assistant_id")));
    for (const [id, versions] of Object.entries(expected.versions)) {
      expect(await store.queryAssistantVersions({ assistant_id: id, sortOrder: "asc" })).toEqual(versions);
    }
    expect((await store.queryThreads({})).sort(byId("thread_id"))).toEqual([...expected.threads].sort(byId("thread_id")));
    for (const [threadId, cps] of Object.entries(expected.checkpoints)) {
      expect(await store.listCheckpoints(threadId)).toEqual(cps);
      expect(await store.listCheckpoints(threadId, { limit: 3, before: cps[1]!.checkpoint.id })).toEqual(cps.slice(2, 5));
      expect(await store.getCheckpoint({ thread_id: threadId })).toEqual(cps[0]);
      expect(await store.listCheckpointNamespaces(threadId)).toEqual([""]);
    }
    expect(Object.values(expected.checkpoints).some((cps) => cps.length > 32)).toBe(true);
    for (const r of expected.runs) expect(await store.getRun(r.run_id)).toEqual(r);
    // Queue order within a thread is the thread's run order of schema 2.
    for (const threadId of Object.keys(expected.checkpoints)) {
      const mine = expected.runs.filter((r) => r.thread_id === threadId).map((r) => r.run_id);
      expect((await store.queryRuns({ thread_id: threadId, sortBy: "queue" })).map((r) => r.run_id)).toEqual(mine);
    }
    expect(await store.listDocs("datasets")).toEqual(expected.docs.datasets);
    expect(await store.listDocs("examples", "d1")).toEqual(expected.docs.examples);

    // New checkpoints, runs and thread values extend the migrated data.
    const [threadId, cps] = Object.entries(expected.checkpoints)[0]!;
    const latest = cps[0]!;
    const msgs = latest.checkpoint.channel_values.messages as unknown[];
    const next: StoredCheckpoint = {
      ...latest,
      checkpoint: { ...latest.checkpoint, id: cpId(900), channel_values: { messages: [...msgs, { type: "human", content: "after", id: "m-after" }] } },
      parent_checkpoint_id: latest.checkpoint.id,
      pending_writes: [],
    };
    const oldThread = (await store.getThread(threadId))!;
    await store.commit([
      { op: "checkpoint.put", checkpoint: next },
      { op: "thread.put", thread: { ...oldThread, values: next.checkpoint.channel_values }, expect: { sameAs: oldThread } },
      { op: "run.put", run: run("r-new", threadId) },
    ]);
    await store.close();
    const again = await openAt(name);
    expect(await again.getCheckpoint({ thread_id: threadId })).toEqual(next);
    expect(await again.getCheckpoint({ thread_id: threadId, checkpoint_id: latest.checkpoint.id })).toEqual(latest);
    expect((await again.getThread(threadId))?.values).toEqual(next.checkpoint.channel_values);
    expect((await again.queryRuns({ thread_id: threadId, sortBy: "queue", sortOrder: "desc", limit: 1 }))[0]?.run_id).toBe("r-new");
    await again.close();
    const db = await openDB(name);
    expect([...db.objectStoreNames].sort()).toEqual(
      ["assistants", "bases", "cancels", "crons", "cps", "docs", "events", "items", "leases", "logs", "meta", "runs", "store_items", "threads", "versions"].sort(),
    );
    expect((await db.get("meta", "format"))?.value).toBe(INDEXEDDB_FORMAT);
    db.close();
  });
});
