/**
 * A service worker hosting an graphdock runtime on IndexedDB for the pages of its origin: the
 * fetch handler answers `/graphdock/*` (the REST API and the v2 protocol's commands and SSE
 * streams), so the page's `useStream({ apiUrl: origin + "/graphdock" })` talks to it with no
 * network. The worker outlives a reload of the page, and so do the runs it executes: the
 * reloaded page rejoins them. `postMessage("release")` lets the talker finish its reply.
 */
/// <reference lib="webworker" />
import { agent } from "../../../examples/node/agent.js";
import { createRuntime } from "../../../src/index.js";
import { createFetchHandler } from "../../../src/http/index.js";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index.js";
import { talkerGraph } from "./talker.js";

declare const self: ServiceWorkerGlobalScope;

const PREFIX = "/graphdock";
/** Streams three words, waits for a "release" message, streams two more. */
const talker = talkerGraph();

const handler = (async () => {
  const runtime = await createRuntime({ graphs: { agent, talker: talker.graph }, store: indexedDbStore("graphdock-service-worker") });
  return createFetchHandler(runtime);
})();

self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("message", (event) => {
  if (event.data === "release") talker.release();
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
