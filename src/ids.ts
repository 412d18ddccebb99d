/**
 * Ids and time (D19). Everything that mints an id or reads the clock goes through an `Ids` and a
 * `Clock` that `createRuntime` accepts, so tests can make both deterministic. No Node built-ins:
 * randomness comes from `globalThis.crypto.getRandomValues` at call time (Node 20, browsers,
 * workers), and SHA-1 for name-based ids is implemented here.
 */

/** Milliseconds since the epoch. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Id source used by the runtime and the engine. */
export interface Ids {
  /** A fresh UUID for a record: thread, run, assistant, message, dataset, experiment... */
  uuid(): string;
  /**
   * A checkpoint id. Must sort (as a string) after every id it returned before, so history
   * order and id order agree (uuid6 with the step as clock sequence).
   */
  checkpointId(step: number): string;
}

// Random bytes are drawn from the platform in 4 KiB batches: one getRandomValues call per id
// was a tenth of an echo run's time.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolAt = POOL_SIZE;

/** `n` (at most 16) fresh random bytes, copied out of the pool. */
function randomBytes(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    pool = new Uint8Array(POOL_SIZE);
    globalThis.crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const out = pool.slice(poolAt, poolAt + n);
  poolAt += n;
  return out;
}


/** Char codes of the hex digits. */
const HEX_CODES = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** The char codes of a UUID being formatted (filled, then read at once). */
const uuidCodes: number[] = new Array<number>(36).fill(45);

/**
 * The canonical form of 16 bytes. Built from char codes in one call: a string grown by `+=`
 * is a chain of rope nodes, which every stored id would keep (about 0.5 KB per id).
 */
function formatUuid(b: Uint8Array): string {
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at++; // the dash stays in place
    const x = b[i]!;
    uuidCodes[at++] = HEX_CODES[x >> 4]!;
    uuidCodes[at++] = HEX_CODES[x & 15]!;
  }
  return String.fromCharCode.apply(null, uuidCodes);
}

/** The value of a hex digit's char code, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** The 16 bytes of a UUID written as 32 hex digits, dashes anywhere ignored (as `-` removal did). */
function parseUuid(uuid: string): Uint8Array {
  const out = new Uint8Array(16);
  let n = 0;
  for (let i = 0; i < uuid.length; i++) {
    const c = uuid.charCodeAt(i);
    if (c === 45) continue;
    const v = hexValue(c);
    if (v < 0 || n >= 32) throw new TypeError(`not a UUID: ${uuid}`);
    out[n >> 1] = (n & 1) === 0 ? v << 4 : out[n >> 1]! | v;
    n++;
  }
  if (n !== 32) throw new TypeError(`not a UUID: ${uuid}`);
  return out;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Random (version 4) UUID. */
export function uuid4(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return formatUuid(b);
}

const utf8 = new TextEncoder();

/** The message schedule of `sha1`, reused (it runs to completion without yielding). */
const schedule = new Uint32Array(80);

/** SHA-1 of bytes (name-based UUIDs and deterministic task ids only; not for security). */
export function sha1(data: Uint8Array): Uint8Array {
  const ml = data.length;
  const withPad = ((ml + 9 + 63) >> 6) << 6;
  const buf = new Uint8Array(withPad);
  buf.set(data);
  buf[ml] = 0x80;
  const view = new DataView(buf.buffer);
  view.setUint32(withPad - 4, (ml * 8) >>> 0);
  view.setUint32(withPad - 8, Math.floor((ml * 8) / 2 ** 32));
  let h0 = 0x67452301, h1 = 0xefcdab89, h2 = 0x98badcfe, h3 = 0x10325476, h4 = 0xc3d2e1f0;
  const w = schedule;
  for (let off = 0; off < withPad; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4;
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (b & c) | (~b & d) : i < 40 ? b ^ c ^ d : i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
      const k = i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]!) >>> 0;
      e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
    }
    h0 = (h0 + a) >>> 0; h1 = (h1 + b) >>> 0; h2 = (h2 + c) >>> 0; h3 = (h3 + d) >>> 0; h4 = (h4 + e) >>> 0;
  }
  const out = new Uint8Array(20);
  const ov = new DataView(out.buffer);
  ov.setUint32(0, h0);
  ov.setUint32(4, h1);
  ov.setUint32(8, h2);
  ov.setUint32(12, h3);
  ov.setUint32(16, h4);
  return out;
}

/** Name-based (version 5) UUID, as RFC 4122: SHA-1 over namespace bytes + UTF-8 name. */
const parsedNamespaces = new Map<string, Uint8Array>();

export function uuid5(name: string, namespace: string): string {
  let ns = parsedNamespaces.get(namespace);
  if (!ns) {
    ns = parseUuid(namespace);
    // A few fixed namespaces repeat (assistants, task ids of one checkpoint); most do not.
    if (parsedNamespaces.size >= 16) parsedNamespaces.clear();
    parsedNamespaces.set(namespace, ns);
  }
  const nameBytes = utf8.encode(name);
  const data = new Uint8Array(16 + nameBytes.length);
  data.set(ns);
  data.set(nameBytes, 16);
  const hash = sha1(data).slice(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return formatUuid(hash);
}

/** 32 lower-case hex chars derived from a string (interrupt ids). */
export function hash32(text: string): string {
  const h = sha1(utf8.encode(text));
  const codes = new Array<number>(32);
  for (let i = 0; i < 16; i++) {
    codes[2 * i] = HEX_CODES[h[i]! >> 4]!;
    codes[2 * i + 1] = HEX_CODES[h[i]! & 15]!;
  }
  return String.fromCharCode.apply(null, codes);
}

/** Namespace of default assistant ids (D5). */
export const ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The default assistant id of a graph (D5): uuid5(graphId, ASSISTANT_NAMESPACE). */
export const defaultAssistantId = (graphId: string) => uuid5(graphId, ASSISTANT_NAMESPACE);

/**
 * The default id source: uuid7 for records (time-ordered, random tail) and uuid6 for
 * checkpoints with the step folded into the clock sequence (`-ffff-` for step -1, `-8000-` for
 * step 0, ...). Both are strictly increasing even when the clock stands still or goes back.
 */
export function createIds(clock: Clock = systemClock): Ids {
  let lastMs7 = -1;
  let seq7 = 0;
  // uuid6 timestamp: 100-ns intervals since 1582-10-15, kept strictly increasing.
  let last6 = 0n;
  const GREGORIAN_OFFSET = 122192928000000000n;
  return {
    uuid() {
      let ms = clock();
      if (ms <= lastMs7) {
        ms = lastMs7;
        seq7++;
        if (seq7 > 0xfff) {
          ms = ++lastMs7;
          seq7 = 0;
        }
      } else {
        seq7 = 0;
      }
      lastMs7 = ms;
      const b = randomBytes(16);
      const msBig = BigInt(ms);
      for (let i = 0; i < 6; i++) b[i] = Number((msBig >> BigInt(8 * (5 - i))) & 0xffn);
      b[6] = 0x70 | ((seq7 >> 8) & 0x0f);
      b[7] = seq7 & 0xff;
      b[8] = (b[8]! & 0x3f) | 0x80;
      return formatUuid(b);
    },
    checkpointId(step: number) {
      let t = BigInt(Math.floor(clock())) * 10000n + GREGORIAN_OFFSET;
      if (t <= last6) t = last6 + 1n;
      last6 = t;
      const b = new Uint8Array(16);
      // time_high (48 bits of the 60-bit timestamp, most significant first), then version 6 + 12 low bits.
      const high = t >> 12n;
      for (let i = 0; i < 6; i++) b[i] = Number((high >> BigInt(8 * (5 - i))) & 0xffn);
      b[6] = 0x60 | Number((t >> 8n) & 0x0fn);
      b[7] = Number(t & 0xffn);
      // clock sequence: the step (14 bits, wrapping), variant bits 10.
      const clockSeq = step & 0x3fff;
      b[8] = 0x80 | ((clockSeq >> 8) & 0x3f);
      b[9] = clockSeq & 0xff;
      b.set(randomBytes(6), 10);
      return formatUuid(b);
    },
  };
}

/**
 * Deterministic ids for tests and reproducible demos: one counter numbers everything,
 * `00000000-0000-4000-8000-000000000001`, `...0002`, ... for records and
 * `00000000-0000-4000-9000-...` for checkpoints, so checkpoint ids increase as they are made.
 */
export function sequentialIds(start = 1): Ids {
  let n = start;
  const fmt = (kind: string, i: number) => {
    const tail = i.toString(16).padStart(12, "0");
    return `00000000-0000-4000-${kind}-${tail}`;
  };
  return {
    uuid: () => fmt("8000", n++),
    checkpointId: () => fmt("9000", n++),
  };
}
