/** Starts `graphdock serve` child processes (the bin's source through tsx) on one store (PostgreSQL schema, JSON-file directory). */
import { spawn, type ChildProcess } from "node:child_process";

const root = new URL("../..", import.meta.url).pathname;

export interface Server {
  url: string;
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
  kill(): Promise<number | null>;
}

export function startServer(
  store: string,
  extra: string[] = [],
  config = "test/postgres/fixtures/graph.json",
  env: Record<string, string> = {},
  /** More `node` options (`--import` of a preload). */
  nodeArgs: string[] = [],
): Promise<Server> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", ...nodeArgs, "src/node/cli.ts", "serve", "--config", config, "--port", "0", "--store", store, ...extra],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, GRAPHDOCK_API_KEY: "test-key", ...env } },
  );
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /on (http:\/\/\S+)/.exec(out);
      if (m) {
        resolve({
          url: m[1]!,
          child,
          output: () => out,
          exited,
          stop: () => (child.exitCode === null && child.signalCode === null ? (child.kill("SIGTERM"), exited) : exited),
          kill: () => (child.exitCode === null && child.signalCode === null ? (child.kill("SIGKILL"), exited) : exited),
        });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (out += d));
    void exited.then((code) => reject(new Error(`graphdock serve exited with ${code}: ${out}`)));
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(fn: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}
