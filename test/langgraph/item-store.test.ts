/**
 * `GraphdockItemStore`: LangGraph's `BaseStore` over graphdock's item store (`runtime.store`),
 * used directly and by a hosted graph through `config.store` (long-term memory shared across
 * threads, the runtime's own item store without any wiring).
 */
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { GraphdockItemStore } from "../../src/langgraph/index.js";

describe("GraphdockItemStore", () => {
  it("puts, gets, searches, lists namespaces and deletes through the item store", async () => {
    const runtime = await createRuntime({ graphs: {}, clock: () => Date.UTC(2026, 0, 1, 0, 0, 1) });
    const store = new GraphdockItemStore(runtime.store);
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
    // Sorted by their labels, as runtime.store lists them.
    expect(await store.listNamespaces({ prefix: ["users", "alice"] })).toEqual([
      ["users", "alice", "facts"],
      ["users", "alice", "prefs"],
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
    expect(await runtime.store.getItem(["users", "bob", "facts"], "pet")).toBeNull();
    await runtime.close();
  });

  it("is a hosted graph's config.store: what one thread remembers, another recalls", async () => {
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
    const runtime = await createRuntime({ graphs: { memory } });
    try {
      const config = { configurable: { user: "alice" } };
      await runtime.runs.wait(null, "memory", { input: { messages: [{ role: "user", content: "remember I like tea" }] }, config });
      const out = (await runtime.runs.wait(null, "memory", { input: { messages: [{ role: "user", content: "what do you know?" }] }, config })) as {
        messages: Array<{ content: string }>;
      };
      expect(out.messages.at(-1)!.content).toBe("I know: I like tea");
      expect(await runtime.store.getItem(["memories", "alice"], "m0")).toMatchObject({ value: { fact: "I like tea" } });
    } finally {
      await runtime.close();
    }
  });
});
