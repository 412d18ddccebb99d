/**
 * The `Auth` builder: a deployer registers one authenticate handler and any number
 * of authorization handlers; the runtime calls it through the `AuthProvider` hook (D13) for every
 * method, in process and over HTTP alike.
 */
import { GraphdockError, invalidInput } from "../errors.js";
import { HTTPException, httpExceptionToError } from "./http-exception.js";
import { OWNER_USER } from "./types.js";
import type { AuthAction, AuthEvent, AuthFilter, AuthProvider, AuthRequest, AuthResource, AuthUser } from "./types.js";
import { isPlainObject } from "../json.js";

type Maybe<T> = T | null | undefined;
type Metadata = Maybe<Record<string, unknown>>;

/** The payload each event hands to its handler as `value`; handlers may mutate it. */
export interface AuthEventValueMap {
  "threads:create": { thread_id?: Maybe<string>; metadata?: Metadata; if_exists?: Maybe<"raise" | "do_nothing"> };
  "threads:read": { thread_id?: Maybe<string>; run_id?: Maybe<string> };
  "threads:update": { thread_id?: Maybe<string>; metadata?: Metadata; action?: Maybe<"interrupt" | "rollback"> };
  "threads:delete": { thread_id?: Maybe<string>; run_id?: Maybe<string> };
  "threads:search": {
    thread_id?: Maybe<string>;
    ids?: Maybe<string[]>;
    status?: Maybe<string>;
    metadata?: Metadata;
    values?: Metadata;
    limit?: Maybe<number>;
    offset?: Maybe<number>;
  };
  "threads:create_run": {
    thread_id?: Maybe<string>;
    assistant_id: string;
    run_id: string;
    status?: Maybe<string>;
    metadata?: Metadata;
    multitask_strategy?: Maybe<"reject" | "interrupt" | "rollback" | "enqueue">;
    if_not_exists?: Maybe<"reject" | "create">;
    after_seconds?: Maybe<number>;
    kwargs: Record<string, unknown>;
  };
  "assistants:create": {
    assistant_id?: Maybe<string>;
    graph_id: string;
    metadata?: Metadata;
    config?: Metadata;
    context?: unknown;
    if_exists?: Maybe<"raise" | "do_nothing">;
    name?: Maybe<string>;
    description?: Maybe<string>;
  };
  "assistants:read": { assistant_id: string; metadata?: Metadata };
  "assistants:update": {
    assistant_id: string;
    metadata?: Metadata;
    config?: Metadata;
    context?: unknown;
    graph_id?: Maybe<string>;
    name?: Maybe<string>;
    description?: Maybe<string>;
    version?: Maybe<number>;
  };
  "assistants:delete": { assistant_id: string };
  "assistants:search": { graph_id?: Maybe<string>; metadata?: Metadata; limit?: Maybe<number>; offset?: Maybe<number> };
  "crons:create": {
    payload?: Metadata;
    schedule: string;
    cron_id?: Maybe<string>;
    thread_id?: Maybe<string>;
    user_id?: Maybe<string>;
    end_time?: Maybe<string>;
    /** The cron's metadata: a handler stamps owners here (read back after the handler). */
    metadata?: Metadata;
  };
  "crons:read": { cron_id: string };
  "crons:update": { cron_id: string; payload?: Metadata; schedule?: Maybe<string>; metadata?: Metadata };
  "crons:delete": { cron_id: string };
  "crons:search": { assistant_id?: Maybe<string>; thread_id?: Maybe<string>; limit?: Maybe<number>; offset?: Maybe<number>; metadata?: Metadata };
  "store:put": { namespace: string[]; key: string; value: Record<string, unknown> };
  "store:get": { namespace?: Maybe<string[]>; key: string };
  "store:search": { namespace?: Maybe<string[]>; filter?: Metadata; limit?: Maybe<number>; offset?: Maybe<number>; query?: Maybe<string> };
  "store:list_namespaces": {
    namespace?: Maybe<string[]>;
    suffix?: Maybe<string[]>;
    max_depth?: Maybe<number>;
    limit?: Maybe<number>;
    offset?: Maybe<number>;
  };
  "store:delete": { namespace?: Maybe<string[]>; key: string };
}

/** A full event name, `"<resource>:<action>"`. */
export type AuthEventName = keyof AuthEventValueMap;
type ActionOf<E> = E extends `${string}:${infer A}` ? A : never;
type ResourceOf<E> = E extends `${infer R}:${string}` ? R : never;

/** Keys accepted by `Auth.on`: `"*"`, a resource, `"resource:action"` or `"*:action"`. */
export type AuthHandlerKey = "*" | AuthResource | AuthEventName | `*:${ActionOf<AuthEventName>}`;

/** The events a key covers. */
export type EventsOf<K extends AuthHandlerKey> = K extends "*"
  ? AuthEventName
  : K extends `*:${infer A}`
    ? Extract<AuthEventName, `${string}:${A}`>
    : K extends AuthEventName
      ? K
      : Extract<AuthEventName, `${K & string}:${string}`>;

/** What an authorization handler receives: one object per event it covers. */
export type AuthHandlerArgs<E extends AuthEventName, U extends AuthUser = AuthUser> = E extends AuthEventName
  ? {
      user: U;
      /** The event name, `"threads:create"`. */
      event: E;
      resource: ResourceOf<E>;
      action: ActionOf<E>;
      /** The operation payload; mutate it to change what is stored (e.g. stamp `metadata.owner`). */
      value: AuthEventValueMap[E];
      /** `user.permissions`. */
      permissions: string[];
    }
  : never;

/**
 * An authorization handler. Returns nothing, `true` (allow), `false` (403 forbidden) or a
 * filter (`{ key: value | { $eq } | { $contains } }`) that restricts what the caller sees and
 * changes; an empty filter allows everything. Throw `HTTPException` for another status.
 */
export type AuthHandler<E extends AuthEventName = AuthEventName, U extends AuthUser = AuthUser> = (
  args: AuthHandlerArgs<E, U>,
) => Maybe<boolean | AuthFilter | void> | Promise<Maybe<boolean | AuthFilter | void>>;

/** What an authenticate handler may return: a bare identity or an object with `identity`. */
export type AuthenticateResult =
  | string
  | { identity: string; permissions?: string[]; is_authenticated?: boolean; display_name?: string; [key: string]: unknown };

/** The authenticate handler: receives the caller's headers (lower-case names) and what the transport knows. */
export type AuthenticateHandler<R extends AuthenticateResult = AuthenticateResult> = (request: AuthRequest) => R | Promise<R>;

/** The normalised user a given authenticate result yields (custom fields kept). */
export type UserOf<R> = R extends string ? AuthUser : AuthUser & Omit<R, "permissions" | "is_authenticated" | "display_name">;

/**
 * The user Studio traffic is given by deployments that verify it themselves (D13: no header
 * bypasses the authenticate handler, so graphdock never creates it on its own).
 */
export const STUDIO_USER: AuthUser = Object.freeze({
  kind: "StudioUser",
  identity: "langgraph-studio-user",
  display_name: "langgraph-studio-user",
  permissions: [],
  is_authenticated: true,
}) as AuthUser;

/** True for the Studio user (`kind: "StudioUser"` or the Studio identity), as the official SDK decides. */
export function isStudioUser(user: Maybe<{ identity?: unknown; kind?: unknown }>): boolean {
  return !!user && (user.kind === "StudioUser" || user.identity === STUDIO_USER.identity);
}

const RESOURCE_ACTIONS: Record<AuthResource, readonly AuthAction[]> = {
  threads: ["create", "read", "update", "delete", "search", "create_run"],
  assistants: ["create", "read", "update", "delete", "search"],
  crons: ["create", "read", "update", "delete", "search"],
  store: ["put", "get", "search", "list_namespaces", "delete"],
};
const VALID_KEYS: ReadonlySet<string> = new Set([
  "*",
  ...Object.keys(RESOURCE_ACTIONS),
  ...Object.entries(RESOURCE_ACTIONS).flatMap(([r, actions]) => actions.flatMap((a) => [`${r}:${a}`, `*:${a}`])),
]);


/** Normalises an authenticate result; throws a descriptive error for anything else. */
function normaliseUser(result: unknown): AuthUser {
  if (typeof result === "string" && result !== "") {
    return Object.freeze({ identity: result, display_name: result, permissions: [], is_authenticated: true });
  }
  if (isPlainObject(result) && typeof result.identity === "string" && result.identity !== "") {
    const { permissions, is_authenticated, display_name } = result;
    if (permissions !== undefined && !(Array.isArray(permissions) && permissions.every((p) => typeof p === "string"))) {
      throw new Error(`graphdock: the authenticate handler returned permissions ${JSON.stringify(permissions)}; return an array of strings`);
    }
    return Object.freeze({
      ...result,
      identity: result.identity,
      permissions: [...((permissions as string[] | undefined) ?? [])],
      is_authenticated: typeof is_authenticated === "boolean" ? is_authenticated : true,
      display_name: typeof display_name === "string" ? display_name : result.identity,
    });
  }
  throw new Error(
    `graphdock: the authenticate handler returned ${describe(result)}; return a non-empty string identity or an object with a non-empty string \`identity\``,
  );
}

function describe(v: unknown): string {
  if (v === undefined) return "undefined";
  try {
    return JSON.stringify(v).slice(0, 120);
  } catch {
    return typeof v;
  }
}

/** Checks a handler's filter: conditions are values, `{ $eq }` or `{ $contains }`. */
function checkFilter(filter: Record<string, unknown>, event: string): AuthFilter | undefined {
  for (const [key, cond] of Object.entries(filter)) {
    if (!isPlainObject(cond)) continue;
    const ops = Object.keys(cond).filter((k) => k.startsWith("$"));
    // An operator stands alone: `{ $eq: v, other: w }` would silently ignore `other`.
    const mixed = ops.length > 0 && Object.keys(cond).length > ops.length;
    if (ops.some((op) => op !== "$eq" && op !== "$contains") || ops.length > 1 || mixed) {
      throw new Error(
        `graphdock: the "${event}" auth handler returned a filter with condition ${describe(cond)} on "${key}"; use a value, { $eq: v } or { $contains: v }`,
      );
    }
  }
  return Object.keys(filter).length === 0 ? undefined : filter;
}

/** Turns what a handler threw into the error that crosses the public surface. */
function handlerFailure(err: unknown, what: string, fallback: "unauthenticated" | "forbidden"): Error {
  if (GraphdockError.is(err)) return err;
  if (HTTPException.is(err)) return httpExceptionToError(err, fallback);
  const message = (err instanceof Error ? err.message : String(err)).replace(/^graphdock: /, "");
  // A bug in the handler: over HTTP a 500 whose body says nothing of it; the stack is in `cause`.
  return new Error(`graphdock: ${what} threw: ${message}`, { cause: err });
}

/**
 * Builder for custom authentication and authorization, and the `AuthProvider` the runtime calls.
 *
 * ```ts
 * const auth = new Auth()
 *   .authenticate(async ({ headers }) => {
 *     const user = await lookUpKey(headers["x-api-key"]);
 *     if (!user) throw new HTTPException(401, { message: "Invalid API key" });
 *     return { identity: user.id, role: user.role };
 *   })
 *   .on(["threads", "assistants"], ({ user, value }) => {
 *     if ("metadata" in value) value.metadata = { ...value.metadata, owner: user.identity };
 *     return { owner: user.identity };
 *   });
 * ```
 *
 * Without an authenticate handler every caller is `OWNER_USER`, and the `.on()`
 * handlers still run for that user (unlike the JS server, which skips them): registered rules
 * are never silently inactive.
 */
export class Auth<U extends AuthUser = AuthUser> implements AuthProvider {
  #authenticate: AuthenticateHandler | undefined;
  readonly #handlers = new Map<string, AuthHandler>();

  /** Registers THE authenticate handler (a second registration is an error). */
  authenticate<R extends AuthenticateResult>(handler: AuthenticateHandler<R>): Auth<UserOf<R>>;
  /** `AuthProvider`: identifies the caller of `request`. */
  authenticate(request: AuthRequest): Promise<AuthUser>;
  authenticate(arg: AuthenticateHandler | AuthRequest): Auth<AuthUser> | Promise<AuthUser> {
    if (typeof arg === "function") {
      if (this.#authenticate) throw invalidInput("graphdock: Auth already has an authenticate handler; register exactly one");
      this.#authenticate = arg;
      return this as Auth<AuthUser>;
    }
    return this.#identify(arg);
  }

  /**
   * Registers an authorization handler for one key or several. For an event `R:A` only the most
   * specific registered handler runs: `R:A`, else `R`, else `*:A`, else `*`. Registering the same
   * key twice is an error.
   */
  on<K extends AuthHandlerKey>(keys: K | readonly K[], handler: AuthHandler<EventsOf<K>, U>): this {
    const list: readonly string[] = Array.isArray(keys) ? keys : [keys as string];
    for (const key of list) {
      if (!VALID_KEYS.has(key)) {
        throw invalidInput(`graphdock: unknown auth event "${key}"; use "*", a resource, "resource:action" or "*:action" (${[...VALID_KEYS].join(", ")})`);
      }
      if (this.#handlers.has(key)) throw invalidInput(`graphdock: an auth handler for "${key}" is already registered`);
    }
    for (const key of list) this.#handlers.set(key, handler as AuthHandler);
    return this;
  }

  /** `AuthProvider`: runs the most specific handler; resolves a filter or undefined (allowed). */
  async authorize(user: AuthUser, { resource, action, value }: AuthEvent): Promise<AuthFilter | undefined> {
    const event = `${resource}:${action}`;
    const key = [event, resource, `*:${action}`, "*"].find((k) => this.#handlers.has(k));
    if (key === undefined) return undefined;
    let result: unknown;
    try {
      result = await this.#handlers.get(key)!({ user, event, resource, action, value, permissions: user.permissions } as never);
    } catch (err) {
      throw handlerFailure(err, `the "${key}" auth handler (event "${event}", user "${user.identity}")`, "forbidden");
    }
    if (result === undefined || result === null || result === true) return undefined;
    if (result === false) {
      throw new GraphdockError("forbidden", `Not authorized: the "${key}" auth handler denied "${event}" for user "${user.identity}"`);
    }
    if (isPlainObject(result)) return checkFilter(result, event);
    throw new Error(`graphdock: the "${key}" auth handler returned ${describe(result)}; return nothing, true, false or a filter object`);
  }

  async #identify(request: AuthRequest): Promise<AuthUser> {
    if (!this.#authenticate) return OWNER_USER;
    const headers: Record<string, string> = {};
    for (const [name, v] of Object.entries(request?.headers ?? {})) headers[name.toLowerCase()] = v;
    let result: unknown;
    try {
      result = await this.#authenticate({ ...request, headers });
    } catch (err) {
      throw handlerFailure(err, "the authenticate handler", "unauthenticated");
    }
    return normaliseUser(result);
  }
}

/** The shape of an `Auth` from `@langchain/langgraph-sdk/auth`: its handlers live in `~handlerCache`. */
export interface LangGraphAuthLike {
  "~handlerCache": {
    authenticate?: (request: Request) => unknown;
    callbacks?: Record<string, (args: never) => unknown>;
  };
}

/** True for an `Auth` built with `@langchain/langgraph-sdk/auth` (checked by shape). */
export function isLangGraphAuth(value: unknown): value is LangGraphAuthLike {
  return typeof value === "object" && value !== null && isPlainObject((value as Record<string, unknown>)["~handlerCache"]);
}

/**
 * Wraps an `Auth` written for the LangGraph server (`@langchain/langgraph-sdk/auth`), so its
 * module works unchanged: its authenticate handler receives a Fetch `Request` built from the
 * caller's headers, method and URL (never a body), and its `on()` handlers get the same
 * arguments they get there. Everything else is as for `Auth`.
 */
export function fromLangGraphAuth(langGraphAuth: LangGraphAuthLike): Auth {
  const { authenticate, callbacks = {} } = langGraphAuth["~handlerCache"];
  const auth = new Auth();
  if (authenticate) {
    auth.authenticate(({ headers, method, path, url }) => {
      const request = new Request(url ?? `http://localhost${path ?? "/"}`, { method: method ?? "GET", headers });
      return authenticate(request) as AuthenticateResult;
    });
  }
  for (const [key, handler] of Object.entries(callbacks)) auth.on(key as AuthHandlerKey, handler as AuthHandler);
  return auth;
}
