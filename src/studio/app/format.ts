/** Small formatting helpers shared by the pages. */

/**
 * An id's last 8 characters: time-ordered ids (UUID v6/v7, as threads, runs and checkpoints get)
 * share their first ones.
 */
export const shortId = (id: string | null | undefined): string => (!id ? "—" : id.length <= 8 ? id : `…${id.slice(-8)}`);

/** A date as local date and time, to the second. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** JSON, indented; `undefined` as an empty string. */
export function pretty(value: unknown): string {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A number with at most `digits` decimals, or a dash. */
export function num(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return Number(value.toFixed(digits)).toString();
}

/** A signed number (`+0.12`, `−0.3`), or a dash. */
export function signed(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  const text = num(Math.abs(value), digits);
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : "0";
}

/** Seconds, as `1.24 s` or `850 ms`. */
export function seconds(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return value < 1 ? `${Math.round(value * 1000)} ms` : `${num(value, 2)} s`;
}

/** Parses JSON text, with a message naming `what` when it is not JSON. */
export function parseJson(text: string, what: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (!text.trim()) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: `${what} is not valid JSON: ${(err as Error).message}` };
  }
}

/** True for a plain JSON object. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
