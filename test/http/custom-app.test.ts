// Custom routes (graph.json `http.app`, `createFetchHandler({ app })`): the reference server's
// "custom routes", "middleware" and "mutate request body" scenarios, with a plain fetch
// function and a small Hono-style app (test/http/fake-hono.ts), and graph.json's http.app, env
// and graph entries loaded by serveConfig.
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFetchHandler, type FetchApp } from "../../src/http/index.js";
import { serveConfig, type ConfigServer } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { chainGraph, echoGraph } from "../runtime/graphs.js";
import { FakeHono } from "./fake-hono.js";
import { call, inProcessClient } from "./helpers.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function handlerWith(app: FetchApp) {
  runtime = await createRuntime({ graphs: { echo: echoGraph(), chain: chainGraph() } });
  return createFetchHandler(runtime, { app });
}

describe("custom routes: a plain fetch function", () => {
  it("its routes answer first, and its 404s fall through to the built-in routes", async () => {
    const handler = await handlerWith(async (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/custom/my-route") {
        return new Response(JSON.stringify({ foo: "bar" }), { headers: { "content-type": "application/json", "x-custom-output": request.headers.get("x-custom-input") ?? "" } });
      }
      return new Response("no such custom route", { status: 404 });
    });
    const custom = await call(handler, "GET", "/custom/my-route", undefined, { "x-custom-input": "y" });
    expect(await custom.json()).toEqual({ foo: "bar" });
    expect(custom.headers.get("x-custom-output")).toBe("y");
    // CORS applies to custom answers as to the built-in ones.
    expect(custom.headers.get("access-control-allow-origin")).toBe("*");
    expect(await (await call(handler, "GET", "/ok")).json()).toEqual({ ok: true });
    const missing = await call(handler, "GET", "/nowhere");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ detail: expect.stringContaining("No endpoint GET /nowhere") });
  });

  it("a custom route shadows a built-in route of the same path", async () => {
    const handler = await handlerWith((request) =>
      new URL(request.url).pathname === "/info" ? Response.json({ custom: true }) : new Response(null, { status: 404 }),
    );
    expect(await (await call(handler, "GET", "/info")).json()).toEqual({ custom: true });
  });

  it("a request body the app read before answering 404 still reaches the built-in route whole", async () => {
    const seen: string[] = [];
    const handler = await handlerWith(async (request) => {
      if (request.method === "POST") seen.push(await request.text());
      return new Response(null, { status: 404 });
    });
    const client = inProcessClient(handler);
    const thread = await client.threads.create({ metadata: { kept: "yes" } });
    expect(thread.metadata).toMatchObject({ kept: "yes" });
    expect(await client.runs.wait(thread.thread_id, "chain", { input: {} })).toEqual({ log: ["a", "b", "c"] });
    expect(seen.some((body) => body.includes('"kept":"yes"'))).toBe(true);
  });

  it("a streamed custom answer passes through as it is written", async () => {
    const handler = await handlerWith(() => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode(`Count: ${i}\n`));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    });
    expect(await (await call(handler, "GET", "/custom/streaming")).text()).toBe("Count: 0\nCount: 1\nCount: 2\nCount: 3\n");
  });

  it("createFetchHandler refuses an app that is neither a function nor an object with fetch", async () => {
    runtime = await createRuntime({ graphs: { chain: chainGraph() } });
    expect(() => createFetchHandler(runtime!, { app: { nope: true } as never })).toThrow(/app must be a function/);
  });
});

describe("custom routes: a Hono-style app", () => {
  /** The reference's custom app: a short-circuit middleware, a header middleware, a body-mutating middleware. */
  function referenceLikeApp() {
    return new FakeHono()
      .use(async (c, next) => {
        if (c.req.query("interrupt") !== undefined) return c.json({ status: "interrupted" });
        await next();
        c.header("x-js-middleware", "true");
      })
      .use(async (c, next) => {
        // Runs requests carrying `configurable-header` get it in config.configurable (the body is changed in place).
        if (c.req.method === "POST" && /^\/threads\/[^/]+\/runs(\/stream|\/wait)?$|^\/runs(\/stream|\/wait)?$/.test(c.req.path)) {
          const value = c.req.header("configurable-header");
          if (value !== undefined) {
            const body = (await c.req.json()) as Loose;
            body.config ??= {};
            body.config.configurable ??= {};
            body.config.configurable["from-middleware"] ??= value;
          }
        }
        await next();
      })
      .get("/custom/my-route", (c) => c.json({ foo: "bar" }))
      .get("/runs/afakeroute", (c) => c.json({ foo: "afakeroute" }))
      .notFound((c) => c.json({ status: "not-found" }));
  }

  it("its routes answer first; requests no route matches reach the built-in routes", async () => {
    const handler = await handlerWith(referenceLikeApp());
    expect(await (await call(handler, "GET", "/custom/my-route")).json()).toEqual({ foo: "bar" });
    expect(await (await call(handler, "GET", "/runs/afakeroute")).json()).toEqual({ foo: "afakeroute" });
    expect(await (await call(handler, "GET", "/ok")).json()).toEqual({ ok: true });
    // The built-in 404, not the app's own not-found answer.
    const missing = await call(handler, "GET", "/nowhere");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ detail: expect.any(String) });
  });

  it("its middleware wraps the built-in routes: it adds headers to their answers and can answer instead of them", async () => {
    const handler = await handlerWith(referenceLikeApp());
    const info = await call(handler, "GET", "/info");
    expect(info.headers.get("x-js-middleware")).toBe("true");
    expect(await info.json()).toMatchObject({ version: "graphdock" });
    expect(await (await call(handler, "GET", "/info?interrupt")).json()).toEqual({ status: "interrupted" });
    // Also on custom routes and on built-in errors.
    expect((await call(handler, "GET", "/custom/my-route")).headers.get("x-js-middleware")).toBe("true");
    expect((await call(handler, "GET", "/nowhere")).headers.get("x-js-middleware")).toBe("true");
  });

  it("middleware that changes a run request's JSON body changes what the run gets (mutate request body)", async () => {
    const handler = await handlerWith(referenceLikeApp());
    const client = inProcessClient(handler, { "configurable-header": "extra-client" });
    const thread = await client.threads.create();
    const out: Loose = await client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "input" }] } });
    expect(out.seen.configurable["from-middleware"]).toBe("extra-client");
    // Streaming runs too, and requests the middleware leaves alone keep their body.
    const parts: Loose[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "again" }] }, streamMode: ["values"] })) parts.push(part);
    expect(parts.at(-1).data.seen.configurable["from-middleware"]).toBe("extra-client");
    const plain = inProcessClient(handler);
    // (A fresh thread: a thread carries its last run's configurable to the next.)
    const other: Loose = await plain.runs.wait((await plain.threads.create()).thread_id, "echo", { input: { messages: [{ role: "user", content: "plain" }] } });
    expect(other.seen.configurable["from-middleware"]).toBeUndefined();
    expect(other.messages.at(-1).content).toBe("echo: plain");
  });
});

describe("graph.json http.app, env and graph entries", () => {
  let server: ConfigServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete process.env.LANGGRAPH_CONFIG;
    delete process.env.CUSTOM_GREETING;
  });

  it("serveConfig applies env, serves http.app in front of the API, and takes default-assistant config from entries and LANGGRAPH_CONFIG", async () => {
    delete process.env.LANGGRAPH_CONFIG;
    delete process.env.CUSTOM_GREETING;
    server = await serveConfig({ config: "test/http/fixtures/custom/graph.json", port: 0 });
    const greeting = await fetch(`${server.url}/custom/greeting`);
    expect(await greeting.json()).toEqual({ greeting: "hello there" });
    expect(greeting.headers.get("x-custom-middleware")).toBe("true");
    expect((await fetch(`${server.url}/info`)).headers.get("x-custom-middleware")).toBe("true");
    const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    // Entry config under LANGGRAPH_CONFIG: the environment's model wins, the file's other keys stay.
    expect(await client.assistants.get("echo")).toMatchObject({ config: { configurable: { model: "from-env", temp: 1 } }, context: { tone: "file" } });
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, "built", { input: {}, config: { configurable: { model: "m1" } } })).toEqual({ built: "built for m1" });
    expect(await client.runs.wait((await client.threads.create()).thread_id, "later", { input: {} })).toEqual({ log: ["a", "b", "c"] });
  });

  it("a run's webhook given as a path loops back into the server's custom routes; other addresses stay refused", async () => {
    server = await serveConfig({ config: "test/http/fixtures/custom/graph.json", port: 0 });
    const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "later", { input: {}, webhook: "/custom/webhook" });
    await client.runs.join(thread.thread_id, run.run_id);
    await vi.waitFor(async () => expect(await (await fetch(`${server!.url}/custom/webhook-payload`)).json()).toMatchObject({ run_id: run.run_id, status: "success" }), {
      timeout: 5_000,
      interval: 20,
    });
    await expect(client.runs.create(thread.thread_id, "later", { input: {}, webhook: "https://elsewhere.example/hook" })).rejects.toMatchObject({ status: 422 });
  });
});
