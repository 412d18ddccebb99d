/**
 * The example app (examples/browser), built with Vite and used in real Chromium the way a person
 * would: chat with streaming, the approval interrupt, reload, history and forking, assistant
 * versions, experiment upload and comparison, and the official client page. Every screen is
 * saved to test-artifacts/browser/.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { appDriver } from "./app-driver";
import { ROOT, buildExampleApp, screenshot } from "./harness";
import { browserPages } from "./pages";

const pages = browserPages("browser-app", buildExampleApp);
let page: Page;
const { settled, messages, send, runFinished } = appDriver(() => page);

async function go(hash: string, route: string): Promise<void> {
  await page.evaluate((h) => (location.hash = h), hash);
  await settled(route);
}

beforeAll(async () => {
  page = await pages.browser.newPage();
  await page.goto(`${pages.server.url}/#/chat`);
  await settled("chat");
});


describe("example app in Chromium", () => {
  it("streams the agent's reply into the chat", async () => {
    // Record what the page showed while the reply was streaming.
    await page.evaluate(() => {
      const seen = { partial: 0, indicator: false };
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver(() => {
        if (document.querySelector(".message.streaming")) seen.partial += 1;
        if (document.querySelector('[data-testid="streaming"]:not([hidden])')) seen.indicator = true;
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await send("Hello there");
    await expect.poll(() => messages("ai").last().textContent()).toContain("You said: Hello there");
    await runFinished();
    const seen = await page.evaluate(() => (window as unknown as { seen: { partial: number; indicator: boolean } }).seen);
    expect(seen.indicator).toBe(true);
    expect(seen.partial).toBeGreaterThan(1); // the answer grew word by word before the final state
    await expect.poll(() => page.getByTestId("thread-item").count()).toBe(1);
    await expect.poll(() => page.getByTestId("thread-title").textContent()).toBe("Hello there");
    await screenshot(page, "1-chat-reply");
  });

  it("asks approval before the calculator runs and finishes when approved", async () => {
    await send("What is 12 * (3 + 4)?");
    const approval = page.getByTestId("approval");
    await approval.waitFor();
    expect(await approval.textContent()).toContain("Run calculator(12 * (3 + 4))?");
    expect(await page.getByTestId("thread-item").first().textContent()).toContain("interrupted");
    await screenshot(page, "2-chat-approval");
    await page.getByTestId("approve").click();
    await expect.poll(() => messages("ai").last().textContent()).toContain("The answer is 84.");
    await runFinished();
    expect(await approval.count()).toBe(0);
    expect(await messages("tool").last().textContent()).toContain("84");
    await screenshot(page, "3-chat-approved");
  });

  it("finds the conversation and its history after a reload", async () => {
    await page.goto(`${pages.server.url}/#/chat`);
    await page.reload();
    await settled("chat");
    const item = page.getByTestId("thread-item").filter({ hasText: "Hello there" });
    await item.click();
    await expect.poll(() => messages("ai").last().textContent()).toContain("The answer is 84.");
    expect(await messages("human").allTextContents()).toEqual([
      expect.stringContaining("Hello there"),
      expect.stringContaining("What is 12 * (3 + 4)?"),
    ]);
    await screenshot(page, "4-reloaded");

    await page.getByTestId("open-history").click();
    await settled("history");
    const checkpoints = page.getByTestId("checkpoint");
    expect(await checkpoints.count()).toBeGreaterThan(6);
    expect(await page.locator('[data-testid="checkpoint"][data-branch="other"]').count()).toBe(0);
    await screenshot(page, "5-history");
  });

  it("forks a new branch from an earlier checkpoint", async () => {
    const endOfFirstTurn = page.getByTestId("checkpoint").filter({ hasText: "You said: Hello there" }).filter({ has: page.getByTestId("fork") });
    await endOfFirstTurn.first().getByTestId("fork").click();
    await page.getByTestId("fork-input").fill("What is 2 + 2?");
    await page.getByTestId("fork-send").click();
    await settled("chat");
    await page.getByTestId("approval").waitFor();
    await page.getByTestId("approve").click();
    await expect.poll(() => messages("ai").last().textContent()).toContain("The answer is 4.");
    await runFinished();
    // The new branch continues the first turn; the replaced second turn is not on it.
    const humans = await messages("human").allTextContents();
    expect(humans).toEqual([expect.stringContaining("Hello there"), expect.stringContaining("What is 2 + 2?")]);
    await screenshot(page, "6-forked-chat");

    await page.getByTestId("open-history").click();
    await settled("history");
    const old = page.locator('[data-testid="checkpoint"][data-branch="other"]');
    expect(await old.count()).toBeGreaterThan(0);
    expect((await old.allTextContents()).join(" ")).toContain("The answer is 84.");
    await screenshot(page, "7-history-branches");
  });

  it("versions an assistant and rolls back", async () => {
    await go("#/assistants", "assistants");
    await page.getByTestId("assistant-name").fill("Careful calculator");
    await page.getByRole("button", { name: "Create assistant" }).click();
    await expect.poll(() => page.locator(".assistant-detail h3").textContent()).toBe("Careful calculator");
    await page.getByTestId("version-context").fill('{"persona": "Careful"}');
    await page.getByTestId("save-version").click();
    await expect.poll(() => page.getByTestId("version-row").count()).toBe(2);

    // Version 2 is active: its persona prefixes the agent's answers.
    await page.getByTestId("use-assistant").click();
    await settled("chat");
    await send("hi");
    await expect.poll(() => messages("ai").last().textContent()).toContain("Careful: I can do arithmetic");
    await runFinished();

    await go("#/assistants", "assistants");
    await page.getByTestId("assistant-list").getByText("Careful calculator").click();
    await expect.poll(() => page.locator(".assistant-detail h3").textContent()).toBe("Careful calculator");
    await page.getByTestId("rollback").click();
    await expect.poll(() => page.locator('[data-testid="version-row"][data-version="1"]').getAttribute("class")).toBe("active");
    await screenshot(page, "8-assistants");

    await go("#/chat", "chat");
    await send("hi again");
    await expect.poll(() => messages("ai").last().textContent()).toContain("You said: hi again");
    expect(await messages("ai").last().textContent()).not.toContain("Careful:");
    await runFinished();
  });

  it("uploads the sample experiments and shows their comparison", async () => {
    await go("#/experiments", "experiments");
    const samples = readdirSync(join(ROOT, "examples/upload"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => join(ROOT, "examples/upload", f));
    expect(samples.length).toBeGreaterThanOrEqual(2);
    await page.getByTestId("experiment-file").setInputFiles(samples);
    await expect.poll(() => page.getByTestId("experiment").count()).toBe(samples.length);
    await page.getByTestId("compare").click();
    const report = page.frameLocator('[data-testid="report"]');
    await report.locator("table").first().waitFor();
    const names = await page.getByTestId("experiment").locator("strong").allTextContents();
    const content = (await report.locator("body").textContent()) ?? "";
    for (const name of names) expect(content).toContain(name);
    await screenshot(page, "9-experiments");
  });

  it("runs the agent through the official SDK client on the in-page fetch handler", async () => {
    await go("#/sdk", "sdk");
    await expect.poll(() => page.getByTestId("sdk-info").textContent()).toMatch(/sees \d+ assistants/);
    await page.getByTestId("sdk-input").fill("What is 6 * 7?");
    await page.getByTestId("sdk-run").click();
    await page.getByTestId("sdk-approve").click();
    await expect.poll(() => page.getByTestId("sdk-reply").textContent()).toContain("The answer is 42.");
    const events = await page.getByTestId("sdk-events").locator("code").allTextContents();
    expect(events).toEqual(expect.arrayContaining(["metadata", "updates", "values"]));
    await screenshot(page, "10-official-client");
  });

  it("tells the agent when the person rejects the tool call", async () => {
    await go("#/chat", "chat");
    await send("What is 1 + 1?");
    await page.getByTestId("reject").click();
    await expect.poll(() => messages("tool").last().textContent()).toContain("the user declined to run the calculator");
    await runFinished();
    expect(await page.getByTestId("approval").count()).toBe(0);
  });

  it("shows the runtime in this tab in the studio, through the in-page fetch handler", async () => {
    await go("#/studio/threads", "studio");
    const rows = page.getByTestId("thread-row");
    await expect.poll(() => rows.allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("Hello there")]));
    await rows.filter({ hasText: "Hello there" }).first().click();
    await expect.poll(() => page.evaluate(() => location.hash)).toMatch(/^#\/studio\/threads\/[0-9a-f-]{36}$/);
    await expect.poll(() => page.getByTestId("message-human").first().textContent()).toContain("Hello there");
    await page.getByTestId("checkpoint").first().waitFor();
    // A run from the studio goes to the same IndexedDB runtime.
    await page.getByTestId("composer-assistant").fill("echo");
    await page.getByTestId("composer-input").fill("from the studio");
    await page.getByTestId("send").click();
    await expect.poll(() => page.getByTestId("message-ai").last().textContent()).toContain("from the studio");
    await screenshot(page, "12-studio-in-page");
    // The uploaded experiments are there too.
    await page.getByRole("link", { name: "Experiments", exact: true }).last().click();
    await expect.poll(() => page.getByTestId("choose-experiment").count()).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(() => location.hash)).toBe("#/studio/experiments");
  });

  it("shows a readable error for a thread that does not exist", async () => {
    await go("#/chat/00000000-0000-4000-8000-000000000000", "chat");
    const message = page.getByTestId("error-message");
    await message.waitFor();
    expect(await message.textContent()).toMatch(/^not_found: .*00000000-0000-4000-8000-000000000000/);
    await screenshot(page, "11-error");
    expect(pages.browser.errors).toEqual([]);
  });
});
