import { describe, expect, it } from "vitest";
import { parseShared, stringifyShared } from "../../src/persistence/json-file/shared-json.js";

describe("shared JSON (JSON-file store encoding)", () => {
  it("writes a shared object or long string once and restores it shared", () => {
    const message = { type: "ai", content: "a reply long enough to be worth sharing", tags: ["x"] };
    const id = "00000000-0000-4000-8000-000000000001";
    const doc = { writes: [["task", "messages", [message]]], metadata: { writes: { node: { messages: [message] } } }, list: [message], a: id, b: [id, id] };
    const text = stringifyShared(doc);
    expect(text.split("a reply long enough").length).toBe(2);
    expect(text.split(id).length).toBe(2);
    const back = parseShared<typeof doc>(text);
    expect(back).toEqual(doc);
    expect(back.list[0]).toBe(back.metadata.writes.node.messages[0]);
  });

  it("keeps user objects that look like its markers, and drops undefined like JSON", () => {
    const doc = {
      r: { $r: 0 },
      s: { $s: 1, $v: "x" },
      e: { $e: [["k", 1]] },
      nested: [{ $r: { $e: 2 } }, { $s: 0, $v: { $r: 5 } }],
      three: { $r: 1, other: 2 },
      shapes: [{ $t: 1, $o: [1] }, { $k: ["a"], $i: 0, $o: [] }, { $s: 2, $v: 3 }, { $s: 4, $v: 5 }, { $o: 1 }],
      gone: undefined,
      holes: [1, undefined, 3],
    };
    expect(parseShared(stringifyShared(doc))).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it("writes the keys of a repeated record shape once", () => {
    const runs = Array.from({ length: 50 }, (_, i) => ({ run_id: `r${i}`, status: "success", multitask_strategy: null, kwargs: { i } }));
    const text = stringifyShared({ runs });
    expect(text.split("multitask_strategy").length).toBe(2);
    expect(parseShared(text)).toEqual({ runs });
  });

  it("reads plain JSON unchanged", () => {
    const doc = { a: [1, "two", { three: null }], b: "x".repeat(40) };
    expect(parseShared(JSON.stringify(doc))).toEqual(doc);
  });
});
