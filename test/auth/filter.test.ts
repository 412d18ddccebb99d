import { describe, expect, it } from "vitest";
import { matchesAuthFilter, type AuthFilter } from "../../src/auth/index.js";

// The LangGraph servers' table of auth filter matching, row by row.
describe("matchesAuthFilter (the LangGraph servers' table)", () => {
  const md = { owner: "alice", tags: ["a", "b"], org: "o1" };
  it.each<[string, Record<string, unknown> | undefined, AuthFilter | undefined, boolean]>([
    ["undefined filters match", md, undefined, true],
    ["a filter on empty metadata does not match", {}, { owner: "alice" }, false],
    ["an empty filter matches", md, {}, true],
    ["exact string match", md, { owner: "alice" }, true],
    ["different string", md, { owner: "bob" }, false],
    ["$eq same", md, { owner: { $eq: "alice" } }, true],
    ["$eq different", md, { owner: { $eq: "bob" } }, false],
    ["$contains present", md, { tags: { $contains: "a" } }, true],
    ["$contains absent", md, { tags: { $contains: "z" } }, false],
    ["$contains on a non-array field", md, { owner: { $contains: "ali" } }, false],
    ["$contains array all present", md, { tags: { $contains: ["a", "b"] } }, true],
    ["$contains array some missing", md, { tags: { $contains: ["a", "z"] } }, false],
    ["multiple conditions all true", md, { owner: "alice", org: { $eq: "o1" } }, true],
    ["multiple conditions one failing", md, { owner: "alice", org: "o2" }, false],
    ["filter key missing from metadata", md, { team: "x" }, false],
  ])("%s", (_, metadata, filter, expected) => {
    expect(matchesAuthFilter(metadata, filter)).toBe(expected);
  });
});

describe("matchesAuthFilter: where graphdock is stricter than the JS server", () => {
  it("compares strictly: a number does not match its string", () => {
    expect(matchesAuthFilter({ n: 1 }, { n: "1" })).toBe(false);
  });
  it("honours $eq with an empty string", () => {
    expect(matchesAuthFilter({ owner: "alice" }, { owner: { $eq: "" } })).toBe(false);
    expect(matchesAuthFilter({ owner: "" }, { owner: { $eq: "" } })).toBe(true);
  });
  it("compares an operator-less object condition by value instead of ignoring it", () => {
    expect(matchesAuthFilter({ scope: { org: "o1" } }, { scope: { org: "o1" } })).toBe(true);
    expect(matchesAuthFilter({ scope: { org: "o2" } }, { scope: { org: "o1" } })).toBe(false);
    expect(matchesAuthFilter({}, { scope: { org: "o1" } })).toBe(false);
  });
  it("compares object conditions regardless of key order", () => {
    expect(matchesAuthFilter({ scope: { org: "o1", team: "t" } }, { scope: { team: "t", org: "o1" } })).toBe(true);
  });
  it("treats null metadata as empty", () => {
    expect(matchesAuthFilter(null, { owner: "a" })).toBe(false);
    expect(matchesAuthFilter(null, {})).toBe(true);
  });
});
