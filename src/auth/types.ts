/**
 * The hook between the runtime and custom authentication (D13): the runtime calls
 * `authenticate` once per bound client (or HTTP request) and `authorize` before every operation,
 * in process and over HTTP alike. `Auth` (src/auth) implements it from deployer handlers.
 */

/** The authenticated caller: `identity` plus any custom fields the handler returned. */
import { isPlainObject, jsonEqual } from "../json.js";

export interface AuthUser {
  identity: string;
  permissions: string[];
  is_authenticated: boolean;
  display_name: string;
  [key: string]: unknown;
}

/** What a caller presents: headers with lower-case names, and what else the transport knows. */
export interface AuthRequest {
  headers: Record<string, string>;
  method?: string;
  /** Path of the HTTP request, e.g. `/threads/search`; absent in process. */
  path?: string;
  /** Full URL when known (HTTP). */
  url?: string;
}

export type AuthResource = "threads" | "assistants" | "crons" | "store";
export type AuthAction =
  | "create"
  | "read"
  | "update"
  | "delete"
  | "search"
  | "create_run"
  | "put"
  | "get"
  | "list_namespaces";

/** One authorization point: `value` is the operation payload and may be mutated. */
export interface AuthEvent {
  resource: AuthResource;
  action: AuthAction;
  value: Record<string, unknown>;
}

/**
 * A metadata filter: every key must match; a condition is a value (equality),
 * `{ $eq: v }`, or `{ $contains: v | v[] }` (the field is an array holding v / all of v).
 */
export type AuthFilter = Record<string, unknown>;

export interface AuthProvider {
  /**
   * Identifies the caller. Rejects with an `GraphdockError` `unauthenticated` (401) or with the
   * handler's own status error. Without an authenticate handler resolves the owner user.
   */
  authenticate(request: AuthRequest): Promise<AuthUser>;
  /**
   * Runs the most specific handler for the event. Resolves `undefined` (allowed, no filter) or a
   * filter the runtime must apply to the resource's metadata (a run: its thread's metadata).
   * Rejects with `forbidden` when the handler denies.
   */
  authorize(user: AuthUser, event: AuthEvent): Promise<AuthFilter | undefined>;
}

/** The caller when no auth is configured: the owner of the deployment sees everything. */
export const OWNER_USER: AuthUser = Object.freeze({
  identity: "owner",
  permissions: [],
  is_authenticated: true,
  display_name: "owner",
}) as AuthUser;


/**
 * True when `metadata` satisfies `filter`. Strict equality; `$contains` needs an
 * array field. Unlike the JS server, `$eq: ""` is honoured and an object condition without an
 * operator is compared by equality of JSON, so a filter never silently matches everything.
 */
export function matchesAuthFilter(metadata: Record<string, unknown> | null | undefined, filter: AuthFilter | undefined): boolean {
  if (!filter) return true;
  const md = metadata ?? {};
  for (const [key, cond] of Object.entries(filter)) {
    const actual = md[key];
    if (isPlainObject(cond) && "$eq" in cond) {
      if (actual !== cond.$eq) return false;
    } else if (isPlainObject(cond) && "$contains" in cond) {
      if (!Array.isArray(actual)) return false;
      const wanted = Array.isArray(cond.$contains) ? cond.$contains : [cond.$contains];
      if (!wanted.every((w) => actual.includes(w))) return false;
    } else if (isPlainObject(cond)) {
      if (!jsonEqual(actual, cond)) return false;
    } else if (actual !== cond) {
      return false;
    }
  }
  return true;
}
