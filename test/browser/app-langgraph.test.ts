/**
 * The example app (examples/browser) with its LangGraph.js agent, in real Chromium: the chat
 * switched to the LangGraph.js engine streams the model's tokens, pauses before the calculator
 * (a static breakpoint: browsers have no AsyncLocalStorage for `interrupt()`), resumes when
 * approved, and the thread is still there after a reload (IndexedDB). Screens go to
 * test-artifacts/browser/.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { appDriver } from "./app-driver";
import { buildExampleApp, screenshot } from "./harness";
import { browserPages } from "./pages";

const pages = browserPages("browser-app-langgraph", buildExampleApp);
let page: Page;
const { settled, messages, send, runFinished } = appDriver(() => page);

/** Records, from now on, every text the streaming bubble showed (one entry per change). */
async function recordStreaming(): Promise<void> {
  await page.evaluate(() => {
    const shown: string[] = [];
    (window as unknown as { shown: string[] }).shown = shown;
    new MutationObserver(() => {
      const bubble = document.querySelector(".message.streaming .text");
      const text = bubble?.textContent ?? "";
      if (text && shown.at(-1) !== text) shown.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

const streamed = () => page.evaluate(() => (window as unknown as { shown: string[] }).shown);

beforeAll(async () => {
  page = await pages.browser.newPage();
  await page.goto(`${pages.server.url}/#/chat`);
  // A page that cannot start (the adapter left out of the bundle, say) fails with what it showed.
  await settled("chat").catch(async (err) => {
    throw new Error(`${String(err)}\n${pages.browser.errors.join("\n")}\n${await page.locator("#app").textContent()}`);
  });
});


describe("example app's LangGraph.js agent in Chromium", () => {
  it("switches the chat to the LangGraph.js graph", async () => {
    await page.getByTestId("engine-langgraph").click();
    await expect.poll(() => page.getByTestId("assistant-note").textContent()).toContain("graph langgraph");
    expect(await page.getByTestId("engine-langgraph").getAttribute("aria-pressed")).toBe("true");
    expect(await page.getByTestId("engine-agent").getAttribute("aria-pressed")).toBe("false");
  });

  it("streams the model's tokens into the chat", async () => {
    await recordStreaming();
    await send("Hello LangGraph");
    await expect.poll(() => messages("ai").last().textContent()).toContain("You said: Hello LangGraph");
    await runFinished();
    const shown = await streamed();
    // The reply grew word by word: several partial texts, each extending the one before.
    expect(shown.length).toBeGreaterThan(3);
    for (let i = 1; i < shown.length; i++) expect(shown[i]!.startsWith(shown[i - 1]!)).toBe(true);
    expect(shown[0]!.length).toBeLessThan(shown.at(-1)!.length);
    await expect.poll(() => page.getByTestId("thread-title").textContent()).toBe("Hello LangGraph");
    await screenshot(page, "lg-1-chat-reply");
  });

  it("pauses before the calculator and finishes when approved", async () => {
    await send("What is 12 * (3 + 4)?");
    const approval = page.getByTestId("approval");
    await approval.waitFor();
    expect(await approval.textContent()).toContain("Run calculator(12 * (3 + 4))?");
    expect(await page.getByTestId("thread-item").first().textContent()).toContain("interrupted");
    expect(await messages("tool").count()).toBe(0); // the tool has not run
    await screenshot(page, "lg-2-approval");

    await recordStreaming();
    await page.getByTestId("approve").click();
    await expect.poll(() => messages("ai").last().textContent()).toContain("The answer is 84.");
    await runFinished();
    expect(await approval.count()).toBe(0);
    expect(await messages("tool").last().textContent()).toContain("84");
    const shown = await streamed();
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.at(-1)).toBe("The answer is 84.");
    expect(await page.getByTestId("thread-item").first().textContent()).toContain("idle");
    await screenshot(page, "lg-3-approved");
  });

  it("keeps the thread after a reload, on its graph", async () => {
    await page.reload();
    await settled("chat");
    const item = page.getByTestId("thread-item").filter({ hasText: "Hello LangGraph" });
    await item.click();
    await settled("chat");
    await expect.poll(() => messages("ai").last().textContent()).toContain("The answer is 84.");
    expect(await messages("human").allTextContents()).toEqual([
      expect.stringContaining("Hello LangGraph"),
      expect.stringContaining("What is 12 * (3 + 4)?"),
    ]);
    expect(await messages("tool").allTextContents()).toEqual([expect.stringContaining("84")]);
    await page.getByTestId("open-history").click();
    await settled("history");
    expect(await page.getByTestId("checkpoint").count()).toBeGreaterThan(5);
    await screenshot(page, "lg-4-reloaded");
  });

  it("answers without the tool when the person rejects it, on the thread's own graph", async () => {
    // The chat is switched back to graphdock's engine; the LangGraph.js thread still runs on its graph.
    await page.goto(`${pages.server.url}/#/chat`);
    await settled("chat");
    await page.getByTestId("engine-agent").click();
    await expect.poll(() => page.getByTestId("assistant-note").textContent()).toContain("graph agent");
    await page.getByTestId("thread-item").filter({ hasText: "Hello LangGraph" }).click();
    await settled("chat");
    await send("What is 1 + 1?");
    await page.getByTestId("approval").waitFor();
    await page.getByTestId("reject").click();
    await expect.poll(() => messages("tool").last().textContent()).toContain("the user declined to run the calculator");
    await runFinished();
    expect(await page.getByTestId("approval").count()).toBe(0);
    expect(await messages("tool").count()).toBe(2);
    expect(pages.browser.errors).toEqual([]);
  });
});
