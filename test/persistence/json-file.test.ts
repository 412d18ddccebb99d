import { appendFile, cp as copyDir, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { AgentdockError } from "../../src/errors.js";
import { JSON_FILE_FORMAT, jsonFileStore } from "../../src/persistence/json-file/index.js";
import type { Store, WriteOp } from "../../src/persistence/types.js";
import { chain, cpId, run, storeContract, thread } from "./contract.js";

const root = await mkdtemp(join(tmpdir(), "agentdock-json-"));
afterAll(() => rm(root, { recursive: true, force: true }));
let n = 0;
const dirs = new WeakMap<Store, string>();

async function openAt(dir: string, options = {}): Promise<Store> {
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

const commits = () => chain("t1", 6).map((checkpoint): WriteOp[] => [{ op: "checkpoint.put", checkpoint }]);

/** Six commits, then a copy of the directory as a process killed at that moment leaves it. */
async function crashedCopy(): Promise<string> {
  const dir = join(root, `live-${n++}`);
  const store = await openAt(dir);
  for (const ops of commits()) await store.commit(ops);
  const copy = join(root, `crashed-${n++}`);
  await copyDir(dir, copy, { recursive: true });
  await store.close();
  return copy;
}

describe("jsonFileStore files", () => {
  it("drops a torn last log line on open and keeps appending after it", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const whole = await readFile(log, "utf8");
    const lines = whole.trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    // Cut the last commit's line in half, as a crash during the append would.
    await truncate(log, whole.length - Math.floor(lines[5]!.length / 2));
    let store = await openAt(dir);
    expect((await store.getCheckpoint("t1"))?.checkpoint.id).toBe(cpId(4));
    await store.commit([{ op: "checkpoint.put", checkpoint: chain("t1", 6)[5]! }]);
    await store.close();
    store = await openAt(dir);
    expect(await store.getCheckpoint("t1")).toEqual(chain("t1", 6)[5]);
    await store.close();
  });

  it("refuses a damaged line that is not the last one", async () => {
    const dir = await crashedCopy();
    const log = join(dir, "log.jsonl");
    const lines = (await readFile(log, "utf8")).split("\n");
    lines[2] = lines[2]!.slice(0, 10);
    await writeFile(log, lines.join("\n"));
    await expect(openAt(dir)).rejects.toThrow(/damaged/);
  });

  it("refuses data written in a newer storage format, naming both versions", async () => {
    const dir = await crashedCopy();
    await appendFile(join(dir, "log.jsonl"), JSON.stringify({ f: JSON_FILE_FORMAT + 1, s: 7, o: [] }) + "\n");
    const err = await openAt(dir).catch((e: unknown) => e);
    expect(AgentdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(`format ${JSON_FILE_FORMAT + 1}`);

    const dir2 = join(root, `newer-${n++}`);
    await mkdir(dir2);
    await writeFile(join(dir2, "snapshot.json"), JSON.stringify({ format: 99, seq: 0, ops: [] }));
    await expect(openAt(dir2)).rejects.toThrow(/format 99/);
  });

  it("refuses a directory another live process has open, and takes over a dead one's lock", async () => {
    const dir = join(root, `locked-${n++}`);
    await mkdir(dir);
    await writeFile(join(dir, "lock"), String(process.ppid));
    const err = await openAt(dir).catch((e: unknown) => e);
    expect(AgentdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(String(process.ppid));

    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    await writeFile(join(dir, "lock"), String(dead));
    const store = await openAt(dir);
    expect(await readFile(join(dir, "lock"), "utf8")).toBe(String(process.pid));
    await store.close();
    await expect(stat(join(dir, "lock"))).rejects.toThrow();
  });

  it("migrates format 0 (plain ops) and rewrites it in the current format", async () => {
    const dir = join(root, `old-${n++}`);
    await mkdir(dir);
    const cps = chain("t1", 5);
    const ops: WriteOp[] = [{ op: "thread.put", thread: thread("t1") }, ...cps.map((checkpoint): WriteOp => ({ op: "checkpoint.put", checkpoint }))];
    await writeFile(join(dir, "snapshot.json"), JSON.stringify({ format: 0, seq: 1, ops: ops.slice(0, 3) }));
    await writeFile(join(dir, "log.jsonl"), JSON.stringify({ f: 0, s: 2, o: ops.slice(3) }) + "\n");
    const store = await openAt(dir);
    for (const cp of cps) expect(await store.getCheckpoint("t1", cp.checkpoint.id)).toEqual(cp);
    const snap = JSON.parse(await readFile(join(dir, "snapshot.json"), "utf8"));
    expect(snap.format).toBe(JSON_FILE_FORMAT);
    expect((await stat(join(dir, "log.jsonl"))).size).toBe(0);
    await store.close();
  });

  it("migrates format 1 (checkpoints in full) from a fixture and rewrites it as diffs", async () => {
    const dir = join(root, `v1-${n++}`);
    await copyDir(new URL("./fixtures/json-file-format-1", import.meta.url).pathname, dir, { recursive: true });
    expect(JSON.parse(await readFile(join(dir, "snapshot.json"), "utf8")).format).toBe(1);
    const cps = chain("t1", 6);
    let store = await openAt(dir);
    const check = async () => {
      for (const cp of cps) expect(await store.getCheckpoint("t1", cp.checkpoint.id)).toEqual(cp);
      expect((await store.listCheckpoints("t1")).map((c) => c.checkpoint.id)).toEqual(cps.map((c) => c.checkpoint.id).reverse());
      expect(await store.getThread("t1")).toEqual(thread("t1"));
    };
    await check();
    const text = await readFile(join(dir, "snapshot.json"), "utf8");
    expect(JSON.parse(text).format).toBe(JSON_FILE_FORMAT);
    expect(text).toContain("checkpoint.diff");
    expect((await stat(join(dir, "log.jsonl"))).size).toBe(0);
    await store.close();
    store = await openAt(dir);
    await check();
    await store.close();
  });

  it("writes a checkpoint as a diff against its parent and rebuilds it after replaced or deleted parents", async () => {
    const dir = join(root, `diff-${n++}`);
    let store = await openAt(dir);
    const cps = chain("t1", 4);
    for (const cp of cps) await store.commit([{ op: "checkpoint.put", checkpoint: cp }]);
    const log = await readFile(join(dir, "log.jsonl"), "utf8");
    expect(log.split("checkpoint.diff").length - 1).toBe(3);
    // Replace the parent of cps[2], then delete it: cps[2] keeps its own content.
    const replaced = { ...cps[1]!, metadata: { ...cps[1]!.metadata, note: "replaced" } };
    await store.commit([{ op: "checkpoint.put", checkpoint: replaced }]);
    await store.commit([{ op: "checkpoint.delete", thread_id: "t1", checkpoint_ids: [cps[1]!.checkpoint.id] }]);
    const expected = [cps[0], cps[2], cps[3]];
    for (const reopen of [false, true]) {
      if (reopen) {
        await store.close();
        store = await openAt(dir);
      }
      expect(await store.listCheckpoints("t1")).toEqual(expected.reverse());
      expected.reverse();
    }
    await store.close();
  });

  it("writes runs as diffs and restores them after updates and a deleted base", async () => {
    const dir = join(root, `runs-${n++}`);
    let store = await openAt(dir);
    const r1 = run("r1", "t1", { status: "pending" });
    await store.commit([{ op: "thread.put", thread: thread("t1") }, { op: "run.put", run: r1 }]);
    await store.commit([{ op: "run.put", run: { ...r1, status: "success", metadata: { a: 1 } } }]);
    const r2 = run("r2", "t1", { metadata: { b: [1, 2] }, kwargs: { input: { x: 1 } } });
    await store.commit([{ op: "run.put", run: r2 }]);
    await store.commit([{ op: "run.delete", run_id: "r2" }]);
    const r3 = run("r3", "t1", { status: "error" });
    await store.commit([{ op: "run.put", run: r3 }]);
    expect(await readFile(join(dir, "log.jsonl"), "utf8")).toContain("run.diff");
    const expected = [{ ...r1, status: "success", metadata: { a: 1 } }, r3];
    const byId = (a: { run_id: string }, b: { run_id: string }) => a.run_id.localeCompare(b.run_id);
    expect((await store.listRuns("t1")).sort(byId)).toEqual(expected);
    await store.close();
    store = await openAt(dir);
    expect((await store.listRuns("t1")).sort(byId)).toEqual(expected);
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
    expect(await store.getCheckpoint("t1", cpId(123))).toEqual(cps[123]);
    await store.close();
  });
});
