/**
 * Records what a LangGraph agent server sends for a scripted conversation (every stream mode,
 * then the REST answers about the thread, its runs and the assistant), and compares two such
 * transcripts modulo ids and timestamps: the reference server's and graphdock's.
 */
import { readSse } from "../http/helpers.js";

export interface Exchange {
  /** What was asked (`POST /threads/<thread>/runs/stream values`). */
  label: string;
  status: number;
  /** A JSON answer. */
  body?: unknown;
  /** A stream's frames, in order. */
  frames?: Array<{ event: string; data: unknown }>;
}

/** One server's side of a conversation: requests by path, answers recorded in order. */
export class Recorder {
  readonly exchanges: Exchange[] = [];
  constructor(readonly baseUrl: string) {}

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** A JSON request; its answer is recorded (under `label`, or the method and path) and returned. */
  async json<T = Record<string, unknown>>(method: string, path: string, body?: unknown, label = `${method} ${path}`): Promise<T> {
    const response = await this.send(method, path, body);
    const text = await response.text();
    const parsed = text === "" ? null : JSON.parse(text);
    this.exchanges.push({ label, status: response.status, body: parsed });
    return parsed as T;
  }

  /** A streaming request, read to its end; its frames are recorded and returned. */
  async stream(path: string, body: unknown, label: string): Promise<Exchange["frames"] & object> {
    const response = await this.send("POST", path, body);
    const frames = response.ok ? (await readSse(response)).events.map((e) => ({ event: e.event ?? "message", data: e.data })) : [];
    this.exchanges.push({ label, status: response.status, ...(response.ok ? { frames } : { body: await response.text() }) });
    return frames;
  }
}

/** A difference at one place: the reference's value and graphdock's (`undefined`: absent). */
export interface Difference {
  label: string;
  path: string;
  reference: unknown;
  graphdock: unknown;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEX32 = /\b[0-9a-f]{32}\b/g;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * A transcript's values with what each server mints replaced: every uuid by `<uuid>` and every
 * 32-hex id (an interrupt's) by `<hex>`, in place (so `run-<uuid>-tool-call-1` keeps its form),
 * every ISO time by `<time>`. Object keys are visited in sorted order.
 */
export function normalize(exchanges: Exchange[]): Exchange[] {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return ISO_TIME.test(v) ? "<time>" : v.replace(UUID, "<uuid>").replace(HEX32, "<hex>");
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) out[k] = walk((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  return exchanges.map((e) => walk(e) as Exchange);
}

/** A frame's short name: its event, and for stream events which one and of what. */
export function frameName(frame: { event: string; data: unknown }): string {
  const d = frame.data as { event?: unknown; name?: unknown; error?: unknown; message?: unknown } | null;
  if (frame.event === "events" && d) return `events ${String(d.event)} ${String(d.name)}`;
  return frame.event === "error" && d ? `error ${String(d.error)}: ${String(d.message)}` : frame.event;
}

/** Every difference between two normalized transcripts, leaf by leaf. */
export function compare(reference: Exchange[], graphdock: Exchange[]): Difference[] {
  const out: Difference[] = [];
  const leaves = (label: string, path: string, a: unknown, b: unknown) => {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) leaves(label, `${path}[${i}]`, a[i], b[i]);
    } else if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) leaves(label, path ? `${path}.${k}` : k, a[k], b[k]);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ label, path, reference: a, graphdock: b });
    }
  };
  for (let i = 0; i < Math.max(reference.length, graphdock.length); i++) {
    const a = reference[i];
    const b = graphdock[i];
    const label = a?.label ?? b!.label;
    if (!a || !b || a.label !== b.label) {
      out.push({ label, path: "(exchange)", reference: a?.label, graphdock: b?.label });
      continue;
    }
    leaves(label, "status", a.status, b.status);
    leaves(label, "body", a.body, b.body);
    const fa = a.frames ?? [];
    const fb = b.frames ?? [];
    // Frames are compared by position only when both streams send the same sequence; otherwise
    // the sequences themselves are the difference.
    const names = [fa.map(frameName), fb.map(frameName)];
    if (JSON.stringify(names[0]) !== JSON.stringify(names[1])) out.push({ label, path: "frames", reference: names[0], graphdock: names[1] });
    else for (let f = 0; f < fa.length; f++) leaves(label, `frames[${f}] ${names[0]![f]}`, fa[f]!.data, fb[f]!.data);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
