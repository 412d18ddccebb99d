/**
 * The pool `postgresStore({ pool })` takes. It is declared here, by the methods the store calls,
 * rather than as `pg.Pool`, so that the types of graphdock/postgres do not need `@types/pg` (a
 * `pg.Pool` is one: test/runtime/public-types.test-d.ts checks it).
 */
import type pg from "pg";
import { invalidInput } from "../errors.js";

/** A `pg.Pool`, or a pool with its interface (`pg.native.Pool`, pg-compatible drivers). */
export interface PostgresPool {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** The caller's pool as the store uses it: `invalid_input` unless it has a pool's methods. */
export function callerPool(pool: PostgresPool): pg.Pool {
  if (!isPgPool(pool)) throw invalidInput("postgresStore: `pool` must be a pg.Pool (an object with connect() and query())");
  return pool;
}

function isPgPool(pool: PostgresPool): pool is PostgresPool & pg.Pool {
  return typeof pool === "object" && pool !== null && typeof pool.connect === "function" && typeof pool.query === "function";
}
