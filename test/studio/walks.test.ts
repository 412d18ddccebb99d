/**
 * The studio in real Chromium against `serve()` (a socket, the official SDK client in the page):
 * the walks a person takes — create a thread and stream a run, answer an interrupt, fork from an
 * earlier checkpoint, compare three uploaded experiments and sort by regression, browse the
 * store — plus a run started elsewhere (another runtime on the same store) appearing as it
 * streams, deep links, long lists drawn only where visible, the keyboard, and axe-core's WCAG 2.1
 * AA rules on every page with its dialogs open. Every screen is saved to test-artifacts/browser/;
 * no console error is allowed anywhere.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { createRuntime, memoryStore, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { ROOT, launchBrowser, screenshot, tempDir, type Browser } from "../browser/harness.js";
import { agent, researchGraph, talkerGraph } from "./graphs.js";
import { axeViolations, buildStudio } from "./harness.js";

const assets = tempDir("studio-assets");
const talker = talkerGraph();
const store = memoryStore();
let runtime: Runtime;
/** Another runtime on the same store: "elsewhere" (another process would be the same service, D20). */
let elsewhere: Runtime;
let server: ServeHandle;
let browser: Browser;
let page: Page;
let base: string;
/** Every request the page made to anywhere but the server (the studio loads nothing from the network). */
const elsewhereRequests: string[] = [];
/** Every answer of 400 or more the page got, with its body (they would be console errors). */
const refused: string[] = [];

beforeAll(async () => {
  await buildStudio(assets.path);
  const graphs = { agent, talker: talker.graph, research: researchGraph() };
  runtime = await createRuntime({ graphs, store });
  elsewhere = await createRuntime({ graphs, store });
  server = await serve(runtime, { port: 0, studio: { assetsDir: assets.path } });
  base = `${server.url}/studio`;
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.protocol !== "blob:" && url.origin !== server.url) elsewhereRequests.push(request.url());
  });
  page.on("response", (response) => {
    if (response.status() >= 400) void response.text().then((body) => refused.push(`${response.request().method()} ${response.url()} ${response.status()} ${body}`), () => undefined);
  });
}, 120_000);

afterAll(async () => {
  talker.release();
  await browser?.close();
  await server?.close();
  await elsewhere?.close();
  await runtime?.close();
  assets.remove();
});

/** Fails with the violations listed (id, impact, where) when axe finds any. */
async function expectAccessible(what: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, `axe on ${what}`).toEqual([]);
}

const aiMessages = () => page.getByTestId("message-ai");
const assistantOf = async (graphId: string) => (await runtime.assistants.search({ graphId }))[0]!.assistant_id;

async function newThread(): Promise<string> {
  await page.goto(`${base}/threads`);
  await page.getByTestId("thread-new").click();
  await page.waitForURL(/\/studio\/threads\/[0-9a-f-]{36}$/);
  await page.getByTestId("composer-input").waitFor();
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
}

async function send(assistantId: string, text: string): Promise<void> {
  await page.getByTestId("composer-assistant").fill(assistantId);
  await page.getByTestId("composer-input").fill(text);
  await page.getByTestId("send").click();
}

describe("the studio in Chromium", () => {
  let agentThread: string;

  it("creates a thread and streams a run into it token by token", async () => {
    const threadId = await newThread();
    await send(await assistantOf("talker"), "Say something");
    // The talker streams three words and waits: they show, marked as streaming, before the run ends.
    const streaming = page.locator('[data-testid="message-ai"].streaming');
    await expect.poll(() => streaming.textContent()).toContain("one two three");
    await page.getByTestId("own-run").waitFor();
    expect(await page.getByTestId("thread-status").textContent()).toContain("busy");
    await screenshot(page, "studio-1-streaming");
    talker.release();
    await expect.poll(() => aiMessages().last().textContent()).toContain("one two three four five");
    await expect.poll(() => page.getByTestId("thread-status").textContent()).toContain("idle");
    expect(await streaming.count()).toBe(0);
    expect(await page.getByTestId("message-human").textContent()).toContain("Say something");
    const state = await runtime.threads.getState(threadId);
    expect(JSON.stringify(state.values)).toContain("one two three four five");
    await screenshot(page, "studio-2-streamed");
    await expectAccessible("the thread view");
  });

  it("answers an interrupt from its form", async () => {
    agentThread = await newThread();
    await send(await assistantOf("agent"), "What is 12 * (3 + 4)?");
    const interrupt = page.getByTestId("interrupt");
    await interrupt.waitFor();
    expect(await interrupt.textContent()).toContain("Run calculator(12 * (3 + 4))?");
    await expect.poll(() => page.getByTestId("thread-status").textContent()).toContain("interrupted");
    // Command options: the goto list is the graph's nodes.
    await page.getByTestId("command-toggle").check();
    await expect.poll(() => page.getByTestId("command-goto").locator("option").allTextContents()).toEqual(["(no goto)", "model", "tools"]);
    await page.getByTestId("command-toggle").uncheck();
    await screenshot(page, "studio-3-interrupt");
    await expectAccessible("the interrupt form");
    await page.getByTestId("resume-value").fill("true");
    await page.getByTestId("resume").click();
    await expect.poll(() => aiMessages().last().textContent()).toContain("The answer is 84.");
    expect(await page.getByTestId("message-tool").last().textContent()).toContain("84");
    await expect.poll(() => page.getByTestId("interrupts").count()).toBe(0);
    await expect.poll(() => page.getByTestId("thread-status").textContent()).toContain("idle");
    await screenshot(page, "studio-4-resumed");
  });

  it("forks from an earlier checkpoint with an edited state (time travel)", async () => {
    const before = (await runtime.threads.getHistory(agentThread, { limit: 100 })).length;
    // The checkpoint before the model first ran: its state holds only the question.
    const start = page.getByTestId("checkpoint").filter({ hasText: "step 0" });
    await start.click();
    await page.getByTestId("checkpoint-detail").waitFor();
    await expect.poll(() => page.getByTestId("checkpoint-values").textContent()).toContain("What is 12 * (3 + 4)?");
    await page.getByTestId("fork").click();
    const values = page.getByTestId("fork-values");
    await values.waitFor();
    await screenshot(page, "studio-5-fork-dialog");
    await expectAccessible("the fork dialog");
    await values.fill((await values.inputValue()).replace("What is 12 * (3 + 4)?", "What is 2 * 3?"));
    await page.getByTestId("fork-run").click();
    // The edited question runs: the agent asks again, this time for 2 * 3.
    await expect.poll(() => page.getByTestId("interrupt").textContent()).toContain("Run calculator(2 * 3)?");
    await page.getByTestId("resume-value").fill("true");
    await page.getByTestId("resume").click();
    await expect.poll(() => aiMessages().last().textContent()).toContain("The answer is 6.");
    // The new branch replaced the question; the old branch stays in the history.
    expect(await page.getByTestId("message-human").allTextContents()).toEqual([expect.stringContaining("What is 2 * 3?")]);
    const history = await runtime.threads.getHistory(agentThread, { limit: 100 });
    expect(history.length).toBeGreaterThan(before);
    expect(JSON.stringify(history.map((h) => h.values))).toContain("The answer is 84.");
    // The timeline marks the checkpoints of the branch left behind.
    await expect.poll(() => page.locator('[data-testid="checkpoint"][data-branch="other"]').count()).toBeGreaterThan(0);
    // The timeline reloads the history once the run has ended: its newest checkpoint is the end.
    await expect.poll(() => page.locator('[data-testid="checkpoint"][data-branch="current"]').first().textContent()).toMatch(/end · /);
    await screenshot(page, "studio-6-forked");
  });

  it("cancels a streaming run", async () => {
    const threadId = await newThread();
    await send(await assistantOf("talker"), "Start and stop");
    await expect.poll(() => page.locator('[data-testid="message-ai"].streaming').textContent()).toContain("one two three");
    await page.getByTestId("cancel").click();
    await expect.poll(() => page.getByTestId("own-run").count()).toBe(0);
    await expect.poll(() => page.getByTestId("thread-status").textContent()).toContain("idle");
    const [run] = await runtime.runs.list(threadId);
    expect(run?.status).toBe("interrupted");
    expect(await page.getByTestId("message-ai").count()).toBe(0);
  });

  it("answers an interrupt with a Command: resume and goto", async () => {
    await newThread();
    await send(await assistantOf("agent"), "What is 1 + 2?");
    await page.getByTestId("interrupt").waitFor();
    await page.getByTestId("command-toggle").check();
    await page.getByTestId("command-goto").selectOption("model");
    await page.getByTestId("resume-value").fill("false");
    await page.getByTestId("resume").click();
    // The tool is told no, and the model runs again (goto), then answers.
    await expect.poll(() => page.getByTestId("message-tool").last().textContent()).toContain("the user declined to run the calculator");
    await expect.poll(() => page.getByTestId("thread-status").textContent()).toContain("idle");
    expect(await aiMessages().count()).toBeGreaterThanOrEqual(3);
  });

  it("shows a run started elsewhere as it streams", async () => {
    const thread = await runtime.threads.create();
    await page.goto(`${base}/threads/${thread.thread_id}`);
    await page.getByTestId("composer-input").waitFor();
    // Let the thread's stream attach, then start a run from the other runtime.
    await page.waitForTimeout(300);
    const run = (async () => {
      for await (const _ of elsewhere.runs.stream(thread.thread_id, "talker", {
        input: { messages: [{ role: "user", content: "from elsewhere" }] },
        streamMode: ["messages-tuple", "values"],
      })) {
        // consumed by the other side
      }
    })();
    await page.getByTestId("live-run").waitFor();
    await expect.poll(() => page.locator('[data-testid="message-ai"].streaming').textContent()).toContain("one two three");
    await screenshot(page, "studio-7-live");
    talker.release();
    await run;
    await expect.poll(() => aiMessages().last().textContent()).toContain("one two three four five");
    await expect.poll(() => page.getByTestId("live-run").count(), { timeout: 5000 }).toBe(0);
    expect(await page.getByTestId("message-human").textContent()).toContain("from elsewhere");
  });

  it("compares three uploaded experiments and sorts the examples by regression", async () => {
    await page.goto(`${base}/experiments`);
    const files = ["baseline", "prompt-v2", "rag-v3"].map((f) => join(ROOT, "examples/upload", `${f}.json`));
    await page.getByTestId("upload").setInputFiles(files);
    await expect.poll(() => page.getByTestId("choose-experiment").count()).toBe(3);
    const experiments = await runtime.experiments.list();
    const byName = (name: string) => experiments.find((e) => e.name === name)!.id;
    const names = files.map((f) => JSON.parse(readFileSync(f, "utf8")).experiment_name as string);
    // Chosen in this order: the first is the baseline.
    for (const name of names) await page.getByRole("checkbox", { name: `Compare ${name}` }).check();
    await expectAccessible("the experiments page");
    await page.getByTestId("compare").click();
    await page.waitForURL(/\/studio\/experiments\/compare\?ids=/);
    expect(new URL(page.url()).searchParams.get("ids")).toBe(names.map(byName).join(","));
    await page.locator('[data-testid="metric-chart"] canvas[data-ready]').waitFor();
    const keys = await page.getByTestId("metric-table").evaluateAll((tables) => tables.map((t) => t.getAttribute("data-key")));
    expect(keys).toEqual(["correctness", "helpfulness", "verdict"]);
    // The server's bootstrap interval is shown for each non-baseline experiment.
    const comparison = await runtime.experiments.compare(names.map(byName));
    const paired = comparison.keys[0]!.experiments[1]!.vs_baseline!.paired;
    const correctness = await page.locator('[data-testid="metric-table"][data-key="correctness"] tbody tr').nth(1).textContent();
    expect(correctness).toContain(`${paired.ci_high! >= 0 ? "+" : "−"}${Number(Math.abs(paired.ci_high!).toFixed(3))}`);
    await screenshot(page, "studio-8-compare");

    await page.getByTestId("sort-regression").click();
    const worst = async () =>
      (await page.getByTestId("worst-delta").allTextContents()).map((t) => (t === "—" ? Infinity : Number(t.replace("−", "-").replace("+", ""))));
    await expect.poll(async () => (await worst())[0]).toBe(Math.min(...(await worst())));
    const deltas = await worst();
    expect([...deltas].sort((a, b) => a - b)).toEqual(deltas);
    expect(await page.locator('[data-testid="examples"] tbody tr').first().textContent()).toContain("regressed");
    await page.getByTestId("sort-regression").click(); // descending now
    await expect.poll(async () => (await worst()).filter(Number.isFinite)[0]).toBe(Math.max(...deltas.filter(Number.isFinite)));
    // A score filter: the baseline's correctness of at least 1.
    const baselineFull = comparison.examples.filter((x) => (x.runs[0]!.scores.correctness?.score ?? -1) >= 1).length;
    await page.getByTestId("filter-min").fill("1");
    await page.getByTestId("filter-apply").click();
    await expect.poll(() => page.getByTestId("examples-shown").textContent()).toContain(`${baselineFull} of ${comparison.examples.length} examples`);
    await page.getByTestId("filter-min").fill("");
    await page.getByTestId("filter-apply").click();
    await expect.poll(() => page.getByTestId("examples-shown").textContent()).toContain(`${comparison.examples.length} of ${comparison.examples.length} examples`);
    await page.getByTestId("only-regressed").check();
    const regressed = new Set(comparison.keys[0]!.experiments.flatMap((e) => e.vs_baseline?.regressed_examples ?? []));
    await expect.poll(() => page.getByTestId("examples-shown").textContent()).toContain(`${regressed.size} of ${comparison.examples.length} examples`);
    await screenshot(page, "studio-9-regressions");

    // Outputs side by side, with a diff against the baseline's.
    await page.getByTestId("example-open").first().click();
    await page.getByTestId("side-by-side").waitFor();
    expect(await page.getByTestId("output-diff").count()).toBe(2);
    await screenshot(page, "studio-10-example");
    await expectAccessible("the example dialog");
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByTestId("example-dialog").count()).toBe(0);

    // Another baseline: the ids are reordered and the deltas recomputed by the server.
    await page.getByTestId("baseline").selectOption(byName(names[2]!));
    await expect.poll(() => new URL(page.url()).searchParams.get("ids")).toBe([names[2], names[0], names[1]].map((n) => byName(n!)).join(","));
    await expect.poll(() => page.locator('[data-testid="metric-table"][data-key="correctness"] tbody tr').first().textContent()).toContain(names[2]!);

    const download = page.waitForEvent("download");
    await page.getByTestId("export-csv").click();
    const csv = readFileSync((await (await download).path())!, "utf8");
    expect(csv.split("\n")[0]).toMatch(/example/i);
    for (const name of names) expect(csv).toContain(name);
    await expectAccessible("the comparison");
  });

  it("browses the store: namespaces, items, search, put", async () => {
    await runtime.store.putItem(["users", "alice", "memories"], "food", { kind: "preference", text: "likes pizza" });
    await runtime.store.putItem(["users", "alice", "memories"], "city", { kind: "fact", text: "lives in Lyon" });
    await runtime.store.putItem(["users", "bob", "memories"], "food", { kind: "preference", text: "likes sushi" });
    await page.goto(`${base}/store`);
    await page.getByTestId("namespace").filter({ hasText: "users / alice / memories" }).click();
    await expect.poll(() => page.getByTestId("store-item").allTextContents()).toEqual(expect.arrayContaining(["food", "city"]));
    expect(await page.getByTestId("store-item").count()).toBe(2);
    await page.getByTestId("store-item").filter({ hasText: "city" }).click();
    await expect.poll(() => page.getByTestId("store-item-value").textContent()).toContain("lives in Lyon");
    await screenshot(page, "studio-11-store");
    await expectAccessible("the store page");
    // A filter on the value, across every namespace.
    await page.goto(`${base}/store`);
    await page.getByTestId("store-filter").fill('{"kind": "preference"}');
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByTestId("store-item").count()).toBe(2);
    // Put an item from the dialog.
    await page.getByTestId("item-new").click();
    await page.getByTestId("put-namespace").fill("notes");
    await page.getByTestId("put-key").fill("todo");
    await page.getByTestId("put-value").fill('{"text": "write docs"}');
    await expectAccessible("the put dialog");
    await page.getByTestId("put-submit").click();
    await expect.poll(() => page.getByTestId("store-item-value").textContent()).toContain("write docs");
    expect((await runtime.store.getItem(["notes"], "todo"))?.value).toEqual({ text: "write docs" });
  });

  it("shows the assistants: graph with subgraphs, schemas, versions and their diff, the edit form", async () => {
    const research = await assistantOf("research");
    await page.goto(`${base}?assistant=${research}&tab=graph`);
    await page.getByTestId("graph-node").first().waitFor();
    expect(await page.getByTestId("graph-node").evaluateAll((n) => n.map((e) => e.getAttribute("data-node")))).toEqual(expect.arrayContaining(["plan", "research"]));
    await page.getByTestId("xray").selectOption("true");
    await expect.poll(() => page.getByTestId("graph-node").evaluateAll((n) => n.map((e) => e.getAttribute("data-node")))).toEqual(
      expect.arrayContaining(["plan", "research:search", "research:summarize"]),
    );
    expect(await page.getByTestId("graph-cluster").count()).toBe(1);
    await screenshot(page, "studio-12-graph");
    await expectAccessible("the assistant's graph");

    await page.getByRole("tab", { name: "Schemas" }).click();
    await page.getByTestId("schemas").waitFor();
    await expectAccessible("the schemas");

    // A new assistant, a second version, and the diff between them.
    await page.getByTestId("assistant-new").click();
    await page.getByTestId("create-graph").selectOption("agent");
    await page.getByTestId("create-name").fill("Careful calculator");
    await expectAccessible("the new assistant dialog");
    await page.getByTestId("create-submit").click();
    await expect.poll(() => page.locator("#assistant-title").textContent()).toBe("Careful calculator");
    await page.getByRole("tab", { name: "Edit" }).click();
    await page.getByTestId("edit-context").fill('{"persona": "Careful"}');
    await page.getByTestId("edit-save").click();
    await expect.poll(() => page.getByTestId("assistant-version").textContent()).toBe("2");
    await page.getByRole("tab", { name: "Versions" }).click();
    await expect.poll(() => page.getByTestId("version-diff").locator("ins").allTextContents()).toEqual([expect.stringContaining('"persona": "Careful"')]);
    await screenshot(page, "studio-13-versions");
    await expectAccessible("the versions");
  });

  it("works under a base path (the mount prefix), deep links included", async () => {
    const mounted = await serve(runtime, { port: 0, basePath: "/agents", studio: { assetsDir: assets.path } });
    const other = await browser.newPage();
    try {
      await other.goto(`${mounted.url}/agents/studio/threads`);
      await other.getByTestId("thread-row").first().click();
      await other.waitForURL(new RegExp(`^${mounted.url}/agents/studio/threads/[0-9a-f-]{36}$`));
      await other.getByTestId("composer-input").waitFor();
      await other.reload();
      await other.getByTestId("checkpoint-list").waitFor();
      await other.getByRole("link", { name: "Store" }).click();
      await other.waitForURL(`${mounted.url}/agents/studio/store`);
    } finally {
      await other.close();
      await mounted.close();
    }
  });

  it("serves deep links: a bookmarked thread or comparison opens as it was", async () => {
    await page.goto(`${base}/threads/${agentThread}`);
    await expect.poll(() => aiMessages().last().textContent()).toContain("The answer is 6.");
    await page.goto(`${base}/threads?status=interrupted`);
    await expect.poll(() => page.getByTestId("filter-status").inputValue()).toBe("interrupted");
    await page.goto(`${base}/nowhere`);
    await page.getByText("The studio has no page at this address").waitFor();
    // Back and forward move between pages of the app without reloading it.
    await page.goto(`${base}/threads`);
    await page.getByRole("link", { name: "Store" }).click();
    await page.waitForURL(`${base}/store`);
    await page.goBack();
    await page.waitForURL(`${base}/threads`);
    await page.getByTestId("thread-list").waitFor();
  });

  it("keeps only the visible rows of a long list in the DOM, and moves through it by keyboard", async () => {
    for (let i = 0; i < 300; i++) await runtime.threads.create({ metadata: { batch: "many", i } });
    await page.goto(`${base}/threads?size=100&metadata=${encodeURIComponent('{"batch":"many"}')}`);
    const list = page.getByTestId("thread-list");
    await list.locator("li").first().waitFor();
    await expect.poll(() => page.getByTestId("threads-total").textContent()).toContain("300 threads");
    const rows = async () => {
      const { drawn, visible } = await list.evaluate((box) => ({
        drawn: box.querySelectorAll("li").length,
        visible: Math.ceil(box.clientHeight / (box.querySelector("li") as HTMLElement).offsetHeight),
      }));
      return { drawn, visible };
    };
    const first = await rows();
    // A page of 100 threads, a screenful visible: at most one more screenful drawn.
    expect(first.drawn).toBeLessThanOrEqual(first.visible * 2);
    expect(first.drawn).toBeLessThan(100);
    // Keyboard: arrows move between rows, End reaches the last one (drawn on the way), Enter opens it.
    await list.locator("li a").first().focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.closest("li")?.getAttribute("aria-posinset"))).toBe("3");
    await page.keyboard.press("End");
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest("li")?.getAttribute("aria-posinset"))).toBe("100");
    const atEnd = await rows();
    expect(atEnd.drawn).toBeLessThanOrEqual(atEnd.visible * 2);
    const target = await page.evaluate(() => (document.activeElement as HTMLAnchorElement).getAttribute("href"));
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === target);
    await screenshot(page, "studio-14-keyboard");
    // Paging: the next page holds the next 100.
    await page.goto(`${base}/threads?size=100&page=3&metadata=${encodeURIComponent('{"batch":"many"}')}`);
    await expect.poll(() => page.getByTestId("threads-total").textContent()).toContain("page 3 of 3");
  });

  it("works by keyboard alone: skip link, navigation, tabs and dialogs", async () => {
    await page.goto(`${base}/threads`);
    await page.getByTestId("thread-list").waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab"); // the brand is text: the first link is "Assistants", then "Threads"
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Threads");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${base}/runs`);
    // A dialog takes the focus, Escape closes it and gives the focus back.
    await page.getByTestId("cron-new").focus();
    await page.keyboard.press("Enter");
    await page.getByTestId("cron-create").waitFor();
    expect(await page.evaluate(() => !!document.activeElement?.closest("dialog"))).toBe(true);
    await expectAccessible("the new cron dialog");
    await page.keyboard.press("Escape");
    await expect.poll(() => page.getByTestId("cron-create").count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe("cron-new");
    // Tabs: arrows move between them.
    await page.goto(`${base}`);
    await page.getByRole("tab", { name: "Graph" }).focus();
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => page.getByRole("tab", { name: "Schemas" }).getAttribute("aria-selected")).toBe("true");
    // The focus follows the selection once the tab list has rendered it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Schemas");
  });

  it("lists, creates and pauses runs and crons", async () => {
    await page.goto(`${base}/runs`);
    await page.getByTestId("run-new").click();
    await page.getByTestId("run-assistant").fill(await assistantOf("agent"));
    await page.getByTestId("run-input").fill('{"messages": [{"role": "user", "content": "background hello"}]}');
    await expectAccessible("the new run dialog");
    await page.getByTestId("run-submit").click();
    // The dialog closes once the run is created (or shows why not).
    const dialogState = async () => ((await page.getByTestId("run-create").count()) === 0 ? "closed" : ((await page.getByTestId("run-create").getByTestId("error").textContent({ timeout: 100 }).catch(() => null)) ?? "open"));
    await expect.poll(dialogState).toBe("closed");
    // The run, on a new thread, is listed among the latest runs, and under its thread's filter.
    const [thread] = await runtime.threads.search({ metadata: {}, sortBy: "created_at", sortOrder: "desc", limit: 1 });
    const [run] = await runtime.runs.list(thread!.thread_id);
    await expect.poll(() => page.getByTestId("runs-table").textContent()).toContain(run!.run_id.slice(-8));
    await page.getByTestId("runs-thread").fill(thread!.thread_id);
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => page.getByTestId("runs-table").locator("tbody tr").count()).toBe(1);
    await page.getByTestId("cron-new").click();
    await page.getByTestId("cron-assistant").fill(await assistantOf("agent"));
    await page.getByTestId("cron-schedule").fill("*/5 * * * *");
    await page.getByTestId("cron-submit").click();
    await expect.poll(async () => ((await page.getByTestId("cron-create").count()) === 0 ? "closed" : ((await page.getByTestId("cron-create").getByTestId("error").textContent({ timeout: 100 }).catch(() => null)) ?? "open"))).toBe("closed");
    await page.getByTestId("cron-row").first().waitFor();
    const [cron] = await runtime.crons.search({});
    expect(cron?.schedule).toBe("*/5 * * * *");
    expect(cron?.enabled).toBe(true);
    await page.getByTestId("cron-enabled").first().uncheck();
    await expect.poll(async () => (await runtime.crons.search({}))[0]?.enabled).toBe(false);
    await expect.poll(() => page.getByTestId("cron-row").first().textContent()).toContain("paused");
    await screenshot(page, "studio-15-runs");
    await expectAccessible("the runs and crons page");
    await page.getByTestId("cron-enabled").first().check();
    await expect.poll(async () => (await runtime.crons.search({}))[0]?.enabled).toBe(true);
  });

  it("logged no console error and no page error, and asked nothing of any other origin", () => {
    expect(refused).toEqual([]);
    expect(browser.errors).toEqual([]);
    expect(elsewhereRequests).toEqual([]);
  });
});

