/**
 * Whether the PostgreSQL store can reach its database (D70-D72).
 *
 * - A failure to reach the database (refused or dropped connection, a server shutting down or
 *   starting up, too many connections) becomes a `GraphdockError` with code `unavailable`, which
 *   the HTTP layer answers with 503 and `Retry-After` (D3's closed set, D70). Any other failure
 *   (a bad statement, a constraint) passes through unchanged.
 * - An outage is logged twice: one line when the first such failure is seen, one when a new
 *   connection is made again (by the pool or for the LISTEN connection), with how long it
 *   lasted (D71). The failures in between are silent: every caller gets the `unavailable` error
 *   instead. (A statement that still succeeds on an old connection as the server goes down does
 *   not end the outage.)
 * - {@link guardPool} applies this to every statement of the store: the pool's `query` and
 *   `connect`, and the `query` of the connections it hands out, whose connection failing while
 *   they are checked out is an outage too (not an unhandled `error` event).
 */
import type { Pool, PoolClient } from "pg";
import { SILENT, type DiagnosticsLogger } from "../diagnostics.js";
import { GraphdockError, unavailable } from "../errors.js";

/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
]);

/**
 * SQLSTATEs of a server that cannot serve the statement now: class 08 (connection exception),
 * 57P01-57P03 (shut down by an administrator, crashed, cannot connect now: starting up or
 * shutting down), 53300 (too many connections).
 */
const SERVER_CODES = /^(08...|57P0[123]|53300)$/;

/** What the `pg` driver throws for a connection that ended or never came. */
const DRIVER_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect)/;

/** True when `err` says the database could not be reached (rather than that a statement failed). */
function isConnectionError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === "string" && (SOCKET_CODES.has(code) || SERVER_CODES.test(code))) return true;
  if (typeof message === "string" && DRIVER_MESSAGES.test(message)) return true;
  // Node reports a refused connection to every address of a host as an AggregateError.
  return Array.isArray(errors) && errors.some(isConnectionError);
}

/** The message of every `unavailable` error of the store: what happened and what to do. */
export const UNAVAILABLE_MESSAGE = "graphdock: the store is unavailable: its PostgreSQL database cannot be reached; try again in a few seconds.";

/** The store's view of its database: reachable, or in an outage since some time. */
export class PgHealth {
  /** `Date.now()` when the current outage was first seen; undefined while the database is reachable. */
  private downSince: number | undefined;

  /** Where the two lines of an outage go: the runtime's diagnostics (the store's `useDiagnostics`), silent until one is given. */
  log: DiagnosticsLogger = SILENT;

  /**
   * `err` as the store reports it: a failure to reach the database becomes `unavailable` (and
   * starts an outage if none is under way); anything else is returned as it is.
   */
  fail(err: unknown): unknown {
    if (GraphdockError.is(err) || !isConnectionError(err)) return err;
    this.down(err);
    return unavailable(UNAVAILABLE_MESSAGE, err);
  }

  /** The database could not be reached: logs the outage's first line unless one is under way. */
  down(cause: unknown): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    const reason = cause instanceof Error ? cause.message || (cause as { code?: string }).code || cause.name : String(cause);
    this.log.error({ reason: reason.split("\n")[0] }, 'graphdock/postgres: the database cannot be reached; calls that need it fail with "unavailable" until it is back');
  }

  /** The database answered: ends the outage under way, if any, with its last line. */
  up(): void {
    if (this.downSince === undefined) return;
    const seconds = Math.round((Date.now() - this.downSince) / 100) / 10;
    this.downSince = undefined;
    this.log.info({ outage_seconds: seconds }, "graphdock/postgres: the database can be reached again");
  }
}

type Query = (...args: unknown[]) => unknown;

/**
 * `pool` with every statement's failure to reach the database reported as `unavailable` through
 * `health`. Other members are the pool's own. Its new connections end an outage (through a
 * listener of the pool's `connect` event, which `unwatch` removes).
 */
export function guardPool(pool: Pool, health: PgHealth): { pool: Pool; unwatch: () => void } {
  const failed = (err: unknown): never => {
    throw health.fail(err);
  };
  /** A query's result, guarded when it is a promise (a submittable such as a cursor is returned as it is). */
  const guard = (result: unknown) => (result instanceof Promise ? result.then(undefined, failed) : result);
  const clients = new WeakMap<PoolClient, PoolClient>();
  const guardClient = (client: PoolClient): PoolClient => {
    let guarded = clients.get(client);
    if (!guarded) {
      // Between its statements (a transaction, a lock held), a checked-out connection that drops
      // emits `error`: unhandled, that would end the process.
      client.on("error", (err) => void health.fail(err));
      const query: Query = (...args) => guard((client.query as Query)(...args));
      guarded = new Proxy(client, {
        get(target, prop) {
          if (prop === "query") return query;
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      clients.set(client, guarded);
    }
    return guarded;
  };
  const query: Query = (...args) => guard((pool.query as Query)(...args));
  const connect = () => pool.connect().then(guardClient, failed);
  const connected = () => health.up();
  pool.on("connect", connected);
  const guarded = new Proxy(pool, {
    get(target, prop) {
      if (prop === "query") return query;
      if (prop === "connect") return connect;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: guarded, unwatch: () => void pool.off("connect", connected) };
}
