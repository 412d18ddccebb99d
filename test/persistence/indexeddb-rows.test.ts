import { describe, expect, it } from "vitest";
import { diffLeaves, itemNeeds, indexItems, patchLeaves, reshareItems, resolveItems, shareItems, type ItemIndex } from "../../src/persistence/indexeddb/rows.js";
import { jsonGenerator } from "./generate.js";

/** What IndexedDB hands back: a copy (structured clone of JSON values). */
const stored = (v: unknown) => JSON.parse(JSON.stringify(v));

const generator = (seed: number) =>
  jsonGenerator(seed, {
    keys: ["a", "d", "", "/", "~", "\u0000", "a\u0000b", "\u0000i", "\u0000e", "__proto__", "id", "s"],
    scalars: [null, true, false, 0, 7, "", "$", "\u0000i", "x", "1f1e5c57-9a7e-63c0-81df-805133748eb0"],
    arrayBelow: 0.55,
    maxItems: 3,
    maxKeys: 4,
  });

describe("IndexedDB rows (schema 3)", () => {
  it("rebuilds a generated record from its leaf diff against a generated base", () => {
    const g = generator(11);
    for (let i = 0; i < 1000; i++) {
      const base = g.object(0);
      const value = g.rand() < 0.2 ? g.object(0) : g.edit(base);
      const diff = stored(diffLeaves(value, base));
      expect(patchLeaves(stored(base), diff)).toEqual(stored(value));
    }
  });

  it("shares items by reference and escapes marker-like objects, reading back exactly", () => {
    const g = generator(12);
    for (let i = 0; i < 300; i++) {
      const items = [g.object(0), { ...g.object(0), id: `m${i}` }, { id: "x", v: g.object(0) }];
      const index: ItemIndex = new Map();
      indexItems(index, "L", items, 0);
      const value = { w: [items[1], g.object(0), [items[2]]], o: g.object(0) };
      const none: ItemIndex = new Map();
      const shared = stored(g.rand() < 0.5 ? shareItems(value, index) : reshareItems(stored(shareItems(value, none)), index, { hit: false }));
      for (const [l, n] of itemNeeds(shared)) expect([l, n <= items.length]).toEqual(["L", true]);
      expect(resolveItems(shared, (l) => (l === "L" ? items : undefined))).toEqual(stored(value));
      // Sharing again (a parent row after its child appended) changes nothing it already shared.
      expect(resolveItems(stored(reshareItems(shared, index, { hit: false })), (l) => (l === "L" ? items : undefined))).toEqual(stored(value));
    }
  });
});
