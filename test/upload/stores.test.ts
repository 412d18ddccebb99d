import "fake-indexeddb/auto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryStore, type Store } from "../../src/index.js";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { request, row, rowId, setup, snapshot } from "./helpers.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-upload-"));
afterAll(() => rm(root, { recursive: true, force: true }));

/** Each store with a way to reopen the same data (memory: the same instance). */
const stores: Array<[string, () => { open: () => Promise<Store> }]> = [
  ["memory", () => {
    const store = memoryStore();
    return { open: async () => store };
  }],
  ["json-file", () => {
    const dir = join(root, `s-${Math.random().toString(36).slice(2)}`);
    return { open: () => opened(jsonFileStore(dir)) };
  }],
  ["indexeddb", () => {
    const name = `upload-${Math.random().toString(36).slice(2)}`;
    return { open: () => opened(indexedDbStore(name)) };
  }],
];

async function opened(store: Store): Promise<Store> {
  await store.open();
  return store;
}

describe.each(stores)("upload on the %s store", (kind, make) => {
  it("persists what an upload creates and reads it back after reopening", async () => {
    const place = make();
    const first = await place.open();
    const { experiments } = setup(first);
    const a = await experiments.upload(request({ experiment_name: "a", results: [row(1, 1, { evaluation_scores: [{ key: "k", score: 0 }] }), row(2, 2)] }));
    const b = await experiments.upload(
      request({ experiment_name: "b", summary_experiment_scores: [{ key: "f1", score: 0.5 }], results: [row(1, 3, { evaluation_scores: [{ key: "k", score: 1 }] })] }),
    );
    const before = await snapshot(first);
    if (kind !== "memory") await first.close();

    const again = await place.open();
    expect(await snapshot(again)).toBe(before);
    const reread = setup(again);
    expect(await reread.datasets.get(a.dataset.id)).toEqual(b.dataset);
    expect(await reread.experiments.get(b.experiment.id)).toEqual(b.experiment);
    expect((await reread.datasets.examples(a.dataset.id)).map((e) => e.id)).toEqual([rowId(1), rowId(2)]);
    expect((await reread.experiments.runs(a.experiment.id)).map((r) => [r.latency, r.feedback.map((f) => f.score)])).toEqual([
      [1, [0]],
      [2, []],
    ]);
    const cmp = await reread.experiments.compare([a.experiment.id, b.experiment.id]);
    expect(cmp.keys[0]!.experiments[1]!.vs_baseline).toMatchObject({ improved: 1, missing: 1 });
    await again.close();
  });

  it("writes nothing for a refused upload", async () => {
    const store = await make().open();
    const { experiments } = setup(store);
    await experiments.upload(request({ experiment_name: "a" }));
    const before = await snapshot(store);
    await expect(experiments.upload(request({ experiment_name: "a", dataset_name: "other" }))).rejects.toMatchObject({ code: "conflict" });
    await expect(experiments.upload(request({ experiment_name: "b", results: [row(1, 99999)] }))).rejects.toMatchObject({ code: "invalid_input" });
    expect(await snapshot(store)).toBe(before);
    await store.close();
  });
});
