/**
 * A service worker hosting an agentdock runtime on IndexedDB for the pages of its origin: the
 * fetch handler answers `/agentdock/*` (the REST API and the v2 protocol's commands and SSE
 * streams), so the page's `useStream({ apiUrl: origin + "/agentdock" })` talks to it with no
 * network. The worker outlives a reload of the page, and so do the runs it executes: the
 * reloaded page rejoins them. `postMessage("release")` lets the talker finish its reply.
 */
/// <reference lib="webworker" />
import { agent } from "../../../examples/node/agent.js";
import { END, START, StateGraph, messagesState } from "../../../src/graph/index.js";
import { createRuntime } from "../../../src/index.js";
import { createFetchHandler } from "../../../src/http/index.js";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index.js";

declare const self: ServiceWorkerGlobalScope;

const PREFIX = "/agentdock";
let waiters: Array<() => void> = [];

/** Streams three words, waits for `release`, streams two more. */
const talker = new StateGraph(messagesState)
  .addNode("talk", async (_s, ctx) => {
    const id = `talk-${String(ctx.config.configurable.run_id)}`;
    for (const w of ["one ", "two ", "three "]) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
    await new Promise<void>((resolve, reject) => {
      waiters.push(resolve);
      ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    });
    for (const w of ["four ", "five"]) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
    return { messages: [{ id, type: "ai", content: "one two three four five" }] };
  })
  .addEdge(START, "talk")
  .addEdge("talk", END)
  .compile();

const handler = (async () => {
  const runtime = await createRuntime({ graphs: { agent, talker }, store: indexedDbStore("agentdock-service-worker") });
  return createFetchHandler(runtime);
})();

self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  if (event.data === "release") waiters.splice(0).forEach((r) => r());
});
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin || !url.pathname.startsWith(`${PREFIX}/`)) return;
  event.respondWith(
    (async () => {
      const { request } = event;
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const target = `${url.origin}${url.pathname.slice(PREFIX.length)}${url.search}`;
      return (await handler)(new Request(target, { method: request.method, headers: request.headers, ...(body ? { body } : {}), signal: request.signal }));
    })(),
  );
});
