/**
 * CORS (option `cors`): the allowed origin on every answer, with the headers the SDK reads
 * exposed, and preflight answers.
 */
import type { FetchHandlerOptions } from "./options.js";

/** Headers the SDK and the React hook read (D11); browsers only see the exposed ones. */
const EXPOSED = "content-location, location, x-pagination-total, x-pagination-next";

/** `response` with the CORS headers `cors` allows for `request`'s origin. */
export function applyCors(request: Request, response: Response, cors: FetchHandlerOptions["cors"]): Response {
  if (cors === false) return response;
  const allowed = cors?.origin ?? "*";
  const origin = request.headers.get("origin");
  let value: string | undefined;
  if (allowed === "*") value = "*";
  else if (origin && (Array.isArray(allowed) ? allowed.includes(origin) : allowed === origin)) value = origin;
  if (!value) return response;
  response.headers.set("access-control-allow-origin", value);
  response.headers.set("access-control-expose-headers", EXPOSED);
  if (value !== "*") response.headers.append("vary", "Origin");
  return response;
}

/** The answer to a preflight (`OPTIONS`) request. */
export function preflight(request: Request, cors: { maxAgeSeconds?: number } | undefined): Response {
  const headers = new Headers({
    "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? "*",
    "access-control-max-age": String(cors?.maxAgeSeconds ?? 86400),
  });
  return new Response(null, { status: 204, headers });
}
