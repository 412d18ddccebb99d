/**
 * A commit in ONE round trip (./commit.ts): its statements joined into one simple query, which
 * PostgreSQL runs as one implicit transaction (all or nothing; `pg_notify` delivered on commit).
 * The simple query protocol takes no bind parameters, so each statement is a prepared statement
 * of the connection run by `EXECUTE name(...)`, its values inlined as literals with the driver's
 * own escaping (`escapeLiteral`). A statement whose expectation a JS check would judge
 * on the statement-by-statement path judges it itself: `commit_expect` (./schema.ts) raises
 * SQLSTATE `AD409` when it does not hold, which rolls the whole transaction back; the commit then
 * runs again statement by statement, which writes nothing either and reports the `conflict` (or
 * whatever error) with its usual message.
 */
import { createHash } from "node:crypto";
import pg from "pg";

/** A value that cannot be inlined (a NUL, which a query's text cannot hold): the commit takes the statement-by-statement path. */
class NotInlinable extends Error {}

/** An element of a PostgreSQL array literal. */
const arrayElement = (v: unknown): string => {
  if (v === null || v === undefined) return "NULL";
  return `"${String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
};

/** `v` as an SQL literal of unknown type (cast by its context, as a bind parameter would be). */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  let text: string;
  if (typeof v === "string") text = v;
  else if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new NotInlinable();
    text = String(v);
  } else if (typeof v === "boolean" || typeof v === "bigint") text = String(v);
  // A bytea (a checkpoint key, ./cp-keys.ts) in the hex input format.
  else if (Buffer.isBuffer(v)) text = `\\x${v.toString("hex")}`;
  else if (Array.isArray(v)) text = `{${v.map(arrayElement).join(",")}}`;
  else throw new NotInlinable();
  if (text.includes("\u0000")) throw new NotInlinable();
  return pg.escapeLiteral(text);
}

/** A statement of a batch: its text (with `$n` parameters) and their values as literals. */
interface Item {
  text: string;
  args: string[];
}

/** The statements of a commit sent in one round trip. */
export class PgBatch {
  private readonly items: Item[] = [];
  /** False once a value could not be inlined: the commit must take the statement-by-statement path. */
  ok = true;

  constructor(
    /** The schema, quoted. */
    private readonly s: string,
  ) {}

  /** A statement and its parameters' values. */
  add(text: string, values: readonly unknown[] = []): void {
    try {
      this.items.push({ text, args: values.map(literal) });
    } catch (err) {
      if (!(err instanceof NotInlinable)) throw err;
      this.ok = false;
    }
  }

  /**
   * A data-modifying statement (no RETURNING of its own) that must touch its row, or the
   * transaction fails. At most one row: its key (a primary key) is given. (EXISTS, not a count:
   * an aggregate is costly to set up at every execution.)
   */
  addOneRow(text: string, values: readonly unknown[] = []): void {
    this.add(`WITH x AS (${text} RETURNING 1) SELECT ${this.s}.commit_expect(EXISTS (SELECT 1 FROM x))`, values);
  }

  /** A statement that fails the transaction unless the boolean column `ok` of its one row is true: `WITH ... SELECT ok FROM ok` -> `... SELECT commit_expect(ok) FROM ok`. */
  addChecked(withText: string, values: readonly unknown[]): void {
    this.add(`${withText}\nSELECT ${this.s}.commit_expect(ok) FROM ok`, values);
  }

  /**
   * The query text: every statement in order (one implicit transaction), each run as a prepared
   * statement of the connection (`EXECUTE name(literal, ...)`: parsed once per connection, as the
   * statement-by-statement path's are), prepared first (`PREPARE name AS text`, in the same
   * query) unless `prepared` (the names the connection has) says it is. `added`: the names this
   * query prepares.
   */
  text(prepared: ReadonlySet<string>, added: Set<string>): string {
    return this.items
      .map(({ text, args }) => {
        const name = `graphdock_b_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
        const execute = args.length ? `EXECUTE ${name}(${args.join(", ")})` : `EXECUTE ${name}`;
        if (prepared.has(name) || added.has(name)) return execute;
        added.add(name);
        return `PREPARE ${name} AS ${text};\n${execute}`;
      })
      .join(";\n");
  }
}
