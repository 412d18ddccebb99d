/**
 * The `@langchain/langgraph` this module runs with, checked against the releases graphdock hosts
 * (version.ts, D41). Its version is read from its package.json, in Node; a browser bundle has no
 * package to read (its bundler chose the release), and is not checked.
 */
import { invalidInput } from "../errors.js";
import { isSupportedLangGraph, unsupportedLangGraph } from "./version.js";

let reading: Promise<string | undefined> | undefined;
let read: string | undefined;

async function readVersion(): Promise<string | undefined> {
  // A name bundlers do not follow. Import attributes: `with` (Node 20.10+), else `assert`.
  const specifier = ["@langchain", "langgraph", "package.json"].join("/");
  for (const options of [{ with: { type: "json" } }, { assert: { type: "json" } }]) {
    try {
      const mod = (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier, options as ImportCallOptions)) as { default?: { version?: unknown } };
      if (typeof mod.default?.version === "string") return (read = mod.default.version);
    } catch {
      // not readable this way
    }
  }
  return undefined;
}

/** The installed version (read once); undefined where it cannot be read. */
export function installedLangGraph(): Promise<string | undefined> {
  return (reading ??= readVersion());
}

/** Refuses an installed release outside the range (`invalid_input` naming the range). */
export async function checkInstalledLangGraph(): Promise<void> {
  const version = await installedLangGraph();
  if (version !== undefined && !isSupportedLangGraph(version)) throw invalidInput(unsupportedLangGraph(version));
}

/** The same, for synchronous callers: decides once the version was read (else lets the graph through). */
export function checkInstalledLangGraphNow(): void {
  if (read !== undefined && !isSupportedLangGraph(read)) throw invalidInput(unsupportedLangGraph(read));
}
