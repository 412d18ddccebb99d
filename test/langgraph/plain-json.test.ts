/**
 * `GraphdockSaver` stores plain JSON without LangGraph's serializer (plain-json.ts): what it
 * stores must be exactly what that serializer's JSON form parses back to, and anything the
 * serializer treats specially must be left to it.
 */
import { load } from "@langchain/core/load";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { NOT_PLAIN, plainJsonCopy, revivePlainJson } from "../../src/langgraph/plain-json.js";

const serde = new JsonPlusSerializer();
async function serdeForm(value: unknown): Promise<unknown> {
  const [, bytes] = await serde.dumpsTyped(value);
  return JSON.parse(typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes));
}

describe("plainJsonCopy", () => {
  it("copies plain JSON to exactly the serializer's form (key order, -0, lone surrogates, message JSON)", async () => {
    const values: unknown[] = [
      { b: 1, a: [1, "x", null, true, { c: -0 }], "10": 2, "2": 3 },
      { messages: [new AIMessage({ content: "hi", id: "1", tool_calls: [{ name: "t", args: { q: 1 }, id: "c" }] }).toJSON(), new HumanMessage("yo").toJSON()] },
      { u: "\ud800 é \u2028" },
      Object.assign(Object.create(null) as object, { k: [[]] }),
      "text",
      5,
      null,
    ];
    for (const value of values) {
      const copy = plainJsonCopy(value);
      expect(copy).not.toBe(NOT_PLAIN);
      expect(JSON.stringify(copy)).toBe(JSON.stringify(await serdeForm(value)));
      if (typeof value === "object" && value !== null) expect(copy).not.toBe(value);
    }
  });

  it("leaves what the serializer changes to it: undefined, holes, dates, sets, maps, sends, NaN, class instances, cycles", () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const values: unknown[] = [
      [1, undefined],
      // eslint-disable-next-line no-sparse-arrays
      [1, , 2],
      { a: undefined },
      { d: new Date(0) },
      { s: new Set([1]) },
      { m: new Map([[1, 2]]) },
      { lg_name: "Send", node: "a", args: 1 },
      { x: Number.NaN },
      { y: Infinity },
      { toJSON: () => 1 },
      new HumanMessage("hi"),
      new Uint8Array([1]),
      { f: () => 1 },
      JSON.parse('{"__proto__": {"polluted": true}}'),
      cycle,
    ];
    for (const value of values) expect(plainJsonCopy(value)).toBe(NOT_PLAIN);
  });
});

/** A value with class names made visible, to compare revived objects. */
const shape = (x: unknown) =>
  JSON.stringify(x, (_k, v: unknown) => (v && typeof v === "object" && !Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype ? { class: (v as object).constructor.name, ...v } : v));

describe("revivePlainJson", () => {
  it("revives stored JSON as the serializer does: plain values copied, messages as message instances", async () => {
    const values: unknown[] = [
      { messages: [new AIMessage({ content: "hi", id: "1", tool_calls: [{ name: "t", args: { q: 1 }, id: "c" }] }), new HumanMessage("yo"), new ToolMessage({ content: "r", tool_call_id: "c" })], n: 1 },
      new HumanMessage("top"),
      { a: [1, { b: null }], s: "x" },
    ];
    for (const value of values) {
      const stored = await serdeForm(value);
      const expected = await serde.loadsTyped("json", JSON.stringify(stored));
      const revived = revivePlainJson(stored, (text) => load(text));
      expect(revived).not.toBe(NOT_PLAIN);
      expect(shape(await revived)).toBe(shape(expected));
      expect(shape(await revived)).toBe(shape(value));
    }
  });

  it("leaves other records to the serializer: undefined, dates' and sets' records, a message holding one", async () => {
    for (const value of [{ a: undefined }, { s: new Set([1]) }, { m: new AIMessage({ content: "x", additional_kwargs: { k: undefined } }) }, { lc: 3 }]) {
      expect(revivePlainJson(await serdeForm(value), (text) => load(text))).toBe(NOT_PLAIN);
    }
    expect(revivePlainJson(JSON.parse('{"__proto__": {"polluted": true}}'), (text) => load(text))).toBe(NOT_PLAIN);
  });
});
