import { describe, expect, it } from "vitest";
import { flattenStrings } from "../../src/flat-strings.js";

describe("flattenStrings (a run's input, when it is admitted)", () => {
  it("leaves every value as it was, however deep or odd", () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 1000; i++) at = (at.next = { s: `${"x".repeat(20)}${i}` }) as Record<string, unknown>;
    const input = { messages: [{ role: "user", content: `${"x".repeat(190)} turn 1` }, "", 3, null, [true]], deep, when: new Date(0) };
    const before = JSON.stringify(input);
    flattenStrings(input);
    expect(JSON.stringify(input)).toBe(before);
  });

  it("leaves an input it cannot walk to the input checks instead of throwing", () => {
    const input = {
      get broken(): string {
        throw new Error("a getter that throws");
      },
    };
    expect(() => flattenStrings(input)).not.toThrow();
  });
});
