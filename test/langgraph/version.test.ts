// The @langchain/langgraph releases graphdock hosts (D41): the range the adapter enforces is the
// peer range package.json declares, and the refusal names it. Real installs of releases in and out
// of the range: test/langgraph-versions.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isSupportedLangGraph, LANGGRAPH_RANGE, LOWEST_LANGGRAPH, unsupportedLangGraph } from "../../src/langgraph/version.js";

describe("the LangGraph.js releases hosted", () => {
  it("are package.json's peer range", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { peerDependencies: Record<string, string> };
    expect(pkg.peerDependencies["@langchain/langgraph"]).toBe(LANGGRAPH_RANGE);
    expect(LANGGRAPH_RANGE).toBe("^1.1.5");
  });

  it("start at 1.1.5 and end before 2.0.0", () => {
    for (const v of ["1.1.5", "1.1.6", "1.2.0", "1.4.12", "1.7.3", "1.99.0", "1.8.0-rc.1"]) expect(isSupportedLangGraph(v), v).toBe(true);
    for (const v of ["0.2.74", "0.4.9", "1.0.0", "1.0.15", "1.1.0", "1.1.4", "2.0.0", "2.0.0-alpha.1", "latest", ""]) expect(isSupportedLangGraph(v), v).toBe(false);
  });

  it("are named by the refusal, with the release found and where", () => {
    const message = unsupportedLangGraph("0.4.9", "/app/graphs");
    expect(message).toContain("@langchain/langgraph 0.4.9 (resolved from /app/graphs) is not supported");
    expect(message).toContain(`${LOWEST_LANGGRAPH} and later 1.x releases (^1.1.5)`);
    expect(message).toContain("npm install @langchain/langgraph@^1.1.5");
  });
});
