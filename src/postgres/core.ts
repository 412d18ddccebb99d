/**
 * What the parts of the PostgreSQL store share (./store.ts): the schema, the pool, prepared
 * statements, the revisions of the thread records it returned (`sameAs`), and the lease clock.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import type { Pool, PoolClient } from "pg";

export type Row = Record<string, unknown>;

/** A bigint column as read by the driver (a string) or a number, as a number. */
export const num = (v: unknown) => (typeof v === "number" ? v : Number(v));

/** Statement text -> prepared statement name (the fixed statements of commits and point reads). */
const names = new Map<string, string>();

/**
 * The name of the prepared statement of a fixed statement's text (parsed and planned once per
 * connection, not at every call): named by the text's hash, so that stores sharing a pool (other
 * schemas, or the same one) never clash.
 */
export function statementName(text: string): string {
  let name = names.get(text);
  if (!name) names.set(text, (name = `graphdock_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`));
  return name;
}

export class PgCore {
  /** Thread records this store returned -> their revision (for `sameAs`). */
  readonly revisions = new WeakMap<object, number>();
  /** The caller's clock minus `Date.now()`, learned from the last `now` passed (database lease clock). */
  private callerOffset = 0;
  constructor(
    /** The schema, quoted. */
    readonly s: string,
    /** Judge leases at the database's clock (see `leaseClock`). */
    readonly dbClock: boolean,
    private readonly getPool: () => Pool,
  ) {}

  get pool(): Pool {
    return this.getPool();
  }

  /** Runs a fixed statement as a named prepared statement (parsed once per connection). */
  q<R extends Row = Row>(c: Pick<PoolClient, "query">, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return c.query<R>({ name: statementName(text), text, values });
  }

  /** The caller's clock now, as last learned (database lease clock). */
  callerNow(learned?: number): number {
    if (learned !== undefined) this.callerOffset = learned - Date.now();
    return Date.now() + this.callerOffset;
  }
}
