import { describe, expect, it } from "vitest";
import {
  decodePage,
  encodePage,
  indexItems,
  itemNeeds,
  resolveItems,
  unchain,
  type Entry,
  type ItemIndex,
} from "../../src/persistence/indexeddb/pages.js";
import { jsonGenerator } from "./generate.js";

/** What IndexedDB hands back: a copy (structured clone of JSON values). */
const stored = (v: unknown) => JSON.parse(JSON.stringify(v));

/** Generated records with keys and values that look like the page encoding's markers. */
const generator = (seed: number) =>
  jsonGenerator(seed, {
    keys: ["a", "d", "", "/", "~", "~1", "a/b", "\u0000i", "\u0000e", "__proto__", "id", "s"],
    scalars: [null, true, false, 0, 7, "", "$", "$0", "\u0000i", "x", "1f1e5c57-9a7e-63c0-81df-805133748eb0"],
    arrayBelow: 0.55,
    maxItems: 3,
    maxKeys: 4,
  });

/** Stores `records` as a page and reads them back, with `items` as the list log "L". */
function roundTrip(records: Array<Entry | null>, items: unknown[] = []) {
  const index: ItemIndex = new Map();
  indexItems(index, "L", items, 0);
  const page = decodePage(stored(encodePage(records, index)));
  const needs = itemNeeds(page);
  for (const [l, n] of needs) {
    expect(l).toBe("L");
    expect(n).toBeLessThanOrEqual(items.length);
  }
  return unchain(resolveItems(page, (l) => (l === "L" ? items : undefined)) as unknown[]);
}

describe("IndexedDB pages", () => {
  it("rebuilds a record stored as a diff against a generated record", () => {
    const g = generator(3);
    for (let i = 0; i < 500; i++) {
      const base = g.object(0);
      const value = g.edit(base);
      expect(roundTrip([base, value])).toEqual(stored([base, value]));
    }
  });

  it("reads back a page of generated records (deleted slots, marker-like keys and strings)", () => {
    const g = generator(5);
    for (let i = 0; i < 200; i++) {
      const records: Array<Entry | null> = [];
      let prev = g.object(0);
      for (let k = 0; k < 6; k++) {
        prev = g.rand() < 0.2 ? g.object(0) : g.edit(prev);
        records.push(g.rand() < 0.15 ? null : prev);
      }
      expect(roundTrip(records)).toEqual(stored(records));
    }
  });

  it("stores a message that is also a list item once, as a reference, and only when identical", () => {
    const hi = { type: "human", content: "a message long enough to notice", id: "m1" };
    const changed = { ...hi, content: "edited after it was added to the list" };
    const record = (writes: unknown): Entry => ({ checkpoint: { id: "c1" }, metadata: { writes }, pending_writes: [["t", "messages", [writes]]] });
    const records = [record(hi), { ...record(changed), checkpoint: { id: "c2" }, parent_checkpoint_id: "c1" }];
    const items = [{ type: "ai", content: "other", id: "m0" }, hi];
    const page = JSON.stringify(encodePage(records, (() => { const ix: ItemIndex = new Map(); indexItems(ix, "L", items, 0); return ix; })()));
    expect(page.split(hi.content).length - 1).toBe(0);
    expect(page.split(changed.content).length - 1).toBe(1);
    expect(roundTrip(records, items)).toEqual(stored(records));
  });

  it("keeps a checkpoint's parent id whether or not it is the record before it", () => {
    const cp = (id: string, parent: string | null) => ({ checkpoint: { id }, parent_checkpoint_id: parent, metadata: { step: 1 } });
    const records = [cp("a", null), cp("b", "a"), cp("c", null), cp("d", "b"), null, cp("e", "d"), cp("f", "e")];
    expect(roundTrip(records)).toEqual(records);
  });
});
