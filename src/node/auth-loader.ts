/**
 * Loads the auth handler named by graph.json's `auth.path` (D17), for the command-line server.
 * Node-only: reads the config file and imports TypeScript through `loadExport`.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fromLangGraphAuth, isLangGraphAuth } from "../auth/auth.js";
import type { AuthProvider } from "../auth/types.js";
import { invalidInput } from "../errors.js";
import { loadExport } from "./load.js";

/** The part of graph.json this loader reads. */
export interface AuthConfigFile {
  auth?: { path?: string; [key: string]: unknown } | null;
  [key: string]: unknown;
}

const isProvider = (v: unknown): v is AuthProvider =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as AuthProvider).authenticate === "function" &&
  typeof (v as AuthProvider).authorize === "function";

/**
 * Returns the auth provider graph.json names at `auth.path` (`"./auth.ts:auth"`, relative to the
 * config's directory), or `undefined` when the config has no `auth` (every caller is the owner).
 * `source` is the path of graph.json (paths then resolve against its directory unless `baseDir`
 * is given), or its parsed content with `baseDir` (default: the current directory). The export
 * must be an `Auth` instance (graphdock's, or the LangGraph SDK's, adapted by `fromLangGraphAuth`)
 * or any object implementing `AuthProvider`.
 */
export async function loadAuth(source: string | AuthConfigFile, baseDir?: string): Promise<AuthProvider | undefined> {
  let config: unknown = source;
  let dir = baseDir ?? process.cwd();
  if (typeof source === "string") {
    const file = resolve(source);
    dir = baseDir ?? dirname(file);
    try {
      config = JSON.parse(await readFile(file, "utf8"));
    } catch (err) {
      throw invalidInput(`graphdock: cannot read auth config from "${file}": ${(err as Error).message}`);
    }
  }
  const auth = (config as AuthConfigFile | null)?.auth;
  if (auth === undefined || auth === null) return undefined;
  if (typeof auth !== "object" || typeof auth.path !== "string" || auth.path === "") {
    throw invalidInput(`graphdock: graph.json "auth" must be an object with "path": "<file>:<export>", got ${JSON.stringify(auth)}`, [
      { path: "auth.path", message: "expected a non-empty string such as \"./auth.ts:auth\"" },
    ]);
  }
  const loaded = await loadExport(auth.path, dir);
  // An auth module written for the LangGraph server exports the SDK's Auth: adapt it.
  const provider = isLangGraphAuth(loaded) && !isProvider(loaded) ? fromLangGraphAuth(loaded) : loaded;
  if (!isProvider(provider)) {
    throw invalidInput(
      `graphdock: "${auth.path}" must export an Auth instance (graphdock's or @langchain/langgraph-sdk/auth's) or an object with authenticate(request) and authorize(user, event) methods`,
    );
  }
  return provider;
}
