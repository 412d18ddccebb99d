/**
 * Errors as HTTP answers (D3): the one table from error codes to statuses, the JSON `{ detail }`
 * body (with `problems` for invalid input; `Retry-After` on a 503, D70), and the fixed 500 of an internal fault, which is
 * reported once to the handler's `onError` instead of being shown.
 */
import { GraphdockError, type ErrorCode } from "../errors.js";

/** A JSON answer, as every route and error sends it. */
export const json = (data: unknown, status = 200, headers = new Headers()) => {
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(data ?? null), { status, headers });
};

/** An answer decided by the HTTP layer itself (413, 400), outside the runtime's error codes. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The body of every 500: a fixed text, never an internal message (the error is logged instead). */
export const INTERNAL_ERROR_DETAIL = "Internal server error";

/** Default `onError` of the handler: one log line with the stack (and the cause's). */
export function logInternalError(error: unknown, request?: Request): void {
  let where = "";
  try {
    if (request) where = ` on ${request.method} ${new URL(request.url).pathname}`;
  } catch {
    // an odd URL is no reason to lose the log line
  }
  console.error(`graphdock: internal error${where}:`, error);
}

/** D3: the one table from error codes to HTTP statuses. */
const STATUS: Record<ErrorCode, number> = {
  not_found: 404,
  conflict: 409,
  invalid_input: 422,
  unauthenticated: 401,
  forbidden: 403,
  unavailable: 503,
};

/**
 * `Retry-After` of a 503 (the store cannot be reached, D70), in seconds: the longest wait between
 * two attempts of the PostgreSQL store to reconnect.
 */
export const RETRY_AFTER_SECONDS = 5;

/** `graphId.fooBar` -> `graph_id.fooBar`: the first segment of a problem path in its wire name. */
function snakePath(path: string): string {
  const [head = "", ...rest] = path.split(".");
  return [head.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), ...rest].join(".");
}

/** The headers an auth handler's HTTPException (the error's cause) carries, e.g. WWW-Authenticate. */
export function causeHeaders(err: GraphdockError): Headers {
  const headers = new Headers();
  const extra = (err.cause as { headers?: unknown } | undefined)?.headers;
  if (extra && typeof extra === "object") {
    for (const [name, value] of Object.entries(extra)) {
      if (typeof value !== "string") continue;
      try {
        headers.set(name, value);
      } catch {
        // a header an auth handler got wrong (bad name or value) is dropped, not a 500
      }
    }
  }
  return headers;
}

/**
 * D3: GraphdockError codes to statuses with a JSON `detail`; the HTTP layer's own refusals
 * (413, 400) as they are; anything else is a genuine fault: 500 with a fixed detail, and
 * `report` is called with the error (it is the caller's single place to log it).
 */
export function errorResponse(err: unknown, report?: (err: unknown) => void): Response {
  if (err instanceof HttpError) return json({ detail: err.message }, err.status, new Headers(err.headers));
  if (GraphdockError.is(err) && Object.hasOwn(STATUS, err.code)) {
    const body: Record<string, unknown> = { detail: err.message };
    if (err.problems) {
      // Field names as the HTTP caller wrote them: the runtime validates the SDK's camelCase
      // options, the wire has their snake_case names (graphId -> graph_id).
      const renamed = err.problems.map((p) => ({ ...p, path: snakePath(p.path) }));
      let detail = err.message;
      for (const [i, p] of err.problems.entries()) if (p.path !== renamed[i]!.path) detail = detail.split(`${p.path}:`).join(`${renamed[i]!.path}:`);
      body.detail = detail;
      body.problems = renamed;
    }
    const headers = causeHeaders(err);
    if (err.code === "unavailable") headers.set("retry-after", String(RETRY_AFTER_SECONDS));
    return json(body, STATUS[err.code], headers);
  }
  report?.(err);
  return json({ detail: INTERNAL_ERROR_DETAIL }, 500);
}

