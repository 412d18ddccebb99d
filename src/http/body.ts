/**
 * Request bodies as SDK options: the routes map a snake_case body onto one runtime method that
 * takes camelCase options (D2).
 */

type Body = Record<string, unknown>;

/** `snake_name` -> `snakeName`. */
export const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Copies the named snake_case fields of a body into camelCase options. A camelCase spelling is
 * accepted too, because the SDK's `runs.createBatch` sends its payloads unrenamed. A `null` is
 * kept when `keepNull` is true or names the field (`null` means something there, such as "clear
 * the end time"), else dropped as absent.
 */
export function pick(src: Body, names: readonly string[], keepNull: boolean | readonly string[] = true): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const key = camel(name);
    const value = src[name] !== undefined ? src[name] : src[key];
    if (value === undefined) continue;
    if (value === null && !(keepNull === true || (Array.isArray(keepNull) && keepNull.includes(name)))) continue;
    out[key] = value;
  }
  return out;
}
