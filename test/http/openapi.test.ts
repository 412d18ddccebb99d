/**
 * `GET /openapi.json` (D81): an OpenAPI 3.1 document that an OpenAPI validator accepts
 * (@readme/openapi-parser), describing every route the handler serves with its request and
 * answer schemas; the route groups an app disables leave it; the per-request hook sees the
 * route templates; and the API mounted in a user's own Hono app is what the official SDK
 * client talks to. (Every answer of the other HTTP tests is checked against this document by
 * test/setup/openapi-responses.ts.)
 */
import { Client } from "@langchain/langgraph-sdk";
import { compileErrors, validate } from "@readme/openapi-parser";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { createApp, createFetchHandler, type FetchHandlerOptions, type RequestEvent } from "../../src/http/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { echoGraph } from "./graphs.js";
import { call } from "./helpers.js";

interface Operation {
  operationId: string;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>>; servers: Array<{ url: string }>; components: { schemas: Record<string, unknown> } };

const METHODS = ["get", "post", "put", "patch", "delete"];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: FetchHandlerOptions = {}): Promise<{ runtime: Runtime; handler: ReturnType<typeof createFetchHandler> }> {
  const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
  cleanups.push(() => runtime.close());
  return { runtime, handler: createFetchHandler(runtime, options) };
}
const documentOf = async (handler: (r: Request) => Promise<Response>, at = "") => (await (await call(handler, "GET", `${at}/openapi.json`)).json()) as Doc;
const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op })));

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document the validator accepts", async () => {
    const { handler } = await setup();
    const res = await call(handler, "GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = (await res.json()) as Parameters<typeof validate>[0] & { openapi: string };
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc));
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it("documents every route with its parameters, request body and answers", async () => {
    const { handler } = await setup();
    const doc = await documentOf(handler);
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(50);
    for (const { path, method, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) expect(op.parameters?.some((p) => p.in === "path" && p.name === name), `${where}: ${name}`).toBe(true);
      const answers = Object.entries(op.responses).filter(([status]) => status.startsWith("2"));
      expect(answers.length, where).toBeGreaterThan(0);
      // A 200 says what it holds; 202 and 204 have no body.
      for (const [status, answer] of answers) expect(Boolean(answer.content), `${where} ${status}`).toBe(status === "200");
      expect(op.responses.default?.content?.["application/json"], where).toBeDefined();
    }
    // Request bodies: each POST, PUT and PATCH that reads one says what it takes.
    const bodies = ops.filter(({ op }) => op.requestBody).map(({ method, path }) => `${method} ${path}`);
    for (const expected of ["post /assistants", "post /threads/{thread_id}/runs/stream", "put /store/items", "patch /runs/crons/{cron_id}", "post /api/v1/datasets/upload-experiment", "post /runs/batch"]) {
      expect(bodies).toContain(expected);
    }
    const run = doc.components.schemas.RunsCreateBody as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(run.properties)).toEqual(expect.arrayContaining(["assistant_id", "input", "command", "stream_mode", "multitask_strategy", "durability", "webhook"]));
    expect(run.required).toEqual(["assistant_id"]);
    expect(run.properties).not.toHaveProperty("strict_resume");
  });

  it("lists only routes the handler serves, and the handler serves every one it lists", async () => {
    const { handler } = await setup();
    const doc = await documentOf(handler);
    for (const { path, method } of operations(doc)) {
      const concrete = path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      const res = await call(handler, method.toUpperCase(), concrete, method === "get" || method === "delete" ? undefined : {});
      const body = res.headers.get("content-type")?.startsWith("application/json") ? await res.json() : await res.text();
      // Served: an answer of the route itself (404 for the made-up id is the route's), never the router's.
      expect(res.status, `${method} ${path}`).not.toBe(405);
      expect(JSON.stringify(body), `${method} ${path}`).not.toMatch(/No endpoint/);
    }
    expect((await call(handler, "GET", "/nowhere")).status).toBe(404);
  });

  it("drops the groups an app disables, from the routes and the document", async () => {
    const { handler } = await setup({ disable: ["store", "crons", "experiments"] });
    const doc = await documentOf(handler);
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith("/store") || p.startsWith("/runs/crons") || p.startsWith("/api/v1"))).toEqual([]);
    expect(paths).toContain("/threads/{thread_id}/runs/wait");
    expect((await call(handler, "PUT", "/store/items", { namespace: ["a"], key: "k", value: {} })).status).toBe(404);
    expect((await call(handler, "POST", "/runs/crons", { assistant_id: "echo", schedule: "* * * * *" })).status).toBe(404);
    expect((await call(handler, "POST", "/threads", {})).status).toBe(200);
    const { handler: noMeta } = await setup({ disable: ["meta"] });
    expect((await call(noMeta, "GET", "/openapi.json")).status).toBe(404);
    expect((await call(noMeta, "GET", "/ok")).status).toBe(404);
  });

  it("names the base path as its server", async () => {
    const { handler } = await setup({ basePath: "/api/v2" });
    const doc = await documentOf(handler, "/api/v2");
    expect(doc.servers).toEqual([{ url: "/api/v2" }]);
  });
});

describe("observe", () => {
  it("tells each request's route template, status and start, carrying no ids", async () => {
    const events: RequestEvent[] = [];
    const { handler } = await setup({ observe: (e) => events.push(e) });
    const thread = await (await call(handler, "POST", "/threads", {})).json();
    await (await call(handler, "POST", `/threads/${thread.thread_id}/runs/wait`, { assistant_id: "echo", input: { text: "a" } })).json();
    await call(handler, "GET", `/threads/${thread.thread_id}`);
    await call(handler, "PUT", `/threads/${thread.thread_id}`);
    await call(handler, "GET", "/nowhere");
    expect(events.map((e) => [e.request.method, e.route, e.response.status])).toEqual([
      ["POST", "/threads", 200],
      ["POST", "/threads/:thread_id/runs/wait", 200],
      ["GET", "/threads/:thread_id", 200],
      ["PUT", "/threads/:thread_id", 405],
      ["GET", undefined, 404],
    ]);
    for (const e of events) expect(e.start).toBeLessThanOrEqual(performance.now());
  });
});

describe("createApp in a Hono app", () => {
  it("serves the API under the app's own route, to the official client, beside the app's routes", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    cleanups.push(() => runtime.close());
    const app = new Hono();
    app.get("/hello", (c) => c.text("hello"));
    app.route("/agents", createApp(runtime));
    const client = new Client({ apiUrl: "http://app/agents", apiKey: null, callerOptions: { fetch: (input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init)), maxRetries: 0 } });
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "echo", { input: { text: "hi" } });
    expect(values).toEqual({ text: "hi!" });
    const created = await app.fetch(new Request(`http://app/agents/threads/${thread.thread_id}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"assistant_id":"echo","input":{"text":"b"}}' }));
    expect(created.headers.get("content-location")).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/`));
    expect(await (await app.fetch(new Request("http://app/hello"))).text()).toBe("hello");
    const wrong = await app.fetch(new Request(`http://app/agents/threads/${thread.thread_id}/copy`));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    const doc = (await (await app.fetch(new Request("http://app/agents/openapi.json"))).json()) as Doc;
    expect(doc.servers).toEqual([{ url: "/agents" }]);
  });
});
