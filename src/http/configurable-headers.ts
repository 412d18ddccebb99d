/**
 * Request headers copied into a run's `config.configurable` (option `configurableHeaders`,
 * langgraph.json's `http.configurable_headers`; D97): those matching `includes` and none of
 * `excludes` (exact names or `*` wildcards, case-insensitive; exclusions first), never a header
 * that carries a credential. Without the option, `x-*` and `user-agent`, as the agent servers
 * copy them (D46).
 */

/** Which headers a run gets in its `configurable`. */
export interface ConfigurableHeaders {
  /** Names or `*` patterns (`x-user-*`). Default: `x-*` and `user-agent`, what the JS agent server copies. */
  includes?: readonly string[];
  /** Names or `*` patterns left out, whatever `includes` says. */
  excludes?: readonly string[];
}

/**
 * Headers that carry credentials: never copied into a run (the auth handler sees them; a graph has
 * no use for them), never in the command's log lines.
 */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-tenant-id", "x-service-key"];
const CREDENTIALS = new Set(CREDENTIAL_HEADERS);
const DEFAULT_INCLUDES = ["x-*", "user-agent"];

const pattern = (glob: string) => new RegExp(`^${glob.toLowerCase().replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);

/** The function picking a request's headers for its run's `configurable`. */
export function configurableHeaders(rule: ConfigurableHeaders): (headers: Headers) => Record<string, string> {
  const includes = (rule.includes ?? DEFAULT_INCLUDES).map(pattern);
  const excludes = (rule.excludes ?? []).map(pattern);
  return (headers) => {
    const out: Record<string, string> = {};
    headers.forEach((value, name) => {
      if (CREDENTIALS.has(name) || excludes.some((p) => p.test(name)) || !includes.some((p) => p.test(name))) return;
      out[name] = value;
    });
    return out;
  };
}
