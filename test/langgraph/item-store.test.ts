/**
 * `AgentdockItemStore`: LangGraph's `BaseStore` over an agentdock item store (declared by shape,
 * `ItemStoreLike`; here a small in-memory one with the item store's semantics), used directly
 * and by a hosted graph through `config.store` (long-term memory shared across threads).
 */
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { AgentdockItemStore, fromLangGraph, type ItemStoreLike, type StoredItemLike } from "../../src/langgraph/index.js";

/** Items in a map keyed by namespace and key; search by namespace prefix, equality filter, paging. */
function mapItems(): ItemStoreLike & { calls: string[] } {
  const items = new Map<string, StoredItemLike>();
  const id = (ns: string[], key: string) => JSON.stringify([ns, key]);
  const under = (ns: string[], prefix: string[]) => prefix.every((p, i) => ns[i] === p);
  let clock = 0;
  const calls: string[] = [];
  return {
    calls,
    async putItem(namespace, key, value) {
      calls.push("put");
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, ++clock)).toISOString();
      const old = items.get(id(namespace, key));
      items.set(id(namespace, key), { namespace, key, value, created_at: old?.created_at ?? at, updated_at: at });
    },
    async getItem(namespace, key) {
      calls.push("get");
      return items.get(id(namespace, key)) ?? null;
    },
    async deleteItem(namespace, key) {
      calls.push("delete");
      items.delete(id(namespace, key));
    },
    async searchItems(prefix, options = {}) {
      calls.push("search");
      const found = [...items.values()]
        .filter((i) => under(i.namespace, prefix))
        .filter((i) => Object.entries(options.filter ?? {}).every(([k, v]) => i.value[k] === v));
      return { items: found.slice(options.offset ?? 0, (options.offset ?? 0) + (options.limit ?? 10)) };
    },
    async listNamespaces(options = {}) {
      calls.push("list");
      const all = new Map<string, string[]>();
      for (const i of items.values()) {
        const ns = options.maxDepth !== undefined ? i.namespace.slice(0, options.maxDepth) : i.namespace;
        if (options.prefix && !under(ns, options.prefix)) continue;
        if (options.suffix && !options.suffix.every((s, k) => ns[ns.length - options.suffix!.length + k] === s)) continue;
        all.set(JSON.stringify(ns), ns);
      }
      return { namespaces: [...all.values()].slice(options.offset ?? 0, (options.offset ?? 0) + (options.limit ?? 100)) };
    },
  };
}

describe("AgentdockItemStore", () => {
  it("puts, gets, searches, lists namespaces and deletes through the item store", async () => {
    const items = mapItems();
    const store = new AgentdockItemStore(items);
    await store.put(["users", "alice", "prefs"], "theme", { color: "blue" });
    await store.put(["users", "alice", "facts"], "pet", { kind: "cat", name: "Tom" });
    await store.put(["users", "bob", "facts"], "pet", { kind: "dog" });
    const theme = await store.get(["users", "alice", "prefs"], "theme");
    expect(theme).toMatchObject({ namespace: ["users", "alice", "prefs"], key: "theme", value: { color: "blue" } });
    expect(theme!.createdAt).toBeInstanceOf(Date);
    expect(theme!.createdAt.toISOString()).toBe("2026-01-01T00:00:01.000Z");
    expect(await store.get(["users", "alice", "prefs"], "missing")).toBeNull();
    expect((await store.search(["users", "alice"])).map((i) => i.key).sort()).toEqual(["pet", "theme"]);
    expect((await store.search(["users"], { filter: { kind: "dog" } })).map((i) => i.namespace[1])).toEqual(["bob"]);
    expect(await store.search(["users"], { limit: 1, offset: 2 })).toHaveLength(1);
    expect(await store.listNamespaces({ prefix: ["users", "alice"] })).toEqual([
      ["users", "alice", "prefs"],
      ["users", "alice", "facts"],
    ]);
    expect(await store.listNamespaces({ suffix: ["facts"], maxDepth: 3 })).toEqual([
      ["users", "alice", "facts"],
      ["users", "bob", "facts"],
    ]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ["users", "alice"],
      ["users", "bob"],
    ]);
    await store.delete(["users", "bob", "facts"], "pet");
    expect(await store.get(["users", "bob", "facts"], "pet")).toBeNull();
    expect(items.calls).toContain("delete");
  });

  it("is a hosted graph's config.store: what one thread remembers, another recalls", async () => {
    const items = mapItems();
    const memory = new StateGraph(MessagesAnnotation)
      .addNode("remember", async (state, config) => {
        const text = String(state.messages[state.messages.length - 1]?.content ?? "");
        const user = String(config.configurable?.user ?? "anon");
        const known = await config.store!.search(["memories", user]);
        if (text.startsWith("remember ")) await config.store!.put(["memories", user], `m${known.length}`, { fact: text.slice(9) });
        return { messages: [new AIMessage(`I know: ${known.map((i) => i.value.fact).join(", ") || "nothing"}`)] };
      })
      .addEdge(START, "remember")
      .addEdge("remember", END)
      .compile();
    const runtime = await createRuntime({ graphs: { memory: fromLangGraph(memory, { items }) } });
    try {
      const config = { configurable: { user: "alice" } };
      await runtime.runs.wait(null, "memory", { input: { messages: [{ role: "user", content: "remember I like tea" }] }, config });
      const out = (await runtime.runs.wait(null, "memory", { input: { messages: [{ role: "user", content: "what do you know?" }] }, config })) as {
        messages: Array<{ content: string }>;
      };
      expect(out.messages.at(-1)!.content).toBe("I know: I like tea");
      expect(await items.getItem(["memories", "alice"], "m0")).toMatchObject({ value: { fact: "I like tea" } });
    } finally {
      await runtime.close();
    }
  });
});
