/**
 * Flat strings for what the runtime keeps (heap per chat turn). A string built by
 * concatenation (`+`, a template literal, `repeat`, a chunk appended to a streamed answer) is a
 * rope in V8: a tree of nodes of 32 bytes each over the pieces, kept as long as the string is. A
 * run's input is kept for the life of the run record (`kwargs.input`) and its messages for the
 * life of the thread, so its strings are flattened when the run is admitted: V8 flattens a rope
 * in place the first time a character is read from it (the rope's root then points to one flat
 * copy and its inner nodes are freed), which `charCodeAt` does. A 200-character message built
 * by a template literal around `"x".repeat(190)` drops from ~400 to ~260 bytes. Strings parsed
 * from JSON (every input over HTTP) are flat already: for them this is a read of one character.
 * Other engines flatten as they see fit; the call is harmless there.
 */
import { MAX_DEPTH } from "./json.js";

/** The characters read, kept so that no compiler drops the reads as unused. */
let sink = 0;

/**
 * Flattens, in place, every string inside `value` (plain objects and arrays, to `MAX_DEPTH`
 * levels). Only an optimization: a value it cannot walk (a getter that throws) is left for the
 * checks that follow to judge.
 */
export function flattenStrings(value: unknown): void {
  try {
    flatten(value, 0);
  } catch {
    // Judged (and refused, if invalid) by the run's input checks.
  }
}

function flatten(value: unknown, depth: number): void {
  if (typeof value === "string") {
    if (value.length > 0) sink ^= value.charCodeAt(0);
    return;
  }
  if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) flatten(value[i], depth + 1);
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return;
  for (const key in value) flatten((value as Record<string, unknown>)[key], depth + 1);
}
