/** Shared helpers of the HTTP tests: SSE reading with eventsource-parser and SDK clients. */
import { Client } from "@langchain/langgraph-sdk";
import { createParser } from "eventsource-parser";
import type { FetchHandler } from "../../src/http/index.js";

export interface ParsedEvent {
  event: string | undefined;
  data: unknown;
  id: string | undefined;
}

/** Reads an SSE body to its end (or until `stopAfter` events), parsing it with a real parser. */
export async function readSse(response: Response, stopAfter = Infinity): Promise<{ events: ParsedEvent[]; comments: string[] }> {
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (m) => events.push({ event: m.event, data: JSON.parse(m.data), id: m.id }),
    onComment: (c) => comments.push(c),
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  while (events.length < stopAfter) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  if (events.length >= stopAfter) await reader.cancel();
  return { events, comments };
}

/** The official client calling the handler directly (no socket). */
export function inProcessClient(handler: FetchHandler, headers: Record<string, string> = {}): Client {
  return new Client({
    apiUrl: "http://in-process",
    apiKey: null,
    defaultHeaders: headers,
    callerOptions: { fetch: (input: RequestInfo | URL, init?: RequestInit) => handler(new Request(input, init)), maxRetries: 0 },
  });
}

/** A JSON request to the handler. */
export function call(handler: FetchHandler, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return handler(
    new Request(`http://in-process${path}`, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}
