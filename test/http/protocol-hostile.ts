/**
 * Seeded hostile JSON-RPC requests for the protocol endpoints (MCP, A2A), and the loop that sends
 * them over a socket: every answer must be below 500 and no JSON-RPC error may be an internal
 * one (-32603: bad input is the caller's error, with the protocol's code for it).
 */
import { Agent, request as httpRequest } from "node:http";
import { HOSTILE_IDS, jsonValue, malformed, deep, type Rng } from "./hostile.js";

/** One generated request. */
export interface ProtocolRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  label: string;
}

export const quote = (s: string) => JSON.stringify(s);

/** A JSON-RPC id of any kind, odd ones included. */
export const rpcId = (r: Rng) => r.pick(["1", '"a"', "null", "1.5", "-1", "{}", "[]", "true", '"__proto__"', "1e999", '""']);

/** A hostile string as JSON. */
export const hostileString = (r: Rng) => quote(r.pick(HOSTILE_IDS));

/** A JSON-RPC envelope around `method` and `params` (text), sometimes broken. */
export function envelope(r: Rng, method: string, params: string | undefined): string {
  const x = r.rand();
  const jsonrpc = x < 0.9 ? '"2.0"' : r.pick(['"1.0"', "2", "null", '"2"']);
  const fields = [`"jsonrpc":${jsonrpc}`, `"method":${r.chance(0.95) ? quote(method) : r.pick(["1", "null", '""', "{}"])}`];
  if (r.chance(0.9)) fields.push(`"id":${rpcId(r)}`);
  if (params !== undefined) fields.push(`"params":${params}`);
  if (r.chance(0.1)) fields.push(`"extra":${jsonValue(r)}`);
  if (r.chance(0.5)) fields.reverse();
  return `{${fields.join(",")}}`;
}

/** A body: malformed or too deep some of the time, else `valid()` (alone or in a batch). */
export function body(r: Rng, valid: () => string): { text: string | Buffer; label: string } {
  const x = r.rand();
  if (x < 0.15) return { text: malformed(r), label: "malformed" };
  if (x < 0.2) return { text: deep(r, 129 + r.int(3000)), label: "deep" };
  if (x < 0.25) return { text: r.pick(["[]", '"x"', "1", "null", "true", "{}"]), label: "not a request" };
  if (x < 0.3) return { text: `[${Array.from({ length: 1 + r.int(3) }, valid).join(",")}]`, label: "batch" };
  return { text: valid(), label: "request" };
}

/** Sends `req` to `base`; resolves the status and the body (status 0: no answer). */
export function send(base: URL, req: ProtocolRequest, agent: Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const r = httpRequest(
      { host: base.hostname, port: base.port, method: req.method, path: req.path, headers: { ...req.headers, ...(req.body ? { "content-length": String(req.body.length) } : {}) }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    r.setTimeout(30_000, () => r.destroy());
    r.on("error", () => resolve({ status: 0, body: "" }));
    r.end(req.body);
  });
}

/** Sends `count` requests from `next` with 8 in flight; returns the failures and the statuses seen. */
export async function barrage(base: URL, count: number, next: () => ProtocolRequest) {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const codes = new Map<number, number>();
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      const req = next();
      sent++;
      const answer = await send(base, req, agent);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      for (const m of answer.body.matchAll(/"code":(-?\d+)/g)) codes.set(Number(m[1]), (codes.get(Number(m[1])) ?? 0) + 1);
      if (answer.status >= 500 || answer.status === 0) failures.push(`${answer.status} ${req.label}: ${answer.body.slice(0, 300)}`);
      else if (answer.body.includes('"code":-32603')) failures.push(`internal error for ${req.label} ${req.body?.toString().slice(0, 200)}: ${answer.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  agent.destroy();
  return { sent, failures, statuses: Object.fromEntries(statuses), codes: Object.fromEntries(codes) };
}
