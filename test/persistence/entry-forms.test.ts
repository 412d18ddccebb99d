import { describe, expect, it } from "vitest";
import { compactUuid, expandUuid, isoMs, isoTime } from "../../src/persistence/memory/entry-forms.js";

describe("memory store entry forms: times", () => {
  it("reads and writes every time as toISOString does, years 0000-9999", () => {
    const first = Date.parse("0000-01-01T00:00:00.000Z");
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const edges = [first, -1, 0, 1, Date.UTC(2000, 1, 29), Date.UTC(2100, 1, 28, 23, 59, 59, 999), Date.UTC(2100, 2, 1), last];
    // A fixed spread of times over the range (a linear congruential sequence).
    let x = 12345;
    const spread = Array.from({ length: 20_000 }, () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(first + (x / 2 ** 31) * (last - first));
    });
    for (const ms of [...edges, ...spread]) {
      const iso = new Date(ms).toISOString();
      expect(isoMs(iso)).toBe(ms);
      expect(isoTime(ms)).toBe(iso);
    }
  });

  it("refuses what toISOString would not write", () => {
    for (const ts of [
      "2026-02-29T00:00:00.000Z",
      "2100-02-29T00:00:00.000Z",
      "2026-04-31T00:00:00.000Z",
      "2026-13-01T00:00:00.000Z",
      "2026-00-01T00:00:00.000Z",
      "2026-01-00T00:00:00.000Z",
      "2026-01-01T24:00:00.000Z",
      "2026-01-01T00:60:00.000Z",
      "2026-01-01T00:00:60.000Z",
      "2026-01-01 00:00:00.000Z",
      "2026-01-01T00:00:00.000z",
      "2026-0a-01T00:00:00.000Z",
      "2026-01-01T00:00:00Z",
      "+012026-01-01T00:00:00.000Z",
      "",
    ]) {
      expect(isoMs(ts)).toBeUndefined();
    }
    expect(isoMs("2024-02-29T00:00:00.000Z")).toBe(Date.UTC(2024, 1, 29));
    expect(isoMs("2000-02-29T23:59:59.999Z")).toBe(Date.UTC(2000, 1, 29, 23, 59, 59, 999));
  });
});

describe("memory store entry forms: ids", () => {
  it("keeps canonical UUIDs in 8 code units that sort as they do, and nothing else", () => {
    const a = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
    const b = "0a1b2c3d-4e5f-6789-abcd-ef012345678a";
    const ffff = "ffffffff-ffff-ffff-ffff-ffffffffffff";
    for (const id of [a, b, ffff, "00000000-0000-0000-0000-000000000000"]) {
      expect(compactUuid(id)).toHaveLength(8);
      expect(expandUuid(compactUuid(id)!)).toBe(id);
    }
    expect(compactUuid(a)! < compactUuid(b)!).toBe(true);
    expect(compactUuid(b)! < compactUuid(ffff)!).toBe(true);
    for (const id of [a.toUpperCase(), a.replaceAll("-", ""), `${a}0`, a.replace("-", "_"), "0a1b2c3d-4e5f-6789-abcd-ef012345678g", ""]) {
      expect(compactUuid(id)).toBeUndefined();
    }
  });
});
