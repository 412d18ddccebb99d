import { describe, expect, it } from "vitest";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import { readTs, storeTs, uuid6Millis } from "../../src/postgres/ts.js";

describe("postgres: a checkpoint's ts stored against its uuid6 id", () => {
  it("reads back the time a LangGraph checkpoint id was made at", () => {
    const before = Date.now();
    const id = uuid6(-1);
    const after = Date.now();
    const at = uuid6Millis(id)!;
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after + 1);
  });

  it("stores a canonical ts as a small offset and reads back the exact text", () => {
    const id = uuid6(-1);
    const ts = new Date().toISOString();
    const stored = storeTs(ts, id);
    expect(typeof stored).toBe("number");
    expect(Math.abs(stored as number)).toBeLessThan(1000);
    expect(readTs(stored, id)).toBe(ts);
  });

  it("keeps any other ts exactly: not canonical, not a string, or an id that is not a uuid6", () => {
    const id = uuid6(-1);
    const cases: Array<[unknown, string]> = [
      ["2024-01-01T00:00:00Z", id],
      ["2024-01-01T00:00:00.000+00:00", id],
      ["yesterday", id],
      [new Date().toISOString(), "checkpoint-1"],
      [new Date().toISOString(), "01a20be9-4049-7000-8ec0-a8207c0c86af"],
      [12, id],
      [["x"], id],
      [null, id],
    ];
    for (const [ts, cid] of cases) {
      const stored = JSON.parse(JSON.stringify(storeTs(ts, cid)));
      expect(readTs(stored, cid)).toEqual(ts);
    }
  });
});
