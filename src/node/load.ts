/**
 * Loads `"<file path>:<export>"` specifiers from graph.json, for graphs and the auth handler.
 * JavaScript files load through a plain dynamic import. TypeScript files load through tsx's
 * register API when tsx is installed (it is an optional peer dependency, never required to use
 * the library or to start the command-line server on compiled JavaScript): tsx's loader is
 * registered for the process, as `node --import tsx` would, and the file is imported as any module
 * is. (tsx's `tsImport` would load each file with its own copies of the packages it imports, so a
 * graph's `@langchain/langgraph` would not be the one graphdock reads its schema registry from.)
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { GraphdockError } from "../errors.js";

/** Splits `./auth.ts:auth` into path and export name (default export when no name is given). */
export function parseSpecifier(spec: string): { path: string; exportName: string } {
  const at = spec.lastIndexOf(":");
  // A colon at index 1 is a Windows drive letter, not an export separator.
  if (at <= 1) return { path: spec, exportName: "default" };
  return { path: spec.slice(0, at), exportName: spec.slice(at + 1) || "default" };
}

const TS_FILE = /\.(c|m)?tsx?$/;

type TsRegister = () => unknown;

const isModuleNotFound = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
};

/**
 * tsx's `register`, found next to graphdock or, failing that, from the directory of the file being
 * loaded (a project that has tsx while graphdock is installed elsewhere). Undefined when neither has it.
 */
async function findTsRegister(file: string): Promise<TsRegister | undefined> {
  try {
    return ((await import("tsx/esm/api")) as { register: TsRegister }).register;
  } catch (err) {
    if (!isModuleNotFound(err)) throw err;
  }
  try {
    const resolved = createRequire(file).resolve("tsx/esm/api");
    // createRequire resolves the "require" condition; the ESM build sits next to it.
    const esm = resolved.replace(/\.cjs$/, ".mjs");
    return ((await import(pathToFileURL(esm).href)) as { register: TsRegister }).register;
  } catch {
    return undefined;
  }
}

/** Whether tsx's loader is registered (once per process, by whichever copy of graphdock did it first). */
const TSX_REGISTERED = Symbol.for("graphdock.tsx-registered");

/**
 * Where an error thrown while importing `file` happened, as `path:line:column`: the first stack
 * frame (or syntax-error header) in `file` itself, else the first frame in user code.
 */
export function errorLocation(err: unknown, file: string): string | undefined {
  const stack = typeof (err as Error | null)?.stack === "string" ? (err as Error).stack! : "";
  const url = pathToFileURL(file).href;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const own = new RegExp(`(?:${escape(url)}|${escape(file)}):(\\d+)(?::(\\d+))?`).exec(stack);
  if (own) return `${file}:${own[1]}${own[2] ? `:${own[2]}` : ""}`;
  for (const m of stack.matchAll(/(?<![\w:])(file:\/\/\/[^\s()]+|\/[^\s():]+):(\d+)(?::(\d+))?/g)) {
    const where = m[1]!.startsWith("file:") ? fileURLToPath(m[1]!) : m[1]!;
    if (where.includes("/node_modules/") || where.includes("/graphdock/dist/")) continue;
    return `${where}:${m[2]}${m[3] ? `:${m[3]}` : ""}`;
  }
  // An ES module with a syntax error carries no location in its stack: ask Node's syntax check.
  if ((err as Error | null)?.name === "SyntaxError" && /\.(m|c)?js$/.test(file)) {
    const check = spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: 10_000 });
    const header = new RegExp(`^(?:${escape(url)}|${escape(file)}):(\\d+)`, "m").exec(check.stderr ?? "");
    if (header) return `${file}:${header[1]}`;
  }
  return undefined;
}

/** Imports the named export of the specifier, resolving relative paths against `baseDir`. */
export async function loadExport<T = unknown>(spec: string, baseDir: string): Promise<T> {
  const { path, exportName } = parseSpecifier(spec);
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  let mod: Record<string, unknown>;
  if (TS_FILE.test(file) && !Reflect.get(globalThis, TSX_REGISTERED)) {
    const register = await findTsRegister(file);
    if (!register) {
      throw new GraphdockError(
        "invalid_input",
        `graphdock: cannot load "${spec}": ${file} is TypeScript and tsx is not installed. ` +
          `Install tsx to load TypeScript graph files (npm install --save-dev tsx), or point graph.json at compiled .js files.`,
      );
    }
    register();
    Reflect.set(globalThis, TSX_REGISTERED, true);
  }
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (isModuleNotFound(e) && typeof e.message === "string" && e.message.includes(`'${file}'`)) {
      throw new GraphdockError("invalid_input", `graphdock: cannot load "${spec}": ${file} does not exist`, { cause: err });
    }
    const where = errorLocation(err, file);
    const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new GraphdockError(
      "invalid_input",
      `graphdock: cannot load "${spec}": importing ${file} failed${where ? ` at ${where}` : ""}: ${what}`,
      { cause: err },
    );
  }
  if (!(exportName in mod) || mod[exportName] === undefined) {
    throw new GraphdockError(
      "invalid_input",
      `graphdock: "${file}" has no export "${exportName}" (from "${spec}"); exports: ${Object.keys(mod).join(", ") || "none"}`,
    );
  }
  return mod[exportName] as T;
}
