/**
 * `AgentdockSaver` stores plain JSON without LangGraph's serializer (plain-json.ts): what it
 * stores must be exactly what that serializer's JSON form parses back to, and anything the
 * serializer treats specially must be left to it.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { NOT_PLAIN, plainJsonCopy } from "../../src/langgraph/plain-json.js";

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
