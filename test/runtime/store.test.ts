/**
 * Long-term memory: `runtime.store` in process and the official SDK's
 * `client.store` over HTTP run the same suite — round trips with namespaces, filters, prefixes,
 * paging, TTL expiry on an injected clock (no sleeps), semantic search with a deterministic
 * embedding, namespace listing — plus graph nodes sharing memories across threads.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Auth } from "../../src/auth/index.js";
import { GraphdockError, type ErrorCode } from "../../src/errors.js";
import { END, START, StateGraph, type CompiledGraph } from "../../src/graph/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import type { IndexConfig } from "../../src/items/types.js";
import { memoryStore } from "../../src/persistence/memory.js";
import type { Store } from "../../src/persistence/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { call, inProcessClient } from "../http/helpers.js";
import { harness } from "../graph/helpers.js";

const STATUS: Record<ErrorCode, number> = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403, unavailable: 503 };

async function failsWith(promise: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<void> {
  let err: unknown;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toBeInstanceOf(Error);
  const status = (err as { status?: unknown }).status;
  expect(GraphdockError.is(err, code) || status === STATUS[code], `expected ${code}, got ${String(err)}`).toBe(true);
  if (message) expect((err as Error).message).toMatch(message);
}

/** A deterministic embedding: word counts over a small vocabulary. */
const VOCAB = ["tea", "coffee", "cat", "dog", "jazz", "rock"];
const embedText = (text: string) => VOCAB.map((w) => (text.toLowerCase().match(new RegExp(`\\b${w}\\b`, "g")) ?? []).length);
const testIndex = (fields?: string[]): IndexConfig & { calls: string[][] } => {
  const calls: string[][] = [];
  return { dims: VOCAB.length, calls, ...(fields ? { fields } : {}), embed: (texts) => (calls.push(texts), texts.map(embedText)) };
};

/** The store methods both `runtime.store` and the SDK's `client.store` have. */
interface StoreLike {
  putItem(namespace: string[], key: string, value: Record<string, unknown>, options?: { index?: false | string[] | null; ttl?: number | null }): Promise<void>;
  getItem(namespace: string[], key: string, options?: { refreshTtl?: boolean | null }): Promise<{ namespace: string[]; key: string; value: Record<string, unknown>; created_at: string; updated_at: string } | null>;
  deleteItem(namespace: string[], key: string): Promise<void>;
  searchItems(
    prefix: string[],
    options?: { filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string; refreshTtl?: boolean | null },
  ): Promise<{ items: Array<{ namespace: string[]; key: string; value: Record<string, unknown>; score?: number; created_at: string; updated_at: string }> }>;
  listNamespaces(options?: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number }): Promise<{ namespaces: string[][] }>;
}

interface Target {
  store: StoreLike;
  runtime: Runtime;
  /** The runtime's Store (to look at what the sweep removed). */
  raw: Store;
  advance(ms: number): void;
  graphs: { wait(threadId: string, input: Record<string, unknown>): Promise<Record<string, unknown>>; newThread(): Promise<string> };
}

/** One node that files the input under `memories/<user>` keyed by thread, then recalls every memory of the user. */
function memoryGraph(): CompiledGraph {
  return new StateGraph({ text: {}, user: {}, recalled: {} })
    .addNode("remember", async (state, ctx) => {
      const user = state.user as string;
      await ctx.store.putItem(["memories", user], ctx.threadId, { text: state.text });
      const { items } = await ctx.store.searchItems(["memories", user], { limit: 100 });
      return { recalled: items.map((i) => i.value.text).sort() };
    })
    .addEdge(START, "remember")
    .addEdge("remember", END)
    .compile();
}

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

type Make = (options: { index?: IndexConfig; clock: () => number }) => Promise<Target>;

function storeSuite(name: string, make: Make): void {
  describe(`store: ${name}`, () => {
    let now = T0;
    let t: Target;
    const open = async (index?: IndexConfig) => {
      now = T0;
      t = await make({ ...(index ? { index } : {}), clock: () => now });
      t.advance = (ms) => (now += ms);
      return t;
    };
    afterEach(async () => {
      await t?.runtime.close();
    });

    it("round-trips items by namespace and key; a put keeps created_at and moves updated_at", async () => {
      const { store } = await open();
      await store.putItem(["memories", "u1"], "k1", { text: "likes tea", nested: { n: [1, "two", null] } });
      await store.putItem(["memories", "u2"], "k1", { text: "other" });
      const first = await store.getItem(["memories", "u1"], "k1");
      expect(first).toMatchObject({
        namespace: ["memories", "u1"],
        key: "k1",
        value: { text: "likes tea", nested: { n: [1, "two", null] } },
        created_at: new Date(T0).toISOString(),
        updated_at: new Date(T0).toISOString(),
      });
      t.advance(5000);
      await store.putItem(["memories", "u1"], "k1", { text: "likes coffee" });
      const second = await store.getItem(["memories", "u1"], "k1");
      expect(second).toMatchObject({ value: { text: "likes coffee" }, created_at: new Date(T0).toISOString(), updated_at: new Date(T0 + 5000).toISOString() });
      expect(await store.getItem(["memories"], "k1")).toBeNull();
      expect(await store.getItem(["memories", "u1"], "nope")).toBeNull();
      await store.deleteItem(["memories", "u1"], "k1");
      expect(await store.getItem(["memories", "u1"], "k1")).toBeNull();
      expect((await store.getItem(["memories", "u2"], "k1"))?.value).toEqual({ text: "other" });
      await store.deleteItem(["memories", "u1"], "k1"); // deleting a missing item does nothing
    });

    it("refuses bad namespaces, keys, values and options with invalid_input, storing nothing", async () => {
      const { store } = await open();
      await failsWith(store.putItem([], "k", { a: 1 }), "invalid_input", /namespace/i);
      await failsWith(store.putItem(["a", ""], "k", { a: 1 }), "invalid_input", /cannot be empty or contain periods/);
      await failsWith(store.putItem(["a"], "", { a: 1 }), "invalid_input", /key/);
      await failsWith(store.putItem(["a"], "k", [1, 2] as unknown as Record<string, unknown>), "invalid_input", /value/);
      await failsWith(store.putItem(["a"], "k", { a: 1 }, { ttl: -5 }), "invalid_input", /ttl/);
      await failsWith(store.putItem(["a"], "k", { a: 1 }, { ttl: 1e300 }), "invalid_input", /ttl/);
      await failsWith(store.searchItems(["a"], { filter: { n: { $regex: "x" } } }), "invalid_input", /\$regex/);
      await failsWith(store.searchItems(["a"], { filter: { n: { $gt: [1] } } }), "invalid_input", /\$gt/);
      await failsWith(store.searchItems(["a"], { limit: -1 }), "invalid_input", /limit/);
      await failsWith(store.listNamespaces({ maxDepth: 0 }), "invalid_input", /max_depth/);
      await failsWith(store.searchItems(["a"], { query: "tea" }), "invalid_input", /index/);
      expect((await store.listNamespaces()).namespaces).toEqual([]);
    });

    it("searches by prefix with filters and paging, newest first", async () => {
      const { store } = await open();
      const put = async (ns: string[], key: string, value: Record<string, unknown>) => {
        t.advance(1000);
        await store.putItem(ns, key, value);
      };
      await put(["docs", "a"], "1", { kind: "note", n: 1, lang: "en" });
      await put(["docs", "a"], "2", { kind: "todo", n: 5, lang: "fr" });
      await put(["docs", "b"], "3", { kind: "note", n: 10, lang: "en" });
      await put(["docsx"], "4", { kind: "note", n: 3 });
      await put(["other"], "5", { kind: "note", n: 7 });
      const keys = async (prefix: string[], options?: Parameters<StoreLike["searchItems"]>[1]) => (await store.searchItems(prefix, options)).items.map((i) => i.key);
      expect(await keys(["docs"])).toEqual(["3", "2", "1"]);
      expect(await keys(["docs", "a"])).toEqual(["2", "1"]);
      expect(await keys([])).toEqual(["5", "4", "3", "2", "1"]);
      expect(await keys([], { limit: 2, offset: 1 })).toEqual(["4", "3"]);
      expect(await keys([], { filter: { kind: "note" } })).toEqual(["5", "4", "3", "1"]);
      expect(await keys([], { filter: { kind: "note", lang: "en" } })).toEqual(["3", "1"]);
      expect(await keys([], { filter: { n: { $gte: 3, $lt: 10 } } })).toEqual(["5", "4", "2"]);
      expect(await keys(["docs"], { filter: { lang: { $ne: "en" } } })).toEqual(["2"]);
      expect(await keys([], { filter: { lang: { $gt: "en" } } })).toEqual(["2"]);
      const found = (await store.searchItems(["docs", "b"])).items[0]!;
      expect(found).toMatchObject({ namespace: ["docs", "b"], key: "3", value: { kind: "note", n: 10, lang: "en" } });
      expect(found.score).toBeUndefined();
      // Ten by default.
      for (let i = 0; i < 12; i++) await store.putItem(["many"], `k${i}`, { i });
      expect((await store.searchItems(["many"])).items).toHaveLength(10);
    });

    it("lists namespaces with prefix, suffix and depth", async () => {
      const { store } = await open();
      for (const ns of [
        ["users", "u1", "memories"],
        ["users", "u1", "prefs"],
        ["users", "u2", "memories"],
        ["teams", "t1"],
      ]) {
        await store.putItem(ns, "k", { x: 1 });
      }
      expect((await store.listNamespaces()).namespaces).toEqual([
        ["teams", "t1"],
        ["users", "u1", "memories"],
        ["users", "u1", "prefs"],
        ["users", "u2", "memories"],
      ]);
      expect((await store.listNamespaces({ prefix: ["users"], maxDepth: 2 })).namespaces).toEqual([
        ["users", "u1"],
        ["users", "u2"],
      ]);
      expect((await store.listNamespaces({ maxDepth: 1 })).namespaces).toEqual([["teams"], ["users"]]);
      expect((await store.listNamespaces({ suffix: ["memories"] })).namespaces).toEqual([
        ["users", "u1", "memories"],
        ["users", "u2", "memories"],
      ]);
      expect((await store.listNamespaces({ prefix: ["users", "*", "prefs"] })).namespaces).toEqual([["users", "u1", "prefs"]]);
      expect((await store.listNamespaces({ limit: 2, offset: 1 })).namespaces).toEqual([
        ["users", "u1", "memories"],
        ["users", "u1", "prefs"],
      ]);
    });

    it("expires items after their ttl (minutes), refreshing it on reads unless told not to, and sweeps them", async () => {
      const { store, raw } = await open();
      await store.putItem(["s"], "short", { n: 1 }, { ttl: 1 });
      await store.putItem(["s"], "long", { n: 2 }, { ttl: 10 });
      await store.putItem(["s"], "forever", { n: 3 });
      t.advance(0.5 * MINUTE);
      expect((await store.getItem(["s"], "short"))?.value).toEqual({ n: 1 }); // refreshed: expires at 1.5 min
      t.advance(0.9 * MINUTE); // 1.4 min
      expect((await store.getItem(["s"], "short", { refreshTtl: false }))?.value).toEqual({ n: 1 });
      t.advance(0.2 * MINUTE); // 1.6 min: expired (the last refresh was at 0.5)
      expect(await store.getItem(["s"], "short")).toBeNull();
      expect((await store.searchItems(["s"])).items.map((i) => i.key).sort()).toEqual(["forever", "long"]);
      // A search refreshes what it returns (default), unless refreshTtl is false.
      t.advance(9 * MINUTE); // 10.6 min: "long" (put at 0, ttl 10) would have expired without the refresh at 1.6
      expect((await store.searchItems(["s"], { refreshTtl: false })).items.map((i) => i.key).sort()).toEqual(["forever", "long"]);
      t.advance(1.1 * MINUTE); // 11.7 min: 10.1 after the refresh at 1.6
      expect((await store.searchItems(["s"])).items.map((i) => i.key)).toEqual(["forever"]);
      await store.putItem(["gone"], "x", { n: 4 }, { ttl: 1 });
      t.advance(2 * MINUTE);
      expect(await raw.getItem(["gone"], "x")).toBeDefined();
      expect((await store.listNamespaces()).namespaces).toEqual([["s"]]);
      // The sweep (due once a minute of the runtime's clock, started by that call) removes expired items from the store.
      await vi.waitFor(async () => expect(await raw.getItem(["gone"], "x")).toBeUndefined());
      expect(await raw.getItem(["s"], "short")).toBeUndefined();
      expect(await raw.getItem(["s"], "forever")).toBeDefined();
      expect(await raw.expiredItems(now)).toEqual([]);
    });

    it("ranks by semantic similarity with an index; index: false and field paths choose what is embedded", async () => {
      const index = testIndex(["text"]);
      const { store } = await open(index);
      await store.putItem(["m"], "tea", { text: "green tea, more tea", tags: "dog" });
      await store.putItem(["m"], "pets", { text: "a cat and a dog" });
      await store.putItem(["m"], "music", { text: "jazz and rock", other: "tea tea tea" });
      await store.putItem(["m"], "unindexed", { text: "tea" }, { index: false });
      await store.putItem(["m"], "by-path", { text: "nothing", about: { topic: "coffee" } }, { index: ["about.topic"] });
      expect(index.calls).toContainEqual(["coffee"]);
      const search = async (query: string, options: { limit?: number; offset?: number; filter?: Record<string, unknown> } = {}) =>
        (await store.searchItems(["m"], { query, ...options })).items;
      const tea = await search("tea");
      // Ties (score 0) in the default order; the item left out of the index comes last, unscored.
      expect(tea.map((i) => i.key)).toEqual(["tea", "by-path", "music", "pets", "unindexed"]);
      expect(tea[0]).toMatchObject({ key: "tea", value: { text: "green tea, more tea", tags: "dog" } });
      expect(tea[0]!.score).toBeCloseTo(1);
      expect(tea.at(-1)).toMatchObject({ key: "unindexed" });
      expect(tea.at(-1)!.score).toBeUndefined();
      expect(tea.slice(1, -1).every((i) => i.score === 0)).toBe(true);
      expect((await search("coffee"))[0]).toMatchObject({ key: "by-path" });
      expect((await search("a dog and a cat", { limit: 1 })).map((i) => [i.key, Math.round(i.score! * 1000) / 1000])).toEqual([["pets", 1]]);
      expect((await search("rock", { filter: { text: { $ne: "jazz and rock" } }, limit: 2 })).map((i) => i.key)).not.toContain("music");
      expect((await search("rock", { limit: 1, offset: 0 }))[0]!.key).toBe("music");
    });

    it("embeds the whole value by default", async () => {
      const index = testIndex();
      const { store } = await open(index);
      await store.putItem(["m"], "a", { title: "Cats", body: { words: ["cat", "cat", "dog"] } });
      await store.putItem(["m"], "b", { title: "Drinks", body: { words: ["coffee"] } });
      expect(index.calls[0]).toEqual([JSON.stringify({ title: "Cats", body: { words: ["cat", "cat", "dog"] } })]);
      expect((await store.searchItems([], { query: "coffee" })).items.map((i) => i.key)).toEqual(["b", "a"]);
    });

    it("graph nodes share memories across threads through ctx.store", async () => {
      const { store, graphs } = await open();
      const a = await graphs.newThread();
      const b = await graphs.newThread();
      expect((await graphs.wait(a, { user: "u1", text: "likes tea" })).recalled).toEqual(["likes tea"]);
      // Another thread's node reads what the first thread's node wrote.
      expect((await graphs.wait(b, { user: "u1", text: "plays jazz" })).recalled).toEqual(["likes tea", "plays jazz"]);
      expect((await graphs.wait(await graphs.newThread(), { user: "u2", text: "other user" })).recalled).toEqual(["other user"]);
      // And the app sees them through the store namespace.
      expect((await store.getItem(["memories", "u1"], a))?.value).toEqual({ text: "likes tea" });
      expect((await store.listNamespaces({ prefix: ["memories"] })).namespaces).toEqual([
        ["memories", "u1"],
        ["memories", "u2"],
      ]);
    });
  });
}

async function runtimeFor({ index, clock }: { index?: IndexConfig; clock: () => number }) {
  const raw = memoryStore();
  const runtime = await createRuntime({ graphs: { memory: memoryGraph() }, store: raw, clock, ...(index ? { index } : {}) });
  return { raw, runtime };
}

storeSuite("runtime.store in process", async (options) => {
  const { raw, runtime } = await runtimeFor(options);
  return {
    store: runtime.store,
    runtime,
    raw,
    advance: () => {},
    graphs: {
      newThread: async () => (await runtime.threads.create()).thread_id,
      wait: async (threadId, input) => (await runtime.runs.wait(threadId, "memory", { input })) as Record<string, unknown>,
    },
  };
});

storeSuite("the official client over HTTP", async (options) => {
  const { raw, runtime } = await runtimeFor(options);
  const client = inProcessClient(createFetchHandler(runtime));
  return {
    store: client.store as unknown as StoreLike,
    runtime,
    raw,
    advance: () => {},
    graphs: {
      newThread: async () => (await client.threads.create()).thread_id,
      wait: async (threadId, input) => (await client.runs.wait(threadId, "memory", { input })) as Record<string, unknown>,
    },
  };
});

describe("ctx.store outside a runtime", () => {
  it("rejects with a message saying the graph needs a runtime; an execute option provides one", async () => {
    const graph = memoryGraph();
    const h = harness(graph);
    await expect(h.run({ user: "u1", text: "hi" })).rejects.toThrow(/ctx\.store is the runtime's long-term memory; run the graph through createRuntime/);
    const runtime = await createRuntime({ graphs: {} });
    try {
      const done = await h.run({ user: "u1", text: "hi" }, { itemStore: runtime.store });
      expect(done.values.recalled).toEqual(["hi"]);
    } finally {
      await runtime.close();
    }
  });
});

describe("store over HTTP: the wire", () => {
  let runtime: Runtime;
  let handler: ReturnType<typeof createFetchHandler>;
  beforeEach(async () => {
    runtime = await createRuntime({ graphs: {} });
    handler = createFetchHandler(runtime);
  });
  afterEach(() => runtime.close());

  it("answers as the agent server: 204 for put and delete, JSON null for a missing item, 422 for bad labels", async () => {
    expect((await call(handler, "PUT", "/store/items", { namespace: ["a", "b"], key: "k", value: { x: 1 } })).status).toBe(204);
    const got = await call(handler, "GET", "/store/items?namespace=a.b&key=k");
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ namespace: ["a", "b"], key: "k", value: { x: 1 } });
    const missing = await call(handler, "GET", "/store/items?namespace=a.b&key=nope");
    expect([missing.status, await missing.text()]).toEqual([200, "null"]);
    const bad = await call(handler, "PUT", "/store/items", { namespace: ["a.b"], key: "k", value: { x: 1 } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/cannot be empty or contain periods/);
    expect((await call(handler, "PUT", "/store/items", { namespace: [], key: "k", value: {} })).status).toBe(422);
    expect((await call(handler, "GET", "/store/items?key=k")).status).toBe(422);
    expect((await call(handler, "POST", "/store/items/search", {})).status).toBe(422);
    const search = await call(handler, "POST", "/store/items/search", { namespace_prefix: ["a"], filter: { x: { $gte: 1 } }, limit: 5 });
    expect(((await search.json()) as { items: unknown[] }).items).toHaveLength(1);
    const ns = await call(handler, "POST", "/store/namespaces", { prefix: ["a"], max_depth: 1 });
    expect(await ns.json()).toEqual({ namespaces: [["a"]] });
    expect((await call(handler, "DELETE", "/store/items", { namespace: ["a", "b"], key: "k" })).status).toBe(204);
    expect(await (await call(handler, "GET", "/store/items?namespace=a.b&key=k")).json()).toBeNull();
  });
});

describe("store with a handler that rewrites namespaces", () => {
  it("puts each user's items under their identity, as the Python docs' pattern does", async () => {
    const auth = new Auth()
      .authenticate(({ headers }) => headers["x-user"] ?? "anonymous")
      .on("store", ({ user, value }) => {
        const v = value as { namespace?: string[] | null };
        v.namespace = [user.identity, ...(v.namespace ?? [])];
      });
    const runtime = await createRuntime({ graphs: {}, auth });
    try {
      const alice = (await runtime.client({ headers: { "x-user": "alice" } })).store;
      const bob = (await runtime.client({ headers: { "x-user": "bob" } })).store;
      await alice.putItem(["notes"], "k", { text: "alice's" });
      await bob.putItem(["notes"], "k", { text: "bob's" });
      expect(await alice.getItem(["notes"], "k")).toMatchObject({ namespace: ["alice", "notes"], value: { text: "alice's" } });
      expect(await bob.getItem(["notes"], "k")).toMatchObject({ namespace: ["bob", "notes"], value: { text: "bob's" } });
      expect((await bob.searchItems([])).items.map((i) => i.value.text)).toEqual(["bob's"]);
      expect((await alice.listNamespaces()).namespaces).toEqual([["alice", "notes"]]);
      await bob.deleteItem(["notes"], "k");
      expect(await bob.getItem(["notes"], "k")).toBeNull();
      expect((await alice.getItem(["notes"], "k"))?.value).toEqual({ text: "alice's" });
    } finally {
      await runtime.close();
    }
  });
});

describe("store with an auth filter on item values", () => {
  // The handler stamps the owner into the value and filters on it (filters see the value, namespace and key).
  const auth = () =>
    new Auth()
      .authenticate(({ headers }) => headers["x-user"] ?? "anonymous")
      .on("store", ({ user, action, value }) => {
        if (action === "put") {
          const v = value as { value: Record<string, unknown> };
          v.value = { ...v.value, owner: user.identity };
        }
        return { owner: user.identity };
      });

  it("hides other users' items as missing, and refuses to change them", async () => {
    const runtime = await createRuntime({ graphs: {}, auth: auth() });
    try {
      const alice = (await runtime.client({ headers: { "x-user": "alice" } })).store;
      const bob = (await runtime.client({ headers: { "x-user": "bob" } })).store;
      await alice.putItem(["shared"], "k", { text: "alice's" });
      expect((await alice.getItem(["shared"], "k"))?.value).toEqual({ text: "alice's", owner: "alice" });
      expect(await bob.getItem(["shared"], "k")).toBeNull();
      await failsWith(bob.putItem(["shared"], "k", { text: "bob's" }), "not_found");
      await failsWith(bob.deleteItem(["shared"], "k"), "forbidden");
      await failsWith(bob.deleteItem(["shared"], "missing"), "forbidden");
      expect((await bob.searchItems([])).items).toEqual([]);
      expect((await bob.listNamespaces()).namespaces).toEqual([]);
      expect((await alice.getItem(["shared"], "k"))?.value).toEqual({ text: "alice's", owner: "alice" });
      await bob.putItem(["shared"], "bobs", { text: "bob's" });
      expect((await bob.searchItems(["shared"])).items.map((i) => i.key)).toEqual(["bobs"]);
      expect((await alice.searchItems(["shared"])).items.map((i) => i.key)).toEqual(["k"]);
    } finally {
      await runtime.close();
    }
  });
});
