/**
 * The `Origin` check the MCP specification asks of Streamable HTTP servers against DNS rebinding
 * (D103): a page on another site that resolves its own name to this machine sends its own origin,
 * which equals the `Host` it reaches, so comparing the two proves nothing. A request that carries
 * an `Origin` (a browser's) is accepted only from a listed origin or, without a list, from a
 * loopback one (`localhost`, `127.0.0.0/8`, `[::1]`); one without `Origin` is not a browser's.
 */

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** True when `request` may reach the endpoint by its `Origin` header. */
export function originAllowed(request: Request, allowedOrigins: readonly string[] | undefined): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  if (allowedOrigins) return allowedOrigins.includes("*") || allowedOrigins.includes(origin);
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.test(url.hostname) && url.origin === origin;
  } catch {
    return false;
  }
}
