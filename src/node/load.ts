/**
 * Loads `"<file path>:<export>"` specifiers from graph.json (D17), for graphs and the auth
 * handler. TypeScript files load through tsx; JavaScript files through a plain dynamic import.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AgentdockError } from "../errors.js";

/** Splits `./auth.ts:auth` into path and export name (default export when no name is given). */
export function parseSpecifier(spec: string): { path: string; exportName: string } {
  const at = spec.lastIndexOf(":");
  // A colon at index 1 is a Windows drive letter, not an export separator.
  if (at <= 1) return { path: spec, exportName: "default" };
  return { path: spec.slice(0, at), exportName: spec.slice(at + 1) || "default" };
}

/** Imports the named export of the specifier, resolving relative paths against `baseDir`. */
export async function loadExport<T = unknown>(spec: string, baseDir: string): Promise<T> {
  const { path, exportName } = parseSpecifier(spec);
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  let mod: Record<string, unknown>;
  try {
    if (/\.(c|m)?tsx?$/.test(file)) {
      const { tsImport } = await import("tsx/esm/api");
      mod = (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
    } else {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    }
  } catch (err) {
    throw new AgentdockError("invalid_input", `agentdock: cannot load "${spec}" (${file}): ${(err as Error).message}`, { cause: err });
  }
  if (!(exportName in mod) || mod[exportName] === undefined) {
    throw new AgentdockError(
      "invalid_input",
      `agentdock: "${file}" has no export "${exportName}" (from "${spec}"); exports: ${Object.keys(mod).join(", ") || "none"}`,
    );
  }
  return mod[exportName] as T;
}
