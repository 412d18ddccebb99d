// Custom routes (graph.json `http.app`, `createFetchHandler({ app })`): the agent server's "custom
// routes", "middleware" and "mutate request body" scenarios, with a plain fetch function and a real
// Hono app, and graph.json's http.app, env and graph entries loaded by serveConfig and served over
// a socket (a streaming route, a Client made inside a route, webhooks given as a path).
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { Client } from "@langchain/langgraph-sdk";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFetchHandler, type FetchApp } from "../../src/http/index.js";
import { serveConfig, type ConfigServer } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { chainGraph, echoGraph } from "../runtime/graphs.js";
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

describe("custom routes: a Hono app", () => {
  /** The agent server's test app: a short-circuit middleware, a header middleware, a middleware reading run bodies. */
  function referenceLikeApp(bodies: unknown[] = []) {
    return new Hono()
      .use(async (c, next) => {
        if (c.req.query("interrupt") !== undefined) return c.json({ status: "interrupted" });
        await next();
        c.header("x-js-middleware", "true");
      })
      .use(async (c, next) => {
        if (c.req.method === "POST" && /^\/threads\/[^/]+\/runs(\/stream|\/wait)?$|^\/runs(\/stream|\/wait)?$/.test(c.req.path)) {
          // Hono reads the body once; the built-in route still gets it whole.
          bodies.push(await c.req.json());
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

  it("a run request whose body the middleware read reaches the run whole, with the request's x-* headers in config.configurable (mutate request body)", async () => {
    const bodies: unknown[] = [];
    const handler = await handlerWith(referenceLikeApp(bodies));
    const client = inProcessClient(handler, { "x-configurable-header": "extra-client", "x-api-key": "secret" });
    const thread = await client.threads.create();
    const out: Loose = await client.runs.wait(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "input" }] }, config: { configurable: { mine: 1 } } });
    expect(out.messages.at(-1).content).toBe("echo: input");
    expect(out.seen.configurable).toMatchObject({ mine: 1, "x-configurable-header": "extra-client" });
    // Credentials stay out of a run's config.
    expect(out.seen.configurable).not.toHaveProperty("x-api-key");
    expect(bodies).toEqual([expect.objectContaining({ input: { messages: [{ role: "user", content: "input" }] } })]);
    // Streaming runs too.
    const parts: Loose[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "echo", { input: { messages: [{ role: "user", content: "again" }] }, streamMode: ["values"] })) parts.push(part);
    expect(parts.at(-1).data.seen.configurable["x-configurable-header"]).toBe("extra-client");
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

  it("a streaming route streams over the socket: one chunk per write, chunked, no Content-Length beside Transfer-Encoding", async () => {
    server = await serveConfig({ config: "test/http/fixtures/custom/graph.json", port: 0 });
    // node:http's client refuses a response carrying both headers, as other clients do.
    const { headers, chunks } = await new Promise<{ headers: IncomingHttpHeaders; chunks: string[] }>((resolve, reject) => {
      httpRequest(`${server!.url}/custom/streaming`, (res) => {
        const chunks: string[] = [];
        res.on("data", (c: Buffer) => chunks.push(c.toString()));
        res.on("end", () => resolve({ headers: res.headers, chunks }));
        res.on("error", reject);
      })
        .on("error", reject)
        .end();
    });
    expect(headers["transfer-encoding"]).toBe("chunked");
    expect(headers["content-length"]).toBeUndefined();
    expect(headers["x-custom-middleware"]).toBe("true");
    expect(chunks.join("")).toBe("Count: 0\nCount: 1\nCount: 2\nCount: 3\n");
    expect(chunks.length).toBeGreaterThanOrEqual(4);
  });

  it("an SDK Client made without a URL inside a custom route reaches the server it runs in", async () => {
    server = await serveConfig({ config: "test/http/fixtures/custom/graph.json", port: 0 });
    const res = await fetch(`${server.url}/custom/client`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ result: { log: ["a", "b", "c"] } });
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

  it("a webhook path names this server even for a request that came through a proxy (another Host)", async () => {
    server = await serveConfig({ config: "test/http/fixtures/custom/graph.json", port: 0 });
    const viaProxy = new Client({ apiUrl: server.url, apiKey: null, defaultHeaders: { host: "proxy.example:8443" }, callerOptions: { maxRetries: 0 } });
    const thread = await viaProxy.threads.create();
    const run = await viaProxy.runs.create(thread.thread_id, "later", { input: {}, webhook: "/custom/webhook" });
    expect((run as Loose).kwargs.webhook).toBe(`${server.url}/custom/webhook`);
    await viaProxy.runs.join(thread.thread_id, run.run_id);
    await vi.waitFor(async () => expect(await (await fetch(`${server!.url}/custom/webhook-payload`)).json()).toMatchObject({ run_id: run.run_id }), { timeout: 5_000, interval: 20 });
  });
});
