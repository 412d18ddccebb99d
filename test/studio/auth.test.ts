/**
 * The studio behind custom auth, in Chromium: the shell loads without credentials and shows no
 * data until the person signs in (a bearer token checked by examples/node/auth-jwt.ts, or an API
 * key checked by examples/node/auth-api-key.ts); then it shows only what that user may see: a
 * second user sees none of the first one's threads, not even by their link.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { createRuntime, type Runtime } from "../../src/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { auth as jwtAuth, signToken } from "../../examples/node/auth-jwt.js";
import { auth as apiKeyAuth } from "../../examples/node/auth-api-key.js";
import { launchBrowser, screenshot, tempDir, type Browser } from "../browser/harness.js";
import { agent } from "./graphs.js";
import { axeViolations, buildStudio } from "./harness.js";

const assets = tempDir("studio-auth-assets");
let runtime: Runtime;
let keyRuntime: Runtime;
let server: ServeHandle;
let keyServer: ServeHandle;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await buildStudio(assets.path);
  runtime = await createRuntime({ graphs: { agent }, auth: jwtAuth });
  keyRuntime = await createRuntime({ graphs: { agent }, auth: apiKeyAuth });
  server = await serve(runtime, { port: 0, studio: { assetsDir: assets.path } });
  keyServer = await serve(keyRuntime, { port: 0, studio: { assetsDir: assets.path } });
  browser = await launchBrowser();
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await keyServer?.close();
  await runtime?.close();
  await keyRuntime?.close();
  assets.remove();
});

async function signIn(kind: "bearer" | "api-key", secret: string): Promise<void> {
  const dialog = page.getByTestId("sign-in");
  await dialog.waitFor();
  await page.getByTestId(kind === "bearer" ? "kind-bearer" : "kind-api-key").check();
  await page.getByTestId("secret").fill(secret);
  await page.getByTestId("sign-in-submit").click();
  await expect.poll(() => dialog.count()).toBe(0);
}

describe("the studio with auth", () => {
  let aliceThread: string;

  it("loads its shell without credentials, while the API refuses them", async () => {
    const shell = await fetch(`${server.url}/studio/threads`);
    expect(shell.status).toBe(200);
    expect(await shell.text()).toContain('<div id="studio">');
    expect((await fetch(`${server.url}/threads/search`, { method: "POST", body: "{}" })).status).toBe(401);
    // The session says whether credentials pass, without a refusal.
    expect(await (await fetch(`${server.url}/studio/session`)).json()).toEqual({ authenticated: false, detail: expect.stringContaining("Missing bearer token") });
    const token = await signToken("alice");
    expect(await (await fetch(`${server.url}/studio/session`, { headers: { authorization: `Bearer ${token}` } })).json()).toEqual({ authenticated: true });
  });

  it("asks for credentials and shows no data before them", async () => {
    const alice = await runtime.client({ headers: { authorization: `Bearer ${await signToken("alice")}` } });
    const thread = await alice.threads.create({ metadata: { title: "alice's secret plan" } });
    await alice.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "alice's question" }] } });
    aliceThread = thread.thread_id;

    await page.goto(`${server.url}/studio/threads`);
    await page.getByTestId("sign-in").waitFor();
    expect(await page.getByTestId("thread-row").count()).toBe(0);
    expect(await page.content()).not.toContain("alice's");
    await screenshot(page, "studio-auth-1-sign-in");
    expect(await axeViolations(page), "axe with the sign-in dialog open").toEqual([]);
  });

  it("shows the signed-in user's threads only", async () => {
    await signIn("bearer", await signToken("alice"));
    await expect.poll(() => page.getByTestId("thread-row").allTextContents()).toEqual([expect.stringContaining("alice's question")]);
    // A thread created in the studio is stamped with its owner by the auth handler.
    await page.getByTestId("thread-new").click();
    // Alice's auth hides the graphs' default assistants: she names the graph.
    await page.getByTestId("composer-assistant").fill("agent");
    await page.getByTestId("composer-input").fill("alice from the studio");
    await page.getByTestId("send").click();
    await expect.poll(() => page.getByTestId("message-ai").last().textContent()).toContain("You said: alice from the studio");
    await screenshot(page, "studio-auth-2-alice");
    await page.goto(`${server.url}/studio/threads`);
    await expect.poll(() => page.getByTestId("thread-row").count()).toBe(2);

    await page.getByTestId("sign-out").click();
    await page.getByTestId("sign-in").waitFor();
    expect(await page.getByTestId("thread-row").count()).toBe(0);
  });

  it("shows a second user none of the first user's threads, not even by link or count", async () => {
    await signIn("bearer", await signToken("bob"));
    await expect.poll(() => page.getByTestId("threads-total").textContent()).toBe("No threads.");
    expect(await page.getByTestId("thread-row").count()).toBe(0);
    // Nor by its link: what the page would ask for is refused as unknown (404, D13), through the official client.
    const bobSdk = new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: { authorization: `Bearer ${await signToken("bob")}` }, callerOptions: { maxRetries: 0 } });
    await expect(bobSdk.threads.get(aliceThread)).rejects.toMatchObject({ status: 404 });
    await expect(bobSdk.threads.getState(aliceThread)).rejects.toMatchObject({ status: 404 });
    await page.goto(`${server.url}/studio/runs`);
    await page.getByText("No runs.").waitFor();
    await screenshot(page, "studio-auth-3-bob");
    // Bob's own thread is his alone.
    await page.goto(`${server.url}/studio/threads`);
    await page.getByTestId("thread-new").click();
    await page.getByTestId("composer-assistant").fill("agent");
    await page.getByTestId("composer-input").fill("bob here");
    await page.getByTestId("send").click();
    await expect.poll(() => page.getByTestId("message-ai").last().textContent()).toContain("You said: bob here");
    const bob = await runtime.client({ headers: { authorization: `Bearer ${await signToken("bob")}` } });
    const alice = await runtime.client({ headers: { authorization: `Bearer ${await signToken("alice")}` } });
    expect(await bob.threads.count()).toBe(1);
    expect(await alice.threads.count()).toBe(2);
  });

  it("signs in with an API key (x-api-key) on a server that takes one", async () => {
    const aliceKey = await keyRuntime.client({ headers: { "x-api-key": "key-alice" } });
    const t = await aliceKey.threads.create();
    await aliceKey.runs.wait(t.thread_id, "agent", { input: { messages: [{ role: "user", content: "keyed hello" }] } });
    await page.goto(`${keyServer.url}/studio/threads`);
    await signIn("api-key", "key-bob");
    await expect.poll(() => page.getByTestId("threads-total").textContent()).toBe("No threads.");
    await page.getByTestId("sign-out").click();
    await signIn("api-key", "key-alice");
    await expect.poll(() => page.getByTestId("thread-row").allTextContents()).toEqual([expect.stringContaining("keyed hello")]);
    // A wrong key is refused and asked again.
    await page.getByTestId("sign-out").click();
    await page.getByTestId("sign-in").waitFor();
    await page.getByTestId("kind-api-key").check();
    await page.getByTestId("secret").fill("key-mallory");
    await page.getByTestId("sign-in-submit").click();
    // Asked again, with the server's reason.
    await expect.poll(() => page.getByTestId("sign-in").textContent()).toContain("Invalid API key");
    expect(await page.getByTestId("thread-row").count()).toBe(0);
  });

  it("logged no console error and no page error (no request was refused: the session is asked first)", () => {
    expect(browser.errors).toEqual([]);
  });
});
