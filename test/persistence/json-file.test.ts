import { appendFile, cp as copyDir, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { AgentdockError } from "../../src/errors.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { STORAGE_FORMAT_VERSION, type Store, type WriteOp } from "../../src/persistence/types.js";
import { chain, cpId, storeContract, thread } from "./contract.js";

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
    await appendFile(join(dir, "log.jsonl"), JSON.stringify({ f: STORAGE_FORMAT_VERSION + 1, s: 7, o: [] }) + "\n");
    const err = await openAt(dir).catch((e: unknown) => e);
    expect(AgentdockError.is(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(`format ${STORAGE_FORMAT_VERSION + 1}`);

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
    expect(snap.format).toBe(STORAGE_FORMAT_VERSION);
    expect((await stat(join(dir, "log.jsonl"))).size).toBe(0);
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
