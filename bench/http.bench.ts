/**
 * HTTP adapter figures on loopback (`npm run bench -- http`): requests/s for thread creation and
 * for `runs.wait` on the echo graph, time to the first SSE event of a streamed run, and `GET /ok`
 * through graphdock against the same trivial endpoint on raw node:http (target: >= 50%). Each
 * rate also as CPU time per request (this process: client and server), which a loaded machine
 * disturbs far less than the rate.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRuntime } from "../src/runtime/index.js";
import { serve } from "../src/node/index.js";
import { echo } from "../examples/node/agent.js";

const CONCURRENCY = 16;

/** Runs `total` requests with `CONCURRENCY` in flight; returns requests per second and CPU µs per request. */
async function measure(total: number, one: (i: number) => Promise<void>): Promise<{ rate: number; cpu: number }> {
  let next = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) await one(next++);
    }),
  );
  const used = process.cpuUsage(cpu);
  return { rate: total / ((performance.now() - start) / 1000), cpu: (used.user + used.system) / total };
}
const rate = async (total: number, one: (i: number) => Promise<void>) => (await measure(total, one)).rate;

async function ok(response: Response): Promise<void> {
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => n.toFixed(0).padStart(7);

export default async function (): Promise<void> {
  const runtime = await createRuntime({ graphs: { echo } });
  const server = await serve(runtime, { port: 0 });
  const raw = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
  const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  try {
    // warm-up (JIT, connection pool)
    await rate(300, async () => ok(await fetch(`${server.url}/ok`)));
    await rate(300, async () => ok(await fetch(`${rawUrl}/ok`)));

    // Alternating rounds, best of each, so load from other processes hits both sides alike.
    let okGraphdock = 0;
    let okRaw = 0;
    let okCpu = Infinity;
    for (let round = 0; round < 4; round++) {
      const m = await measure(2000, async () => ok(await fetch(`${server.url}/ok`)));
      okGraphdock = Math.max(okGraphdock, m.rate);
      okCpu = Math.min(okCpu, m.cpu);
      okRaw = Math.max(okRaw, await rate(2000, async () => ok(await fetch(`${rawUrl}/ok`))));
    }
    const threads = await measure(2000, async () => ok(await post(`${server.url}/threads`, { metadata: { bench: true } })));
    const waits = await measure(1000, async () =>
      ok(await post(`${server.url}/runs/wait`, { assistant_id: "echo", input: { messages: [{ role: "user", content: "hi" }] } })),
    );

    const firstEvent: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = await (await post(`${server.url}/threads`, {})).json();
      const start = performance.now();
      const res = await post(`${server.url}/threads/${t.thread_id}/runs/stream`, {
        assistant_id: "echo",
        input: { messages: [{ role: "user", content: "hi" }] },
      });
      const reader = res.body!.getReader();
      await reader.read();
      firstEvent.push(performance.now() - start);
      while (!(await reader.read()).done);
    }

    const ratio = okGraphdock / okRaw;
    console.log(`GET /ok graphdock         ${fmt(okGraphdock)} req/s   cpu ${fmt(okCpu)} µs/req`);
    console.log(`GET /ok raw node:http     ${fmt(okRaw)} req/s   ratio ${(ratio * 100).toFixed(0)}% (target >= 50%: ${ratio >= 0.5 ? "met" : "MISSED"})`);
    console.log(`POST /threads             ${fmt(threads.rate)} req/s   cpu ${fmt(threads.cpu)} µs/req`);
    console.log(`POST /runs/wait (echo)    ${fmt(waits.rate)} req/s   cpu ${fmt(waits.cpu)} µs/req`);
    console.log(`stream first event        ${median(firstEvent).toFixed(2).padStart(7)} ms median (p90 ${[...firstEvent].sort((a, b) => a - b)[Math.floor(firstEvent.length * 0.9)].toFixed(2)} ms)`);
    console.log(`(loopback, ${CONCURRENCY} requests in flight, fetch keep-alive)`);
  } finally {
    await server.close();
    await runtime.close();
    await new Promise((r) => raw.close(r));
  }
}
