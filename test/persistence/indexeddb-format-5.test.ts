// Storage format 5 of the IndexedDB store (schema 6): leaf diffs move integer and time leaves of
// their base by shifts, new bases keep the leaf paths of the previous base, and the upgrade from
// format 4 diffs every row again against its base, reading back exactly what format 4 read.
import "fake-indexeddb/auto";
import { openDB } from "idb";
import { describe, expect, it } from "vitest";
import { DB_VERSION, INDEXEDDB_FORMAT } from "../../src/persistence/indexeddb/index.js";
import { diffLeaves, leavesOf, patchLeaves, resolveItems, shareItems, unionBase } from "../../src/persistence/indexeddb/rows.js";
import type { StoredCheckpoint } from "../../src/persistence/types.js";
import { echoTurn, newChat, saidShort } from "../../bench/echo-workload.js";
import { chain, run } from "./contract.js";
import { jsonGenerator } from "./generate.js";
import { olderDatabase, openAt, rawValues, readFixture } from "./indexeddb-fixtures.js";

/** What IndexedDB hands back: a structured clone. */
const stored = <T>(v: T): T => structuredClone(v);

let n = 0;


describe("IndexedDB rows, format 5 shifts", () => {
  const times = ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.250Z", "2025-12-31T23:59:59.999Z", "2026-03-01T10:00:00.000Z"];
  const generator = (seed: number) =>
    jsonGenerator(seed, {
      keys: ["a", "v", "ts", "n", "__proto__", "\u0000i"],
      scalars: [
        0, 1, 7, -3, 2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 53, 0.5, 1e21, NaN, Infinity,
        ...times,
        "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000+01:00", "+275760-09-13T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
        "", "x", null, true,
      ],
      arrayBelow: 0.5,
      maxItems: 3,
      maxKeys: 5,
    });

  it("rebuilds generated records with numbers and times from their diffs, exactly (unsafe integers, NaN, other time forms included)", () => {
    const g = generator(51);
    for (let i = 0; i < 2000; i++) {
      const base = g.object(0);
      const value = g.rand() < 0.2 ? g.object(0) : g.edit(base);
      const out = patchLeaves(stored(base), stored(diffLeaves(value, base)));
      expect(out).toEqual(value);
    }
  });

  it("stores moved versions, steps, list lengths and times as one shift each, not as values", () => {
    const base = {
      checkpoint: { ts: times[0], channel_versions: { a: 10, b: 10, c: 4 }, versions_seen: { n: { a: 9 } }, channel_values: { messages: { l: "L", n: 20 } } },
      metadata: { step: 9, run_id: "r1" },
    };
    const next = {
      checkpoint: { ts: times[1], channel_versions: { a: 13, b: 13, c: 4 }, versions_seen: { n: { a: 12 } }, channel_values: { messages: { l: "L", n: 22 } } },
      metadata: { step: 12, run_id: "r2" },
    };
    const diff = diffLeaves(next, base);
    expect(diff).toEqual([[8, "r2"], { "250": [0], "3": [1, 2, 4, 7], "2": [6] }]);
    expect(patchLeaves(base, stored(diff))).toEqual(next);
    // A time that is not in `toISOString` form, and a float, are stored as they are.
    const other = { ...next, checkpoint: { ...next.checkpoint, ts: "2026-01-01T00:00:01Z" }, metadata: { step: 12.5, run_id: "r1" } };
    const diff2 = diffLeaves(other, base);
    expect(diff2).toContainEqual([0, "2026-01-01T00:00:01Z"]);
    expect(diff2).toContainEqual([7, 12.5]);
    expect(patchLeaves(base, stored(diff2))).toEqual(other);
  });

  it("refuses a shift of a leaf that is no integer or time (a corrupt row), instead of reading a wrong value", () => {
    expect(() => patchLeaves({ a: "x" }, [{ "1": [0] }])).toThrow(/corrupt store/);
    expect(() => patchLeaves({ a: 1 }, [{ "1": [3] }])).toThrow(/corrupt store/);
  });
});

describe("IndexedDB bases, format 5 union of leaf paths", () => {
  const input = { checkpoint: { channel_values: { messages: { l: "L", n: 3 }, __start__: { v: { messages: [1] } } } }, metadata: { source: "input", writes: { __start__: { m: [1] } } } };
  const loop = { checkpoint: { channel_values: { messages: { l: "L", n: 4 }, "branch:to:echo": { v: null } } }, metadata: { source: "loop", writes: null } };
  const done = { checkpoint: { channel_values: { messages: { l: "L", n: 5 } } }, metadata: { source: "loop", writes: { echo: { m: [2] } } }, parent_checkpoint_id: "p" };

  it("keeps the paths of the previous base as absent leaves, objects over null, and records read back exactly against it", () => {
    const first = unionBase(done, undefined);
    expect(first).toBe(done);
    const base = unionBase(loop, unionBase(input, first));
    const paths = leavesOf(base, true).map(([p]) => p.join("."));
    expect(paths).toEqual(
      expect.arrayContaining([
        "checkpoint.channel_values.__start__.v.messages",
        "checkpoint.channel_values.branch:to:echo.v",
        "metadata.writes.__start__.m",
        "metadata.writes.echo.m",
      ]),
    );
    // The parent id is not carried over; `loop` itself is left as it was.
    expect(paths).not.toContain("parent_checkpoint_id");
    expect(loop.metadata.writes).toBeNull();
    for (const record of [input, loop, done]) {
      const diff = diffLeaves(record, base, true);
      expect(patchLeaves(stored(base), stored(diff), true)).toEqual(record);
    }
    // A checkpoint of a shape seen before names its leaves by position: no path is spelled out,
    // and the leaves it lacks that the base keeps as absent cost nothing.
    const spelled = (record: Record<string, unknown>) => diffLeaves(record, base, true).filter((d) => Array.isArray(d) && Array.isArray(d[0]));
    expect(spelled(input)).toEqual([]);
    expect(spelled(done)).toEqual([[["parent_checkpoint_id"], "p"]]);
    // (only leaves `loop` itself holds are removed for `input`).
    const removed = diffLeaves(input, base, true).flatMap((d) => (Array.isArray(d) && d.length === 1 ? [paths[d[0] as number]] : []));
    expect(removed).toEqual(["checkpoint.channel_values.branch:to:echo.v"]);
    // `metadata.writes` null where the base has writes: its path named by a base leaf's.
    const writesNull = diffLeaves(loop, base, true).find((d) => Array.isArray(d) && Array.isArray(d[0]));
    expect(writesNull).toEqual([[expect.any(Number), 2], null]);
  });

  it("reads back a caller's object that looks like an absent leaf, as it is", () => {
    const odd = { "\u0000u": 0 };
    const record = shareItems({ checkpoint: { channel_values: { x: { v: odd }, y: { v: [odd] } } }, metadata: { odd } }, new Map()) as Record<string, unknown>;
    const other = shareItems({ checkpoint: { channel_values: { z: { v: 1 } } }, metadata: {} }, new Map()) as Record<string, unknown>;
    for (const base of [stored(unionBase(record, other)), stored(unionBase(other, record))]) {
      for (const r of [record, other]) {
        const back = patchLeaves(base, stored(diffLeaves(r, base, true)), true);
        expect(resolveItems(back, () => undefined)).toEqual(resolveItems(r, () => undefined));
      }
    }
    expect(resolveItems(record, () => undefined)).toEqual({ checkpoint: { channel_values: { x: { v: odd }, y: { v: [odd] } } }, metadata: { odd } });
  });

  it("rebuilds generated records against a union of generated bases", () => {
    const g = jsonGenerator(52, { keys: ["a", "b", "v", "__proto__"], scalars: [null, 0, 3, "x", {}], arrayBelow: 0.4, maxItems: 2, maxKeys: 4 });
    for (let i = 0; i < 1000; i++) {
      const previous = g.object(0);
      const parent = g.rand() < 0.5 ? g.edit(previous) : g.object(0);
      const base = stored(unionBase(parent, previous));
      for (const record of [parent, previous, g.edit(parent)]) expect(patchLeaves(base, stored(diffLeaves(record, base, true)), true)).toEqual(record);
    }
  });
});

describe("indexedDbStore format 5", () => {
  it("reads back a long echo chat exactly, across bases and after reopening", async () => {
    const name = `f5-${n++}`;
    const store = await openAt(name);
    const chat = newChat("t-echo");
    for (let i = 0; i < 45; i++) await echoTurn(store, chat, saidShort(i));
    const all = await store.listCheckpoints("t-echo");
    expect(all).toHaveLength(135);
    expect(all.map((c) => c.metadata.step)).toEqual(Array.from({ length: 135 }, (_, i) => 134 - i));
    for (const [i, c] of all.entries()) expect(c.parent_checkpoint_id).toBe(all[i + 1]?.checkpoint.id ?? null);
    await store.close();
    const again = await openAt(name);
    expect(await again.listCheckpoints("t-echo")).toEqual(all);
    for (const c of [all[0]!, all[70]!, all[134]!]) expect(await again.getCheckpoint({ thread_id: "t-echo", checkpoint_id: c.checkpoint.id })).toEqual(c);
    await again.close();
    // Rows name leaves of a base by position: after the first base, no row spells the path of
    // a checkpoint's channel value.
    const rows = await rawValues(name, "cps");
    expect(rows.slice(70).filter((r) => r.includes('"channel_values"'))).toEqual([]);
  });
});

describe("indexedDbStore format 5 item references", () => {
  it("reads back a fork's own list and its parent's, with references to a row's own list by index", async () => {
    const name = `f5-${n++}`;
    const store = await openAt(name);
    const chat = newChat("t-fork");
    for (let i = 0; i < 6; i++) await echoTurn(store, chat, saidShort(i));
    const history = await store.listCheckpoints("t-fork");
    // A fork from the end of turn 3 (its base is the same), answered differently, with writes
    // that repeat items of its parent's list and of its own.
    const from = history[8]!;
    const parentMessages = (from.checkpoint.channel_values as { messages: Array<Record<string, unknown>> }).messages;
    const answer = { content: "another answer", additional_kwargs: {}, response_metadata: {}, type: "ai", name: null, id: "fork-ai", example: false, tool_calls: [], invalid_tool_calls: [], usage_metadata: null };
    const fork: StoredCheckpoint = {
      thread_id: "t-fork",
      checkpoint_ns: "",
      checkpoint: { ...from.checkpoint, id: "1f1e7925-784d-62c0-9000-00000000f0rk", channel_values: { messages: [...parentMessages.slice(0, -1), answer] } },
      metadata: { ...from.metadata, step: 99, writes: { echo: { messages: [answer, parentMessages[0]] } } },
      parent_checkpoint_id: history[9]!.checkpoint.id,
      pending_writes: [],
    };
    await store.commit([{ op: "checkpoint.put", checkpoint: fork }]);
    await store.commit([{ op: "writes.put", thread_id: "t-fork", checkpoint_id: fork.checkpoint.id, task_id: "t", writes: [["t", "messages", [answer, parentMessages[1]]]] }]);
    const withWrites = { ...fork, pending_writes: [["t", "messages", [answer, parentMessages[1]]]] };
    expect(await store.getCheckpoint({ thread_id: "t-fork", checkpoint_id: fork.checkpoint.id })).toEqual(withWrites);
    expect((await store.listCheckpoints("t-fork")).slice(1)).toEqual(history);
    await store.close();
    const again = await openAt(name);
    expect(await again.getCheckpoint({ thread_id: "t-fork" })).toEqual(withWrites);
    expect((await again.listCheckpoints("t-fork")).slice(1)).toEqual(history);
    await again.close();
    // Rows refer to items of their own list by index alone.
    const rows = await rawValues(name, "cps");
    expect(rows.some((r) => /\{"\\u0000i":\d+\}/.test(r))).toBe(true);
  });
});

describe("indexedDbStore format 5 runs", () => {
  it("keeps a run's assistant in its diffed rest, and filters and counts runs by assistant", async () => {
    const name = `f5-${n++}`;
    const store = await openAt(name);
    const runs = [
      run("r1", "t1", { assistant_id: "a1" }),
      run("r2", "t1", { assistant_id: "a2", status: "pending" }),
      run("r3", "t1", { assistant_id: "a1", status: "pending" }),
      run("r4", "t2", { assistant_id: "a2" }),
    ];
    await store.commit(runs.map((r) => ({ op: "run.put" as const, run: r })));
    const ids = (rs: Array<{ run_id: string }>) => rs.map((r) => r.run_id);
    expect(ids(await store.queryRuns({ assistant_id: "a1", sortBy: "queue" }))).toEqual(["r1", "r3"]);
    expect(ids(await store.queryRuns({ assistant_id: "a2", sortBy: "queue" }))).toEqual(["r2", "r4"]);
    expect(ids(await store.queryRuns({ assistant_id: "a2", thread_id: "t1", status: ["pending", "running"] }))).toEqual(["r2"]);
    expect(await store.queryRuns({ assistant_id: "a3" })).toEqual([]);
    expect(await store.countRuns({ assistant_id: "a1" })).toBe(2);
    expect(await store.countRuns({ assistant_id: "a2", status: "success" })).toBe(1);
    await store.close();
    // Read by another connection (no base cached), each run as it was put.
    const again = await openAt(name);
    expect(await again.countRuns({ assistant_id: "a2", thread_id: "t1" })).toBe(1);
    for (const r of runs) expect(await again.getRun(r.run_id)).toEqual(r);
    expect(await again.queryRuns({ assistant_id: "a1", sortBy: "queue" })).toEqual([runs[0], runs[2]]);
    await again.close();
    // A run row names its assistant only where it differs from its base run's (r2's).
    const rows = await rawValues(name, "runs");
    expect(rows.filter((r) => r.includes('"a1"'))).toHaveLength(0);
    expect(rows.filter((r) => r.includes('"a2"'))).toHaveLength(1);
  });
});

describe("indexedDbStore migration from schema 5 (format 4)", () => {
  const fixture = readFixture("indexeddb-format-4.json");


  it("reads back everything a format-4 database held, diffs its rows again (smaller), marks it format 5, and keeps writing to it", async () => {
    const name = `migrate5-${n++}`;
    await olderDatabase(name, 5, fixture);
    const before = (await rawValues(name, "cps")).join("").length + (await rawValues(name, "runs")).join("").length;
    const store = await openAt(name);
    const { expected } = fixture;
    expect(await store.queryThreads({ sortBy: "thread_id", sortOrder: "asc" })).toEqual(expected.threads);
    for (const [key, cps] of Object.entries(expected.checkpoints)) {
      const [thread, ns] = key.split("/");
      expect(await store.listCheckpoints(thread!, { checkpoint_ns: ns ?? "" })).toEqual(cps);
    }
    expect(await store.queryRuns({ sortBy: "queue" })).toEqual(expected.runs);
    for (const r of expected.runs) expect(await store.getRun(r.run_id)).toEqual(r);
    expect(await store.queryRuns({ assistant_id: "a1", sortBy: "queue" })).toEqual(expected.runs.filter((r) => (r as { assistant_id?: string }).assistant_id === "a1"));
    const db = await openDB(name);
    expect(db.version).toBe(DB_VERSION);
    expect((await db.get("meta", "format"))?.value).toBe(INDEXEDDB_FORMAT);
    db.close();
    // The echo chat's rows now hold shifts, and the rows take less room than format 4's.
    const rows = await rawValues(name, "cps");
    expect(rows.some((r) => /\{"-?\d+":\[\d/.test(r))).toBe(true);
    expect(rows.join("").length + (await rawValues(name, "runs")).join("").length).toBeLessThan(before);

    // New checkpoints and runs extend format-4 rows and bases.
    const chat = newChat("t-echo");
    const latest = (await store.getCheckpoint({ thread_id: "t-echo" }))!;
    Object.assign(chat, {
      messages: (latest.checkpoint.channel_values as { messages: unknown[] }).messages,
      step: latest.metadata.step as number,
      versions: 3 * 8,
      lastCheckpoint: latest.checkpoint.id,
    });
    await echoTurn(store, chat, "after the upgrade");
    const history = await store.listCheckpoints("t-echo");
    expect(history).toHaveLength(expected.checkpoints["t-echo"]!.length + 3);
    expect(history.slice(3)).toEqual(expected.checkpoints["t-echo"]);
    expect(history[2]!.parent_checkpoint_id).toBe(latest.checkpoint.id);
    expect((history[0]!.checkpoint.channel_values as { messages: Array<{ content: string }> }).messages.at(-1)!.content).toBe("You said: after the upgrade");
    const next = chain("t-b", 1, 3)[0]!;
    await store.commit([{ op: "checkpoint.put", checkpoint: next }, { op: "run.put", run: run("r4", "t-b") }]);
    expect((await store.getCheckpoint({ thread_id: "t-b" }))?.checkpoint).toEqual(next.checkpoint);
    expect(await store.getRun("r4")).toEqual(run("r4", "t-b"));
    await store.close();
  });
});
