/**
 * A commit in ONE round trip (./commit.ts): its statements joined into one simple query, which
 * PostgreSQL runs as one implicit transaction (all or nothing; `pg_notify` delivered on commit).
 * The simple query protocol takes no bind parameters, so values are inlined as literals with the
 * driver's own escaping (`escapeLiteral`). A statement whose expectation a JS check would judge
 * on the statement-by-statement path judges it itself: `commit_expect` (./schema.ts) raises
 * SQLSTATE `AD409` when it does not hold, which rolls the whole transaction back; the commit then
 * runs again statement by statement, which writes nothing either and reports the `conflict` (or
 * whatever error) with its usual message.
 */
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
  else if (Array.isArray(v)) text = `{${v.map(arrayElement).join(",")}}`;
  else throw new NotInlinable();
  if (text.includes("\u0000")) throw new NotInlinable();
  return pg.escapeLiteral(text);
}

/**
 * `text` with its `$n` parameters replaced by `values[n - 1]` as literals; quoted strings and
 * identifiers (a schema's name) are left as they are.
 */
export function inline(text: string, values: readonly unknown[]): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < text.length && !(text[j] === ch && text[j + 1] !== ch)) j += text[j] === ch ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === "$" && /[0-9]/.test(text[i + 1] ?? "")) {
      let j = i + 1;
      while (/[0-9]/.test(text[j] ?? "")) j++;
      const n = Number(text.slice(i + 1, j));
      if (n < 1 || n > values.length) throw new Error(`agentdock/postgres: parameter $${n} of a batched statement has no value`);
      out += literal(values[n - 1]);
      i = j;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The statements of a commit sent in one round trip. */
export class PgBatch {
  private readonly statements: string[] = [];
  /** False once a value could not be inlined: the commit must take the statement-by-statement path. */
  ok = true;

  constructor(
    /** The schema, quoted. */
    private readonly s: string,
  ) {}

  /** A statement, its parameters inlined. */
  add(text: string, values: readonly unknown[] = []): void {
    try {
      this.statements.push(inline(text, values));
    } catch (err) {
      if (!(err instanceof NotInlinable)) throw err;
      this.ok = false;
    }
  }

  /** A data-modifying statement (no RETURNING of its own) that must touch exactly one row, or the transaction fails. */
  addOneRow(text: string, values: readonly unknown[] = []): void {
    this.add(`WITH x AS (${text} RETURNING 1) SELECT ${this.s}.commit_expect(count(*) = 1) FROM x`, values);
  }

  /** A statement that fails the transaction unless the boolean column `ok` of its one row is true: `WITH ... SELECT ok FROM ok` -> `... SELECT commit_expect(ok) FROM ok`. */
  addChecked(withText: string, values: readonly unknown[]): void {
    this.add(`${withText}\nSELECT ${this.s}.commit_expect(ok) FROM ok`, values);
  }

  /** How many statements so far. */
  get size(): number {
    return this.statements.length;
  }

  /** The query text: every statement, in order (one implicit transaction). */
  text(): string {
    return this.statements.join(";\n");
  }
}
