import { describe, expect, it } from "vitest";
import { createRuntime, memoryStore } from "../../src/index.js";
import { shareKwargs, sharedIfEmpty } from "../../src/runtime/shared-values.js";
import { echo } from "../../examples/node/agent.js";

describe("run records share their empty parts", () => {
  it("replaces only empty objects, { configurable: {} } and ['values'], keeping the JSON", () => {
    const empty = shareKwargs({ context: {}, config: { configurable: {} }, stream_mode: ["values"], input: {} });
    const full = shareKwargs({ context: { a: 1 }, config: { configurable: {}, tags: [] }, stream_mode: ["values", "updates"] });
    expect(JSON.stringify(empty)).toBe('{"context":{},"config":{"configurable":{}},"stream_mode":["values"],"input":{}}');
    expect(Object.isFrozen(empty.context) && Object.isFrozen(empty.config) && Object.isFrozen(empty.stream_mode)).toBe(true);
    // The caller's own input is never swapped, even when empty.
    expect(Object.isFrozen(empty.input)).toBe(false);
    expect(JSON.stringify(full)).toBe('{"context":{"a":1},"config":{"configurable":{},"tags":[]},"stream_mode":["values","updates"]}');
    expect(Object.isFrozen(full.context) || Object.isFrozen(full.config) || Object.isFrozen(full.stream_mode)).toBe(false);
    const own = { a: 1 };
    expect(sharedIfEmpty(own)).toBe(own);
    expect(sharedIfEmpty(Object.create(null) as Record<string, unknown>)).not.toBe(sharedIfEmpty({}));
  });

  it("stores runs with and without metadata, context and config exactly as given", async () => {
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: { echo }, store });
    try {
      const { thread_id } = await runtime.threads.create();
      const input = { messages: [{ role: "user", content: "hi" }] };
      const plain = await runtime.runs.create(thread_id, "echo", { input });
      await runtime.runs.join(thread_id, plain.run_id);
      const rich = await runtime.runs.create(thread_id, "echo", {
        input,
        metadata: { tag: "x" },
        context: { persona: "p" },
        config: { configurable: { k: 1 } },
        streamMode: ["values", "updates"],
      });
      await runtime.runs.join(thread_id, rich.run_id);
      const a = (await runtime.runs.get(thread_id, plain.run_id))!;
      const b = (await runtime.runs.get(thread_id, rich.run_id))!;
      expect(a.metadata).toEqual({});
      expect(a.kwargs).toMatchObject({ context: {}, config: { configurable: {} }, stream_mode: ["values"] });
      expect(b.metadata).toEqual({ tag: "x" });
      expect(b.kwargs).toMatchObject({ context: { persona: "p" }, config: { configurable: { k: 1 } }, stream_mode: ["values", "updates"] });
      // The shared parts are frozen: no record can change another's through them.
      expect(Object.isFrozen(a.metadata) && Object.isFrozen(a.kwargs.context)).toBe(true);
      expect(() => {
        "use strict";
        (a.metadata as Record<string, unknown>).x = 1;
      }).toThrow(TypeError);
      expect((await runtime.runs.get(thread_id, plain.run_id))!.metadata).toEqual({});
    } finally {
      await runtime.close();
    }
  });
});
