/**
 * The items part of the Store contract (long-term memory): run by `storeContract` on
 * every store. Imports only `vitest` and core-safe src modules (the browser harness bundles it).
 */
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import type { Store, StoredItem, WriteOp } from "../../src/persistence/types.js";

const T = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();

export const item = (namespace: string[], key: string, value: Record<string, unknown> = {}, over: Partial<StoredItem> = {}): StoredItem => ({
  namespace,
  key,
  value,
  created_at: T(0),
  updated_at: T(0),
  expires_at: null,
  ttl: null,
  ...over,
});

const put = (...items: StoredItem[]): WriteOp[] => items.map((i) => ({ op: "item.put", item: i }));
const keys = (items: Array<{ namespace: readonly string[]; key: string }>) => items.map((i) => `${i.namespace.join("/")}:${i.key}`);
const NOW = 1_000_000;

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

export interface ItemsContractOptions {
  store: () => Store;
  /** Replaces the suite's store (after a reopen). */
  setStore: (store: Store) => void;
  reopen?: (store: Store) => Promise<Store>;
}

export function itemsContract({ store: current, setStore, reopen }: ItemsContractOptions): void {
  describe("items (long-term memory)", () => {
    it("puts, gets, replaces and deletes items by namespace and key", async () => {
      const store = current();
      const a = item(["memories", "u1"], "k1", { text: "likes tea", n: 1, nested: { list: [1, "two", null] } }, { vectors: [[0.5, -1.25]] });
      await store.commit(put(a, item(["memories", "u2"], "k1", { text: "other user" })));
      expect(await store.getItem(["memories", "u1"], "k1")).toEqual(a);
      expect(await store.getItem(["memories"], "k1")).toBeUndefined();
      expect(await store.getItem(["memories", "u1"], "k2")).toBeUndefined();
      const b = item(["memories", "u1"], "k1", { text: "likes coffee" }, { updated_at: T(5) });
      await store.commit(put(b));
      expect(await store.getItem(["memories", "u1"], "k1")).toEqual(b);
      await store.commit([{ op: "item.delete", namespace: ["memories", "u1"], key: "k1" }]);
      expect(await store.getItem(["memories", "u1"], "k1")).toBeUndefined();
      expect((await store.getItem(["memories", "u2"], "k1"))?.value).toEqual({ text: "other user" });
      // Deleting what is not there does nothing.
      await store.commit([{ op: "item.delete", namespace: ["nope"], key: "x" }]);
    });

    it("searches by namespace prefix label by label, newest first, ties by namespace then key", async () => {
      const store = current();
      await store.commit(
        put(
          item(["a"], "k", {}, { updated_at: T(1) }),
          item(["a", "b"], "k2", {}, { updated_at: T(3) }),
          item(["a", "b"], "k1", {}, { updated_at: T(3) }),
          item(["a", "bc"], "k", {}, { updated_at: T(2) }),
          item(["ab"], "k", {}, { updated_at: T(9) }),
          item(["b", "a"], "k", {}, { updated_at: T(4) }),
        ),
      );
      expect(keys(await store.searchItems({ prefix: ["a"], now: NOW }))).toEqual(["a/b:k1", "a/b:k2", "a/bc:k", "a:k"]);
      expect(keys(await store.searchItems({ prefix: ["a", "b"], now: NOW }))).toEqual(["a/b:k1", "a/b:k2"]);
      expect(keys(await store.searchItems({ prefix: [], now: NOW }))).toEqual(["ab:k", "b/a:k", "a/b:k1", "a/b:k2", "a/bc:k", "a:k"]);
      expect(keys(await store.searchItems({ prefix: [], now: NOW, limit: 2, offset: 1 }))).toEqual(["b/a:k", "a/b:k1"]);
      expect(await store.searchItems({ prefix: ["a", "b", "c"], now: NOW })).toEqual([]);
      expect(await store.searchItems({ prefix: [], now: NOW, limit: 0 })).toEqual([]);
    });

    it("filters on value fields: equality and $eq, $ne, $gt, $gte, $lt, $lte", async () => {
      const store = current();
      await store.commit(
        put(
          item(["f"], "a", { n: 1, s: "apple", tag: { x: 1 }, list: [1, 2], flag: true }),
          item(["f"], "b", { n: 5, s: "banana", tag: { x: 2 }, list: [2], flag: false }),
          item(["f"], "c", { n: 10, s: "cherry", tag: null }),
          item(["f"], "d", { n: "7", s: 3 }),
        ),
      );
      const q = async (filter: Record<string, unknown>) => (await store.searchItems({ prefix: ["f"], now: NOW, filter })).map((i) => i.key).sort();
      expect(await q({ n: 5 })).toEqual(["b"]);
      expect(await q({ s: "apple", n: 1 })).toEqual(["a"]);
      expect(await q({ tag: { x: 1 } })).toEqual(["a"]);
      expect(await q({ list: [1, 2] })).toEqual(["a"]);
      expect(await q({ list: [2] })).toEqual(["b"]);
      expect(await q({ tag: null })).toEqual(["c"]);
      expect(await q({ flag: false })).toEqual(["b"]);
      expect(await q({ n: { $eq: 10 } })).toEqual(["c"]);
      expect(await q({ n: { $ne: 5 } })).toEqual(["a", "c", "d"]);
      expect(await q({ flag: { $ne: true } })).toEqual(["b", "c", "d"]);
      expect(await q({ n: { $gt: 1 } })).toEqual(["b", "c"]);
      expect(await q({ n: { $gte: 1, $lt: 10 } })).toEqual(["a", "b"]);
      expect(await q({ n: { $lte: 5 } })).toEqual(["a", "b"]);
      expect(await q({ s: { $gt: "b" } })).toEqual(["b", "c"]);
      expect(await q({ s: { $lt: "banana" } })).toEqual(["a"]);
      expect(await q({ missing: { $gt: 0 } })).toEqual([]);
      expect(await q({ missing: 1 })).toEqual([]);
      expect(await q({ n: 5, s: "apple" })).toEqual([]);
    });

    it("applies an authorization filter to the value with namespace and key added", async () => {
      const store = current();
      await store.commit(
        put(
          item(["users", "u1", "notes"], "a", { owner: "u1" }),
          item(["users", "u2", "notes"], "b", { owner: "u2" }),
          item(["users", "u1", "facts"], "c", { owner: "u2" }),
        ),
      );
      const byNs = { namespace: { $contains: "u1" } };
      expect((await store.searchItems({ prefix: [], now: NOW, auth: byNs })).map((i) => i.key).sort()).toEqual(["a", "c"]);
      expect((await store.searchItems({ prefix: [], now: NOW, auth: { owner: "u2" } })).map((i) => i.key).sort()).toEqual(["b", "c"]);
      expect((await store.searchItems({ prefix: [], now: NOW, auth: { key: "a" } })).map((i) => i.key)).toEqual(["a"]);
      expect(await store.listItemNamespaces({ now: NOW, auth: byNs })).toEqual([
        ["users", "u1", "facts"],
        ["users", "u1", "notes"],
      ]);
      expect(await store.listItemNamespaces({ now: NOW, auth: { owner: "u1" } })).toEqual([["users", "u1", "notes"]]);
    });

    it("lists namespaces with prefix, suffix (with * wildcards), max depth and paging, in label order", async () => {
      const store = current();
      await store.commit(
        put(
          item(["a", "b", "c"], "k"),
          item(["a", "b", "d"], "k"),
          item(["a", "b", "d"], "k2"),
          item(["a", "x", "c"], "k"),
          item(["a-c"], "k"),
          item(["z"], "k"),
        ),
      );
      expect(await store.listItemNamespaces({ now: NOW })).toEqual([["a-c"], ["a", "b", "c"], ["a", "b", "d"], ["a", "x", "c"], ["z"]]);
      expect(await store.listItemNamespaces({ now: NOW, prefix: ["a", "b"] })).toEqual([
        ["a", "b", "c"],
        ["a", "b", "d"],
      ]);
      expect(await store.listItemNamespaces({ now: NOW, suffix: ["c"] })).toEqual([
        ["a", "b", "c"],
        ["a", "x", "c"],
      ]);
      expect(await store.listItemNamespaces({ now: NOW, prefix: ["a", "*", "c"] })).toEqual([
        ["a", "b", "c"],
        ["a", "x", "c"],
      ]);
      expect(await store.listItemNamespaces({ now: NOW, prefix: ["a"], suffix: ["*", "d"] })).toEqual([["a", "b", "d"]]);
      expect(await store.listItemNamespaces({ now: NOW, maxDepth: 2 })).toEqual([["a-c"], ["a", "b"], ["a", "x"], ["z"]]);
      expect(await store.listItemNamespaces({ now: NOW, maxDepth: 1 })).toEqual([["a"], ["a-c"], ["z"]]);
      expect(await store.listItemNamespaces({ now: NOW, maxDepth: 2, limit: 2, offset: 1 })).toEqual([
        ["a", "b"],
        ["a", "x"],
      ]);
      expect(await store.listItemNamespaces({ now: NOW, prefix: ["q"] })).toEqual([]);
    });

    it("never returns expired items, finds them by expiry, and deletes or refreshes them conditionally", async () => {
      const store = current();
      await store.commit(
        put(
          item(["t"], "soon", {}, { expires_at: NOW - 10, ttl: 1 }),
          item(["t"], "sooner", {}, { expires_at: NOW - 20, ttl: 1 }),
          item(["t"], "now", {}, { expires_at: NOW, ttl: 1 }),
          item(["t"], "later", {}, { expires_at: NOW + 60_000, ttl: 1 }),
          item(["t"], "never"),
          item(["gone"], "x", {}, { expires_at: NOW - 1, ttl: 2 }),
        ),
      );
      expect((await store.searchItems({ prefix: [], now: NOW })).map((i) => i.key).sort()).toEqual(["later", "never"]);
      expect(await store.listItemNamespaces({ now: NOW })).toEqual([["t"]]);
      // The store still holds them until they are deleted (getItem leaves the judgement to the caller).
      expect((await store.getItem(["t"], "soon"))?.expires_at).toBe(NOW - 10);
      expect(keys(await store.expiredItems(NOW))).toEqual(["t:sooner", "t:soon", "gone:x", "t:now"]);
      expect(await store.expiredItems(NOW, 2)).toEqual([
        { namespace: ["t"], key: "sooner", expires_at: NOW - 20 },
        { namespace: ["t"], key: "soon", expires_at: NOW - 10 },
      ]);
      expect(await store.expiredItems(NOW - 1000)).toEqual([]);

      // A refresh moves the expiry (items without a ttl are left alone); a conditional delete spares what is no longer expired.
      await store.commit([
        { op: "item.touch", namespace: ["t"], key: "soon", expires_at: NOW + 120_000 },
        { op: "item.touch", namespace: ["t"], key: "never", expires_at: NOW + 1 },
        { op: "item.touch", namespace: ["t"], key: "missing", expires_at: NOW + 1 },
      ]);
      expect((await store.getItem(["t"], "never"))?.expires_at).toBeNull();
      await store.commit((await store.expiredItems(NOW)).map((e) => ({ op: "item.delete" as const, namespace: e.namespace, key: e.key, expiredAt: NOW })));
      await store.commit([
        { op: "item.delete", namespace: ["t"], key: "soon", expiredAt: NOW },
        { op: "item.delete", namespace: ["t"], key: "never", expiredAt: NOW },
      ]);
      expect(await store.expiredItems(NOW + 10_000_000)).toEqual([
        { namespace: ["t"], key: "later", expires_at: NOW + 60_000 },
        { namespace: ["t"], key: "soon", expires_at: NOW + 120_000 },
      ]);
      expect((await store.searchItems({ prefix: [], now: NOW })).map((i) => i.key).sort()).toEqual(["later", "never", "soon"]);
      expect(await store.getItem(["gone"], "x")).toBeUndefined();
      // Replacing an item replaces its expiry.
      await store.commit(put(item(["t"], "later")));
      expect(keys(await store.expiredItems(NOW + 10_000_000))).toEqual(["t:soon"]);
    });

    it("ranks by cosine similarity to a vector, best match per item, unindexed items last", async () => {
      const store = current();
      await store.commit(
        put(
          item(["v"], "x", { t: "x" }, { vectors: [[1, 0]] }),
          item(["v"], "y", { t: "y" }, { vectors: [[0, 1]] }),
          item(["v"], "xy", { t: "xy" }, { vectors: [[0, 1], [0.8, 0.6]] }),
          item(["v"], "none", { t: "none" }, { updated_at: T(3) }),
          item(["w"], "other", {}, { vectors: [[1, 0]] }),
        ),
      );
      const ranked = await store.searchItems({ prefix: ["v"], now: NOW, vector: [1, 0] });
      expect(ranked.map((i) => i.key)).toEqual(["x", "xy", "y", "none"]);
      expect(ranked[0]!.score).toBeCloseTo(1);
      expect(ranked[1]!.score).toBeCloseTo(0.8);
      expect(ranked[2]!.score).toBeCloseTo(0);
      expect(ranked[3]!.score).toBeUndefined();
      expect((await store.searchItems({ prefix: ["v"], now: NOW, vector: [0, 2], limit: 2, offset: 1 })).map((i) => i.key)).toEqual(["y", "x"]);
      expect((await store.searchItems({ prefix: ["v"], now: NOW, vector: [1, 0], filter: { t: { $ne: "x" } } })).map((i) => i.key)).toEqual(["xy", "y", "none"]);
    });

    it("commits item ops all or nothing with the rest of the commit", async () => {
      const store = current();
      await store.commit(put(item(["keep"], "k", { v: 1 })));
      const bad: Array<[string, StoredItem]> = [
        ["a function in the value", item(["n"], "k", { f: () => 1 } as Record<string, unknown>)],
        ["NaN in the value", item(["n"], "k", { n: Number.NaN })],
        ["an empty namespace", item([], "k")],
        ["a label with a period", item(["a.b"], "k")],
        ["an empty label", item(["a", ""], "k")],
        ["a value that is not an object", item(["n"], "k", [1] as unknown as Record<string, unknown>)],
        ["a vector with NaN", item(["n"], "k", {}, { vectors: [[Number.NaN]] })],
      ];
      for (const [what, it] of bad) {
        const err = await rejection(
          store.commit([...put(item(["n"], "first")), { op: "item.delete", namespace: ["keep"], key: "k" }, { op: "item.put", item: it }]),
        );
        expect(GraphdockError.is(err, "invalid_input"), `${what}: ${String(err)}`).toBe(true);
        expect(await store.getItem(["n"], "first"), what).toBeUndefined();
        expect((await store.getItem(["keep"], "k"))?.value, what).toEqual({ v: 1 });
      }
      const err = await rejection(
        store.commit([
          ...put(item(["n"], "first")),
          { op: "thread.put", thread: { thread_id: "t1", created_at: T(0), updated_at: T(0), state_updated_at: T(0), metadata: {}, status: "idle", config: {}, values: {}, interrupts: {} }, expect: { exists: true } },
        ]),
      );
      expect(GraphdockError.is(err, "conflict")).toBe(true);
      expect(await store.getItem(["n"], "first")).toBeUndefined();
    });

    if (reopen) {
      it("keeps items, their expiry and vectors after close and open", async () => {
        const a = item(["m", "u1"], "k", { text: "hi", deep: { x: [1.5, "y"] } }, { expires_at: NOW + 5, ttl: 3, vectors: [[0.25, 0.75]], updated_at: T(2) });
        await current().commit(put(a, item(["m", "u2"], "k2"), item(["m", "u3"], "gone")));
        await current().commit([{ op: "item.delete", namespace: ["m", "u3"], key: "gone" }, { op: "item.touch", namespace: ["m", "u1"], key: "k", expires_at: NOW + 7 }]);
        const store = await reopen(current());
        setStore(store);
        expect(await store.getItem(["m", "u1"], "k")).toEqual({ ...a, expires_at: NOW + 7 });
        expect(await store.getItem(["m", "u3"], "gone")).toBeUndefined();
        expect(await store.listItemNamespaces({ now: NOW })).toEqual([
          ["m", "u1"],
          ["m", "u2"],
        ]);
        expect(await store.expiredItems(NOW + 7)).toEqual([{ namespace: ["m", "u1"], key: "k", expires_at: NOW + 7 }]);
        expect((await store.searchItems({ prefix: ["m"], now: NOW, vector: [1, 3] }))[0]!.score).toBeCloseTo(1);
      });
    }
  });
}
