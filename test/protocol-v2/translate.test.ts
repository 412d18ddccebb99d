/** The legacy-event -> v2-event translation, unit by unit. */
import { AIMessageChunk } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { RunTranslator, channelOf, newToolBook } from "../../src/protocol-v2/translate.js";
import type { EventMethod } from "../../src/protocol-v2/types.js";

const meta = { langgraph_node: "model" };
const data = (events: Array<{ method: string; data: unknown }>, method = "messages") => events.filter((e) => e.method === method).map((e) => e.data as Record<string, any>);

describe("RunTranslator", () => {
  it("turns emitMessage chunks into a message lifecycle, finished by the node's update", () => {
    const t = new RunTranslator("r1", newToolBook());
    const out = [
      ...t.start(),
      ...t.translate("messages", [{ id: "m1", type: "AIMessageChunk", content: "Hel" }, meta]),
      ...t.translate("messages", [{ id: "m1", type: "AIMessageChunk", content: "lo" }, meta]),
      ...t.translate("updates", { model: { messages: [{ id: "m1", type: "ai", content: "Hello" }] } }),
      ...t.finish({ status: "success" }),
    ];
    expect(out[0]).toMatchObject({ method: "lifecycle", data: { event: "running" } });
    expect(data(out)).toEqual([
      { event: "message-start", role: "ai", id: "m1" },
      { event: "content-block-start", index: 0, content: { type: "text", text: "" } },
      { event: "content-block-delta", index: 0, delta: { type: "text-delta", text: "Hel" } },
      { event: "content-block-delta", index: 0, delta: { type: "text-delta", text: "lo" } },
      { event: "content-block-finish", index: 0, content: { type: "text", text: "Hello" } },
      { event: "message-finish" },
    ]);
    expect(out.filter((e) => e.method === "messages").every((e) => e.node === "model")).toBe(true);
    expect(out.at(-1)).toMatchObject({ method: "lifecycle", data: { event: "completed" } });
  });

  it("splits reasoning, text and tool-call chunks into successive blocks (LangChain chunks, serialized)", () => {
    const t = new RunTranslator("r2", newToolBook());
    const chunks = [
      new AIMessageChunk({ id: "m2", content: [{ type: "reasoning", reasoning: "think" }] }),
      new AIMessageChunk({ id: "m2", content: "", additional_kwargs: {} }),
      new AIMessageChunk({ id: "m2", content: "Let me check." }),
      new AIMessageChunk({ id: "m2", content: "", tool_call_chunks: [{ id: "c1", name: "search", args: '{"q":', index: 0, type: "tool_call_chunk" }] }),
      new AIMessageChunk({ id: "m2", content: "", tool_call_chunks: [{ args: '"x"}', index: 0, type: "tool_call_chunk" }] }),
    ].map((c) => JSON.parse(JSON.stringify(c)));
    const out = [...chunks.flatMap((c) => t.translate("messages", [c, meta])), ...t.finish({ status: "success" })];
    const events = data(out).map((d) => [d.event, d.index, d.delta?.type ?? d.content?.type]);
    expect(events).toEqual([
      ["message-start", undefined, undefined],
      ["content-block-start", 0, "reasoning"],
      ["content-block-delta", 0, "reasoning-delta"],
      ["content-block-finish", 0, "reasoning"],
      ["content-block-start", 1, "text"],
      ["content-block-delta", 1, "text-delta"],
      ["content-block-finish", 1, "text"],
      ["content-block-start", 2, "tool_call_chunk"],
      ["content-block-delta", 2, "tool-call-delta"],
      ["content-block-delta", 2, "tool-call-delta"],
      ["content-block-finish", 2, "tool_call"],
      ["message-finish", undefined, undefined],
    ]);
    expect(data(out)[10]!.content).toEqual({ type: "tool_call", id: "c1", name: "search", args: { q: "x" } });
  });

  it("reports unparseable tool arguments as an invalid tool call", () => {
    const t = new RunTranslator("r3", newToolBook());
    const out = [
      ...t.translate("messages", [{ id: "m3", type: "AIMessageChunk", content: "", tool_call_chunks: [{ id: "c", name: "f", args: "{oops" }] }, meta]),
      ...t.finish({ status: "success" }),
    ];
    expect(data(out).find((d) => d.event === "content-block-finish")!.content).toMatchObject({ type: "invalid_tool_call", args: "{oops" });
  });

  it("derives tools events from the tool calls and the tool messages answering them", () => {
    const book = newToolBook();
    const t = new RunTranslator("r4", book);
    const out = [
      ...t.translate("updates", { model: { messages: [{ type: "ai", content: "", tool_calls: [{ id: "c9", name: "calc", args: { x: 1 } }] }] } }),
      ...t.translate("tasks", { id: "task", name: "tools", input: {}, triggers: [] }),
      ...t.translate("updates", { tools: { messages: [{ type: "tool", tool_call_id: "c9", content: "2" }] } }),
    ];
    expect(data(out, "tools")).toEqual([
      { event: "tool-started", tool_call_id: "c9", tool_name: "calc", input: { x: 1 } },
      { event: "tool-finished", tool_call_id: "c9", output: "2" },
    ]);
    const failed = new RunTranslator("r5", newToolBook()).translate("updates", { tools: { messages: [{ type: "tool", tool_call_id: "c0", name: "calc", content: "bad", status: "error" }] } });
    expect(data(failed, "tools").map((d) => d.event)).toEqual(["tool-started", "tool-error"]);
  });

  it("turns interrupts into input.requested and ends the run interrupted; errors end it failed", () => {
    const t = new RunTranslator("r6", newToolBook());
    const out = [...t.translate("values", { __interrupt__: [{ id: "i1", value: { q: 1 } }] }), ...t.finish({ status: "success" })];
    expect(out).toEqual([
      { method: "input.requested", namespace: [], data: { interrupt_id: "i1", payload: { q: 1 } } },
      { method: "lifecycle", namespace: [], data: { event: "interrupted", run_id: "r6" } },
    ]);
    const f = new RunTranslator("r7", newToolBook());
    f.translate("messages", [{ id: "m", type: "AIMessageChunk", content: "x" }, meta]);
    const failed = [...f.translate("error", { error: "Boom", message: "bad" }), ...f.finish({ status: "error", error: { error: "Boom", message: "bad" } })];
    expect(data(failed).map((d) => d.event)).toEqual(["content-block-finish", "error"]);
    expect(failed.at(-1)!.data).toMatchObject({ event: "failed", error: "Boom: bad" });
    expect(new RunTranslator("r8", newToolBook()).finish({ status: "interrupted" }).at(-1)!.data).toMatchObject({ event: "failed" });
  });

  it("maps checkpoints and custom events", () => {
    const t = new RunTranslator("r9", newToolBook());
    expect(
      t.translate("checkpoints", { config: { configurable: { checkpoint_id: "c2" } }, parent_config: { configurable: { checkpoint_id: "c1" } }, metadata: { step: 3, source: "loop" }, values: {}, next: [] }),
    ).toEqual([{ method: "checkpoints", namespace: [], data: { id: "c2", parent_id: "c1", step: 3, source: "loop" } }]);
    const [named] = t.translate("custom", { name: "progress", payload: 50 });
    expect(named!.data).toEqual({ name: "progress", payload: 50 });
    expect(channelOf(named!.method, named!.data)).toBe("custom:progress");
    const [plain] = t.translate("custom", { echoed: "x" });
    expect(plain!.data).toEqual({ payload: { echoed: "x" } });
    expect(channelOf(plain!.method, plain!.data)).toBe("custom");
  });
});

describe("matchesFilter", () => {
  const ev = (method: EventMethod, namespace: string[], data: unknown = {}) =>
    ({ type: "event", event_id: "e.1", seq: 1, method, params: { namespace, timestamp: 0, data } }) as const;
  it("filters by channel, namespace prefix (dynamic suffixes ignored) and depth, as the SDK does", async () => {
    const { matchesFilter } = await import("../../src/protocol-v2/session.js");
    expect(matchesFilter(ev("values", []), { channels: ["values"] })).toBe(true);
    expect(matchesFilter(ev("values", []), { channels: ["messages"] })).toBe(false);
    expect(matchesFilter(ev("input.requested", []), { channels: ["input"] })).toBe(true);
    expect(matchesFilter(ev("custom", [], { name: "x", payload: 1 }), { channels: ["custom"] })).toBe(true);
    expect(matchesFilter(ev("custom", [], { name: "x", payload: 1 }), { channels: ["custom:y"] })).toBe(false);
    expect(matchesFilter(ev("values", []), { channels: ["values"], namespaces: [["agent"]] })).toBe(false);
    expect(matchesFilter(ev("values", ["agent:1a2b", "tool"]), { channels: ["values"], namespaces: [["agent"]] })).toBe(true);
    expect(matchesFilter(ev("values", ["agent:1a2b", "tool"]), { channels: ["values"], namespaces: [["agent"]], depth: 0 })).toBe(false);
    expect(matchesFilter(ev("values", ["agent:1a2b"]), { channels: ["values"], depth: 0 })).toBe(false);
    expect(matchesFilter(ev("values", []), { channels: ["values"], depth: 0 })).toBe(true);
  });
});

describe("RunTranslator: subgraph namespaces", () => {
  it("puts a subgraph's events on its namespace, opens it with lifecycle started and closes it when the parent reports the node", () => {
    const t = new RunTranslator("r9", newToolBook());
    const ns = "sub:1f0-task";
    const out = [
      ...t.start(),
      ...t.translate("updates", { p1: { log: "p1" } }),
      ...t.translate(`values|${ns}`, { log: ["p1"] }),
      ...t.translate(`messages|${ns}`, [{ id: "s1", type: "AIMessageChunk", content: "hi" }, { langgraph_node: "c1" }]),
      ...t.translate(`updates|${ns}`, { c1: { log: "c1" } }),
      ...t.translate("updates", { sub: { log: ["p1", "c1"] } }),
      ...t.finish({ status: "success" }),
    ];
    const lifecycle = out.filter((e) => e.method === "lifecycle").map((e) => [e.namespace, (e.data as { event: string }).event]);
    expect(lifecycle).toEqual([
      [[], "running"],
      [[ns], "started"],
      [[ns], "completed"],
      [[], "completed"],
    ]);
    expect(out.find((e) => e.method === "lifecycle" && (e.data as { event: string }).event === "started")!.data).toMatchObject({ graph_name: "sub" });
    expect(out.filter((e) => e.method === "values").map((e) => e.namespace)).toEqual([[ns]]);
    expect(out.filter((e) => e.method === "messages").every((e) => e.namespace.join() === ns)).toBe(true);
    expect(out.filter((e) => e.method === "updates").map((e) => [e.namespace, e.node])).toEqual([
      [[], "p1"],
      [[ns], "c1"],
      [[], "sub"],
    ]);
    // The subgraph's message ended before the subgraph closed.
    const order = out.map((e) => `${e.method}:${(e.data as { event?: string }).event ?? ""}`);
    expect(order.indexOf("messages:message-finish")).toBeLessThan(order.indexOf("lifecycle:completed"));
  });

  it("reports a subgraph's interrupt once (from the root) and ends its open namespaces as interrupted", () => {
    const t = new RunTranslator("r10", newToolBook());
    const ns = ["outer:a", "inner:b"];
    const interrupt = { __interrupt__: [{ id: "f".repeat(32), value: { q: "?" } }] };
    const out = [
      ...t.start(),
      ...t.translate(`updates|${ns.join("|")}`, { c1: {} }),
      ...t.translate(`values|${ns.join("|")}`, interrupt),
      ...t.translate(`values|${ns[0]}`, interrupt),
      ...t.translate("values", interrupt),
      ...t.finish({ status: "success" }),
    ];
    expect(out.filter((e) => e.method === "input.requested").map((e) => e.namespace)).toEqual([[]]);
    expect(out.filter((e) => e.method === "lifecycle").map((e) => [e.namespace, (e.data as { event: string }).event])).toEqual([
      [[], "running"],
      [[ns[0]], "started"],
      [ns, "started"],
      [ns, "interrupted"],
      [[ns[0]], "interrupted"],
      [[], "interrupted"],
    ]);
  });
});
