import { GraphdockError, type ErrorCode } from "../errors.js";

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
};

/**
 * What an auth handler throws to reject a call with a status, e.g.
 * `throw new HTTPException(401, { message: "Invalid API key", headers: { "www-authenticate": "Bearer" } })`.
 * `Auth` turns it into an `GraphdockError` (see {@link httpExceptionToError}) whose message is
 * `message` (the `detail` of the HTTP body) and whose `cause` is this exception, so the HTTP
 * adapter can send `headers` along.
 */
export class HTTPException extends Error {
  override readonly name = "HTTPException";
  /** HTTP status; defaults to 401 as in the Python SDK (the JS SDK requires it). */
  readonly status: number;
  /** Response headers to send with the error (over HTTP only), e.g. `WWW-Authenticate`. */
  readonly headers: Record<string, string>;

  constructor(status = 401, options: { message?: string; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(options.message || REASONS[status] || `HTTP ${status}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.headers = { ...options.headers };
  }

  /** True for an `HTTPException`, also one from another bundle copy (checks the shape). */
  static is(err: unknown): err is HTTPException {
    return (
      typeof err === "object" &&
      err !== null &&
      typeof (err as { status?: unknown }).status === "number" &&
      typeof (err as { headers?: unknown }).headers === "object" &&
      err instanceof Error
    );
  }
}

const CODES: Record<number, ErrorCode> = {
  400: "invalid_input",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  422: "invalid_input",
};

/**
 * Maps a thrown `HTTPException` to the `GraphdockError` that crosses the public surface (D3):
 * 401 unauthenticated, 403 forbidden, 404 not_found, 409 conflict, 400/422 invalid_input. Any
 * other status fails closed: `fallback` (unauthenticated while authenticating, forbidden while
 * authorizing). The message is kept verbatim; the exception is the `cause`.
 */
export function httpExceptionToError(err: HTTPException, fallback: "unauthenticated" | "forbidden"): GraphdockError {
  return new GraphdockError(CODES[err.status] ?? fallback, err.message, { cause: err });
}
