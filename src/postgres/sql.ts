/**
 * Query translation (D21): the meaning of src/persistence/query.ts and `matchesAuthFilter`
 * (src/auth/types.ts), as SQL WHERE / ORDER BY clauses with positional parameters.
 */
import type { AuthFilter } from "../auth/types.js";
import { isPlainObject } from "../json.js";

/** Collects positional parameters: `p(value)` returns `$n`. */
export class Params {
  readonly values: unknown[] = [];
  p(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** A JSON parameter cast to jsonb. */
  jsonb(value: unknown): string {
    return `${this.p(JSON.stringify(value))}::jsonb`;
  }
}

const isPrimitive = (v: unknown): v is string | number | boolean | null =>
  v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";

/**
 * The authorization filter on the jsonb column `col`, exactly as
 * `matchesAuthFilter`: equality of primitives (grouped into one `@>`, which the GIN index
 * answers), `$eq` (strict: an object or array never equals), `$contains` (an array field holding
 * every wanted primitive), an object condition compared by JSON equality, an array condition
 * never matching (strict equality of arrays).
 */
export function authWhere(col: string, filter: AuthFilter | undefined, ps: Params): string[] {
  if (!filter) return [];
  const parts: string[] = [];
  const eq: Record<string, unknown> = {};
  let anyEq = false;
  for (const [key, cond] of Object.entries(filter)) {
    if (isPlainObject(cond) && "$eq" in cond) {
      const v = cond.$eq;
      if (isPrimitive(v)) {
        eq[key] = v;
        anyEq = true;
      } else if (v === undefined) parts.push(`NOT (${col} ? ${ps.p(key)})`);
      else parts.push("false");
    } else if (isPlainObject(cond) && "$contains" in cond) {
      const wanted = Array.isArray(cond.$contains) ? cond.$contains : [cond.$contains];
      if (!wanted.every(isPrimitive)) {
        parts.push("false");
        continue;
      }
      const k = ps.p(key);
      parts.push(`(jsonb_typeof(${col} -> ${k}) = 'array' AND ${col} -> ${k} @> ${ps.jsonb(wanted)})`);
    } else if (isPlainObject(cond)) {
      parts.push(`${col} -> ${ps.p(key)} = ${ps.jsonb(cond)}`);
    } else if (isPrimitive(cond)) {
      eq[key] = cond;
      anyEq = true;
    } else if (cond === undefined) {
      parts.push(`NOT (${col} ? ${ps.p(key)})`);
    } else {
      parts.push("false");
    }
  }
  if (anyEq) parts.unshift(`${col} @> ${ps.jsonb(eq)}`);
  return parts;
}

export const where = (parts: string[]) => (parts.length ? ` WHERE ${parts.join(" AND ")}` : "");

export function page(ps: Params, q: { limit?: number; offset?: number }): string {
  let out = "";
  if (q.limit !== undefined) out += ` LIMIT ${ps.p(Math.max(0, Math.floor(q.limit)))}`;
  if (q.offset) out += ` OFFSET ${ps.p(Math.max(0, Math.floor(q.offset)))}`;
  return out;
}

export const dir = (order: "asc" | "desc" | undefined, dflt: "asc" | "desc") => ((order ?? dflt) === "asc" ? "ASC" : "DESC");
