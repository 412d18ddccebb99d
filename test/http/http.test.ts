import { Client } from "@langchain/langgraph-sdk";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Auth, HTTPException } from "../../src/auth/index.js";
import type { AuthProvider } from "../../src/auth/types.js";
import { forbidden, unauthenticated } from "../../src/errors.js";
import type { CompiledGraph } from "../../src/graph/types.js";
import { createFetchHandler, type FetchHandlerOptions } from "../../src/http/index.js";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { createRuntime, type Run, type Runtime } from "../../src/runtime/index.js";
import { echoGraph, failingGraph, gatedGraph } from "./graphs.js";
import { call, readSse } from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(graphs: Record<string, CompiledGraph> = { echo: echoGraph() }, options: FetchHandlerOptions = {}, auth?: AuthProvider) {
  const runtime = await createRuntime({ graphs, auth });
  cleanups.push(() => runtime.close());
  return { runtime, handler: createFetchHandler(runtime, options) };
}

async function listen(runtime: Runtime, options: FetchHandlerOptions = {}): Promise<ServeHandle & { sockets: Set<Socket> }> {
  const handle = await serve(runtime, { port: 0, ...options });
  const sockets = new Set<Socket>();
  handle.server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  cleanups.push(() => handle.close());
  return Object.assign(handle, { sockets });
}

/** Resolves with the run once it reaches a terminal status (lifecycle event, no polling). */
function finished(runtime: Runtime, runId: string): Promise<Run> {
  return new Promise((resolve) => {
    const off = runtime.subscribe("run.finished", (e) => {
      if (e.run.run_id === runId) {
        off();
        resolve(e.run);
      }
    });
  });
}

const newThread = async (handler: (r: Request) => Promise<Response>) => (await (await call(handler, "POST", "/threads", {})).json()).thread_id as string;

describe("meta, errors and status codes (D3)", () => {
  it("answers /ok and /info", async () => {
    const { handler } = await setup();
    expect(await (await call(handler, "GET", "/ok")).json()).toEqual({ ok: true });
    const info = await (await call(handler, "GET", "/info")).json();
    expect(info.flags).toMatchObject({ assistants: true, crons: true });
  });

  it("maps each error code to its status with a JSON detail naming the id", async () => {
    const { handler } = await setup();
    const missing = "00000000-0000-4000-8000-000000000000";
    const notFound = await call(handler, "GET", `/threads/${missing}`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await notFound.json()).detail).toContain(missing);

    const id = await newThread(handler);
    const dup = await call(handler, "POST", "/threads", { thread_id: id });
    expect(dup.status).toBe(409);
    expect((await dup.json()).detail).toContain(id);
    expect((await call(handler, "POST", "/threads", { thread_id: id, if_exists: "do_nothing" })).status).toBe(200);

    const invalid = await call(handler, "POST", "/threads/search", { limit: "ten" });
    expect(invalid.status).toBe(422);
    const body = await invalid.json();
    expect(typeof body.detail).toBe("string");
    expect(body.problems.length).toBeGreaterThan(0);

    const unknownAssistant = await call(handler, "POST", `/threads/${id}/runs/stream`, { assistant_id: "nope", input: {} });
    expect(unknownAssistant.status).toBe(404);
    expect(unknownAssistant.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await call(handler, "POST", `/threads/${id}/runs`, { input: {} })).status).toBe(422);
  });

  it("answers 500 only for a genuine crash, with a fixed detail, and reports the error once", async () => {
    const logged: Array<[unknown, Request | undefined]> = [];
    const crashing = createFetchHandler(
      {
        client: async () => {
          throw new Error("store unreachable");
        },
      },
      { onError: (err, request) => logged.push([err, request]) },
    );
    const res = await call(crashing, "GET", "/threads/x");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ detail: "Internal server error" });
    expect(logged).toHaveLength(1);
    expect((logged[0]![0] as Error).message).toBe("store unreachable");
    expect(new URL(logged[0]![1]!.url).pathname).toBe("/threads/x");
    expect((await call(crashing, "GET", "/ok")).status).toBe(200);
  });

  it("rejects malformed JSON and non-object bodies with 422 and changes nothing", async () => {
    const { handler } = await setup();
    const bad = await call(handler, "POST", "/threads", "{ nope");
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail).toMatch(/Malformed JSON/);
    expect((await call(handler, "POST", "/threads", [1, 2])).status).toBe(422);
    expect((await call(handler, "GET", "/threads/x/history?limit=abc")).status).toBe(422);
    expect(await (await call(handler, "POST", "/threads/count", {})).json()).toBe(0);
  });

  it("answers a thread update with Prefer: return=minimal with 204 and no body", async () => {
    const { handler } = await setup();
    const tid = await newThread(handler);
    const minimal = await call(handler, "PATCH", `/threads/${tid}`, { metadata: { b: 2 } }, { prefer: "return=minimal" });
    expect(minimal.status).toBe(204);
    expect(await minimal.text()).toBe("");
    const full = await call(handler, "PATCH", `/threads/${tid}`, { metadata: { c: 3 } });
    expect((await full.json()).metadata).toMatchObject({ b: 2, c: 3 });
  });

  it("ignores unknown body keys", async () => {
    const { handler } = await setup();
    const res = await call(handler, "POST", "/threads", { metadata: { a: 1 }, ttl: 5, totally_unknown: true });
    expect(res.status).toBe(200);
    expect((await res.json()).metadata).toMatchObject({ a: 1 });
  });

  it("answers 404 for an unknown path and 405 with Allow for a wrong method", async () => {
    const { handler } = await setup();
    expect((await call(handler, "GET", "/nope")).status).toBe(404);
    const wrong = await call(handler, "GET", `/threads/${await newThread(handler)}/copy`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  it("answers 401 for rejected credentials and 403 for a denied write, through the runtime's auth", async () => {
    const auth: AuthProvider = {
      async authenticate(req) {
        if (req.headers["x-api-key"] !== "k") throw unauthenticated("Invalid API key");
        return { identity: "u", permissions: [], is_authenticated: true, display_name: "u" };
      },
      async authorize(_user, event) {
        if (event.resource === "assistants" && event.action === "create") throw forbidden("Assistants are read-only");
        return undefined;
      },
    };
    const { handler } = await setup(undefined, {}, auth);
    const denied = await call(handler, "POST", "/threads/search", {});
    expect(denied.status).toBe(401);
    expect((await denied.json()).detail).toBe("Invalid API key");
    expect((await call(handler, "GET", "/ok")).status).toBe(200);
    expect((await call(handler, "POST", "/threads/search", {}, { "x-api-key": "k" })).status).toBe(200);
    const write = await call(handler, "POST", "/assistants", { graph_id: "echo" }, { "x-api-key": "k" });
    expect(write.status).toBe(403);
    expect((await write.json()).detail).toBe("Assistants are read-only");
  });

  it("sends the headers of an auth handler's HTTPException with its status and detail", async () => {
    const auth = new Auth().authenticate(() => {
      throw new HTTPException(401, { message: "Token expired", headers: { "www-authenticate": 'Bearer error="invalid_token"' } });
    });
    const { handler } = await setup(undefined, {}, auth);
    const res = await call(handler, "GET", "/threads/00000000-0000-4000-8000-000000000000");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    expect(await res.json()).toEqual({ detail: "Token expired" });
  });
});

describe("pagination and CORS", () => {
  it("sends X-Pagination-Total and X-Pagination-Next on searches", async () => {
    const { handler } = await setup();
    for (let i = 0; i < 3; i++) await newThread(handler);
    const page1 = await call(handler, "POST", "/threads/search", { limit: 2 });
    expect((await page1.json()).length).toBe(2);
    expect(page1.headers.get("x-pagination-total")).toBe("3");
    expect(page1.headers.get("x-pagination-next")).toBe("2");
    const page2 = await call(handler, "POST", "/threads/search", { limit: 2, offset: 2 });
    expect((await page2.json()).length).toBe(1);
    expect(page2.headers.get("x-pagination-next")).toBeNull();
    const assistants = await call(handler, "POST", "/assistants/search", { limit: 10 });
    expect(assistants.headers.get("x-pagination-total")).toBe("1");
    const client = new Client({ apiUrl: "http://x", apiKey: null, callerOptions: { fetch: (i: RequestInfo | URL, init?: RequestInit) => handler(new Request(i, init)) } });
    expect((await client.assistants.search({ limit: 1, offset: 0, includePagination: true })).next).toBeNull();
  });

  it("answers preflights and exposes the headers the client reads", async () => {
    const { handler } = await setup();
    const pre = await handler(
      new Request("http://x/threads/search", {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-api-key" },
      }),
    );
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("content-type, x-api-key");
    const res = await call(handler, "POST", "/threads", {}, { origin: "https://app.example" });
    const exposed = res.headers.get("access-control-expose-headers")!.split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["content-location", "location", "x-pagination-total", "x-pagination-next"]));
  });

  it("echoes only listed origins", async () => {
    const { handler } = await setup(undefined, { cors: { origin: ["https://a.example"] } });
    const ok = await call(handler, "GET", "/ok", undefined, { origin: "https://a.example" });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://a.example");
    const other = await call(handler, "GET", "/ok", undefined, { origin: "https://b.example" });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("runs over HTTP (D11)", () => {
  it("streams SSE with ids from 0, metadata first, Content-Location and Location, and no terminal event", async () => {
    const { handler } = await setup();
    const tid = await newThread(handler);
    const res = await call(handler, "POST", `/threads/${tid}/runs/stream`, { assistant_id: "echo", input: { text: "hi" }, stream_mode: ["values", "updates"] });
    expect(res.status).toBe(200);
    const { events } = await readSse(res);
    const runId = (events[0].data as { run_id: string }).run_id;
    expect(events[0].event).toBe("metadata");
    expect(res.headers.get("content-location")).toBe(`/threads/${tid}/runs/${runId}`);
    expect(res.headers.get("location")).toBe(`/threads/${tid}/runs/${runId}/stream`);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
    expect(events.at(-1)).toMatchObject({ event: "values", data: { text: "hi!" } });
    expect(events.some((e) => e.event === "updates")).toBe(true);
  });

  it("answers /wait and /join with final values, and {__error__} with 200 for a failed run", async () => {
    const { handler } = await setup({ echo: echoGraph(), fail: failingGraph() });
    const wait = await call(handler, "POST", "/runs/wait", { assistant_id: "echo", input: { text: "a" } });
    expect(wait.status).toBe(200);
    expect(await wait.json()).toEqual({ text: "a!" });
    expect(wait.headers.get("content-location")).toMatch(/\/runs\/[0-9a-f-]{36}$/);

    const tid = await newThread(handler);
    const failed = await call(handler, "POST", `/threads/${tid}/runs/wait`, { assistant_id: "fail", input: {} });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toEqual({ __error__: { error: "RangeError", message: "boom" } });
    const run = await (await call(handler, "POST", `/threads/${tid}/runs`, { assistant_id: "echo", input: { text: "b" } })).json();
    const joined = await call(handler, "GET", `/threads/${tid}/runs/${run.run_id}/join`);
    expect(await joined.json()).toEqual({ text: "b!" });
  });

  it("names invalid fields as the HTTP caller wrote them (snake_case), in detail and problems", async () => {
    const { handler } = await setup();
    const res = await call(handler, "POST", "/runs/wait", { assistant_id: "echo", if_not_exists: "x", stream_mode: 4 });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.problems.map((p: { path: string }) => p.path)).toEqual(["if_not_exists", "stream_mode"]);
    expect(body.detail).toContain("if_not_exists:");
    expect(body.detail).not.toContain("ifNotExists");
    const assistant = await (await call(handler, "POST", "/assistants", { graph_id: 5 })).json();
    expect(assistant.problems).toEqual([expect.objectContaining({ path: "graph_id" })]);
  });

  it("cancels with 202, or 204 after waiting", async () => {
    const gated = gatedGraph();
    const { handler } = await setup({ gated: gated.graph });
    const tid = await newThread(handler);
    const run = await (await call(handler, "POST", `/threads/${tid}/runs`, { assistant_id: "gated", input: {} })).json();
    expect((await call(handler, "POST", `/threads/${tid}/runs/${run.run_id}/cancel?wait=1`)).status).toBe(204);
    expect((await (await call(handler, "GET", `/threads/${tid}/runs/${run.run_id}`)).json()).status).toBe("interrupted");
    const again = await call(handler, "POST", `/threads/${tid}/runs/${run.run_id}/cancel?wait=0`);
    expect(again.status).toBe(202); // D26: cancelling a run that already ended succeeds and changes nothing
  });

  it("serves the request forms the SDK contract does not reach", async () => {
    const { handler } = await setup();
    const tid = await newThread(handler);
    await call(handler, "POST", `/threads/${tid}/runs/wait`, { assistant_id: "echo", input: { text: "a" } });
    await call(handler, "POST", `/threads/${tid}/runs/wait`, { assistant_id: "echo", input: { text: "b" } });
    const history = await (await call(handler, "POST", `/threads/${tid}/history`, { limit: 100 })).json();
    const head = history[0].checkpoint.checkpoint_id;
    const older = history[1].checkpoint.checkpoint_id;
    // GET history with `before` as a plain checkpoint id; POST with the id string too
    const viaGet = await (await call(handler, "GET", `/threads/${tid}/history?limit=2&before=${head}`)).json();
    expect(viaGet.map((h: { checkpoint: { checkpoint_id: string } }) => h.checkpoint.checkpoint_id)).toEqual([older, history[2].checkpoint.checkpoint_id]);
    const viaPost = await (await call(handler, "POST", `/threads/${tid}/history`, { limit: 1, before: head })).json();
    expect(viaPost[0].checkpoint.checkpoint_id).toBe(older);
    // state at a checkpoint: path form and body form
    const atPath = await (await call(handler, "GET", `/threads/${tid}/state/${older}`)).json();
    const atBody = await (await call(handler, "POST", `/threads/${tid}/state/checkpoint`, { checkpoint: { checkpoint_id: older } })).json();
    expect(atPath).toEqual(atBody);
    expect(atPath.checkpoint.checkpoint_id).toBe(older);
    expect((await call(handler, "POST", `/threads/${tid}/state/checkpoint`, {})).status).toBe(422);
    // batch with snake_case bodies (and the SDK's camelCase spelling)
    const batch = await call(handler, "POST", "/runs/batch", [
      { assistant_id: "echo", input: { text: "x" }, on_completion: "keep" },
      { assistantId: "echo", input: { text: "y" }, onCompletion: "keep" },
    ]);
    expect(batch.status).toBe(200);
    const runs = await batch.json();
    expect(runs).toHaveLength(2);
    expect((await call(handler, "POST", "/runs/batch", [])).status).toBe(422);
    // stateless join stream by run id alone
    const joined = await call(handler, "GET", `/runs/${runs[0].run_id}/stream?cancel_on_disconnect=0`);
    expect(joined.status).toBe(200);
    expect(joined.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await readSse(joined);
    // A join of a run that is not there: an open stream holding one error event saying 404.
    const missing = await call(handler, "GET", "/runs/00000000-0000-4000-8000-000000000000/stream");
    expect(missing.status).toBe(200);
    expect(missing.headers.get("location")).toBeNull();
    expect(await missing.text()).toMatch(/^event: error\ndata: \{"error":"GraphdockError","message":"404: /);
  });

  it("answers the subgraphs routes with {} for a visible assistant, 404 for an unknown one", async () => {
    const { handler } = await setup();
    const subgraphs = await call(handler, "GET", "/assistants/echo/subgraphs");
    expect(subgraphs.status).toBe(200);
    expect(await subgraphs.json()).toEqual({});
    expect(await (await call(handler, "GET", "/assistants/echo/subgraphs/inner?recurse=true")).json()).toEqual({});
    expect((await call(handler, "GET", "/assistants/00000000-0000-4000-8000-000000000000/subgraphs")).status).toBe(404);
    expect((await call(handler, "GET", "/assistants/00000000-0000-4000-8000-000000000000/subgraphs/inner")).status).toBe(404);
    expect((await call(handler, "GET", "/assistants/echo/subgraphs?recurse=maybe")).status).toBe(422);
  });

  it("answers 202 for a cancel without waiting and 204 for deletes", async () => {
    const gated = gatedGraph();
    const { runtime, handler } = await setup({ gated: gated.graph });
    const tid = await newThread(handler);
    const run = await (await call(handler, "POST", `/threads/${tid}/runs`, { assistant_id: "gated", input: {} })).json();
    const done = finished(runtime, run.run_id);
    expect((await call(handler, "POST", `/threads/${tid}/runs/${run.run_id}/cancel?wait=0&action=interrupt`)).status).toBe(202);
    expect((await done).status).toBe("interrupted");
    expect((await call(handler, "DELETE", `/threads/${tid}/runs/${run.run_id}`)).status).toBe(204);
    expect((await call(handler, "GET", `/threads/${tid}/runs/${run.run_id}`)).status).toBe(404);
    expect((await call(handler, "DELETE", `/threads/${tid}`)).status).toBe(204);
    expect((await call(handler, "GET", `/threads/${tid}`)).status).toBe(404);
    const assistant = await (await call(handler, "POST", "/assistants", { graph_id: "gated" })).json();
    expect((await call(handler, "DELETE", `/assistants/${assistant.assistant_id}`)).status).toBe(204);
    expect((await call(handler, "GET", `/assistants/${assistant.assistant_id}`)).status).toBe(404);
  });

  it("sends heartbeat comments while a run is quiet", async () => {
    const gated = gatedGraph();
    const { handler } = await setup({ gated: gated.graph }, { heartbeatMs: 5 });
    const tid = await newThread(handler);
    const res = await call(handler, "POST", `/threads/${tid}/runs/stream`, { assistant_id: "gated", input: {}, stream_mode: ["custom"] });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while ((text.match(/^: heartbeat$/gm) ?? []).length < 2) text += (await reader.read()).value ?? "";
    gated.release();
    while (!(await reader.read()).done);
  });

  it("cancels the run when the client goes away with on_disconnect: cancel", async () => {
    const gated = gatedGraph();
    const { runtime } = await setup({ gated: gated.graph });
    const server = await listen(runtime);
    const client = new Client({ apiUrl: server.url, apiKey: null });
    for (const [onDisconnect, status] of [
      ["cancel", "interrupted"],
      ["continue", "success"],
    ] as const) {
      const thread = await client.threads.create();
      const abort = new AbortController();
      const res = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "gated", input: {}, stream_mode: ["custom"], on_disconnect: onDisconnect }),
        signal: abort.signal,
      });
      const { events } = await readSse(res, 2); // metadata, then the held node's custom event
      expect(events[1].data).toEqual({ waiting: true });
      const runId = (events[0].data as { run_id: string }).run_id;
      const done = finished(runtime, runId);
      abort.abort();
      if (onDisconnect === "continue") gated.release();
      expect((await done).status).toBe(status);
    }
  });

  it("lets the official client resume a dropped stream through Location and Last-Event-ID", async () => {
    const gated = gatedGraph();
    const { runtime } = await setup({ gated: gated.graph });
    const server = await listen(runtime);
    const requests: string[] = [];
    server.server.on("request", (req) => requests.push(`${req.method} ${req.url} ${req.headers["last-event-id"] ?? ""}`.trim()));
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create();
    const seen: Array<{ event: string; id?: string; data: unknown }> = [];
    for await (const part of client.runs.stream(thread.thread_id, "gated", { input: {}, streamMode: ["values", "custom"], streamResumable: true })) {
      seen.push(part as never);
      if ((part as { event: string }).event === "custom") {
        for (const s of server.sockets) s.destroy(); // drop the connection mid-run
        gated.release();
      }
    }
    const runId = (seen[0].data as { run_id: string }).run_id;
    const customId = seen.find((e) => e.event === "custom")!.id;
    expect(requests).toContain(`GET /threads/${thread.thread_id}/runs/${runId}/stream ${customId}`);
    expect(seen.map((e) => e.id)).toEqual(seen.map((_, i) => String(i)));
    expect(seen.at(-1)).toMatchObject({ event: "values", data: { trail: ["before", "held", "after"] } });
  });

  it("replays a resumable run from Last-Event-ID on join", async () => {
    const gated = gatedGraph();
    const { runtime, handler } = await setup({ gated: gated.graph });
    const tid = await newThread(handler);
    const abort = new AbortController();
    const res = await handler(
      new Request(`http://x/threads/${tid}/runs/stream`, {
        method: "POST",
        body: JSON.stringify({ assistant_id: "gated", input: {}, stream_mode: ["values", "custom"], stream_resumable: true }),
        signal: abort.signal,
      }),
    );
    const first = await readSse(res, 3);
    abort.abort();
    const runId = (first.events[0].data as { run_id: string }).run_id;
    const done = finished(runtime, runId);
    gated.release();
    await done;
    const last = first.events.at(-1)!.id!;
    const join = await call(handler, "GET", `/threads/${tid}/runs/${runId}/stream`, undefined, { "last-event-id": last });
    const rest = (await readSse(join)).events;
    expect(rest[0].id).toBe(String(Number(last) + 1));
    expect([...first.events, ...rest].map((e) => e.id)).toEqual([...first.events, ...rest].map((_, i) => String(i)));
    const all = await call(handler, "GET", `/threads/${tid}/runs/${runId}/stream`, undefined, { "last-event-id": "-1" });
    expect((await readSse(all)).events).toEqual([...first.events, ...rest]);
  });
});
