import { describe, expect, it } from "vitest";
import { diffObject, patchObject } from "../../src/persistence/delta.js";
import { parseShared, stringifyShared } from "../../src/persistence/json-file/shared-json.js";
import { jsonGenerator } from "./generate.js";

/** Generated values with strings that look like the compact JSON's markers. */
const generator = (seed: number) =>
  jsonGenerator(seed, {
    keys: ["a", "b", "s", "p", "d", "$k", "__proto__", "messages", "pending_writes"],
    scalars: [null, true, false, 0, -1.5, 42, "", "$", "$$", "$0", "$=", "$k", "$t0", "$u", "$d1", "plain", "1f1e5c57-9a7e-63c0-81df-805133748eb0", "2026-11-21T16:06:13.756Z", "a string long enough to be shared by value"],
    arrayBelow: 0.6,
    maxItems: 4,
    maxKeys: 5,
  });

const asJson = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("record diffs and compact JSON on generated values", () => {
  it("patchObject(base, diffObject(value, base)) rebuilds value, and leaves base unchanged", () => {
    const g = generator(7);
    for (let i = 0; i < 500; i++) {
      const base = g.object(0);
      const value = g.edit(base);
      const before = asJson(base);
      const diff = diffObject(value, base);
      expect(asJson(patchObject(base, asJson(diff ?? {})))).toEqual(asJson(value));
      expect(asJson(base)).toEqual(before);
      if (diff === undefined) expect(asJson(value)).toEqual(before);
    }
  });

  it("parseShared(stringifyShared(x)) is the JSON of x, shared values and marker-like strings included", () => {
    const g = generator(11);
    for (let i = 0; i < 300; i++) {
      const a = g.object(0);
      const doc = { a, again: a, list: [g.object(0), a, g.edit(a)] };
      expect(parseShared(stringifyShared(doc))).toEqual(asJson(doc));
    }
  });
});
