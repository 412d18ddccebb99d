import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { SlowReaderError, sseFrame, sseResponse, type StreamPart } from "../../src/http/sse.js";
import { readSse } from "./helpers.js";

/** An iterator over `parts` that records whether it was stopped early, optionally blocking at the end. */
function source(parts: StreamPart[], opts: { failWith?: Error; blockAtEnd?: boolean } = {}) {
  const state = { returned: false };
  let i = 0;
  let release: () => void = () => {};
  const it: AsyncIterator<StreamPart> = {
    async next() {
      if (i < parts.length) return { done: false, value: parts[i++] };
      if (opts.failWith) throw opts.failWith;
      if (opts.blockAtEnd) await new Promise<void>((r) => (release = r));
      return { done: true, value: undefined };
    },
    async return() {
      state.returned = true;
      release();
      return { done: true, value: undefined };
    },
  };
  return { it, state };
}

async function open(parts: StreamPart[], opts: Parameters<typeof source>[1] = {}, heartbeatMs = 0, signal = new AbortController().signal) {
  const { it, state } = source(parts, opts);
  const first = await it.next();
  return { response: sseResponse(first, it, { heartbeatMs, signal, headers: new Headers() }), state };
}

describe("SSE framing (D11)", () => {
  it("writes event, one-line data and id, parsed back by a real SSE parser", async () => {
    const data = { text: "line one\nline two", nested: { a: [1, 2] } };
    const { response } = await open([
      { event: "metadata", data: { run_id: "r1", attempt: 1 }, id: "0" },
      { event: "values", data, id: "1" },
    ]);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const { events } = await readSse(response);
    expect(events).toEqual([
      { event: "metadata", data: { run_id: "r1", attempt: 1 }, id: "0" },
      { event: "values", data, id: "1" },
    ]);
  });

  it("keeps each frame's data on one line and refuses line breaks in event names and ids", () => {
    const frame = sseFrame({ event: "a\nb", data: { s: "x\r\ny" }, id: "1\n2" });
    expect(frame.split("\n").filter((l) => l.startsWith("data:"))).toHaveLength(1);
    expect(frame).toContain("event: a b\n");
    expect(frame).toContain("id: 1 2\n");
    expect(frame.endsWith("\n\n")).toBe(true);
  });

  it("sends an error thrown after the first event in-band and closes with no terminal event", async () => {
    const { response } = await open([{ event: "metadata", data: { run_id: "r" }, id: "0" }], {
      failWith: new GraphdockError("not_found", "run r was deleted"),
    });
    const { events } = await readSse(response);
    expect(events.map((e) => e.event)).toEqual(["metadata", "error"]);
    expect(events[1].data).toEqual({ error: "GraphdockError", message: "run r was deleted" });
  });

  it("sends a fault thrown mid-stream as a bare internal error, reporting it once", async () => {
    const { it: iterator } = source([{ event: "metadata", data: { run_id: "r" }, id: "0" }], { failWith: new TypeError("secret detail") });
    const faults: unknown[] = [];
    const response = sseResponse(await iterator.next(), iterator, { heartbeatMs: 0, signal: new AbortController().signal, headers: new Headers(), onError: (e) => faults.push(e) });
    const { events } = await readSse(response);
    expect(events[1]!.data).toEqual({ error: "InternalServerError", message: "Internal server error" });
    expect(faults).toHaveLength(1);
    expect((faults[0] as Error).message).toBe("secret detail");
  });

  it("sends heartbeat comments while the run is quiet", async () => {
    const { response, state } = await open([{ event: "metadata", data: {}, id: "0" }], { blockAtEnd: true }, 5);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while ((text.match(/: heartbeat/g) ?? []).length < 2) text += (await reader.read()).value ?? "";
    await reader.cancel();
    expect(text.startsWith("event: metadata\n")).toBe(true);
    expect(state.returned).toBe(true);
  });

  it("stops the runtime's iteration when the client's signal aborts", async () => {
    const abort = new AbortController();
    const { response, state } = await open([{ event: "metadata", data: {}, id: "0" }], { blockAtEnd: true }, 0, abort.signal);
    const reader = response.body!.getReader();
    await reader.read();
    expect(state.returned).toBe(false);
    abort.abort();
    expect(state.returned).toBe(true);
    expect((await reader.read()).done).toBe(true);
  });

  it("cuts off a reader that leaves its bounded queue full, stopping the iteration and dropping the queue", async () => {
    const parts = Array.from({ length: 200 }, (_, i) => ({ event: "custom", data: "x".repeat(1000), id: String(i) }));
    let disconnected = 0;
    const { it: iterator, state } = source(parts, { blockAtEnd: true });
    const first = await iterator.next();
    const response = sseResponse(first, iterator, { heartbeatMs: 0, signal: new AbortController().signal, headers: new Headers(), maxBufferBytes: 16 * 1024, onDisconnect: () => disconnected++ });
    const reader = response.body!.getReader();
    // Nobody reads while the events arrive; `closed` settles without reading anything.
    await expect(reader.closed).rejects.toBeInstanceOf(SlowReaderError);
    expect(state.returned).toBe(true);
    expect(disconnected).toBe(1);
    await expect(reader.read()).rejects.toBeInstanceOf(SlowReaderError);
  });

  it("lets a reader that keeps up have every event through the same small queue", async () => {
    const parts = Array.from({ length: 200 }, (_, i) => ({ event: "custom", data: "x".repeat(1000), id: String(i) }));
    const { it: iterator } = source(parts);
    const first = await iterator.next();
    const response = sseResponse(first, iterator, { heartbeatMs: 0, signal: new AbortController().signal, headers: new Headers(), maxBufferBytes: 16 * 1024 });
    const { events } = await readSse(response);
    expect(events).toHaveLength(200);
  });
});
