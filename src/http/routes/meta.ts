/**
 * Meta routes, answered without authentication: `GET /ok`, `GET /info` and `GET /openapi.json`
 * (the OpenAPI 3.1 description of the routes this app serves, built on first request).
 */
import type { Api } from "../app.js";
import type { RecordOf } from "../records.js";
import { ok, type Define } from "../route.js";

export function metaRoutes(define: Define, api: Api): void {
  define({
    method: "GET",
    path: "/ok",
    id: "meta.ok",
    summary: "Health check",
    public: true,
    responses: {
      200: { description: "The server is up and its store can be reached.", json: "Ok" },
      503: {
        description: "The store cannot be reached now (its database is down): `{ detail }` saying so.",
        json: "Error",
        headers: { "Retry-After": "Seconds to wait before asking again." },
      },
    },
    // 503 while the store cannot be reached (D70), as the reference servers check their database:
    // `ping` rejects with `unavailable`, which the error table answers.
    handle: async () => {
      await api.runtime.ping?.();
      return ok({ ok: true as const });
    },
  });
  define({
    method: "GET",
    path: "/info",
    id: "meta.info",
    summary: "Server information",
    public: true,
    responses: { 200: { description: "What the server is and supports.", json: "Info" } },
    handle: async () =>
      ok({
        version: "graphdock",
        context: "js",
        flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
        ...api.options.info,
      }),
  });

  // Per mount path (the document names it as its server): built once, on first request, with
  // the schema conversion loaded only then.
  const documents = new Map<string, Promise<RecordOf<"OpenApiDocument">>>();
  define({
    method: "GET",
    path: "/openapi.json",
    id: "meta.openapi",
    summary: "This API's OpenAPI 3.1 description",
    public: true,
    responses: { 200: { description: "The OpenAPI document of every route this server answers.", json: "OpenApiDocument" } },
    handle: async ({ c }) => {
      const mount = api.mountPath(c);
      let document = documents.get(mount);
      if (!document) {
        document = import("../openapi.js").then(({ openApiDocument }) => openApiDocument(api.routes, api.options.endpoints ?? [], mount));
        documents.set(mount, document);
        document.catch(() => documents.delete(mount)); // a fault is reported as a 500 and tried again next time
      }
      return ok(await document);
    },
  });
}
