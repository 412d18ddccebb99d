import { describe, expect, it } from "vitest";
import { diffObject, patchObject } from "../../src/persistence/delta.js";
import { parseShared, stringifyShared } from "../../src/persistence/json-file/shared-json.js";

/** Deterministic pseudo-random JSON values (mulberry32), with strings that look like markers. */
function generator(seed: number) {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const strings = ["", "$", "$$", "$0", "$=", "$k", "$t0", "$u", "$d1", "plain", "1f1e5c57-9a7e-63c0-81df-805133748eb0", "2026-11-21T16:06:13.756Z", "a string long enough to be shared by value"];
  const keys = ["a", "b", "s", "p", "d", "$k", "__proto__", "messages", "pending_writes"];
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 3 || r < 0.35) return pick([null, true, false, 0, -1.5, 42, ...strings]);
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    return object(depth + 1);
  };
  const object = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * 5); i > 0; i--) Object.defineProperty(out, pick(keys), { value: value(depth), enumerable: true, writable: true, configurable: true });
    return out;
  };
  /** A variant of `base`: some keys changed, removed or added, nested objects edited the same way. */
  const edit = (base: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) {
      const r = rand();
      if (r < 0.15) continue;
      const next = r < 0.35 ? value(2) : typeof v === "object" && v !== null && !Array.isArray(v) ? edit(v as Record<string, unknown>) : v;
      Object.defineProperty(out, k, { value: next, enumerable: true, writable: true, configurable: true });
    }
    if (rand() < 0.3) Object.defineProperty(out, pick(keys), { value: value(2), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return { object, edit };
}

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
