import { describe, expect, it } from "vitest";
import { decodeLegacy, parseShared, stringifyShared } from "../../src/persistence/json-file/shared-json.js";

describe("shared JSON (JSON-file store encoding)", () => {
  it("writes a shared object or long string once and restores it shared", () => {
    const message = { type: "ai", content: "a reply long enough to be worth sharing", tags: ["x"] };
    const id = "an id that is long enough to be shared once";
    const doc = { writes: [["task", "messages", [message]]], metadata: { writes: { node: { messages: [message] } } }, list: [message], a: id, b: [id, id] };
    const text = stringifyShared(doc);
    expect(text.split("a reply long enough").length).toBe(2);
    expect(text.split(id).length).toBe(2);
    const back = parseShared<typeof doc>(text);
    expect(back).toEqual(doc);
    expect(back.list[0]).toBe(back.metadata.writes.node.messages[0]);
  });

  it("keeps user strings, arrays and objects that look like its markers, and drops undefined like JSON", () => {
    const long = "$" + "x".repeat(40);
    const doc = {
      strings: ["$", "$$", "$0", "$=", "$k", "$t0", "$$t1", long, long, "$1x"],
      arrays: [["$=", 1], ["$k", ["a"], 1], ["$t0", 2], ["$0"], ["$$"], [long, long]],
      keys: { $: 1, $0: 2, "$=": 3, ["__proto__"]: 4, constructor: 5 },
      shaped: [{ $k: 1, $t: "$t" }, { $k: 2, $t: "$k" }],
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

  it("packs UUIDs and ISO times and reads them back exactly", () => {
    const ids = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "1f1e5c57-9a7e-63c0-81df-805133748eb0"];
    const times = ["1970-01-01T00:00:00.000Z", "2026-11-21T16:06:13.756Z", "9999-12-31T23:59:59.999Z"];
    const kept = ["1F1E5C57-9A7E-63C0-81DF-805133748EB0", "2026-02-30T00:00:00.000Z", "2026-11-21T16:06:13Z", "1f1e5c57-9a7e-63c0-81df-805133748eb"];
    const doc = { ids, times, kept, first: [ids[0], 1], again: ids };
    const text = stringifyShared(doc);
    for (const s of [...ids, ...times]) expect(text).not.toContain(s);
    expect(parseShared(text)).toEqual(doc);
  });

  it("reads plain JSON without $-strings unchanged", () => {
    const doc = { a: [1, "two", { three: null }], b: "x".repeat(40) };
    expect(parseShared(JSON.stringify(doc))).toEqual(doc);
  });

  it("reads format 1, whose markers were objects", () => {
    const text =
      '{"a":{"$s":0,"$v":{"$k":["x","y"],"$i":0,"$o":[1,"two"]}},"b":{"$r":0},"c":{"$t":0,"$o":[3,4]},"d":{"$e":[["$r",5]]}}';
    const back = decodeLegacy<Record<string, unknown>>(JSON.parse(text));
    expect(back).toEqual({ a: { x: 1, y: "two" }, b: { x: 1, y: "two" }, c: { x: 3, y: 4 }, d: { $r: 5 } });
    expect(back.a).toBe(back.b);
  });

  it("refuses a reference to a value it has not read (a damaged file)", () => {
    expect(() => parseShared('["$3"]')).toThrow(/corrupt/);
  });
});
