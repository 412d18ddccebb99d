/**
 * Frozen values shared by the records of many runs (heap per chat turn). A store keeps
 * a record for every run, and most runs have no metadata, context or `configurable` of their
 * own and stream `values`: their records share one frozen empty object (or array) instead of
 * each holding its own. The JSON is the same; being frozen, no record can change another's.
 * Core-safe.
 */
import { isPlainObject } from "../json.js";

const NONE: Readonly<Record<string, never>> = Object.freeze({});
const NO_CONFIG = Object.freeze({ configurable: NONE });
const VALUES_MODE = Object.freeze(["values"]);

/** An object literal with no keys (not a class instance, not an array). */
function isEmptyObject(v: unknown): boolean {
  if (!isPlainObject(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const _ in v) return false;
  return true;
}

/** `metadata`, or the shared frozen empty object when it has no keys. */
export function sharedIfEmpty<T extends Record<string, unknown>>(metadata: T): T {
  return isEmptyObject(metadata) ? (NONE as T) : metadata;
}

/**
 * A run's kwargs with their empty `context`, `{ configurable: {} }` config and `["values"]`
 * stream mode replaced by shared frozen equals, in place (`kwargs` is the run's own copy).
 */
export function shareKwargs(kwargs: Record<string, unknown>): Record<string, unknown> {
  if (isEmptyObject(kwargs.context)) kwargs.context = NONE;
  const config = kwargs.config;
  if (isPlainObject(config) && Object.getPrototypeOf(config) === Object.prototype) {
    let keys = 0;
    for (const _ in config) keys++;
    if (keys === 1 && isEmptyObject(config.configurable)) kwargs.config = NO_CONFIG;
  }
  const modes = kwargs.stream_mode;
  if (Array.isArray(modes) && modes.length === 1 && modes[0] === "values") kwargs.stream_mode = VALUES_MODE;
  return kwargs;
}
