/**
 * Deterministic pseudo-random JSON for the codec tests (mulberry32): objects, arrays and scalars
 * drawn from the alphabets a test gives (keys and strings that look like the codec's markers),
 * and edits of an object (keys changed, removed or added, nested objects edited the same way).
 */
export interface JsonShape {
  keys: readonly string[];
  scalars: readonly unknown[];
  /** Chance (after the scalar chance of 0.35) that a value is an array rather than an object. */
  arrayBelow: number;
  /** Arrays have fewer than this many items, objects fewer than `maxKeys` keys. */
  maxItems: number;
  maxKeys: number;
}

/** mulberry32: a seeded generator of numbers in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function jsonGenerator(seed: number, shape: JsonShape) {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  // defineProperty, so a `__proto__` key is an own key like any other.
  const set = (o: Record<string, unknown>, k: string, v: unknown) =>
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 3 || r < 0.35) return pick(shape.scalars);
    if (r < shape.arrayBelow) return Array.from({ length: Math.floor(rand() * shape.maxItems) }, () => value(depth + 1));
    return object(depth + 1);
  };
  const object = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * shape.maxKeys); i > 0; i--) set(out, pick(shape.keys), value(depth));
    return out;
  };
  const edit = (base: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(base)) {
      const r = rand();
      if (r < 0.15) continue;
      set(out, k, r < 0.35 ? value(2) : typeof v === "object" && v !== null && !Array.isArray(v) ? edit(v as Record<string, unknown>) : v);
    }
    if (rand() < 0.3) set(out, pick(shape.keys), value(2));
    return out;
  };
  return { rand, object, edit };
}
