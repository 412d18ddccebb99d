/**
 * The studio as an endpoint beside the agent-server API (src/http/endpoints.ts): `/studio` and
 * every path under it answer the app's shell (so deep links such as `/studio/threads/<id>` can be
 * bookmarked), `/studio/assets/<file>` the built, content-hashed files, and `/studio/session`
 * whether the request's credentials pass the runtime's authentication. Nothing here reads data:
 * the shell loads without credentials, the app asks for them until the session says they pass,
 * then reads everything through the API as that user (the runtime's auth applies as to any client).
 * URLs relative to the page (D112), caching (D113), the session (D114), the page's policy (D115).
 */
import { authRefusal, callerOf } from "../http/endpoint-kit.js";
import type { EndpointContext, HttpEndpoint } from "../http/endpoints.js";
import { prepare, StudioFiles, type StudioFile } from "./assets.js";

/** Options of {@link studio}. */
export interface StudioOptions {
  /**
   * Directory holding the built app (`index.html` and `assets/`). Default: the build shipped in
   * the package (its `dist/studio/`).
   */
  assetsDir?: string;
}

/** The path the studio answers, below the handler's base path. */
export const STUDIO_PATH = "/studio";

/** Where the shell says the studio's root is, for the app (relative to the page, see {@link rootFrom}). */
const ROOT_META = "graphdock-studio-root";

/**
 * The page may show the API's data and talk only to its own origin; nothing loads from elsewhere
 * (the app works offline) and no other site may frame it.
 */
const SHELL_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  json: "application/json",
  map: "application/json",
  txt: "text/plain; charset=utf-8",
  woff2: "font/woff2",
};

/**
 * The studio endpoint, for `createFetchHandler(runtime, { endpoints: [studio()] })` (`serve`
 * mounts it by default). Hashed assets are cached for a year as immutable; the shell is revalidated
 * on every load (`no-cache` with an entity tag), so a new version is picked up at once.
 *
 * @example
 * const handler = createFetchHandler(runtime, { basePath: "/api", endpoints: [studio()] });
 * // the studio is at /api/studio, its API at /api
 */
export function studio(options: StudioOptions = {}): HttpEndpoint {
  const files = new StudioFiles(options.assetsDir);
  return {
    name: "studio",
    paths: [STUDIO_PATH],
    async fetch(request, context) {
      const { path } = context;
      if (request.method !== "GET" && request.method !== "HEAD") {
        return Response.json({ detail: `Method ${request.method} is not allowed on ${path}; use GET` }, { status: 405, headers: { allow: "GET, HEAD" } });
      }
      const rest = path.slice(STUDIO_PATH.length); // "" | "/..." (the router matched the prefix)
      if (rest === "/session") return session(request, context);
      if (rest.startsWith("/assets/")) {
        const file = await files.get(rest.slice(1));
        if (!file) return Response.json({ detail: `No studio asset ${rest.slice("/assets/".length)}` }, { status: 404 });
        return send(request, file, typeOf(rest), { "cache-control": "public, max-age=31536000, immutable" });
      }
      const index = await files.get("index.html");
      if (!index) {
        return Response.json({ detail: "The studio is not built: its files are missing from this installation (npm run build writes them)" }, { status: 404 });
      }
      const shell = await shellFor(index, rootFrom(rest));
      return send(request, shell, TYPES.html!, { "cache-control": "no-cache", ...SHELL_HEADERS });
    },
  };
}

/**
 * `{ "authenticated": true }` when the request's credentials pass the runtime's authentication,
 * else `{ "authenticated": false, "detail": <the auth handler's message> }`, both 200: the app
 * learns whether to ask for credentials without a failed request (a 401 the browser would log).
 */
async function session(request: Request, context: EndpointContext): Promise<Response> {
  const noStore = { "cache-control": "no-store" };
  try {
    await callerOf(request, context);
    return Response.json({ authenticated: true }, { headers: noStore });
  } catch (err) {
    const refusal = authRefusal(err);
    if (refusal) return Response.json({ authenticated: false, detail: refusal.message }, { headers: noStore });
    throw err;
  }
}

/**
 * The studio's root relative to the page at `/studio<rest>`: `studio/` for `/studio`, `./` for
 * `/studio/`, `../` for `/studio/threads/<id>`. Relative, so the app's URLs stay right behind a
 * proxy that adds a prefix the server does not know of.
 */
export function rootFrom(rest: string): string {
  if (rest === "") return "studio/";
  const depth = rest.split("/").length - 2;
  return depth === 0 ? "./" : "../".repeat(depth);
}

/** The shell with its asset URLs and root made relative to the page's depth (one per depth, cached). */
const shells = new WeakMap<StudioFile, Map<string, Promise<StudioFile>>>();
function shellFor(index: StudioFile, root: string): Promise<StudioFile> {
  let byRoot = shells.get(index);
  if (!byRoot) shells.set(index, (byRoot = new Map()));
  let shell = byRoot.get(root);
  if (!shell) {
    const html = new TextDecoder()
      .decode(index.body)
      .replace(/(["'])\.\/assets\//g, `$1${root}assets/`)
      .replace(/<meta charset="utf-8" \/>|<head>/, (tag) => `${tag}\n    <meta name="${ROOT_META}" content="${root}" />`);
    shell = prepare("index.html", new TextEncoder().encode(html));
    byRoot.set(root, shell);
  }
  return shell;
}

function typeOf(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? "";
  return TYPES[ext] ?? "application/octet-stream";
}

/** The file, gzipped when the client accepts it, or 304 when its entity tag still matches. */
function send(request: Request, file: StudioFile, type: string, headers: Record<string, string>): Response {
  const out = new Headers({ ...headers, "content-type": type, etag: file.etag, vary: "accept-encoding" });
  const match = request.headers.get("if-none-match");
  if (match && match.split(",").some((tag) => tag.trim().replace(/^W\//, "") === file.etag)) return new Response(null, { status: 304, headers: out });
  const gzip = file.gzip && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  if (gzip) out.set("content-encoding", "gzip");
  const body = gzip ? file.gzip! : file.body;
  out.set("content-length", String(body.byteLength));
  return new Response(request.method === "HEAD" ? null : (body as BodyInit), { status: 200, headers: out });
}
