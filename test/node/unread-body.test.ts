/**
 * `serve()` answering before it read a request's body (a 404, a 405, an auth refusal): the rest
 * of a body within the limit is read and dropped, so a client that sends its whole body before it
 * reads the answer (Python's http.client, curl without Expect) gets the answer, not EPIPE or a
 * reset; the connection stays usable. A body over the limit is refused with 413 and the
 * connection closes without reading it (D25).
 */
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";

const MiB = 1024 * 1024;
let runtime: Runtime;
let server: ServeHandle;

beforeAll(async () => {
  runtime = await createRuntime({ graphs: {} });
  server = await serve(runtime, { port: 0 });
});

afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

/**
 * Writes a whole request (head and body) on a fresh socket, then reads: the status line of the
 * answer, or the socket's error. As a client that does not read before it has sent everything.
 */
function sendAllThenRead(path: string, body: Buffer, declared = body.length): Promise<{ status?: number; error?: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    let text = "";
    let error: string | undefined;
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("error", (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on("close", () => {
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      resolve({ ...(m ? { status: Number(m[1]) } : {}), ...(error ? { error } : {}), closed: true });
    });
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
    socket.write(body, () => {
      // Everything was sent: read the answer, then close our side.
      setTimeout(() => socket.end(), 200);
    });
  });
}

describe("a body the handler did not read", () => {
  it("a 10 MB body to a path that answers 404 gets the 404, 20 times out of 20", async () => {
    const body = Buffer.alloc(10 * MiB, 97);
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await sendAllThenRead(`/nowhere/${i}`, body));
    expect(results.filter((r) => r.status !== 404 || r.error)).toEqual([]);
  });

  it("node:http's client gets the 404 with no error, and the kept-alive connection serves the next request", async () => {
    const body = Buffer.alloc(10 * MiB, 97);
    const once = () =>
      new Promise<{ status?: number; error?: string; reused: boolean }>((resolve) => {
        let status: number | undefined;
        const req = request(`${server.url}/nowhere`, { method: "POST", headers: { "content-type": "application/json", "content-length": body.length } }, (res) => {
          status = res.statusCode;
          res.resume();
        });
        req.on("error", (err: NodeJS.ErrnoException) => resolve({ status, error: err.code ?? err.message, reused: req.reusedSocket }));
        req.on("close", () => resolve({ status, reused: req.reusedSocket }));
        req.end(body);
      });
    const first = await once();
    const second = await once();
    expect(first).toMatchObject({ status: 404 });
    expect(first.error).toBeUndefined();
    expect(second).toMatchObject({ status: 404, reused: true });
    expect(second.error).toBeUndefined();
  });

  it("a body declared over the limit is refused with 413 and not read: the connection closes", async () => {
    const small = await serve(runtime, { port: 0, maxBodyBytes: 1 * MiB });
    try {
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(small.port, "127.0.0.1");
        let text = "";
        socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
        socket.on("error", () => undefined);
        socket.on("close", () => resolve(text));
        socket.write(`POST /threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toMatch(/connection: close/i);
    } finally {
      await small.close();
    }
  });
});
