/**
 * `useChat` of `@ai-sdk/react` in real Chromium, unchanged, against `serve()` (which mounts the
 * AI SDK chat endpoint because `ai` is installed), from a page of another origin: two turns on
 * one chat with a tool call of a LangChain `createAgent` agent, and the example agent's approval
 * answered by clicking Approve. The test types and clicks, and reads the rendered page.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent as calcAgent } from "../../examples/node/agent.js";
import { chatThreadId } from "../../src/ai-sdk/index.js";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { chatAgent } from "../ai-sdk/fixtures.js";
import { ROOT, screenshot } from "./harness.js";
import { browserPages } from "./pages.js";

let runtime: Runtime;
let server: ServeHandle;

const pages = browserPages("ai-sdk-chat", async (dir) => {
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(ROOT, "test/browser/page/ai-sdk-chat-app.tsx")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    outfile: join(dir, "page.js"),
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
  });
  writeFileSync(join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>useChat</title><script type="module" src="./page.js"></script>`);
});

beforeAll(async () => {
  runtime = await createRuntime({ graphs: { weather: chatAgent(), agent: calcAgent } });
  server = await serve(runtime, { port: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

interface Rendered {
  status: string;
  error: string | null;
  messages: Array<{ role: string; parts: Array<{ text?: string; tool?: string; state?: string; output?: string }> }>;
}

/** What the page shows. */
const rendered = (page: Page) =>
  page.evaluate((): Rendered => ({
    status: document.querySelector("#status")?.textContent ?? "",
    error: document.querySelector("#error")?.textContent ?? null,
    messages: [...document.querySelectorAll("#messages > li")].map((li) => ({
      role: li.className.replace("message ", ""),
      parts: [...li.querySelectorAll(":scope > p.text, :scope > div.tool")].map((el) =>
        el.matches("p.text")
          ? { text: el.textContent ?? "" }
          : { tool: (el as HTMLElement).dataset.tool, state: (el as HTMLElement).dataset.state, ...(el.querySelector("output") ? { output: el.querySelector("output")!.textContent! } : {}) },
      ),
    })),
  }));

async function waitFor(page: Page, what: string, pred: (r: Rendered) => boolean, ms = 20_000): Promise<Rendered> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await rendered(page);
    if (pred(r)) return r;
    if (Date.now() > end) {
      await screenshot(page, `ai-sdk-chat-${what.replace(/\W+/g, "-")}`);
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(r)}`);
    }
    await page.waitForTimeout(50);
  }
}

async function say(page: Page, text: string) {
  await page.fill("#input", text);
  await page.click("#send");
}

const lastText = (r: Rendered) => r.messages.at(-1)?.parts.filter((p) => p.text !== undefined).map((p) => p.text).join("") ?? "";

describe("useChat in Chromium against graphdock serve", () => {
  it("holds two turns on one chat, the first with a tool call the agent runs", async () => {
    const page = await pages.browser.newPage();
    await page.goto(`${pages.server.url}/?api=${encodeURIComponent(server.url)}&assistant=weather`);
    await page.waitForFunction(() => window.appReady === true);
    await say(page, "weather in Paris");
    let r = await waitFor(page, "first answer", (x) => x.status === "ready" && x.messages.length === 2 && lastText(x).endsWith("sunny in Paris"));
    expect(r.messages[1]).toEqual({
      role: "assistant",
      parts: [{ text: "Let me check. " }, { tool: "get_weather", state: "output-available", output: '"sunny in Paris"' }, { text: "The weather: sunny in Paris" }],
    });
    await say(page, "thanks");
    r = await waitFor(page, "second answer", (x) => x.status === "ready" && x.messages.length === 4);
    expect(r.messages.map((m) => [m.role, m.parts.map((p) => p.text ?? p.tool).join("|")])).toEqual([
      ["user", "weather in Paris"],
      ["assistant", "Let me check. |get_weather|The weather: sunny in Paris"],
      ["user", "thanks"],
      ["assistant", "You said: thanks"],
    ]);
    expect(r.error).toBeNull();
    // One chat, one thread: it holds the whole conversation.
    const threads = await runtime.threads.search({ metadata: { graph_id: "weather" } });
    expect(threads).toHaveLength(1);
    const chatId = (await runtime.runs.list(threads[0]!.thread_id))[0]!.metadata?.ai_sdk_chat_id as string;
    expect(threads[0]!.thread_id).toBe(await chatThreadId("owner", chatId));
    const state = await runtime.threads.getState(threads[0]!.thread_id);
    expect((state.values as { messages: Array<{ type: string }> }).messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    expect(pages.browser.errors).toEqual([]);
    await page.close();
  });

  it("asks before the example agent's tool runs; Approve resumes the run", async () => {
    const page = await pages.browser.newPage();
    await page.goto(`${pages.server.url}/?api=${encodeURIComponent(server.url)}&assistant=agent`);
    await page.waitForFunction(() => window.appReady === true);
    await say(page, "what is 12 * (3 + 4)?");
    let r = await waitFor(page, "approval", (x) => x.status === "ready" && x.messages[1]?.parts[0]?.state === "approval-requested");
    expect(r.messages[1]!.parts).toEqual([{ tool: "calculator", state: "approval-requested" }]);
    await page.click("button.approve");
    r = await waitFor(page, "answer", (x) => x.status === "ready" && lastText(x) === "The answer is 84.");
    expect(r.messages).toHaveLength(2);
    expect(r.messages[1]!.parts).toEqual([{ tool: "calculator", state: "output-available", output: '"84"' }, { text: "The answer is 84." }]);
    expect(pages.browser.errors).toEqual([]);
    await page.close();
  });
});
