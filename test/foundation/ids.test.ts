import { describe, expect, it } from "vitest";
import { createIds, defaultAssistantId, sequentialIds, uuid5 } from "../../src/ids.js";
import { contains } from "../../src/json.js";

describe("ids (D5, D19)", () => {
  it("derives default assistant ids with uuid5 as D5's vectors say", () => {
    expect(defaultAssistantId("agent")).toBe("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
    expect(defaultAssistantId("echo")).toBe("046b5dc7-2108-582c-9c6c-31d556d138f0");
    // RFC 4122 appendix vector: uuid5("python.org", DNS namespace)
    expect(uuid5("python.org", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("886313e1-3b8a-5372-9b90-0c9aee199e5d");
  });

  it("mints checkpoint ids that sort in creation order even with a frozen clock", () => {
    const ids = createIds(() => 1_700_000_000_000);
    const made = [-1, 0, 1, 2, 3].map((step) => ids.checkpointId(step));
    expect([...made].sort()).toEqual(made);
    expect(made[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-bfff-/);
    expect(made[1]).toMatch(/-8000-[0-9a-f]{12}$/);
    const records = Array.from({ length: 5000 }, () => ids.uuid());
    expect([...records].sort()).toEqual(records);
    expect(new Set(records).size).toBe(records.length);
  });

  it("gives deterministic ids when injected", () => {
    const a = sequentialIds();
    const b = sequentialIds();
    expect([a.uuid(), a.checkpointId(0)]).toEqual([b.uuid(), b.checkpointId(0)]);
  });
});

describe("contains", () => {
  it("matches objects as recursive subsets and arrays by element containment", () => {
    expect(contains({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).toBe(true);
    expect(contains({ a: 1 }, { a: 2 })).toBe(false);
    expect(contains({ a: 1 }, { b: undefined })).toBe(false);
    expect(contains({ tags: ["x", "y"] }, { tags: ["y"] })).toBe(true);
    expect(contains({ tags: ["x"] }, { tags: ["z"] })).toBe(false);
    expect(contains({}, {})).toBe(true);
  });
});
