/**
 * The agent-server API as a Hono app (D80): the routes of src/http/routes (one file per
 * resource), the endpoints beside them (src/http/endpoints.ts), `GET /openapi.json` describing
 * them, and the answers for what matches none (405 with `Allow`, 404). Errors become JSON answers
 * (src/http/errors.ts). `createApp` returns it for users who mount it in their own Hono app;
 * `createFetchHandler` (./index.ts) serves it with CORS, a base path and custom routes.
 */
import type { Context, MiddlewareHandler } from "hono";
import { HonoBase as Hono } from "hono/hono-base";
import { baseRoutePath } from "hono/route";
import { TrieRouter } from "hono/router/trie-router";
import { notFound, unauthenticated } from "../errors.js";
import { protocolV2Http } from "../protocol-v2/http.js";
import { errorResponse, json, logInternalError } from "./errors.js";
import { resolveLimits, type FetchHandlerOptions, type Limits, type RouteGroup } from "./options.js";
import { routeHandlers, type ApiEnv, type DeclaredRoute, type Define, type Method } from "./route.js";
import { assistantRoutes } from "./routes/assistants.js";
import { cronRoutes } from "./routes/crons.js";
import { experimentRoutes } from "./routes/experiments.js";
import { metaRoutes } from "./routes/meta.js";
import { runRoutes } from "./routes/runs.js";
import { storeRoutes } from "./routes/store.js";
import { threadRoutes } from "./routes/threads.js";
import type { HttpRuntime } from "./types.js";

/** The Hono app `createApp` returns. */
export type GraphdockApp = Hono<ApiEnv>;

/** What the routes of one app share. */
export interface Api {
  readonly runtime: HttpRuntime;
  readonly options: AppOptions;
  readonly limits: Limits;
  /** Interval of SSE heartbeats in ms (0: none). */
  readonly heartbeatMs: number;
  /** Reports an internal fault to `onError` (a throwing `onError` is ignored). */
  report(error: unknown, request: Request): void;
  /**
   * Where the API is mounted for this request: `basePath`, or the path a Hono app mounted it
   * under with `app.route(path, createApp(...))` (`""` at the root).
   */
  mountPath(c: Context): string;
  /** The routes declared so far (all of them once the app is built). */
  readonly routes: readonly DeclaredRoute[];
  /** The v2 streaming protocol's routes (D24). */
  readonly v2: ReturnType<typeof protocolV2Http>;
}

const methodsOf = new WeakMap<GraphdockApp, (path: string) => Method[] | undefined>();
/**
 * The methods `app` answers on `path` (below its base path); undefined when an endpoint answers
 * it (the endpoint decides).
 */
export const methodsOn = (app: GraphdockApp, path: string): Method[] | undefined => methodsOf.get(app)?.(path);

/** The request's path below where the API is mounted (see `Api.mountPath`). */
function relativePath(c: Context): string {
  const mounted = baseRoutePath(c);
  return mounted.length > 1 ? c.req.path.slice(mounted.length) || "/" : c.req.path;
}

/** A request URL's path, undecoded (`/threads/a%2Fb`); a trailing slash is dropped. */
export function pathOf(url: string, base: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const query = url.indexOf("?", start);
  let path = start < 0 ? "/" : query < 0 ? url.slice(start) : url.slice(start, query);
  if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length) || "/";
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** Options of {@link createApp}: those of `createFetchHandler` but CORS and custom routes (your app's own). */
export type AppOptions = Omit<FetchHandlerOptions, "cors" | "app">;

/**
 * The API on `runtime` as a Hono app. Mount it in your own with `app.route("/api", createApp(runtime))`
 * (`basePath` is then left out: the route's path is where it is mounted), or serve its `fetch`;
 * `createFetchHandler` serves it with CORS and custom routes.
 */
export function createApp(runtime: HttpRuntime, options: AppOptions = {}): GraphdockApp {
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const app = new Hono<ApiEnv>({ router: new TrieRouter(), getPath: (request) => pathOf(request.url, base) });
  const routes: DeclaredRoute[] = [];
  const disabled = new Set<RouteGroup>(options.disable ?? []);
  const api: Api = {
    runtime,
    options,
    limits: resolveLimits(options),
    heartbeatMs: options.heartbeatMs ?? 5000,
    report(error, request) {
      try {
        (options.onError ?? logInternalError)(error, request);
      } catch {
        // a failing logger must not turn a 500 into a crash
      }
    },
    mountPath: (c) => {
      const mounted = baseRoutePath(c);
      return base + (mounted.length > 1 ? mounted : "");
    },
    routes,
    v2: protocolV2Http(runtime, { ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}), ...options.protocolV2 }),
  };

  const observe = options.observe;
  if (observe) {
    app.use(async (c, next) => {
      const start = performance.now();
      await next();
      try {
        observe({ request: c.req.raw, response: c.res, route: c.get("route"), start });
      } catch {
        // an observer's fault is not the request's
      }
    });
  }

  if (options.apiKey !== undefined) {
    const key = options.apiKey;
    // Seed: the experiment endpoints take an `x-api-key`, on top of the runtime's own auth.
    app.use("/api/v1/*", async (c, next) => {
      if (c.req.header("x-api-key") !== key) throw unauthenticated("The experiment endpoints need a valid x-api-key header");
      await next();
    });
  }

  for (const endpoint of options.endpoints ?? []) {
    for (const path of endpoint.paths) {
      const serve: MiddlewareHandler<ApiEnv> = async (c) => {
        c.set("route", path);
        // The routes ignore a trailing slash; an endpoint is given it (a page at `/studio/` is not `/studio`).
        const asked = relativePath(c);
        const slash = new URL(c.req.url).pathname.endsWith("/") && !asked.endsWith("/");
        return endpoint.fetch(c.req.raw, { runtime, path: slash ? `${asked}/` : asked, basePath: api.mountPath(c) });
      };
      app.all(path, serve);
      app.all(path.endsWith("/") ? `${path}*` : `${path}/*`, serve);
    }
  }

  const authenticate: MiddlewareHandler<ApiEnv> = async (c, next) => {
    c.set("client", await runtime.client({ headers: lowerCaseHeaders(c.req.raw.headers), method: c.req.method, path: relativePath(c), url: c.req.url }));
    await next();
  };
  const defineIn =
    (group: RouteGroup): Define =>
    (spec) => {
      if (disabled.has(group)) return;
      const { handle: _handle, ...declared } = spec;
      routes.push({ group, ...declared });
      // One registration per handler: Hono chains a route's handlers in the order registered.
      for (const handler of routeHandlers(spec, authenticate, api.limits)) app.on(spec.method, spec.path, handler);
    };
  metaRoutes(defineIn("meta"), api);
  assistantRoutes(defineIn("assistants"));
  threadRoutes(defineIn("threads"), api);
  runRoutes(defineIn("runs"), api);
  cronRoutes(defineIn("crons"));
  storeRoutes(defineIn("store"));
  experimentRoutes(defineIn("experiments"));

  // A known path asked with another method: 405 naming the methods it takes. Registered last, so
  // they answer only when no route of the path took the request's method.
  const templates = [...new Set(routes.map((r) => r.path))].map((path) => ({ path, pattern: new RegExp(`^${path.replace(/:[a-z_]+/g, "[^/]+")}$`) }));
  const allowedOn = (path: string) => {
    const methods = new Set<Method>();
    for (const t of templates) if (t.pattern.test(path)) for (const r of routes) if (r.path === t.path) methods.add(r.method);
    return [...methods];
  };
  methodsOf.set(app, (path) => {
    const endpoint = (options.endpoints ?? []).some((e) => e.paths.some((p) => path === p || path.startsWith(p.endsWith("/") ? p : `${p}/`)));
    return endpoint ? undefined : allowedOn(path);
  });
  for (const { path: template } of templates) {
    app.all(template, (c) => {
      c.set("route", template);
      const path = relativePath(c);
      const allowed = allowedOn(path).join(", ");
      return json({ detail: `Method ${c.req.method} is not allowed on ${path}; use ${allowed}` }, 405, new Headers({ allow: allowed }));
    });
  }

  const listed = disabled.has("meta") ? "" : " (GET /openapi.json lists the routes this server answers)";
  app.notFound((c) => errorResponse(notFound(`No endpoint ${c.req.method} ${relativePath(c)}${listed}`)));
  app.onError((err, c) => errorResponse(err, (e) => api.report(e, c.req.raw)));
  return app;
}

/** Request headers as the auth hook receives them: lower-case names (AuthRequest, docs/auth.md). */
function lowerCaseHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name.toLowerCase()] = value));
  return out;
}
