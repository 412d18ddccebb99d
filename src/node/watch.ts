/**
 * `graphdock serve --watch` (as `langgraph dev` does): this process supervises the server, run as
 * a child process with the same arguments but `--watch`, and restarts it when a source file under
 * the config's directory changes (scripts, JSON, `.env`; not node_modules, .git or the JSON-file
 * store's directory). The child stops as on Ctrl-C (SIGTERM: its runs are drained, D61).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { watch } from "node:fs";
import { relative, resolve, sep } from "node:path";
import type { DiagnosticsLogger } from "../diagnostics.js";

/** Files whose change restarts the server. */
const SOURCE = /\.(c|m)?[jt]sx?$|\.json$|(^|[\\/])\.env(\.[^\\/]*)?$/;
const SKIPPED = /(^|[\\/])(node_modules|\.git)([\\/]|$)/;

export interface WatchOptions {
  /** The directory watched (the config file's). */
  dir: string;
  /** The command's arguments without `--watch`. */
  args: string[];
  /** Directories whose changes are not the user's sources (the JSON-file store's). */
  ignore?: string[];
  log: DiagnosticsLogger;
}

/** Runs the server as a child process, restarting it when a source file changes; never resolves. */
export function superviseWatch({ dir, args, ignore = [], log }: WatchOptions): void {
  const ignored = ignore.map((d) => relative(dir, resolve(d)));
  let child: ChildProcess | undefined;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...args], { stdio: "inherit" });
    child.once("exit", (code, signal) => {
      child = undefined;
      if (stopping) process.exit(0);
      // A server that failed (a syntax error in a graph): wait for the next change.
      if (!restartTimer) log.error({ code, signal }, "graphdock: the server stopped; waiting for a file to change");
    });
  };
  const restart = (file: string) => {
    clearTimeout(restartTimer);
    // Editors write a file in several steps: one restart per burst of changes.
    restartTimer = setTimeout(() => {
      log.info({ file }, `graphdock: ${file} changed; restarting`);
      const next = () => {
        restartTimer = undefined;
        start();
      };
      if (!child) return next();
      child.once("exit", next);
      child.kill("SIGTERM");
    }, 150);
  };
  watch(dir, { recursive: true }, (_event, filename) => {
    if (!filename) return;
    const file = filename.toString();
    if (SKIPPED.test(file) || !SOURCE.test(file)) return;
    if (ignored.some((d) => d !== "" && !d.startsWith("..") && (file === d || file.startsWith(d + sep)))) return;
    restart(file);
  });
  const stop = () => {
    stopping = true;
    clearTimeout(restartTimer);
    if (child) child.kill("SIGTERM");
    else process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  start();
}
