/**
 * Hardening (D25, D3): thousands of seeded hostile requests over a real socket answer no 5xx
 * and change nothing; bodies, JSON nesting and SSE send buffers are bounded; internal faults are
 * 500s with a fixed body, reported once.
 */
import { readFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Auth } from "../../src/auth/index.js";
import { StateGraph, START, END } from "../../src/graph/index.js";
import { createFetchHandler, DEFAULT_MAX_BODY_BYTES, type FetchHandlerOptions } from "../../src/http/index.js";
import { jsonDepth, jsonTextDepth, MAX_JSON_DEPTH } from "../../src/json.js";
import { loadAuth, serve, type ServeHandle } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { GraphdockError } from "../../src/errors.js";
import { echoGraph } from "./graphs.js";
import { hostileRequests, snapshot, type HostileRequest, type Known } from "./hostile.js";

// A full garbage collection for the memory figures (no --expose-gc needed).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
};
/** Heap and array buffers after a full GC: what the process holds. */
const held = async () => {
  await settle();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const MiB = 1024 * 1024;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request over a socket with node:http; resolves the answer (or `status: 0` if none came). */
function send(base: URL, req: Pick<HostileRequest, "method" | "path" | "headers" | "body">, agent?: Agent, timeoutMs = 20_000): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: Answer) => {
      if (!done) {
        done = true;
        resolve(a);
      }
    };
    let r;
    try {
      // An explicit length: node:http frames no body of a GET or DELETE by itself.
      const headers = req.body ? { ...req.headers, "content-length": String(req.body.length) } : req.headers;
      r = httpRequest({ host: base.hostname, port: base.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => finish({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", () => finish({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
    } catch (err) {
      // node:http refused to send it (e.g. characters it will not put in a request line)
      return finish({ status: -1, headers: {}, body: Buffer.from(String(err)) });
    }
    r.on("timeout", () => r.destroy(new Error("timeout")));
    r.on("error", () => finish({ status: 0, headers: {}, body: Buffer.alloc(0) }));
    r.end(req.body);
  });
}

/** Writes raw bytes to the server and resolves the status of the first answer (0 when none). */
function sendRaw(base: URL, bytes: string | Buffer, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(Number(base.port), base.hostname);
    let text = "";
    const finish = () => {
      socket.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve(m ? Number(m[1]) : 0);
    };
    socket.setTimeout(timeoutMs, finish);
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
      if (/^HTTP\/1\.[01] \d{3}/.test(text)) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
    socket.write(bytes);
  });
}

/** Raw requests node:http would not send: request lines, targets, framing and header bytes. */
function rawRequests(host: string): Array<string | Buffer> {
  const h = `Host: ${host}\r\n`;
  const list: Array<string | Buffer> = [
    `TRACE / HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `TRACE /threads HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `TRACK / HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${h}\r\n`,
    `GET * HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `OPTIONS * HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET http://evil.example/threads/x HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET //evil.example/ok HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET /ok HTTP/1.0\r\n\r\n`,
    `GET /ok HTTP/9.9\r\n${h}\r\n`,
    `GET /ok\r\n\r\n`,
    `get /ok HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET /ok HTTP/1.1\n${h.replace("\r", "")}Connection: close\n\n`,
    `GET /ok HTTP/1.1\r\nHost: a b c\r\nConnection: close\r\n\r\n`,
    `GET /ok HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n`,
    `GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n`,
    `GET /ok HTTP/1.1\r\n${h}X-Big: ${"a".repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    Buffer.concat([Buffer.from(`GET /threads/search HTTP/1.1\r\n${h}X-Latin: `), Buffer.from([0xe9, 0xff, 0x80]), Buffer.from("\r\nConnection: close\r\n\r\n")]),
    Buffer.concat([Buffer.from("GET /threads/"), Buffer.from([0xc3, 0xbc, 0x00]), Buffer.from(` HTTP/1.1\r\n${h}Connection: close\r\n\r\n`)]),
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n{}`,
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 99999999999999999999\r\nConnection: close\r\n\r\n{}`,
    `POST /threads HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: ${DEFAULT_MAX_BODY_BYTES + 1}\r\nConnection: close\r\n\r\n{}`,
    `POST /threads/search HTTP/1.1\r\n${h}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\n{\r\n`,
    `POST /runs/batch HTTP/1.1\r\n${h}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]`,
    `PATCH /threads/%ZZ HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    `DELETE /assistants/%ED%A0%80 HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `PROPFIND /threads HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `BREW /ok HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET /ok?${"a=1&".repeat(5000)} HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `GET /${"x/".repeat(4000)} HTTP/1.1\r\n${h}Connection: close\r\n\r\n`,
    `\r\n\r\n\r\n`,
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  ];
  return list;
}

/** A graph that streams `count` custom events of `size` bytes each, yielding now and then. */
function floodGraph(count: number, size: number) {
  const chunk = "x".repeat(size);
  return new StateGraph({ n: { default: () => 0 } })
    .addNode("flood", async (_s, ctx) => {
      for (let i = 0; i < count; i++) {
        ctx.writer({ i, chunk });
        if (i % 16 === 15) await new Promise((r) => setImmediate(r));
      }
      return { n: count };
    })
    .addEdge(START, "flood")
    .addEdge("flood", END)
    .compile();
}

async function listen(runtime: Runtime, options: FetchHandlerOptions = {}) {
  const faults: unknown[] = [];
  const handle: ServeHandle = await serve(runtime, { port: 0, onError: (err) => faults.push(err), ...options });
  const sockets = new Set<Socket>();
  handle.server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return { handle, faults, sockets, base: new URL(handle.url) };
}

describe("thousands of hostile requests over a socket (D3, D25)", () => {
  let runtime: Runtime;
  let server: Awaited<ReturnType<typeof listen>>;
  const known: Known = { assistants: [], threads: [], runs: [], checkpoints: [], datasets: [], experiments: [] };

  beforeAll(async () => {
    runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    server = await listen(runtime, { heartbeatMs: 0 });
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(server.handle.url + path, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return res.json();
    };
    // Seed: two assistants (one updated), three threads (runs, metadata, empty), one upload.
    const a1 = await api("POST", "/assistants", { graph_id: "echo", name: "first", metadata: { team: "a" } });
    await api("PATCH", `/assistants/${a1.assistant_id}`, { metadata: { team: "b" }, name: "first, renamed" });
    const a2 = await api("POST", "/assistants", { graph_id: "echo", config: { tags: ["t"] } });
    known.assistants.push(a1.assistant_id, a2.assistant_id);
    for (const metadata of [{ topic: "runs" }, { topic: "meta", nested: { list: [1, "two", null] } }, {}]) {
      const t = await api("POST", "/threads", { metadata });
      known.threads.push(t.thread_id);
    }
    for (const text of ["one", "two"]) await api("POST", `/threads/${known.threads[0]}/runs/wait`, { assistant_id: "echo", input: { text } });
    await api("POST", `/threads/${known.threads[1]}/runs/wait`, { assistant_id: a1.assistant_id, input: { text: "x" }, stream_resumable: true });
    for (const tid of known.threads) {
      for (const run of (await api("GET", `/threads/${tid}/runs`)) as Array<{ run_id: string }>) known.runs.push([tid, run.run_id]);
      for (const state of (await api("POST", `/threads/${tid}/history`, { limit: 100 })) as Array<{ checkpoint: { checkpoint_id: string } }>) {
        known.checkpoints.push([tid, state.checkpoint.checkpoint_id]);
      }
    }
    const fixture = JSON.parse(readFileSync(new URL("../../examples/upload/baseline.json", import.meta.url), "utf8"));
    const upload = await api("POST", "/api/v1/datasets/upload-experiment", fixture);
    known.datasets.push(upload.dataset.id);
    known.experiments.push(upload.experiment.id);
    expect(known.runs.length).toBe(3);
    expect(known.checkpoints.length).toBeGreaterThan(2);
  });
  afterAll(async () => {
    await server?.handle.close();
    await runtime?.close();
  });

  it("answers 5,000+ seeded hostile requests across every route with no 5xx and changes nothing", { timeout: 300_000 }, async () => {
    const before = await snapshot(server.handle.url);
    const COUNT = 5_600;
    const BUDGET_MS = 240_000;
    const generator = hostileRequests(20261123, () => known);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    const doubled: string[] = [];
    let sent = 0;
    const started = Date.now();
    const worker = async () => {
      while (sent < COUNT && Date.now() - started < BUDGET_MS) {
        const req = generator.next();
        sent++;
        const answer = await send(server.base, req, agent);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) failures.push(`${answer.status} ${req.label} ${req.path.slice(0, 200)}: ${answer.body.toString().slice(0, 300)}`);
        if (answer.body.includes("graphdock: graphdock:")) doubled.push(`${req.label}: ${answer.body.toString().slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    agent.destroy();
    let raw = 0;
    const rawStatuses = new Map<number, number>();
    for (const bytes of rawRequests(server.base.host)) {
      const status = await sendRaw(server.base, bytes);
      raw++;
      rawStatuses.set(status, (rawStatuses.get(status) ?? 0) + 1);
      if (status >= 500) failures.push(`raw ${status}: ${bytes.toString().slice(0, 120)}`);
    }
    const summary = { sent, raw, seconds: Math.round((Date.now() - started) / 1000), statuses: Object.fromEntries(statuses), rawStatuses: Object.fromEntries(rawStatuses) };
    console.log(`hostile requests: ${JSON.stringify(summary)}`);

    expect(failures, failures.slice(0, 20).join("\n")).toEqual([]);
    expect(server.faults.map(String)).toEqual([]);
    expect(doubled.slice(0, 5)).toEqual([]);
    expect(sent + raw).toBeGreaterThanOrEqual(5_000);
    expect(statuses.get(0) ?? 0, "requests with no answer").toBe(0);
    expect(statuses.get(-1) ?? 0, "requests node:http would not send").toBe(0);
    expect(await snapshot(server.handle.url)).toEqual(before);
    expect((await fetch(`${server.handle.url}/ok`)).status).toBe(200);
  });
});

describe("hostile requests through the example API-key auth handler", () => {
  it("answers 1,000 seeded hostile requests with hostile keys with no 5xx and no fault", { timeout: 180_000 }, async () => {
    const auth = await loadAuth({ auth: { path: "./auth-api-key.ts:auth" } }, new URL("../../examples/node", import.meta.url).pathname);
    const runtime = await createRuntime({ graphs: { echo: echoGraph() }, auth });
    const server = await listen(runtime, { heartbeatMs: 0 });
    try {
      const alice = { "content-type": "application/json", "x-api-key": "key-alice" };
      const thread = await (await fetch(`${server.handle.url}/threads`, { method: "POST", headers: alice, body: "{}" })).json();
      const run = await (await fetch(`${server.handle.url}/threads/${thread.thread_id}/runs`, { method: "POST", headers: alice, body: '{"assistant_id":"echo","input":{"text":"x"}}' })).json();
      await fetch(`${server.handle.url}/threads/${thread.thread_id}/runs/${run.run_id}/join`, { headers: alice });
      const known: Known = { assistants: [], threads: [thread.thread_id], runs: [[thread.thread_id, run.run_id]], checkpoints: [], datasets: [], experiments: [] };
      known.assistants.push("echo");
      known.checkpoints.push([thread.thread_id, "00000000-0000-0000-0000-000000000000"]);
      known.datasets.push("00000000-0000-0000-0000-000000000000");
      known.experiments.push("00000000-0000-0000-0000-000000000000");
      const generator = hostileRequests(424242, () => known);
      const keys = prngKeys(7);
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      let sent = 0;
      const worker = async () => {
        while (sent < 1_000) {
          const req = generator.next();
          req.headers["x-api-key"] = keys();
          sent++;
          const answer = await send(server.base, req, agent);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status >= 500 || answer.status <= 0) failures.push(`${answer.status} ${req.label} key=${JSON.stringify(req.headers["x-api-key"]).slice(0, 40)}: ${answer.body.toString().slice(0, 200)}`);
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
      agent.destroy();
      console.log(`hostile requests with auth: ${JSON.stringify({ sent, statuses: Object.fromEntries(statuses) })}`);
      expect(failures, failures.slice(0, 10).join("\n")).toEqual([]);
      expect(server.faults.map(String)).toEqual([]);
      expect(statuses.get(401) ?? 0).toBeGreaterThan(0);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });
});

/** Seeded `x-api-key` values: mostly a real key, else prototype names, junk and huge keys. */
function prngKeys(seed: number) {
  let s = seed;
  const KEYS = ["key-alice", "key-alice", "key-bob", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "", "key-alice ", "KEY-ALICE", "x".repeat(8000), "\u00e9t\u00e9"];
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return KEYS[s % KEYS.length]!;
  };
}

describe("SSE send buffers (D25)", () => {
  it("cuts off a client that does not read at its buffer and releases what was held for it", { timeout: 120_000 }, async () => {
    // 48 MiB of custom events; a client that never reads may hold at most 1 MiB of them.
    const COUNT = 384;
    const SIZE = 128 * 1024;
    const runtime = await createRuntime({ graphs: { flood: floodGraph(COUNT, SIZE) } });
    const server = await listen(runtime, { heartbeatMs: 0, sseBufferBytes: MiB });
    try {
      const thread = (await (await fetch(`${server.handle.url}/threads`, { method: "POST", body: "{}" })).json()) as { thread_id: string };
      const baseline = await held();
      const finished = new Promise<void>((resolve) => {
        const off = runtime.subscribe("run.finished", () => {
          off();
          resolve();
        });
      });
      // A raw client: sends the request, then never reads a byte.
      const body = JSON.stringify({ assistant_id: "flood", input: {}, stream_mode: ["custom"] });
      const client = connect(Number(server.base.port), server.base.hostname);
      await new Promise<void>((resolve) => client.once("connect", () => resolve()));
      client.pause();
      const serverSide = await new Promise<Socket>((resolve) => {
        const check = () => {
          const [s] = server.sockets;
          if (s) resolve(s);
          else setImmediate(check);
        };
        check();
      });
      const cut = new Promise<void>((resolve) => serverSide.once("close", () => resolve()));
      client.write(
        `POST /threads/${thread.thread_id}/runs/stream HTTP/1.1\r\nHost: ${server.base.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await cut; // the server closed its side while the client still had not read anything
      await finished; // the run went on to the end (on_disconnect defaults to continue)
      const after = await held();
      const run = ((await (await fetch(`${server.handle.url}/threads/${thread.thread_id}/runs`)).json()) as Array<{ status: string }>)[0];
      expect(run?.status).toBe("success");
      console.log(`non-reading SSE client: ${(COUNT * SIZE) / MiB} MiB streamed, held after the cut ${((after - baseline) / MiB).toFixed(1)} MiB`);
      // Nothing of the 48 MiB stays for the client that left (the limit was 1 MiB).
      expect(after - baseline).toBeLessThan(8 * MiB);
      client.destroy();
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });

  it("releases what was held for a client that leaves while the run goes on", { timeout: 120_000 }, async () => {
    const COUNT = 384;
    const SIZE = 128 * 1024;
    const runtime = await createRuntime({ graphs: { flood: floodGraph(COUNT, SIZE) } });
    // A buffer larger than the run's output: only the client leaving can release it.
    const server = await listen(runtime, { heartbeatMs: 0, sseBufferBytes: 256 * MiB });
    try {
      const baseline = await held();
      const started = new Promise<void>((resolve) => {
        const off = runtime.subscribe("run.started", () => {
          off();
          resolve();
        });
      });
      const finished = new Promise<void>((resolve) => {
        const off = runtime.subscribe("run.finished", () => {
          off();
          resolve();
        });
      });
      const body = JSON.stringify({ assistant_id: "flood", input: {}, stream_mode: ["custom"] });
      const client = connect(Number(server.base.port), server.base.hostname);
      client.pause();
      client.write(`POST /runs/stream HTTP/1.1\r\nHost: ${server.base.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await started;
      // Leave once the server visibly holds output for us (16 MiB more than at the start).
      let over = false;
      void finished.then(() => (over = true));
      let peak = 0;
      while (!over) {
        const m = process.memoryUsage();
        peak = Math.max(peak, m.heapUsed + m.arrayBuffers - baseline);
        if (peak > 16 * MiB) break;
        await new Promise((r) => setImmediate(r));
      }
      expect(peak).toBeGreaterThan(16 * MiB);
      client.destroy();
      await finished;
      const after = await held();
      console.log(`SSE client that left: ${(COUNT * SIZE) / MiB} MiB streamed, over 16 MiB held before it left, ${((after - baseline) / MiB).toFixed(1)} MiB after`);
      expect(after - baseline).toBeLessThan(8 * MiB);
      expect(server.faults).toEqual([]);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });

  it("streams everything to a client that reads, through the same small buffer", { timeout: 120_000 }, async () => {
    const COUNT = 256;
    const SIZE = 64 * 1024;
    const runtime = await createRuntime({ graphs: { flood: floodGraph(COUNT, SIZE) } });
    const server = await listen(runtime, { heartbeatMs: 0, sseBufferBytes: MiB });
    try {
      const res = await fetch(`${server.handle.url}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "flood", input: {}, stream_mode: ["custom"] }),
      });
      const text = await res.text();
      expect(text.match(/event: custom\n/g)?.length).toBe(COUNT);
      expect(text.length).toBeGreaterThan(COUNT * SIZE);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });
});

/** The ids of the `custom` events in an SSE text (frames cut short at the end are left out). */
const customIds = (text: string) => [...text.matchAll(/event: custom\ndata: [^\n]*\nid: (\d+)\n\n/g)].map((m) => Number(m[1]));

describe("a client cut off as too slow resumes with Last-Event-ID (D25, D11)", () => {
  it("reads what it was sent, then the rest from where it stopped", { timeout: 120_000 }, async () => {
    // 20 MiB: more than the loopback socket buffers of both ends take in.
    const COUNT = 320;
    const SIZE = 64 * 1024;
    const runtime = await createRuntime({ graphs: { flood: floodGraph(COUNT, SIZE) } });
    const server = await listen(runtime, { heartbeatMs: 0, sseBufferBytes: 256 * 1024 });
    try {
      const thread = (await (await fetch(`${server.handle.url}/threads`, { method: "POST", body: "{}" })).json()) as { thread_id: string };
      const finished = new Promise<string>((resolve) => {
        const off = runtime.subscribe("run.finished", (e) => {
          off();
          resolve(e.run.run_id);
        });
      });
      const body = JSON.stringify({ assistant_id: "flood", input: {}, stream_mode: ["custom"], stream_resumable: true });
      const client = connect(Number(server.base.port), server.base.hostname);
      client.pause();
      const received: Buffer[] = [];
      const ended = new Promise<void>((resolve) => client.once("close", () => resolve()));
      client.on("data", (d: Buffer) => received.push(d));
      client.pause();
      client.write(
        `POST /threads/${thread.thread_id}/runs/stream HTTP/1.1\r\nHost: ${server.base.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const runId = await finished;
      // The run is over; the server has cut the stream. Now read what reached the socket.
      client.resume();
      await ended;
      const first = customIds(Buffer.concat(received).toString("latin1"));
      expect(first.length).toBeGreaterThan(0);
      expect(first.length).toBeLessThan(COUNT); // it was cut off
      const last = first.at(-1)!;
      const resumed = await fetch(`${server.handle.url}/threads/${thread.thread_id}/runs/${runId}/stream`, { headers: { "last-event-id": String(last) } });
      const rest = customIds(await resumed.text());
      const all = [...first, ...rest];
      expect(all).toEqual([...all].sort((a, b) => a - b));
      expect(new Set(all).size).toBe(COUNT);
      expect(rest[0]).toBe(last + 1);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });
});

/**
 * Sends `total` bytes of a JSON-looking body to `path` in 64 KiB writes (one reused buffer, so
 * the client holds almost nothing), with or without a Content-Length, and resolves the status
 * (0: no answer) and how many bytes went out before the server answered or closed.
 */
function upload(base: URL, path: string, total: number, declared: boolean, onWrite: () => void): Promise<{ status: number; written: number }> {
  const chunk = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace
  return new Promise((resolve) => {
    let status = 0;
    let written = 0;
    let settled = false;
    const done = () => {
      if (!settled) {
        settled = true;
        resolve({ status, written });
      }
    };
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (declared) headers["content-length"] = String(total);
    else headers["transfer-encoding"] = "chunked";
    const req = httpRequest({ host: base.hostname, port: base.port, method: "POST", path, headers }, (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on("end", done);
      res.on("error", done);
      req.destroy();
    });
    req.on("error", done);
    req.on("close", done);
    const pump = () => {
      while (!settled && status === 0 && written < total) {
        onWrite();
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (written >= total) req.end();
    };
    pump();
  });
}

describe("request bodies are capped (D25)", () => {
  let runtime: Runtime;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    server = await listen(runtime);
  });
  afterAll(async () => {
    await server?.handle.close();
    await runtime?.close();
  });

  it("answers Expect: 100-continue with 413 for a declared body over the limit, never asking for it", async () => {
    const first = (bytes: string) =>
      new Promise<{ text: string; socket: Socket }>((resolve) => {
        const socket = connect(Number(server.base.port), server.base.hostname);
        socket.once("data", (d: Buffer) => resolve({ text: d.toString("latin1"), socket }));
        socket.write(bytes);
      });
    const head = (length: number) =>
      `POST /threads HTTP/1.1\r\nHost: ${server.base.host}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n\r\n`;
    const refused = await first(head(64 * MiB));
    expect(refused.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(refused.text).toMatch(/connection: close/i);
    refused.socket.destroy();
    const accepted = await first(head(2));
    expect(accepted.text).toMatch(/^HTTP\/1\.1 100 /);
    const answer = await new Promise<string>((resolve) => {
      let text = "";
      accepted.socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        if (/\r\n\r\n[\s\S]*\}$/.test(text)) resolve(text);
      });
      accepted.socket.write("{}");
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    accepted.socket.destroy();
    const thread = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    await fetch(`${server.handle.url}/threads/${thread.thread_id}`, { method: "DELETE" });
  });

  for (const declared of [true, false]) {
    it(`refuses a 64 MiB body ${declared ? "with Content-Length with 413, holding less than the limit" : "without Content-Length with 413, holding about the limit at most"}`, { timeout: 120_000 }, async () => {
      const baseline = await held();
      let peak = 0;
      const sample = () => {
        const m = process.memoryUsage();
        peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
      };
      const timer = setInterval(sample, 1);
      const { status, written } = await upload(server.base, "/threads", 64 * MiB, declared, sample);
      clearInterval(timer);
      sample();
      const after = await held();
      const growth = peak - baseline;
      console.log(
        `64 MiB upload (${declared ? "Content-Length" : "chunked"}): ${status}, ${(written / MiB).toFixed(1)} MiB written, peak growth ${(growth / MiB).toFixed(1)} MiB, held after ${((after - baseline) / MiB).toFixed(1)} MiB (limit 16 MiB)`,
      );
      expect(status).toBe(413);
      // With a Content-Length the body is refused before any of it is read. Without one, the
      // server reads (and holds) up to the limit before it can know, plus read buffers not yet
      // collected: bounded by the limit, not by the body.
      expect(growth).toBeLessThan(declared ? DEFAULT_MAX_BODY_BYTES : 2 * DEFAULT_MAX_BODY_BYTES);
      expect(after - baseline).toBeLessThan(4 * MiB);
      expect(server.faults).toEqual([]);
      // The server still answers, and nothing was created.
      expect(await (await fetch(`${server.handle.url}/threads/count`, { method: "POST", body: "{}" })).json()).toBe(0);
    });
  }
});

/** `{"a":{"a":...1...}}`, `levels` deep. */
const nested = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
/** The same as a value (built without recursion). */
function nestedValue(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let i = 1; i < levels; i++) node = (node.a = {}) as Record<string, unknown>;
  node.a = 1;
  return root;
}

describe("JSON nesting is capped (D25)", () => {
  it("measures depth without recursion, ignoring brackets inside strings", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth({ a: [1, { b: [] }] })).toBe(4);
    expect(jsonDepth(nestedValue(100_000))).toBe(100_000);
    expect(jsonDepth(nestedValue(100_000), 128)).toBe(129);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonDepth(cyclic, 128)).toBe(129);
    expect(jsonTextDepth('{"a":"[[[{{{","b":"\\"}","c":[[1]]}')).toBe(3);
    expect(jsonTextDepth(nested(200_000), 128)).toBe(129);
    expect(jsonTextDepth("[".repeat(1000))).toBe(1000);
  });

  it("refuses a 5,000-level metadata object with 422 over HTTP, stores nothing, and listings keep working", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const handler = createFetchHandler(runtime);
    const post = (path: string, body: string) => handler(new Request(`http://in-process${path}`, { method: "POST", headers: { "content-type": "application/json" }, body }));
    try {
      const res = await post("/threads", `{"metadata":${nested(5_000)}}`);
      expect(res.status).toBe(422);
      expect((await res.json()).detail).toMatch(/deeper than 128/);
      expect((await post("/assistants", `{"graph_id":"echo","metadata":${nested(5_000)}}`)).status).toBe(422);
      // 128 levels in all is accepted, 129 is not.
      expect((await post("/threads", `{"metadata":${nested(127)}}`)).status).toBe(200);
      expect((await post("/threads", `{"metadata":${nested(128)}}`)).status).toBe(422);
      const search = await post("/threads/search", "{}");
      expect(search.status).toBe(200);
      expect(await search.json()).toHaveLength(1);
      expect(await (await post("/assistants/search", "{}")).json()).toHaveLength(1);
    } finally {
      await runtime.close();
    }
  });

  it("takes maxDepth as an option", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const handler = createFetchHandler(runtime, { maxDepth: 3 });
    const post = (body: string) => handler(new Request("http://in-process/threads/search", { method: "POST", body }));
    try {
      expect((await post('{"metadata":{"a":{}}}')).status).toBe(200);
      expect((await post('{"metadata":{"a":{"b":{}}}}')).status).toBe(422);
      expect(() => createFetchHandler(runtime, { maxDepth: 0 })).toThrow(/maxDepth/);
      expect(() => createFetchHandler(runtime, { maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
      expect(() => createFetchHandler(runtime, { sseBufferBytes: 1.5 })).toThrow(/sseBufferBytes/);
    } finally {
      await runtime.close();
    }
  });

  it("refuses values nested deeper than 128 levels in process too (the runtime's parse), without a stack overflow", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    try {
      const invalid = (e: unknown) => GraphdockError.is(e, "invalid_input") && /128 levels/.test((e as Error).message);
      await expect(runtime.threads.create({ metadata: nestedValue(5_000) })).rejects.toSatisfy(invalid);
      await expect(runtime.assistants.create({ graphId: "echo", config: { configurable: nestedValue(200) } })).rejects.toSatisfy(invalid);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(runtime.threads.create({ metadata: cyclic })).rejects.toSatisfy(invalid);
      const thread = await runtime.threads.create({ metadata: nestedValue(MAX_JSON_DEPTH - 1) });
      await expect(runtime.runs.wait(thread.thread_id, "echo", { input: { text: nestedValue(1_000) } })).rejects.toSatisfy(invalid);
      expect(await runtime.threads.search()).toHaveLength(1);
    } finally {
      await runtime.close();
    }
  });
});

describe("bodies are read as streams and capped in the fetch handler itself (any host)", () => {
  it("stops reading a body without Content-Length at the limit and answers 413", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const handler = createFetchHandler(runtime, { maxBodyBytes: 64 * 1024 });
    try {
      let pulled = 0;
      let cancelled = false;
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 16 * 1024;
          controller.enqueue(new Uint8Array(16 * 1024).fill(0x20));
        },
        cancel() {
          cancelled = true;
        },
      });
      // @ts-expect-error duplex is required for a stream body in Node's fetch; the DOM types lack it
      const res = await handler(new Request("http://in-process/threads", { method: "POST", body: endless, duplex: "half" }));
      expect(res.status).toBe(413);
      expect((await res.json()).detail).toMatch(/65536 bytes/);
      expect(cancelled).toBe(true);
      expect(pulled).toBeLessThan(256 * 1024);
      const declared = await handler(new Request("http://in-process/threads", { method: "POST", headers: { "content-length": String(64 * 1024 + 1) }, body: " ".repeat(64 * 1024 + 1) }));
      expect(declared.status).toBe(413);
      const fits = await handler(new Request("http://in-process/threads", { method: "POST", body: "{}" + " ".repeat(64 * 1024 - 2) }));
      expect(fits.status).toBe(200);
    } finally {
      await runtime.close();
    }
  });
});

describe("methods, faults and prototype keys", () => {
  it("answers 405 with Allow for a known path, 404 for an unknown one, 405 for TRACE, never 500", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const server = await listen(runtime);
    try {
      const put = await fetch(`${server.handle.url}/threads/x/copy`, { method: "PUT" });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toBe("POST");
      expect((await put.json()).detail).toMatch(/PUT/);
      expect((await fetch(`${server.handle.url}/threads/x`, { method: "PUT" })).headers.get("allow")).toBe("GET, PATCH, DELETE");
      expect((await fetch(`${server.handle.url}/nothing/here`)).status).toBe(404);
      for (const method of ["TRACE", "TRACK"]) {
        const status = await sendRaw(server.base, `${method} /ok HTTP/1.1\r\nHost: ${server.base.host}\r\nConnection: close\r\n\r\n`);
        expect(status === 405 || status === 400, `${method}: ${status}`).toBe(true);
      }
      expect(await sendRaw(server.base, `TRACE /ok HTTP/1.1\r\nHost: ${server.base.host}\r\nConnection: close\r\n\r\n`)).toBe(405);
      expect(await sendRaw(server.base, `GET http://elsewhere.example/ok HTTP/1.1\r\nHost: ${server.base.host}\r\nConnection: close\r\n\r\n`)).toBe(200);
      expect(server.faults).toEqual([]);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });

  it("shrugs off a client that leaves in the middle of its body: no fault, no hang", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const server = await listen(runtime);
    try {
      for (const framing of ["Content-Length: 1000", "Transfer-Encoding: chunked"]) {
        const client = connect(Number(server.base.port), server.base.hostname);
        await new Promise<void>((resolve) => client.once("connect", () => resolve()));
        const serverSide = [...server.sockets].at(-1)!;
        const closed = new Promise<void>((resolve) => serverSide.once("close", () => resolve()));
        client.write(`POST /threads HTTP/1.1\r\nHost: ${server.base.host}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${framing.startsWith("Content") ? '{"metadata":' : '5\r\n{"met\r\n'}`);
        await new Promise((r) => setTimeout(r, 50)); // let the server start reading the body
        client.destroy();
        await closed;
      }
      expect(await (await fetch(`${server.handle.url}/threads/count`, { method: "POST", body: "{}" })).json()).toBe(0);
      expect(server.faults).toEqual([]);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });

  it("answers a crashing auth handler with a bare 500 and reports it once, with its stack", async () => {
    const auth = new Auth().authenticate(({ headers }) => {
      const table: Record<string, { identity: string }> = {};
      return table[headers["x-user"] ?? ""]!.identity; // a bug: TypeError for any unknown user
    });
    const runtime = await createRuntime({ graphs: { echo: echoGraph() }, auth });
    const server = await listen(runtime);
    try {
      const res = await fetch(`${server.handle.url}/threads/search`, { method: "POST", body: "{}", headers: { "x-user": "mallory" } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ detail: "Internal server error" });
      expect(server.faults).toHaveLength(1);
      const fault = server.faults[0] as Error & { cause?: Error };
      expect(fault.message).not.toMatch(/graphdock: graphdock:/);
      expect(fault.cause).toBeInstanceOf(TypeError);
      expect(fault.cause?.stack).toMatch(/hardening\.test\.ts/);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });

  it("logs a fault once with console.error by default, the body saying nothing of it", async () => {
    const logged: unknown[][] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const handler = createFetchHandler({
        client: async () => {
          throw new Error("secret connection string postgres://user:pw@db");
        },
      });
      const res = await handler(new Request("http://in-process/threads/x"));
      expect(res.status).toBe(500);
      expect(await res.text()).not.toMatch(/secret|postgres/);
      expect(logged).toHaveLength(1);
      expect(String(logged[0]![0])).toMatch(/internal error on GET \/threads\/x/);
      expect((logged[0]![1] as Error).stack).toMatch(/secret connection string/);
    } finally {
      console.error = original;
    }
  });

  it("takes __proto__, constructor and NUL keys as plain data: no 500, no prototype changed", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const server = await listen(runtime);
    try {
      const body = '{"metadata":{"__proto__":{"polluted":true},"constructor":{"prototype":1},"nul\\u0000key":"\\u0000","emoji💥":"\\ud83d\\udca5"}}';
      const created = await fetch(`${server.handle.url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(created.status).toBe(200);
      const thread = await created.json();
      const again = await (await fetch(`${server.handle.url}/threads/${thread.thread_id}`)).json();
      // The runtime's validation (zod records) drops a `__proto__` key; every other key is kept.
      expect(again.metadata).toEqual({ constructor: { prototype: 1 }, "nul\u0000key": "\u0000", "emoji💥": "💥" });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      for (const filter of ['{"__proto__":{"polluted":true}}', '{"polluted":true}', '{"constructor":{"prototype":1}}']) {
        const search = await fetch(`${server.handle.url}/threads/search`, { method: "POST", body: `{"metadata":${filter}}` });
        expect(search.status).toBe(200);
        expect((await search.json()).length, filter).toBe(filter.startsWith('{"polluted"') ? 0 : 1);
      }
      expect(server.faults).toEqual([]);
    } finally {
      await server.handle.close();
      await runtime.close();
    }
  });
});
