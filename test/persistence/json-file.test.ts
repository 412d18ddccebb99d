import { cp as copyDir, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { JSON_FILE_FORMAT, jsonFileStore, type JsonFileStoreOptions } from "../../src/persistence/json-file/index.js";
import type { Store, WriteOp } from "../../src/persistence/types.js";
import { assistant, chain, cpId, messages, run, storeContract, thread, version } from "./contract.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-json-"));
afterAll(() => rm(root, { recursive: true, force: true }));
let n = 0;
const dirs = new WeakMap<Store, string>();

async function openAt(dir: string, options: JsonFileStoreOptions = {}): Promise<Store> {
  const store = jsonFileStore(dir, options);
  dirs.set(store, dir);
  await store.open();
  return store;
}

storeContract({
  name: "jsonFileStore",
  create: () => openAt(join(root, `contract-${n++}`)),
  reopen: async (store) => {
    await store.close();
    return openAt(dirs.get(store)!);
  },
});

// The same suite with compaction after every commit, so reopen reads from snapshots.
storeContract({
  name: "jsonFileStore (compacting every commit)",
  create: () => openAt(join(root, `compact-${n++}`), { compactBytes: 0, fsync: true }),
  reopen: async (store) => {
    await store.close();
    return openAt(dirs.get(store)!, { compactBytes: 0 });
  },
});

// And reopened as after a crash: a copy of the directory taken while the store is open, so the
// reopened store replays the log (the others' close folds it into the snapshot first).
storeContract({
  name: "jsonFileStore (reopened from the log, as after a crash)",
  create: () => openAt(join(root, `crash-${n++}`)),
  reopen: async (store) => {
    const copy = join(root, `crash-copy-${n++}`);
    await copyDir(dirs.get(store)!, copy, { recursive: true });
    await rm(join(copy, "lock"));
    await store.close();
    return openAt(copy);
  },
});

const commits = () => chain("t1", 6).map((checkpoint): WriteOp[] => [{ op: "checkpoint.put", checkpoint }]);

/** Six commits, then a copy of the directory as a process killed at that moment leaves it. */
async function crashedCopy(): Promise<string> {
  const dir = join(root, `live-${n++}`);
  const store = await openAt(dir);
  for (const ops of commits()) await store.commit(ops);
  const copy = join(root, `crashed-${n++}`);
  await copyDir(dir, copy, { recursive: true });
  await store.close();
  await rm(join(copy, "lock"), { force: true });
  return copy;
}

/** The error `open()` rejects with (or undefined). */
async function openError(dir: string): Promise<Error | undefined> {
  const store = jsonFileStore(dir, { onWarning: () => undefined });
  try {
    await store.open();
  } catch (err) {
    return err as Error;
  }
  await store.close();
  return undefined;
}

/** Byte offset of line `i` (0-based) of a file. */
async function lineOffset(file: string, i: number): Promise<number> {
  const lines = (await readFile(file, "utf8")).split("\n");
  return Buffer.byteLength(lines.slice(0, i).map((l) => l + "\n").join(""), "utf8");
}

/** The parsed snapshot of a store directory. */
async function snapshotOf(dir: string): Promise<{ format: number; seq: number; ops: unknown[] }> {
  return JSON.parse(gunzipSync(await readFile(join(dir, "snapshot.json.gz"))).toString("utf8"));
}

/** Everything a store holds, for comparing stores. */
async function dump(store: Store) {
  const threads = await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc" });
  const assistants = await store.queryAssistants({ sortBy: "assistant_id", sortOrder: "asc" });
  const runs = await store.queryRuns({ sortBy: "queue" });
  return {
    assistants,
    versions: await Promise.all(assistants.map((a) => store.queryAssistantVersions({ assistant_id: a.assistant_id, sortOrder: "asc" }))),
    threads,
    checkpoints: await Promise.all(
      threads.map(async (t) => {
        const spaces = await store.listCheckpointNamespaces(t.thread_id);
        return Promise.all(spaces.map((ns) => store.listCheckpoints(t.thread_id, { checkpoint_ns: ns })));
      }),
    ),
    runs,
    cancels: await Promise.all(runs.map((r) => store.getCancelRequest(r.run_id))),
    leases: await Promise.all(["thread:t1", "thread:t2", "cron:x"].map((k) => store.getLease(k))),
    docs: await Promise.all((["datasets", "examples", "experiments", "experiment_runs", "feedback"] as const).map((c) => store.listDocs(c))),
  };
}

const threadIds = async (store: Store) => (await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc" })).map((t) => t.thread_id);
const runsOf = (store: Store, thread_id: string) => store.queryRuns({ thread_id, sortBy: "queue" });

describe("jsonFileStore files: damage", () => {
  it("drops a torn last log line with a warning naming file, offset and size, and keeps appending after it", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const whole = await readFile(log, "utf8");
    const lines = whole.trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    // Cut the last commit's line in half, as a crash during the append would.
    const cut = Math.floor(lines[5]!.length / 2);
    await truncate(log, whole.length - cut - 1);
    const warnings: string[] = [];
    let store = await openAt(dir, { onWarning: (m: string) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(log);
    expect(warnings[0]).toContain(`at byte ${whole.length - lines[5]!.length - 1}`);
    expect(warnings[0]).toContain(`(${lines[5]!.length - cut} bytes)`);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe(cpId(4));
    await store.commit([{ op: "checkpoint.put", checkpoint: chain("t1", 6)[5]! }]);
    await store.close();
    store = await openAt(dir);
    expect(await store.getCheckpoint({ thread_id: "t1" })).toEqual(chain("t1", 6)[5]);
    await store.close();
  });

  it("drops a complete last line that fails its checksum (a torn write), with the warning", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).trimEnd().split("\n");
    lines[5] = lines[5]!.replace('"seq":6', '"seq":7');
    await writeFile(log, lines.join("\n") + "\n");
    const warnings: string[] = [];
    const store = await openAt(dir, { onWarning: (m: string) => warnings.push(m) });
    expect(warnings[0]).toMatch(/dropped the torn last line/);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe(cpId(4));
    await store.close();
  });

  it("drops a last line whose newline was not written, so the next commit starts on a line of its own", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const whole = await readFile(log, "utf8");
    await truncate(log, whole.length - 1);
    const warnings: string[] = [];
    let store = await openAt(dir, { onWarning: (m: string) => warnings.push(m) });
    expect(warnings[0]).toMatch(/dropped the torn last line/);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.id).toBe(cpId(4));
    await store.commit([{ op: "thread.put", thread: thread("t1") }]);
    await store.close();
    store = await openAt(dir);
    expect(await store.getThread("t1")).toEqual(thread("t1"));
    await store.close();
  });

  it("refuses a damaged line with lines after it, naming the file, the offset and how to recover", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).split("\n");
    const offset = await lineOffset(log, 2);
    lines[2] = lines[2]!.slice(0, 10);
    await writeFile(log, lines.join("\n"));
    const before = await readFile(log, "utf8");
    const err = await openError(dir);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect(err!.message).toContain(`${log} is damaged at byte ${offset}`);
    expect(err!.message).toContain(`truncate -s ${offset}`);
    expect(err!.message).toMatch(/backup/);
    // Nothing was changed, and the directory is not left locked.
    expect(await readFile(log, "utf8")).toBe(before);
    await expect(stat(join(dir, "lock"))).rejects.toThrow();
  });

  it("refuses a checksum mismatch that is not at the tail", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).split("\n");
    // Still valid JSON, but not what was written.
    lines[1] = lines[1]!.replace('"step":1', '"step":7');
    expect(() => JSON.parse(lines[1]!)).not.toThrow();
    await writeFile(log, lines.join("\n"));
    const err = await openError(dir);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect(err!.message).toContain(`${log} is damaged at byte ${await lineOffset(log, 1)}`);
    expect(err!.message).toContain("fails its checksum");
  });

  it("refuses a damaged first line (not read as an older format)", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).split("\n");
    lines[0] = "garbage" + lines[0]!.slice(7);
    await writeFile(log, lines.join("\n"));
    const err = await openError(dir);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect(err!.message).toContain(`${log} is damaged at byte 0`);
  });

  it("refuses a log with a commit missing in the middle", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).split("\n");
    lines.splice(2, 1);
    await writeFile(log, lines.join("\n"));
    const err = await openError(dir);
    expect(err!.message).toContain(`${log} is damaged at byte ${await lineOffset(log, 2)}`);
    expect(err!.message).toMatch(/commit 4 after commit 2: commits are missing/);
  });

  it("refuses a truncated snapshot, naming the file and the byte where it ends", async () => {
    const dir = await crashedCopy();
    const file = join(dir, "snapshot.json.gz");
    const store = await openAt(dir);
    await store.close(); // folds the log into the snapshot
    await writeFile(file, (await readFile(file)).subarray(0, 100));
    const err = await openError(dir);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect(err!.message).toContain(`${file} is damaged at byte 100`);
    expect(err!.message).toMatch(/truncated/);
    expect(err!.message).toMatch(/move the damaged file aside/);
  });

  it("refuses an empty snapshot, {} as a snapshot and a snapshot that fails its checksum", async () => {
    const dir = await crashedCopy();
    const file = join(dir, "snapshot.json.gz");
    const store = await openAt(dir);
    await store.close();
    const zipped = await readFile(file);
    const text = gunzipSync(zipped).toString("utf8");
    for (const [damage, message] of [
      [Buffer.alloc(0), /damaged at byte 0: it ends there/],
      [Buffer.from("{}"), /damaged at byte 0: it is not gzip data/],
      [gzipSync("{}"), /damaged at byte 0: it is JSON but not a snapshot/],
      [gzipSync(text.slice(0, 200)), /damaged at byte 200: it ends there in the middle of its JSON/],
      [gzipSync(text.replace('"step":3', '"step":4')), /damaged at byte \d+: its ops fail their checksum/],
    ] as const) {
      await writeFile(file, damage);
      const err = await openError(dir);
      expect(GraphdockError.is(err, "conflict")).toBe(true);
      expect(err!.message).toContain(file);
      expect(err!.message).toMatch(message);
    }
    await writeFile(file, zipped);
    const again = await openAt(dir);
    expect(await again.getCheckpoint({ thread_id: "t1" })).toEqual(chain("t1", 6)[5]);
    await again.close();
  });

  it("skips log lines already folded into the snapshot (a crash between writing the snapshot and emptying the log)", async () => {
    const dir = await crashedCopy();
    const log = await readFile(join(dir, "log.jsonl"));
    const store = await openAt(dir);
    await store.close(); // snapshot with seq 6, log emptied
    await writeFile(join(dir, "log.jsonl"), log);
    const again = await openAt(dir);
    expect(await again.listCheckpoints("t1")).toEqual(chain("t1", 6).reverse());
    await again.commit([{ op: "thread.put", thread: thread("t1") }]);
    await again.close();
    const last = await openAt(dir);
    expect(await last.getThread("t1")).toEqual(thread("t1"));
    await last.close();
  });

  it("refuses data written in a newer storage format, naming both versions", async () => {
    const dir = join(root, `newer-${n++}`);
    await mkdir(dir);
    await writeFile(join(dir, "snapshot.json"), JSON.stringify({ format: 99, seq: 0, ops: [] }));
    const err = await openError(dir);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect(err!.message).toContain("format 99");
    expect(err!.message).toContain(`up to ${JSON_FILE_FORMAT}`);
  });
});

describe("jsonFileStore files: one writer per directory", () => {
  it("refuses a directory another live process has open, and takes over a dead one's lock", async () => {
    const dir = join(root, `locked-${n++}`);
    await mkdir(dir);
    await writeFile(join(dir, "lock"), String(process.ppid));
    const err = await openAt(dir).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(String(process.ppid));

    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    await writeFile(join(dir, "lock"), String(dead));
    const store = await openAt(dir);
    expect(await readFile(join(dir, "lock"), "utf8")).toBe(String(process.pid));
    await store.close();
    await expect(stat(join(dir, "lock"))).rejects.toThrow();
  });

  it("refuses a second store on the same directory in this process (also through a symlink) until the first closes", async () => {
    const dir = join(root, `twice-${n++}`);
    const first = await openAt(dir);
    await first.commit([{ op: "thread.put", thread: thread("t1") }]);
    const link = join(root, `link-${n++}`);
    await symlink(dir, link);
    for (const path of [dir, link, dir + "/"]) {
      const err = await jsonFileStore(path).open().catch((e: unknown) => e);
      expect(GraphdockError.is(err, "conflict")).toBe(true);
      expect((err as Error).message).toMatch(/already open in this process/);
    }
    // The refused stores changed nothing: the first still writes, and its lock is in place.
    await first.commit([{ op: "thread.put", thread: thread("t2") }]);
    expect(await readFile(join(dir, "lock"), "utf8")).toBe(String(process.pid));
    await first.close();
    const second = await openAt(link);
    expect(await threadIds(second)).toEqual(["t1", "t2"]);
    await second.close();
  });
});

describe("jsonFileStore files: commits", () => {
  it("writes nothing for a commit that fails, in memory or in the log", async () => {
    const dir = join(root, `failed-${n++}`);
    let store = await openAt(dir);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, ...chain("t1", 2).map((checkpoint): WriteOp => ({ op: "checkpoint.put", checkpoint }))]);
    const log = join(dir, "log.jsonl");
    const bytes = (await stat(log)).size;
    const before = await dump(store);
    const failing: WriteOp[][] = [
      // An op the memory store refuses, after ops that would have succeeded.
      [{ op: "thread.put", thread: thread("t2") }, { op: "writes.put", thread_id: "t1", checkpoint_id: "nope", task_id: "a", writes: [] }],
      // A value JSON cannot hold.
      [{ op: "thread.put", thread: thread("t3", { metadata: { n: 1n } as never }) }],
      // An expectation that does not hold, after an op that would have succeeded.
      [{ op: "thread.put", thread: thread("t5") }, { op: "run.put", run: run("r9", "t1"), expect: { exists: true } }],
      [{ op: "lease.put", lease: { key: "thread:t1", owner: "a", expires_at: 10, data: {} }, expect: { state: "held", now: 0 } }],
    ];
    for (const ops of failing) {
      await expect(store.commit(ops)).rejects.toThrow();
      expect((await stat(log)).size).toBe(bytes);
      expect(await dump(store)).toEqual(before);
    }
    await store.commit([{ op: "thread.put", thread: thread("t4") }]);
    await store.close();
    store = await openAt(dir);
    expect(await threadIds(store)).toEqual(["t1", "t4"]);
    await store.close();
  });

  it("restores every op kind after reopening, from the log (a crash) and from the snapshot (a close)", async () => {
    const dir = join(root, `kinds-${n++}`);
    const store = await openAt(dir);
    const cps = chain("t1", 4);
    const steps: WriteOp[][] = [
      [{ op: "assistant.put", assistant: assistant("a1") }],
      [{ op: "assistant_version.put", version: version("a1", 1) }],
      [{ op: "assistant.put", assistant: assistant("a2") }, { op: "assistant_version.put", version: version("a2", 1) }],
      [{ op: "assistant.delete", assistant_id: "a2" }],
      [{ op: "thread.put", thread: thread("t1") }],
      [{ op: "thread.put", thread: thread("t1", { status: "busy", values: { messages: messages(3) } }) }],
      [{ op: "checkpoint.put", checkpoint: cps[0]! }],
      [{ op: "checkpoint.put", checkpoint: cps[1]! }, { op: "checkpoint.put", checkpoint: cps[2]! }],
      [{ op: "writes.put", thread_id: "t1", checkpoint_id: cps[2]!.checkpoint.id, task_id: "k", writes: [["k", "messages", [{ type: "ai", content: "w" }]]] }],
      [{ op: "checkpoint.put", checkpoint: cps[3]! }, { op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cps[1]!.checkpoint.id] }],
      [{ op: "run.put", run: run("r1", "t1", { status: "pending" }) }],
      [{ op: "run.put", run: run("r1", "t1", { status: "success" }) }, { op: "run.put", run: run("r2", "t1", { status: "pending" }) }],
      [{ op: "cancel.put", request: { run_id: "r2", thread_id: "t1", action: "interrupt", requested_at: "2026-01-01T00:00:00.000Z" } }],
      [{ op: "run.delete", run_id: "r2" }],
      [{ op: "run.put", run: run("r4", "t1", { status: "running" }), expect: { exists: false } }, { op: "cancel.put", request: { run_id: "r4", thread_id: "t1", action: "rollback", requested_at: "2026-01-01T00:00:01.000Z" } }],
      [{ op: "lease.put", lease: { key: "thread:t1", owner: "rt1", expires_at: 1000, data: { run_id: "r4" } }, expect: { state: "free", now: 0 } }, { op: "notify", topic: "runs", payload: "r4" }],
      [{ op: "lease.put", lease: { key: "thread:t2", owner: "rt2", expires_at: 5, data: {} } }, { op: "lease.put", lease: { key: "cron:x", owner: "rt2", expires_at: 9, data: {} } }],
      [{ op: "lease.delete", key: "thread:t2", owner: "someone else" }, { op: "lease.delete", key: "cron:x" }],
      [{ op: "checkpoint.put", checkpoint: { ...cps[0]!, checkpoint_ns: "sub:1" } }],
      [{ op: "checkpoint.put", checkpoint: { ...cps[1]!, checkpoint_ns: "sub:1" } }, { op: "writes.put", thread_id: "t1", checkpoint_ns: "sub:1", checkpoint_id: cps[1]!.checkpoint.id, task_id: "s", writes: [["s", "x", 1]] }],
      [{ op: "thread.put", thread: thread("t2") }, { op: "run.put", run: run("r3", "t2") }],
      [{ op: "thread.delete", thread_id: "t2" }],
      [{ op: "doc.put", collection: "datasets", id: "d1", parent: null, doc: { name: "$x", list: [1, 2] } }],
      [{ op: "doc.put", collection: "examples", id: "e1", parent: "d1", doc: { n: 1 } }, { op: "doc.delete", collection: "datasets", id: "nope" }],
      [{ op: "doc.delete", collection: "examples", id: "e1" }],
    ];
    for (const [i, ops] of steps.entries()) {
      await store.commit(ops);
      const live = await dump(store);
      // Opening voids the leases of whoever held the directory before (D64); the rest is kept.
      const expected = { ...live, leases: live.leases.map(() => undefined) };
      const copy = join(root, `kinds-copy-${n++}`);
      await copyDir(dir, copy, { recursive: true });
      await rm(join(copy, "lock"));
      let again = await openAt(copy);
      expect(await dump(again), `after step ${i + 1}, from the log`).toEqual(expected);
      await again.close();
      again = await openAt(copy);
      expect(await dump(again), `after step ${i + 1}, from the snapshot`).toEqual(expected);
      await again.close();
    }
    await store.close();
  });
});

describe("jsonFileStore files: format", () => {
  it("writes readable JSON lines: one commit per line with its checksum and plain ops", async () => {
    const dir = join(root, `readable-${n++}`);
    const store = await openAt(dir);
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "notify", topic: "x" }]);
    await store.commit([{ op: "run.put", run: run("r1", "t1"), expect: { exists: false } }]);
    const lines = (await readFile(join(dir, "log.jsonl"), "utf8")).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { crc: expect.stringMatching(/^[0-9a-f]{8}$/), seq: 1, ops: [{ op: "thread.put", thread: thread("t1") }] },
      { crc: expect.stringMatching(/^[0-9a-f]{8}$/), seq: 2, ops: [{ op: "run.put", run: run("r1", "t1") }] },
    ]);
    await store.close();
    const snap = JSON.parse(gunzipSync(await readFile(join(dir, "snapshot.json.gz"))).toString("utf8"));
    expect(snap).toMatchObject({ format: JSON_FILE_FORMAT, seq: 2 });
    expect(snap.ops).toContainEqual({ op: "thread.put", thread: thread("t1") });
  });

  it("writes a checkpoint as a diff against its parent: a growing list costs its new items only", async () => {
    const dir = join(root, `diff-${n++}`);
    let store = await openAt(dir);
    const cps = chain("t1", 300);
    for (const cp of cps) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const lines = (await readFile(join(dir, "log.jsonl"), "utf8")).trimEnd().split("\n");
    const ops = lines.map((l) => JSON.parse(l).ops[0]);
    expect(ops[0].checkpoint).toEqual(cps[0]);
    expect(ops[1]).toMatchObject({ op: "checkpoint.put", thread_id: "t1", checkpoint_ns: "", base: cpId(0) });
    expect(ops[299].diff.sub.checkpoint.sub.channel_values.add.messages).toEqual([(cps[299]!.checkpoint.channel_values.messages as unknown[]).at(-1)]);
    // A line's size does not grow with the list.
    expect(lines[299]!.length).toBeLessThan(lines[10]!.length + 20);
    // Replace the parent of cps[2], then delete it: cps[2] keeps its own content.
    const replaced = { ...cps[1]!, metadata: { ...cps[1]!.metadata, note: "replaced" } };
    await store.commit([{ op: "checkpoint.put", checkpoint: replaced }]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cps[1]!.checkpoint.id] }]);
    const expected = [cps[0], ...cps.slice(2)].reverse();
    for (const reopen of [false, true]) {
      if (reopen) {
        await store.close();
        store = await openAt(dir);
      }
      expect(await store.listCheckpoints("t1")).toEqual(expected);
    }
    await store.close();
  });

  it("keeps keys named __proto__ and constructor through a diff and a reopen", async () => {
    const dir = join(root, `proto-${n++}`);
    let store = await openAt(dir);
    const values = JSON.parse('{"a":{"__proto__":{"x":1},"list":[1,2]},"constructor":1}');
    const next = JSON.parse('{"a":{"__proto__":{"x":2},"list":[1,2,3]},"constructor":2,"__proto__":[5]}');
    await store.commit([{ op: "thread.put", thread: thread("t1", { values }) }]);
    await store.commit([{ op: "thread.put", thread: thread("t1", { values: next }) }]);
    for (const reopen of [false, true]) {
      if (reopen) {
        await store.close();
        store = await openAt(dir);
      }
      expect(JSON.stringify((await store.getThread("t1"))?.values)).toBe(JSON.stringify(next));
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    await store.close();
  });

  it("writes runs and threads as diffs and restores them after updates and a deleted base", async () => {
    const dir = join(root, `runs-${n++}`);
    let store = await openAt(dir);
    const r1 = run("r1", "t1", { status: "pending" });
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "run.put", run: r1 }]);
    await store.commit([{ op: "run.put", run: { ...r1, status: "success", metadata: { a: 1 } } }, { op: "thread.put", thread: thread("t1", { status: "busy" }) }]);
    const r2 = run("r2", "t1", { metadata: { b: [1, 2] }, kwargs: { input: { x: 1 } } });
    await store.commit([{ op: "run.put", run: r2 }]);
    await store.commit([{ op: "run.delete", run_id: "r2" }]);
    const r3 = run("r3", "t1", { status: "error" });
    await store.commit([{ op: "run.put", run: r3 }]);
    const ops = (await readFile(join(dir, "log.jsonl"), "utf8")).trimEnd().split("\n").map((l) => JSON.parse(l).ops);
    expect(ops[1]).toEqual([
      { op: "run.put", run_id: "r1", base: "r1", diff: { set: { status: "success" }, sub: { metadata: { set: { a: 1 } } } } },
      { op: "thread.put", thread_id: "t1", diff: { set: { status: "busy" } } },
    ]);
    const expected = [{ ...r1, status: "success", metadata: { a: 1 } }, r3];
    expect(await runsOf(store, "t1")).toEqual(expected);
    await store.close();
    store = await openAt(dir);
    expect(await runsOf(store, "t1")).toEqual(expected);
    await store.close();
  });

  it("stores a growing chat in bytes linear in its length", async () => {
    const dir = join(root, `linear-${n++}`);
    const store = await openAt(dir);
    const size = async () => {
      let total = 0;
      for (const f of await readdir(dir)) total += (await stat(join(dir, f))).size;
      return total;
    };
    const cps = chain("t1", 400);
    for (const cp of cps.slice(0, 200)) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const first = await size();
    for (const cp of cps.slice(200)) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const second = await size();
    // Full values would make the second half cost about 3x the first; deltas cost about the same.
    expect(second - first).toBeLessThan(first * 1.5);
    expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cpId(123) })).toEqual(cps[123]);
    await store.close();
  });
});

describe("jsonFileStore files: migration", () => {
  it("migrates format 0 (plain ops) and rewrites it in the current format", async () => {
    const dir = join(root, `old-${n++}`);
    await mkdir(dir);
    const cps = chain("t1", 5);
    const ops: WriteOp[] = [{ op: "thread.put", thread: thread("t1") }, ...cps.map((checkpoint): WriteOp => ({ op: "checkpoint.put", checkpoint }))];
    await writeFile(join(dir, "snapshot.json"), JSON.stringify({ format: 0, seq: 1, ops: ops.slice(0, 3) }));
    await writeFile(join(dir, "log.jsonl"), JSON.stringify({ f: 0, s: 2, o: ops.slice(3) }) + "\n");
    const store = await openAt(dir);
    for (const cp of cps) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
    expect((await snapshotOf(dir)).format).toBe(JSON_FILE_FORMAT);
    await expect(stat(join(dir, "snapshot.json"))).rejects.toThrow();
    expect((await stat(join(dir, "log.jsonl"))).size).toBe(0);
    await store.close();
  });

  it("migrates format 1 (checkpoints in full, compact markers) from a fixture", async () => {
    const dir = join(root, `v1-${n++}`);
    await copyDir(new URL("./fixtures/json-file-format-1", import.meta.url).pathname, dir, { recursive: true });
    expect(JSON.parse(await readFile(join(dir, "snapshot.json"), "utf8")).format).toBe(1);
    const cps = chain("t1", 6);
    let store = await openAt(dir);
    const check = async () => {
      for (const cp of cps) expect(await store.getCheckpoint({ thread_id: "t1", checkpoint_id: cp.checkpoint.id })).toEqual(cp);
      expect((await store.listCheckpoints("t1")).map((c) => c.checkpoint.id)).toEqual(cps.map((c) => c.checkpoint.id).reverse());
      expect(await store.getThread("t1")).toEqual(thread("t1"));
    };
    await check();
    const snap = await snapshotOf(dir);
    expect(snap.format).toBe(JSON_FILE_FORMAT);
    expect(snap.ops).toContainEqual(expect.objectContaining({ op: "checkpoint.put", base: cpId(0) }));
    expect((await stat(join(dir, "log.jsonl"))).size).toBe(0);
    await store.close();
    store = await openAt(dir);
    await check();
    await store.close();
  });

  it("migrates lists the old engine kept as $chunks (list logs with a chunk size) to plain arrays", async () => {
    const dir = join(root, `chunks-${n++}`);
    await mkdir(dir);
    const [cp] = chain("t1", 1);
    const stored = { ...cp!, checkpoint: { ...cp!.checkpoint, channel_values: { messages: { l: "L", n: 5, c: 2 }, step: { v: 0 } } } };
    const ops = [
      { op: "thread.put", thread: { ...thread("t1"), values: { messages: { l: "L", n: 4 } } } },
      { op: "list.append", thread_id: "t1", list: "L", at: 0, items: [1, 2, 3, 4, 5] },
      { op: "checkpoint.put", checkpoint: stored },
    ];
    await writeFile(join(dir, "snapshot.json"), JSON.stringify({ format: 1, seq: 1, ops }));
    const store = await openAt(dir);
    expect((await store.getCheckpoint({ thread_id: "t1" }))?.checkpoint.channel_values).toEqual({ messages: [1, 2, 3, 4, 5], step: 0 });
    expect((await store.getThread("t1"))?.values).toEqual({ messages: [1, 2, 3, 4] });
    await store.close();
  });

  it("migrates format 2 (diffs, list logs, packed ids) from a fixture, snapshot and log", async () => {
    const dir = join(root, `v2-${n++}`);
    await copyDir(new URL("./fixtures/json-file-format-2", import.meta.url).pathname, dir, { recursive: true });
    expect(JSON.parse(await readFile(join(dir, "snapshot.json"), "utf8")).format).toBe(2);
    const cps = chain("t1", 6);
    let store = await openAt(dir);
    const withWrites = { ...cps[5]!, pending_writes: [["task1", "messages", [{ type: "ai", content: "pending" }]] as const] };
    const check = async () => {
      expect(await store.listCheckpoints("t1")).toEqual([withWrites, ...cps.slice(0, 5).reverse()]);
      expect(await store.getThread("t1")).toEqual(thread("t1", { values: cps[5]!.checkpoint.channel_values }));
      expect(await runsOf(store, "t1")).toEqual([run("r1", "t1", { status: "success" }), run("r2", "t1", { status: "error" })]);
      expect(await store.queryAssistants({})).toEqual([assistant("a1")]);
      expect(await store.queryAssistantVersions({ assistant_id: "a1" })).toEqual([version("a1", 1)]);
      expect(await store.listDocs("datasets")).toEqual([{ id: "d1", parent: null, doc: { name: "$weird", n: [1, 2] } }]);
    };
    await check();
    expect((await snapshotOf(dir)).format).toBe(JSON_FILE_FORMAT);
    await store.close();
    store = await openAt(dir);
    await check();
    await store.close();
  });
});
