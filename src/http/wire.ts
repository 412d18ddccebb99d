/**
 * The wire forms of the runtime's inputs (D81): request bodies are the runtime's own option
 * schemas (src/runtime/schemas.ts) under their snake_case names, so what a route accepts, what
 * the runtime accepts and what the OpenAPI document says are one definition; query parameters
 * are strings converted here. A validated body goes to the runtime method with its names turned
 * back into camelCase (`camelKeys`), typed against the method's options.
 */
// Only `z.<name>` member accesses (see src/runtime/schemas.ts): bundlers then keep only what is used.
import * as z from "zod/mini";
import { invalid } from "../runtime/schemas.js";

/** `checkpointId` -> `checkpoint_id`. */
type Snake<S extends string> = S extends `${infer C}${infer R}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<R>}` : S;
/** `checkpoint_id` -> `checkpointId`. */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
/** An object type with its keys in snake_case. */
export type SnakeKeys<T> = { [K in keyof T & string as Snake<K>]: T[K] };
/** An object type with its keys in camelCase. */
export type CamelKeys<T> = { [K in keyof T & string as Camel<K>]: T[K] };

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camels = new Map<string, string>();
/** `checkpoint_id` -> `checkpointId` (remembered: the wire's field names are few). */
export function camel(name: string): string {
  let out = camels.get(name);
  if (out === undefined) {
    out = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (camels.size < 1000) camels.set(name, out);
  }
  return out;
}

type Shape = Record<string, z.ZodMiniType>;

/**
 * The wire body of a runtime options schema: the same fields (minus `omit`: the signal and
 * callbacks only code can pass) under their snake_case names.
 */
export function wireObject<S extends Shape, O extends keyof S & string = never>(
  schema: z.ZodMiniObject<S>,
  omit: readonly O[] = [],
): z.ZodMiniObject<SnakeKeys<Omit<S, O>>> {
  const shape: Shape = {};
  for (const [name, field] of Object.entries(schema.shape)) if (!(omit as readonly string[]).includes(name)) shape[snake(name)] = field;
  // The renaming is what SnakeKeys states; TypeScript cannot follow it through Object.entries.
  return z.object(shape) as z.ZodMiniObject<SnakeKeys<Omit<S, O>>>;
}

/** A validated wire body as the runtime's options: each key in camelCase, absent ones left out. */
export function camelKeys<T extends object>(body: T): CamelKeys<T> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (value !== undefined) out[camel(name)] = value;
  return out as CamelKeys<T>;
}

/**
 * Checks `value` against `schema` and returns it as it came (a parse that succeeds proves it is
 * the schema's input type); refused: `invalid_input` naming `what` with one problem per field,
 * as the runtime words them (422).
 */
export function conform<S extends z.ZodMiniType>(schema: S, value: unknown, what: string): z.input<S> {
  return schema.safeParse(value).success ? (value as z.input<S>) : invalid(schema, value, what);
}

// ---------------------------------------------------------------------------------------------
// Query parameters: strings (a repeated one: several), converted; each keeps the JSON Schema of
// what it carries for the OpenAPI document.

/** What a query parameter holds, for the OpenAPI document. */
export const queryDocs = new WeakMap<z.ZodMiniType, Record<string, unknown>>();

type Raw = string | string[];
const rawValue = z.union([z.string(), z.array(z.string())], { error: (issue) => (issue.input === undefined ? "required" : undefined) });
/** The first value of a parameter given more than once (`?limit=1&limit=2` is `1`). */
const first = (v: Raw) => (typeof v === "string" ? v : (v[0] ?? ""));

/** A parameter: `convert` answers its value, or calls `fail` with what is wrong with it. */
export function queryParam<T>(doc: Record<string, unknown>, convert: (value: Raw, fail: (message: string) => never) => T) {
  const schema = z.pipe(
    rawValue,
    z.transform((value: Raw, ctx) =>
      convert(value, (message) => {
        ctx.issues.push({ code: "custom", message, input: value });
        return z.NEVER;
      }),
    ),
  );
  queryDocs.set(schema, doc);
  return schema;
}

/** An integer (`""` is absent). */
export const queryInt = z.optional(
  queryParam({ type: "integer" }, (v, fail) => {
    const s = first(v);
    if (s === "") return undefined;
    const n = Number(s);
    return Number.isInteger(n) ? n : fail(`must be an integer, got "${s}"`);
  }),
);

/** A boolean: `true`, `1`, `yes` or `false`, `0`, `no`, `""` (any case). */
export function readBool(value: Raw, fail: (message: string) => never): boolean {
  const s = first(value);
  if (/^(true|1|yes)$/i.test(s)) return true;
  if (/^(false|0|no|)$/i.test(s)) return false;
  return fail(`must be true or false, got "${s}"`);
}
/** A boolean (see `readBool`). */
export const queryBool = z.optional(queryParam({ type: "boolean" }, readBool));

/** A string. */
export const queryString = z.optional(queryParam({ type: "string" }, first));
/** A string that must be given. */
export const requiredQueryString = queryParam({ type: "string" }, first);

/** One of an enum's values. */
export function queryEnum<E extends Record<string, string>>(schema: z.ZodMiniEnum<E>) {
  return z.optional(
    queryParam({ type: "string", enum: schema.options }, (v, fail) => {
      const s = first(v);
      return (schema.options as readonly string[]).includes(s) ? (s as E[keyof E]) : fail(`must be one of ${schema.options.join(", ")}, got "${s}"`);
    }),
  );
}

/**
 * Values `item` takes, repeated (`?stream_mode=values&stream_mode=updates`), or also
 * comma-separated when `split` (`select=a,b`, as the SDK sends a selection); `allowed` words
 * them for the message refusing another.
 */
export function queryList<S extends z.ZodMiniType<string>>(item: S, allowed: string, split = false) {
  return z.optional(
    queryParam({ type: "array", items: item }, (v, fail) => {
      let values = typeof v === "string" ? [v] : v;
      if (split) values = values.flatMap((s) => s.split(",")).filter(Boolean);
      const out: z.output<S>[] = [];
      for (const s of values) {
        const r = item.safeParse(s);
        out.push(r.success ? r.data : fail(`must be ${allowed}, got "${s}"`));
      }
      return out;
    }),
  );
}
