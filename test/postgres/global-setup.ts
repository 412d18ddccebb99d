/**
 * Vitest global setup of the `postgres` project: starts a throwaway PostgreSQL server (Debian's
 * `postgresql` package, D22) for the tests under test/postgres, and removes it afterwards.
 *
 * - The cluster lives in a fresh temporary directory owned by the `postgres` user (initdb
 *   refuses root), listens on 127.0.0.1 on a free port, trusts local connections, and is
 *   stopped and deleted at teardown.
 * - A missing server is a failure, never a skip: CI installs `postgresql` (.ci/run).
 * - `GRAPHDOCK_TEST_PG=postgres://...` uses an existing server instead (nothing is started).
 *
 * Tests read the URL with `inject("pgUrl")`; each creates its own database or schema.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

/** The directory of PostgreSQL's server binaries (initdb, pg_ctl), newest version first. */
export function findPgBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) {
    throw new Error(
      "graphdock tests: no PostgreSQL server found under /usr/lib/postgresql/*/bin: install Debian's `postgresql` package " +
        "(apt-get install -y postgresql; .ci/run does) or set GRAPHDOCK_TEST_PG=postgres://user@host:port/db",
    );
  }
  return join(root, versions[0]!, "bin");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs a command as the `postgres` user when we are root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): void {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
  const r = spawnSync(file, argv, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`graphdock tests: ${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout || r.error}`);
}

export interface PgServer {
  url: string;
  /** The cluster's data directory (its `postmaster.pid` names the server's process). */
  dataDir: string;
  /** Stops the server (`pg_ctl stop`, fast shutdown: sessions are terminated), keeping its data. */
  halt(): void;
  /** Starts the halted server again on the same port. */
  resume(): void;
  stop(): void;
}

/**
 * Starts a throwaway cluster; `stop()` stops it and deletes its directory. `maxConnections`:
 * PostgreSQL's `max_connections` (default 200).
 */
export async function startPgServer(settings: { maxConnections?: number } = {}): Promise<PgServer> {
  const bin = findPgBin();
  const dir = mkdtempSync(join(tmpdir(), "graphdock-pg-"));
  const data = join(dir, "data");
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  asPostgres(join(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"]);
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    `-c max_connections=${settings.maxConnections ?? 200}`,
    "-c fsync=off",
    "-c full_page_writes=off",
    "-c shared_buffers=64MB",
  ].join(" ");
  const start = () => asPostgres(join(bin, "pg_ctl"), ["-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "-t", "60", "start"]);
  start();
  let stopped = false;
  let halted = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: data,
    halt() {
      asPostgres(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]);
      halted = true;
    },
    resume() {
      start();
      halted = false;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        if (!halted) asPostgres(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export default async function setup(project: TestProject): Promise<() => void> {
  const existing = process.env.GRAPHDOCK_TEST_PG;
  if (existing) {
    project.provide("pgUrl", existing);
    return () => {};
  }
  const server = await startPgServer();
  project.provide("pgUrl", server.url);
  const stop = () => server.stop();
  process.once("exit", stop);
  return stop;
}
