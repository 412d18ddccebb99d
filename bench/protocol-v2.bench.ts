/**
 * The v2 stream next to the legacy one (`npm run bench -- protocol-v2`), on loopback HTTP and the
 * same graph: a node streaming TOKENS message chunks (`ctx.emitMessage`). For each protocol: time
 * to the first token (median of RUNS runs: from the request that starts the run to the first
 * token frame) and events/s over a long run (frames received / time from start to the end).
 * Legacy: `POST /threads/{id}/runs/stream` (values + messages-tuple). v2: an open
 * `POST /threads/{id}/stream/events` (messages, values, lifecycle) and `run.start` on
 * `POST /threads/{id}/commands`.
 */
import { END, START, StateGraph, messagesState } from "../src/graph/index.js";
import { createRuntime } from "../src/runtime/index.js";
import { serve } from "../src/node/index.js";
import { InProcessTransport } from "../src/protocol-v2/index.js";

const RUNS = 50;
const TOKENS = 2000;

const streamer = new StateGraph(messagesState)
  .addNode("talk", (state, ctx) => {
    const n = Number((state.messages[state.messages.length - 1]?.content as string) ?? "1");
    const id = `m-${String(ctx.config.configurable.run_id)}`;
    for (let i = 0; i < n; i++) ctx.emitMessage({ id, type: "AIMessageChunk", content: `t${i} ` });
    return { messages: [{ id, type: "ai", content: `${n} tokens` }] };
  })
  .addEdge(START, "talk")
  .addEdge("talk", END)
  .compile();

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
const input = (n: number) => ({ messages: [{ type: "human", content: String(n) }] });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Reads an SSE body frame by frame until `stop(frame)`; returns [ms to first `first(frame)`, frames, ms total]. */
async function read(res: Response, start: number, first: (f: string) => boolean, stop: (f: string) => boolean): Promise<[number, number, number]> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let firstAt = -1;
  let frames = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (frame.startsWith(":")) continue;
      frames++;
      if (firstAt < 0 && first(frame)) firstAt = performance.now() - start;
      if (stop(frame)) {
        await reader.cancel();
        return [firstAt, frames, performance.now() - start];
      }
    }
  }
  return [firstAt, frames, performance.now() - start];
}

export default async function (): Promise<void> {
  const runtime = await createRuntime({ graphs: { streamer } });
  const server = await serve(runtime, { port: 0, heartbeatMs: 0 });
  const newThread = async () => ((await (await post(`${server.url}/threads`, {})).json()) as { thread_id: string }).thread_id;

  const legacy = async (n: number) => {
    const t = await newThread();
    const start = performance.now();
    const res = await post(`${server.url}/threads/${t}/runs/stream`, { assistant_id: "streamer", input: input(n), stream_mode: ["values", "messages-tuple"] });
    return read(res, start, (f) => f.startsWith("event: messages"), () => false);
  };
  let cmd = 0;
  const v2 = async (n: number) => {
    const t = await newThread();
    const abort = new AbortController();
    const events = post(`${server.url}/threads/${t}/stream/events`, { channels: ["messages", "values", "lifecycle"] }, abort.signal);
    const res = await events; // headers: the subscription is live
    const start = performance.now();
    const reading = read(res, start, (f) => f.includes('"content-block-delta"'), (f) => f.includes('"event":"completed"'));
    const started = await post(`${server.url}/threads/${t}/commands`, { id: ++cmd, method: "run.start", params: { assistant_id: "streamer", input: input(n) } });
    if (!started.ok) throw new Error(await started.text());
    await started.arrayBuffer();
    const out = await reading;
    abort.abort();
    return out;
  };

  // v2 in process (InProcessTransport, no HTTP): the same measure on the event stream's iterator.
  const transport = new InProcessTransport(runtime);
  const inProcess = async (n: number): Promise<[number, number, number]> => {
    const t = await newThread();
    transport.setThreadId(t);
    const stream = transport.openEventStream({ channels: ["messages", "values", "lifecycle"] });
    await stream.ready;
    const start = performance.now();
    const started = await transport.send({ id: ++cmd, method: "run.start", params: { assistant_id: "streamer", input: input(n) } });
    if (started.type !== "success") throw new Error(started.message);
    let first = -1;
    let frames = 0;
    for await (const e of stream.events) {
      if (e.type !== "event") continue;
      frames++;
      const data = e.params.data as { event?: string };
      if (first < 0 && data.event === "content-block-delta") first = performance.now() - start;
      if (e.method === "lifecycle" && data.event === "completed") break;
    }
    stream.close();
    return [first, frames, performance.now() - start];
  };

  try {
    for (let i = 0; i < 10; i++) (await legacy(10), await v2(10), await inProcess(10)); // warm-up
    const ttft = { legacy: [] as number[], v2: [] as number[], inProcess: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      ttft.legacy.push((await legacy(10))[0]);
      ttft.v2.push((await v2(10))[0]);
      ttft.inProcess.push((await inProcess(10))[0]);
    }
    const rate = { legacy: 0, v2: 0, inProcess: 0 };
    const frames = { legacy: 0, v2: 0, inProcess: 0 };
    for (let round = 0; round < 3; round++) {
      const [, fl, ml] = await legacy(TOKENS);
      const [, fv, mv] = await v2(TOKENS);
      const [, fi, mi] = await inProcess(TOKENS);
      rate.legacy = Math.max(rate.legacy, fl / (ml / 1000));
      rate.v2 = Math.max(rate.v2, fv / (mv / 1000));
      rate.inProcess = Math.max(rate.inProcess, fi / (mi / 1000));
      frames.legacy = fl;
      frames.v2 = fv;
      frames.inProcess = fi;
    }
    const ms = (x: number) => x.toFixed(2).padStart(7);
    console.log(`time to first token   legacy ${ms(median(ttft.legacy))} ms   v2 ${ms(median(ttft.v2))} ms   (median of ${RUNS} runs, 10-token reply)`);
    console.log(`events/s              legacy ${rate.legacy.toFixed(0).padStart(7)}      v2 ${rate.v2.toFixed(0).padStart(7)}      (best of 3 runs of ${TOKENS} tokens: ${frames.legacy} legacy frames, ${frames.v2} v2 frames)`);
    console.log(`tokens/s              legacy ${((rate.legacy * TOKENS) / frames.legacy).toFixed(0).padStart(7)}      v2 ${((rate.v2 * TOKENS) / frames.v2).toFixed(0).padStart(7)}`);
    console.log(`v2 in process         ttft ${ms(median(ttft.inProcess))} ms   ${rate.inProcess.toFixed(0)} events/s (${frames.inProcess} events; InProcessTransport, no HTTP)`);
    console.log("(loopback HTTP/SSE; the v2 stream is opened before run.start and read until the root completed event)");
  } finally {
    await server.close();
    await runtime.close();
  }
}
