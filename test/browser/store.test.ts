/**
 * Persistence in real Chromium: the store contract suite against real IndexedDB (a page harness
 * running the same vitest file), and two tabs with one runtime each on one database.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Page } from "playwright-core";
import {
  bundlePage,
  runTestPage,
  testPageSource,
} from "./harness";
import { browserPages } from "./pages";
import type { Tab } from "./page/two-tabs";

const pages = browserPages("store-pages");

describe("IndexedDB store in Chromium", () => {
  it("passes the persistence contract suite on real IndexedDB", async () => {
    await bundlePage(testPageSource(["./test/browser/page/store-contract.ts"]), join(pages.dir.path, "contract"));
    const results = await runTestPage(pages.browser, `${pages.server.url}/contract/`);
    console.info(`store contract in Chromium: ${results.filter((r) => r.ok).length}/${results.length} passed`);
    const failures = results.filter((r) => !r.ok).map((r) => `${r.name}\n    ${r.error}`);
    expect(failures, failures.join("\n")).toEqual([]);
    expect(results.filter((r) => r.ok && !r.skipped).length).toBeGreaterThan(10);
    expect(pages.browser.errors).toEqual([]);
  }, 60_000);
});

describe("two tabs, two stores, one database", () => {
  type StoreWindow = Window & {
    store: import("../../src/persistence/types").Store;
    thread: typeof import("../persistence/contract").thread;
    seen: Array<string | undefined>;
  };
  let a: Page;
  let b: Page;

  beforeAll(async () => {
    await bundlePage(`import "./test/browser/page/store-tab.ts";`, join(pages.dir.path, "store-tab"));
    const open = async () => {
      const page = await pages.browser.newPage();
      await page.goto(`${pages.server.url}/store-tab/`);
      await page.waitForFunction(() => "store" in window);
      return page;
    };
    a = await open();
    b = await open();
  });

  it("delivers a notify committed in one tab to the other, after the commit", async () => {
    await a.evaluate(async () => {
      const { store, thread } = window as unknown as StoreWindow;
      await store.commit([{ op: "thread.put", thread: thread("t-notify") }, { op: "notify", topic: "wake", payload: "from a" }]);
    });
    await b.waitForFunction(() => (window as unknown as StoreWindow).seen.length > 0);
    expect(await b.evaluate(() => (window as unknown as StoreWindow).seen)).toEqual(["from a"]);
    expect(await b.evaluate(async () => (await (window as unknown as StoreWindow).store.getThread("t-notify"))?.thread_id)).toBe("t-notify");
  });

  it("streams run events published in one tab live to the other, and replays them there", async () => {
    const reading = b.evaluate(async () => {
      const { store } = window as unknown as StoreWindow;
      const out: number[] = [];
      for await (const e of store.events.read("run-1", { after: -1 })) out.push(e.seq);
      return out;
    });
    await a.evaluate(async () => {
      const { store } = window as unknown as StoreWindow;
      await store.events.open("run-1", { resumable: true });
      for (let i = 0; i < 50; i++) {
        store.events.publish("run-1", "values", { i });
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 5));
      }
      await store.events.end("run-1");
    });
    const all = Array.from({ length: 50 }, (_, i) => i);
    expect(await reading).toEqual(all);
    const replay = await b.evaluate(async () => {
      const { store } = window as unknown as StoreWindow;
      const out: unknown[] = [];
      for await (const e of store.events.read("run-1", { after: 44 })) out.push(e.data);
      return out;
    });
    expect(replay).toEqual([{ i: 45 }, { i: 46 }, { i: 47 }, { i: 48 }, { i: 49 }]);
  });

  it("lets exactly one of two tabs' racing conditional commits win", async () => {
    await a.evaluate(async () => {
      const { store, thread } = window as unknown as StoreWindow;
      await store.commit([{ op: "thread.put", thread: thread("t-race") }]);
    });
    for (let round = 0; round < 5; round++) {
      // Both tabs read, then both commit based on their read at once.
      const read = (page: Page) =>
        page.evaluate(async () => {
          const w = window as unknown as StoreWindow & { read?: unknown };
          w.read = await w.store.getThread("t-race");
        });
      await Promise.all([read(a), read(b)]);
      const attempt = (page: Page, who: string) =>
        page.evaluate(
          async ([by, r]) => {
            const { store, thread, read } = window as unknown as StoreWindow & { read: import("../../src/types").ThreadRecord };
            try {
              await store.commit([{ op: "thread.put", thread: thread("t-race", { metadata: { by, r } }), expect: { sameAs: read } }]);
              return "won";
            } catch (err) {
              return (err as { code?: string }).code ?? String(err);
            }
          },
          [who, round] as const,
        );
      const results = await Promise.all([attempt(a, "a"), attempt(b, "b")]);
      expect([...results].sort()).toEqual(["conflict", "won"]);
      const winner = results[0] === "won" ? "a" : "b";
      expect(await b.evaluate(async () => (await (window as unknown as StoreWindow).store.getThread("t-race"))?.metadata)).toEqual({ by: winner, r: round });
    }
    expect(pages.browser.errors).toEqual([]);
  });
});

describe("two tabs, two runtimes, one database", () => {
  let a: Page;
  let b: Page;
  const open = async (): Promise<Page> => {
    const page = await pages.browser.newPage();
    await page.goto(`${pages.server.url}/tabs/`);
    await page.waitForFunction(() => "tab" in window);
    return page;
  };
  type TabWindow = Window & { tab: Tab };

  beforeAll(async () => {
    await bundlePage(`import "./test/browser/page/two-tabs.ts";`, join(pages.dir.path, "tabs"));
    a = await open();
    b = await open();
  });

  it("sees the other tab's thread, runs and checkpoints", async () => {
    const threadId = await a.evaluate(async () => {
      const { runtime, say } = (window as unknown as TabWindow).tab;
      const thread = await runtime.threads.create({ metadata: { opened_in: "a" } });
      await say(thread.thread_id, "first, from tab A");
      return thread.thread_id;
    });
    const seenByB = await b.evaluate(async (id) => {
      const { runtime, view } = (window as unknown as TabWindow).tab;
      const thread = await runtime.threads.get(id);
      return { status: thread.status, metadata: thread.metadata, view: await view(id) };
    }, threadId);
    expect(seenByB.status).toBe("idle");
    expect(seenByB.metadata).toMatchObject({ opened_in: "a" });
    expect(JSON.stringify(seenByB.view.values)).toContain("first, from tab A");

    await b.evaluate(([id]) => (window as unknown as TabWindow).tab.say(id, "second, from tab B"), [threadId] as const);
    const [viewA, viewB] = await Promise.all([
      a.evaluate((id) => (window as unknown as TabWindow).tab.view(id), threadId),
      b.evaluate((id) => (window as unknown as TabWindow).tab.view(id), threadId),
    ]);
    expect(viewA).toEqual(viewB);
    const text = JSON.stringify(viewA.values);
    expect(text.indexOf("first, from tab A")).toBeGreaterThanOrEqual(0);
    expect(text.indexOf("second, from tab B")).toBeGreaterThan(text.indexOf("first, from tab A"));
    expect(viewA.chain.length).toBeGreaterThan(2);
  });

  it("keeps one consistent history when both tabs run on one thread at once", async () => {
    const threadId = await a.evaluate(async () => (await (window as unknown as TabWindow).tab.runtime.threads.create()).thread_id);
    // Each tab runs three times on the thread; a run refused because the other tab's run holds
    // the thread must be a conflict (D9), and is retried until it goes through.
    const runThree = (page: Page, who: string) =>
      page.evaluate(
        async ([id, name]) => {
          const { say } = (window as unknown as TabWindow).tab;
          for (let i = 0; i < 3; i++) {
            for (let attempt = 0; ; attempt++) {
              try {
                await say(id, `${name} ${i}`);
                break;
              } catch (err) {
                const code = (err as { code?: string }).code;
                if (code !== "conflict" || attempt > 2000) throw err;
                await new Promise((resolve) => setTimeout(resolve, 2));
              }
            }
          }
        },
        [threadId, who] as const,
      );
    await Promise.all([runThree(a, "A"), runThree(b, "B")]);

    const [viewA, viewB] = await Promise.all([
      a.evaluate((id) => (window as unknown as TabWindow).tab.view(id), threadId),
      b.evaluate((id) => (window as unknown as TabWindow).tab.view(id), threadId),
    ]);
    expect(viewA).toEqual(viewB);
    // One linear chain: every checkpoint's parent is the next older one.
    viewA.chain.forEach(([, parent], i) => expect(parent).toBe(viewA.chain[i + 1]?.[0] ?? null));
    // Every run of both tabs left its message exactly once, each followed by its echo.
    const contents = (viewA.values.messages as { content: string }[]).map((m) => m.content);
    expect([...contents].filter((c) => /^[AB] \d$/.test(c)).sort()).toEqual(["A 0", "A 1", "A 2", "B 0", "B 1", "B 2"]);
    contents.forEach((c, i) => {
      if (i % 2 === 1) expect(c).toBe(`echo: ${contents[i - 1]}`);
    });
  });

  it("lists the same threads and assistant versions in both tabs after concurrent writes", async () => {
    const create = (page: Page, tag: string) =>
      page.evaluate(async (who) => {
        const { runtime, say } = (window as unknown as TabWindow).tab;
        await Promise.all(
          Array.from({ length: 8 }, async (_, i) => {
            const t = await runtime.threads.create({ metadata: { burst: who, i } });
            await say(t.thread_id, `${who}${i}`);
          }),
        );
      }, tag);
    await Promise.all([create(a, "a"), create(b, "b")]);
    const list = (page: Page) =>
      page.evaluate(async () => {
        const { runtime } = (window as unknown as TabWindow).tab;
        const threads = await runtime.threads.search({ limit: 1000 });
        return threads
          .filter((t) => "burst" in t.metadata)
          .map((t) => `${t.thread_id}:${t.status}`)
          .sort();
      });
    const [listA, listB] = await Promise.all([list(a), list(b)]);
    expect(listA).toHaveLength(16);
    expect(listA.every((t) => t.endsWith(":idle"))).toBe(true);
    expect(listB).toEqual(listA);

    const assistantId = await a.evaluate(async () => {
      const { runtime } = (window as unknown as TabWindow).tab;
      return (await runtime.assistants.create({ graphId: "echo", name: "shared" })).assistant_id;
    });
    await b.evaluate((id) => (window as unknown as TabWindow).tab.runtime.assistants.update(id, { name: "renamed in B" }), assistantId);
    const inA = await a.evaluate(async (id) => {
      const { runtime } = (window as unknown as TabWindow).tab;
      const versions = await runtime.assistants.getVersions(id);
      await runtime.assistants.setLatest(id, 1);
      return versions.map((v) => v.version).sort();
    }, assistantId);
    expect(inA).toEqual([1, 2]);
    const inB = await b.evaluate((id) => (window as unknown as TabWindow).tab.runtime.assistants.get(id), assistantId);
    expect(inB).toMatchObject({ version: 1, name: "shared" });
    expect(pages.browser.errors).toEqual([]);
  });
});
