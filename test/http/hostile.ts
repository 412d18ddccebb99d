/**
 * A seeded generator of hostile HTTP requests for every route of the agent-server API (the
 * hardening suite), and a snapshot of every resource read back through the API.
 *
 * Every request that could change something is made unable to: its body carries a "poison"
 * (a field of the wrong type, malformed or too-deep JSON) or its path names ids that do not
 * exist. So after any number of them, the snapshot must be unchanged, and no answer may be 5xx.
 */
import { mulberry32 } from "../persistence/generate.js";

/** Seeded helpers over mulberry32: the same sequence for the same seed. */
export function prng(seed: number) {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chance = (p: number) => rand() < p;
  return { rand, int, pick, chance };
}
export type Rng = ReturnType<typeof prng>;

/** The ids of the seeded resources a generated request may name. */
export interface Known {
  assistants: string[];
  threads: string[];
  /** [thread_id, run_id] of finished runs. */
  runs: Array<[string, string]>;
  checkpoints: Array<[string, string]>;
  datasets: string[];
  experiments: string[];
}

/** One generated request: `path` is already encoded (it may hold malformed escapes on purpose). */
export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the generator did, for a failure message. */
  label: string;
}

type Kind =
  /** Reads only (a GET, or a POST search/count): anything goes, existing ids included. */
  | "read"
  /** Changes something when the body is valid: the body is always poisoned. */
  | "body"
  /** Changes something whatever the body: only ids that do not exist. */
  | "ids";

interface RouteSpec {
  method: string;
  path: string;
  kind: Kind;
  /** Poisoned JSON bodies (text) for "body" routes: each one invalid on its own. */
  poison?: (r: Rng) => string;
  /** The body is an array (runs/batch). */
  array?: boolean;
  /**
   * An otherwise valid body with `value` (JSON nested past the limit) in a field the route
   * stores: only the depth limit stands between it and a change.
   */
  deep?: (r: Rng, value: string) => string;
}

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Raw ids, encoded per use: NUL, unicode, prototype names, traversal, huge, look-alikes. */
export const HOSTILE_IDS = [
  "\u0000",
  "a\u0000b",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "..",
  ".",
  "../../etc/passwd",
  "ü",
  "💥",
  "\u202eevil",
  "\ufeff",
  "\u2028",
  "x".repeat(5000),
  "-1",
  "0",
  "1e999",
  "NaN",
  "null",
  "undefined",
  "true",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-4fff-bfff-ffffffffffff",
  "6ba7b821-9dad-11d1-80b4-00c04fd430c8",
  " ",
  "\t",
  "%",
  "a/b",
  "a?b",
  "a#b",
  "${jndi:ldap://127.0.0.1/x}",
];
/** Escapes put into a path as they are (malformed or odd percent-encoding). */
const RAW_SEGMENTS = ["%", "%ZZ", "%E0%A4%A", "%C0%AF", "%ED%A0%80", "%FF%FE", "%00", "%2e%2e", "%2F", "%u0041", "%25", "%F0%9F%92%A5", ";", "~", "@", "a%20b"];

/** Scalars of JSON text (some are literal texts no JS value stringifies to). */
const SCALARS = [
  "0",
  "-0",
  "-1",
  "1.5",
  "-1e308",
  "1e308",
  "1e999",
  "-1e999",
  "123456789012345678901234567890",
  "9007199254740993",
  "4.9e-324",
  "true",
  "false",
  "null",
  '""',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"💥"',
  '"__proto__"',
  '"constructor"',
  '"\\u202e"',
  '"x"',
  '"1"',
];
const KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "", "\\u0000", "a", "$eq", "$contains", "💥", "owner", "graph_id", "x".repeat(300)];

const quote = (s: string) => JSON.stringify(s);

/** Random JSON text with `__proto__` keys, huge and negative numbers, NUL and lone surrogates. */
export function jsonValue(r: Rng, depth = 0): string {
  const x = r.rand();
  if (depth > 3 || x < 0.45) return r.pick(SCALARS);
  if (x < 0.55) return quote("z".repeat(r.pick([0, 1, 1000, 100_000])));
  if (x < 0.75) return `[${Array.from({ length: r.int(4) }, () => jsonValue(r, depth + 1)).join(",")}]`;
  return jsonObject(r, depth + 1);
}
function jsonObject(r: Rng, depth = 0): string {
  const entries = Array.from({ length: r.int(4) }, () => `"${r.pick(KEYS)}":${jsonValue(r, depth)}`);
  return `{${entries.join(",")}}`;
}

/** JSON nested `levels` deep (objects, arrays or both), closed or not. */
export function deep(r: Rng, levels: number, closed = true): string {
  const style = r.int(3);
  const open = style === 0 ? '{"a":' : style === 1 ? "[" : r.chance(0.5) ? '{"__proto__":[' : "[{}";
  const close = style === 0 ? "}" : style === 1 ? "]" : "]}";
  if (style === 2 && open === "[{}") return "[".repeat(levels) + (closed ? "]".repeat(levels) : "");
  return open.repeat(levels) + "1" + (closed ? close.repeat(levels) : "");
}

/** Bodies malformed on their own (any JSON route refuses them). */
export function malformed(r: Rng): string | Buffer {
  const x = r.int(22);
  switch (x) {
    case 0:
      return "{";
    case 1:
      return "}";
    case 2:
      return '{"a":}';
    case 3:
      return '{"a":1,}';
    case 4:
      return "NaN";
    case 5:
      return "{'a': 1}";
    case 6:
      return "\ufeff{}x";
    case 7:
      return Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]); // UTF-16 with BOM
    case 8:
      return Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x80, 0xff]); // invalid UTF-8, unclosed
    case 9:
      return Buffer.from(Array.from({ length: 64 + r.int(512) }, () => r.int(256)));
    case 10:
      return "1".repeat(100_000) + "x";
    case 11:
      return deep(r, 129 + r.int(20_000), r.chance(0.5));
    case 12:
      return deep(r, 5_000);
    case 13:
      return "[".repeat(50_000);
    case 14:
      return '{"a":"' + "\\".repeat(1001) + '"}';
    case 15:
      return '"unterminated';
    case 16:
      return "\u0000";
    case 17:
      return '{"a":1}{"b":2}';
    case 18:
      return "undefined";
    case 19:
      return '{"__proto__":{"polluted":true},"a":' + deep(r, 200) + "}";
    case 20:
      return '{"a":"\\x41"}';
    default:
      return " ".repeat(r.pick([1, 10_000])) + "{" + " ".repeat(100);
  }
}

/** A value of the wrong type for a field that wants `want`. */
function wrong(r: Rng, want: "string" | "object" | "number" | "array" | "boolean" | "uuid"): string {
  const byType: Record<typeof want, string[]> = {
    string: ["1", "-1e999", "true", "{}", "[]", '{"__proto__":1}', "[\"a\"]"],
    object: ["1", '"x"', "true", "[]", "[1,2]", '"__proto__"', "-1e308"],
    number: ['"1"', "true", "{}", "[]", '"NaN"', "1e999", "-1e999", "1.5e300"],
    array: ["1", '"x"', "{}", '{"0":"a"}', "true"],
    boolean: ['"true"', "1", "0", "{}", "[]", '"yes"'],
    uuid: ['"__proto__"', '"\\u0000"', '"not-a-uuid"', "1", "{}", '"../x"', '"💥"'],
  };
  return r.pick(byType[want]);
}

/** `{ "<field>": <bad>, ...random extras }`: the extras never make it valid. */
function poisoned(r: Rng, fields: Array<[string, Parameters<typeof wrong>[1] | string[]]>): string {
  const [name, want] = r.pick(fields);
  const bad = Array.isArray(want) ? r.pick(want) : wrong(r, want);
  const extras = Array.from({ length: r.int(3) }, () => `"${r.pick(KEYS)}":${jsonValue(r)}`);
  if (r.chance(0.1)) extras.push(`"deep":${deep(r, 129 + r.int(5_000))}`);
  const all = [`"${name}":${bad}`, ...extras];
  // The poison first or last: a duplicate key later in the text wins in JSON.parse, so extras never reuse it.
  if (r.chance(0.5)) all.reverse();
  return `{${all.filter((e) => !e.startsWith(`"${name}":`) || e === `"${name}":${bad}`).join(",")}}`;
}

const METADATA: [string, "object"] = ["metadata", "object"];
const RUN_POISON: Array<[string, Parameters<typeof wrong>[1] | string[]]> = [
  ["assistant_id", ["1", "true", "{}", "[]", "null", '""']],
  ["stream_mode", ['"bogus"', '["values","nope"]', "1", "{}"]],
  ["config", ["1", '"x"', "[]", '{"recursion_limit":-1}', '{"tags":"x"}', '{"configurable":1}']],
  ["metadata", ["1", '"x"', "[]", "true"]],
  ["multitask_strategy", ['"bogus"', "1"]],
  ["after_seconds", ["-1", '"x"', "-1e999"]],
  ["on_disconnect", ['"explode"', "1"]],
  ["interrupt_before", ["1", '"x"', "{}"]],
  ["checkpoint", ["1", '"x"', "[]"]],
  ["durability", ['"forever"', "1"]],
  ["webhook", ["1", "{}"]],
];
/** A run body poisoned, with an assistant id that exists unless the poison is the id itself. */
const runPoison = (assistants: () => string[]) => (r: Rng) => {
  const body = poisoned(r, RUN_POISON);
  if (body.includes('"assistant_id":')) return body;
  const id = r.chance(0.8) ? r.pick(assistants()) : r.pick(["echo", "nope"]);
  return body.replace(/^\{/, `{"assistant_id":${quote(id)}${body === "{}" ? "" : ","}`);
};

function routes(known: () => Known): RouteSpec[] {
  const asst = () => known().assistants;
  const run = runPoison(asst);
  const runDeep = (r: Rng, v: string) =>
    `{"assistant_id":${quote(r.pick(asst()))},${r.pick([`"input":${v}`, `"input":{"text":${v}}`, `"metadata":{"m":${v}}`, `"config":{"configurable":${v}}`, `"context":${v}`, `"command":{"resume":${v}}`])}}`;
  return [
    { method: "GET", path: "/ok", kind: "read" },
    { method: "GET", path: "/info", kind: "read" },
    { method: "POST", path: "/assistants", kind: "body", deep: (r, v) => `{"graph_id":"echo",${r.pick([`"metadata":${v}`, `"config":{"configurable":${v}}`, `"context":${v}`])}}`, poison: (r) => poisoned(r, [["graph_id", ["1", "{}", "[]", "null", '""', "true"]], ["assistant_id", "uuid"], METADATA, ["config", "object"], ["if_exists", ['"explode"', "1"]], ["name", "string"]]) },
    { method: "POST", path: "/assistants/search", kind: "read" },
    { method: "POST", path: "/assistants/count", kind: "read" },
    { method: "GET", path: "/assistants/:assistant", kind: "read" },
    { method: "PATCH", path: "/assistants/:assistant", kind: "body", deep: (r, v) => `{${r.pick([`"metadata":${v}`, `"config":{"configurable":${v}}`, `"context":${v}`])}}`, poison: (r) => poisoned(r, [METADATA, ["config", "object"], ["name", "string"], ["graph_id", ["1", "{}", '""']], ["description", ["1", "{}"]]]) },
    { method: "DELETE", path: "/assistants/:assistant", kind: "ids" },
    { method: "POST", path: "/assistants/:assistant/versions", kind: "read" },
    { method: "POST", path: "/assistants/:assistant/latest", kind: "body", poison: (r) => poisoned(r, [["version", ['"1"', "-1", "0", "1.5", "1e999", "null", "{}", "[]", "true"]]]) },
    { method: "GET", path: "/assistants/:assistant/graph", kind: "read" },
    { method: "GET", path: "/assistants/:assistant/schemas", kind: "read" },
    { method: "GET", path: "/assistants/:assistant/subgraphs", kind: "read" },
    { method: "GET", path: "/assistants/:assistant/subgraphs/:any", kind: "read" },
    { method: "POST", path: "/threads", kind: "body", deep: (r, v) => r.pick([`{"metadata":${v}}`, `{"metadata":{"a":${v}}}`, `{"supersteps":[{"updates":[{"values":{"text":${v}},"as_node":"echo"}]}]}`]), poison: (r) => poisoned(r, [METADATA, ["thread_id", "uuid"], ["if_exists", ['"explode"', "1"]], ["ttl", ['"x"', "{}", "[]", '{"ttl":"x"}']], ["supersteps", ["1", '"x"', "{}", '[{"updates":1}]', "[1]"]]]) },
    { method: "POST", path: "/threads/search", kind: "read" },
    { method: "POST", path: "/threads/count", kind: "read" },
    { method: "GET", path: "/threads/:thread", kind: "read" },
    { method: "PATCH", path: "/threads/:thread", kind: "body", deep: (_r, v) => `{"metadata":{"a":${v}}}`, poison: (r) => poisoned(r, [METADATA, ["ttl", ['"x"', "{}", "[]", "true"]]]) },
    { method: "DELETE", path: "/threads/:thread", kind: "ids" },
    { method: "POST", path: "/threads/:thread/copy", kind: "ids" },
    { method: "GET", path: "/threads/:thread/state", kind: "read" },
    { method: "POST", path: "/threads/:thread/state", kind: "body", deep: (r, v) => r.pick([`{"values":{"text":${v}}}`, `{"values":${v},"as_node":"echo"}`]), poison: (r) => poisoned(r, [["as_node", ["1", "{}", "[]", "true"]], ["checkpoint", ["1", '"x"', "[]", '{"checkpoint_id":1}']], ["checkpoint_id", ["1", "{}", "[]"]]]) },
    { method: "POST", path: "/threads/:thread/state/checkpoint", kind: "read" },
    { method: "GET", path: "/threads/:thread/state/:checkpoint", kind: "read" },
    { method: "GET", path: "/threads/:thread/history", kind: "read" },
    { method: "POST", path: "/threads/:thread/history", kind: "read" },
    { method: "POST", path: "/threads/:thread/runs", kind: "body", poison: run, deep: runDeep },
    { method: "POST", path: "/threads/:thread/runs/stream", kind: "body", poison: run, deep: runDeep },
    { method: "POST", path: "/threads/:thread/runs/wait", kind: "body", poison: run, deep: runDeep },
    { method: "GET", path: "/threads/:thread/runs", kind: "read" },
    { method: "GET", path: "/threads/:thread/runs/:run", kind: "read" },
    { method: "DELETE", path: "/threads/:thread/runs/:run", kind: "ids" },
    // D26: cancelling a finished run succeeds and changes nothing, so existing runs are fair game.
    { method: "POST", path: "/threads/:thread/runs/:run/cancel", kind: "read" },
    { method: "GET", path: "/threads/:thread/runs/:run/join", kind: "read" },
    { method: "GET", path: "/threads/:thread/runs/:run/stream", kind: "read" },
    { method: "POST", path: "/runs", kind: "body", poison: run, deep: runDeep },
    { method: "POST", path: "/runs/stream", kind: "body", poison: run, deep: runDeep },
    { method: "POST", path: "/runs/wait", kind: "body", poison: run, deep: runDeep },
    {
      method: "POST",
      path: "/runs/batch",
      kind: "body",
      array: true,
      deep: (r, v) => `[${runDeep(r, v)}]`,
      poison: (r) => {
        const x = r.int(4);
        if (x === 0) return r.pick(["{}", "1", '"x"', "[]", "null", "[1]", "[null]", "[[]]"]);
        const good = () => `{"assistant_id":${quote(r.pick(asst()))},"input":{}}`;
        const items = [run(r), ...Array.from({ length: r.int(3) }, good)];
        if (r.chance(0.5)) items.reverse();
        return `[${items.join(",")}]`;
      },
    },
    { method: "GET", path: "/runs/:run/stream", kind: "read" },
    {
      method: "POST",
      path: "/api/v1/datasets/upload-experiment",
      kind: "body",
      poison: (r) =>
        poisoned(r, [
          ["results", ["1", '"x"', "{}", "[1]", '[{"row_id":1}]']],
          ["experiment_name", ["1", "{}", "[]"]],
          ["dataset_id", ["1", "{}", "[]"]],
          ["experiment_start_time", ["1", '"yesterday"', "{}", '"2024-13-45T99:99:99Z"']],
        ]),
    },
    { method: "GET", path: "/api/v1/datasets", kind: "read" },
    { method: "GET", path: "/api/v1/datasets/:dataset", kind: "read" },
    { method: "GET", path: "/api/v1/datasets/:dataset/examples", kind: "read" },
    { method: "GET", path: "/api/v1/experiments", kind: "read" },
    { method: "GET", path: "/api/v1/experiments/compare", kind: "read" },
    { method: "GET", path: "/api/v1/experiments/:experiment", kind: "read" },
    { method: "GET", path: "/api/v1/experiments/:experiment/runs", kind: "read" },
  ];
}

const QUERY_KEYS = ["limit", "offset", "status", "select", "include", "subgraphs", "xray", "recurse", "delete_threads", "wait", "action", "cancel_on_disconnect", "stream_mode", "before", "format", "id", "baseline", "lower_is_better", "dataset_id", "__proto__", "constructor"];
const QUERY_VALUES = ["-1", "0", "1", "1001", "1e999", "-1e999", "99999999999999999999999", "NaN", "abc", "", "true", "maybe", "rollback", "explode", "values", "__proto__", "\u0000", "💥", "x".repeat(2000), "%", "%ZZ", "html", "csv", "xml"];
const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json; charset=utf-16",
  "*/*",
  "",
];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND"];

const encodeId = (r: Rng, id: string) => (r.chance(0.85) ? encodeURIComponent(id) : id.replace(/[^\w.~-]/gu, (c) => encodeURIComponent(c)));

/**
 * The generator: `next()` returns a new hostile request each call, the same sequence for the
 * same seed and known ids. Every route is visited (round robin over a shuffled order), so a
 * few thousand requests cover each one many times.
 */
export function hostileRequests(seed: number, known: () => Known) {
  const r = prng(seed);
  const table = routes(known);
  let turn = 0;

  const idFor = (param: string, kind: Kind, path: { thread?: string }): string => {
    const k = known();
    // Some of the time a raw malformed escape, as it is.
    if (r.chance(0.1)) return r.pick(RAW_SEGMENTS);
    const existing = kind !== "ids" && r.chance(0.55);
    let id: string;
    if (existing) {
      switch (param) {
        case "assistant":
          id = r.pick([...k.assistants, "echo"]);
          break;
        case "thread":
          id = r.pick(k.threads);
          break;
        case "run": {
          const pair = r.pick(k.runs);
          id = pair[1];
          break;
        }
        case "checkpoint":
          id = r.pick(k.checkpoints)[1];
          break;
        case "dataset":
          id = r.pick(k.datasets);
          break;
        case "experiment":
          id = r.pick(k.experiments);
          break;
        default:
          id = r.pick(HOSTILE_IDS);
      }
      void path;
    } else id = r.pick(HOSTILE_IDS);
    return encodeId(r, id);
  };

  return {
    routeCount: table.length,
    next(): HostileRequest {
      const spec = table[turn++ % table.length]!;
      const params: { thread?: string } = {};
      const labels: string[] = [];
      // Method: mostly the route's, sometimes a wrong or odd one. A wrong method that changes
      // things (DELETE on the path of GET /threads/:id) names only ids that do not exist and
      // sends a malformed body, so it cannot change a seeded resource through a sibling route.
      let method = spec.method;
      let kind = spec.kind;
      if (r.chance(0.12)) {
        method = r.pick(METHODS);
        labels.push(`method ${method}`);
        if (method !== spec.method && ["POST", "PATCH", "DELETE", "PUT"].includes(method)) kind = "ids";
      }
      // Runs and checkpoints go with their own thread most of the time.
      let path = spec.path;
      const k = known();
      if (kind !== "ids" && path.includes(":thread") && path.includes(":run") && r.chance(0.6)) {
        const [tid, rid] = r.pick(k.runs);
        path = path.replace(":thread", encodeURIComponent(tid)).replace(":run", encodeURIComponent(rid));
      }
      if (kind !== "ids" && path.includes(":thread") && path.includes(":checkpoint") && r.chance(0.6)) {
        const [tid, cid] = r.pick(k.checkpoints);
        path = path.replace(":thread", encodeURIComponent(tid)).replace(":checkpoint", encodeURIComponent(cid));
      }
      path = path.replace(/:([a-z]+)/g, (_, name: string) => idFor(name, kind, params));

      // Query: sometimes a few hostile parameters.
      if (r.chance(0.4)) {
        const q = Array.from({ length: 1 + r.int(4) }, () => {
          const key = r.pick(QUERY_KEYS);
          const value = r.pick(QUERY_VALUES);
          // Now and then as it is, bar what node:http refuses to send (controls, non-ASCII).
          const raw = value.replace(/[&#\s]/g, "").replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
          return `${encodeURIComponent(key)}=${r.chance(0.9) ? encodeURIComponent(value) : raw}`;
        });
        path += `?${q.join("&")}`;
        labels.push("query");
      }

      const headers: Record<string, string> = {};
      let body: Buffer | undefined;
      const wantsBody = method !== "GET" && method !== "HEAD" && method !== "TRACE";
      if (wantsBody) {
        let text: string | Buffer;
        if (kind === "ids" && method !== spec.method) {
          text = malformed(r);
          labels.push("malformed");
        } else if (kind === "body") {
          // Poisoned: malformed, too deep, or a field of the wrong type.
          const x = r.rand();
          if (x < 0.25) {
            text = malformed(r);
            labels.push("malformed");
          } else if (x < 0.45 && spec.deep) {
            // Nested 129 to 6,000 levels from the body's root, in a field that is stored.
            text = spec.deep(r, deep(r, 128 + r.int(6_000)));
            labels.push("deep field");
          } else if (x < 0.5 && !spec.array) {
            text = r.pick(["[]", "[{}]", '"x"', "1", "true"]);
            labels.push("not an object");
          } else if (spec.poison) {
            text = spec.poison(r);
            labels.push("poisoned");
          } else {
            text = malformed(r);
            labels.push("malformed");
          }
        } else {
          const x = r.rand();
          if (x < 0.3) {
            text = malformed(r);
            labels.push("malformed");
          } else if (x < 0.4) {
            text = "";
            labels.push("empty");
          } else {
            text = jsonObject(r);
            labels.push("random json");
          }
        }
        body = Buffer.isBuffer(text) ? text : Buffer.from(text, "utf8");
        const type = r.chance(0.7) ? "application/json" : r.pick(CONTENT_TYPES);
        if (type) headers["content-type"] = type;
        if (type !== "application/json") labels.push(`content-type ${JSON.stringify(type)}`);
      }
      if (path.includes("/stream") && r.chance(0.5)) {
        headers["last-event-id"] = r.pick(["-1", "0", "5", "-5", "abc", "1e999", "99999999999999999999", "💥".replace(/./gu, "x"), ""]);
        labels.push("last-event-id");
      }
      if (r.chance(0.05)) {
        headers["x-api-key"] = r.pick(["__proto__", "constructor", "x".repeat(4000)]);
        labels.push("x-api-key");
      }
      return { method, path, headers, body, label: `${method} ${spec.method} ${spec.path} [${labels.join(", ")}]` };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Snapshot

/** A JSON request to `base`; the body is parsed when it is JSON. */
async function get(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`snapshot: ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * Every resource the API can show: assistants (with versions, graph and schemas), threads (with
 * state, full history and runs), datasets with examples, experiments with runs.
 */
export async function snapshot(base: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const assistants = (await get(base, "POST", "/assistants/search", { limit: 1000 })) as Array<{ assistant_id: string }>;
  out.assistant_count = await get(base, "POST", "/assistants/count", {});
  for (const a of assistants) {
    const id = a.assistant_id;
    out[`assistant ${id}`] = await get(base, "GET", `/assistants/${id}`);
    out[`assistant ${id} versions`] = await get(base, "POST", `/assistants/${id}/versions`, { limit: 1000 });
  }
  const threads = (await get(base, "POST", "/threads/search", { limit: 1000 })) as Array<{ thread_id: string }>;
  out.thread_count = await get(base, "POST", "/threads/count", {});
  for (const t of threads) {
    const id = t.thread_id;
    out[`thread ${id}`] = await get(base, "GET", `/threads/${id}`);
    out[`thread ${id} state`] = await get(base, "GET", `/threads/${id}/state`);
    out[`thread ${id} history`] = await get(base, "POST", `/threads/${id}/history`, { limit: 1000 });
    out[`thread ${id} runs`] = await get(base, "GET", `/threads/${id}/runs?limit=1000`);
  }
  const datasets = (await get(base, "GET", "/api/v1/datasets")) as Array<{ id: string }>;
  for (const d of datasets) {
    out[`dataset ${d.id}`] = await get(base, "GET", `/api/v1/datasets/${d.id}`);
    out[`dataset ${d.id} examples`] = await get(base, "GET", `/api/v1/datasets/${d.id}/examples`);
  }
  const experiments = (await get(base, "GET", "/api/v1/experiments")) as Array<{ id: string }>;
  for (const e of experiments) {
    out[`experiment ${e.id}`] = await get(base, "GET", `/api/v1/experiments/${e.id}`);
    out[`experiment ${e.id} runs`] = await get(base, "GET", `/api/v1/experiments/${e.id}/runs`);
  }
  return out;
}
