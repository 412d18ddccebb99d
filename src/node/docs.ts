/**
 * `GET /docs`: the API's OpenAPI document (`GET /openapi.json`) rendered by Swagger UI (D82), an
 * endpoint beside the API (src/http/endpoints.ts) that `serve` mounts. The viewer's two files
 * come from the package (dist/docs/, copied from swagger-ui-dist at build; from source, the
 * installed swagger-ui-dist), read on first request and kept compressed: nothing is fetched from
 * a CDN, and nothing of the viewer is in the page bundle of `graphdock/http`.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { HttpEndpoint } from "../http/index.js";

/** The viewer's files, by the name they are served under `/docs/`. */
const FILES: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

/** Starts the viewer on the document the page names (no inline script: a strict CSP may apply). */
const INIT = `window.ui = SwaggerUIBundle({ url: document.getElementById("docs").dataset.url, dom_id: "#docs", deepLinking: true });\n`;

const page = (base: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>graphdock API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/docs/swagger-ui.css">
</head>
<body>
<div id="docs" data-url="${base}/openapi.json"></div>
<script src="${base}/docs/swagger-ui-bundle.js"></script>
<script src="${base}/docs/init.js"></script>
</body>
</html>
`;

/** Where the viewer's files are: next to the build (dist/docs/), else the installed package. */
async function viewerDir(): Promise<string> {
  const here = dirname(fileURLToPath(import.meta.url));
  const shipped = join(here, "docs");
  try {
    await readFile(join(shipped, "swagger-ui.css"));
    return shipped;
  } catch {
    try {
      return dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
    } catch {
      throw new Error(`graphdock: the API viewer's files are missing (neither ${shipped} nor the swagger-ui-dist package): reinstall graphdock`);
    }
  }
}

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

const answer = (body: BodyInit | null, status: number, headers: Record<string, string>) => new Response(body, { status, headers });

/**
 * The `/docs` endpoint: the viewer page at `/docs` (linking `/openapi.json` where the API is
 * mounted) and its files below it.
 */
export function apiDocs(): HttpEndpoint {
  let assets: Promise<Map<string, Asset>> | undefined;
  const load = () =>
    (assets ??= viewerDir().then(async (dir) => {
      const out = new Map<string, Asset>();
      for (const [name, type] of Object.entries(FILES)) {
        const body = await readFile(join(dir, name));
        out.set(name, { type, body, gzip: gzipSync(body) });
      }
      const init = Buffer.from(INIT);
      out.set("init.js", { type: "text/javascript; charset=utf-8", body: init, gzip: gzipSync(init) });
      return out;
    })).catch((err: unknown) => {
      assets = undefined; // a missing file may be installed by the next request
      throw err;
    });
  return {
    name: "docs",
    paths: ["/docs"],
    openapi: {
      "/docs": {
        get: {
          operationId: "meta.docs",
          tags: ["meta"],
          summary: "This API's documentation, rendered by Swagger UI",
          security: [],
          responses: { "200": { description: "The viewer's page.", content: { "text/html": { schema: { type: "string" } } } } },
        },
      },
    },
    async fetch(request, { path, basePath }) {
      if (request.method !== "GET" && request.method !== "HEAD") {
        return answer(JSON.stringify({ detail: `Method ${request.method} is not allowed on ${path}; use GET` }), 405, { allow: "GET", "content-type": "application/json" });
      }
      if (path === "/docs" || path === "/docs/") {
        return answer(request.method === "HEAD" ? null : page(basePath), 200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" });
      }
      const asset = (await load()).get(path.slice("/docs/".length));
      if (!asset) return answer(JSON.stringify({ detail: `No endpoint GET ${path}` }), 404, { "content-type": "application/json" });
      const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
      const body = gzip ? asset.gzip : asset.body;
      const headers: Record<string, string> = { "content-type": asset.type, "cache-control": "public, max-age=3600", vary: "Accept-Encoding", "content-length": String(body.byteLength) };
      if (gzip) headers["content-encoding"] = "gzip";
      return answer(request.method === "HEAD" ? null : new Uint8Array(body), 200, headers);
    },
  };
}
