/**
 * The `@langchain/langgraph` releases graphdock hosts (D41): 1.1.5 (what the agent server 2.0.0
 * ships with) up to the latest 1.x. Within that range hosted graphs behave the same; a release
 * outside it is refused when graphs are loaded, with a message naming the range, rather than
 * hosted in a way that silently produces nothing. package.json's peer range says the same
 * (test/langgraph/version.test.ts keeps them equal). This module imports nothing: the core and
 * the Node loader use it without loading LangGraph.
 */

/** The lowest release hosted. */
export const LOWEST_LANGGRAPH = "1.1.5";

/** The peer range of `@langchain/langgraph`, as package.json states it. */
export const LANGGRAPH_RANGE = `^${LOWEST_LANGGRAPH}`;

/** `major.minor.patch` of a version (a pre-release counts as its release); undefined when it is not one. */
function parse(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether `version` is in {@link LANGGRAPH_RANGE}. */
export function isSupportedLangGraph(version: string): boolean {
  const v = parse(version);
  const low = parse(LOWEST_LANGGRAPH)!;
  if (!v || v[0] !== low[0]) return false;
  return v[1] > low[1] || (v[1] === low[1] && v[2] >= low[2]);
}

/** The message refusing `version` (found at `where`, e.g. the directory it was resolved from). */
export function unsupportedLangGraph(version: string, where?: string): string {
  return (
    `graphdock: @langchain/langgraph ${version}${where ? ` (resolved from ${where})` : ""} is not supported: graphdock hosts LangGraph.js ` +
    `${LOWEST_LANGGRAPH} and later 1.x releases (${LANGGRAPH_RANGE}). Install one: npm install @langchain/langgraph@${LANGGRAPH_RANGE}`
  );
}
