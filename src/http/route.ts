/**
 * One declaration per route (D80): its method and path, what it takes (query parameters and
 * body, as zod schemas), what it answers per status (zod schemas for JSON bodies, other media
 * types by name) and its handler. From it the app registers a Hono route (authentication, then
 * Hono's `validator` for the query and ours for the body, then the handler) and the OpenAPI
 * document describes it; the handler's input is typed by the schemas and its answer by the
 * documented responses, so the three cannot drift apart.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { ParamKeys, ParamKeyToRecord } from "hono/types";
import { validator } from "hono/validator";
import type * as z from "zod/mini";
import { invalidInput } from "../errors.js";
import { readJson } from "./body.js";
import { json } from "./errors.js";
import type { Limits, RouteGroup } from "./options.js";
import type { RecordName, RecordOf } from "./records.js";
import type { HttpClient } from "./types.js";
import { parse } from "../runtime/schemas.js";
import { camel, conform } from "./wire.js";

/** What the app keeps on a request's Hono context. */
export interface ApiEnv {
  Variables: {
    /** The runtime bound to the request's caller (routes that are not public). */
    client: HttpClient;
    /** The route template that matched, for `observe`. */
    route: string;
  };
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One documented answer of a route. */
export interface ResponseSpec {
  readonly description: string;
  /** The JSON body: a record of src/http/records.ts by name, or a list of them (`"Thread[]"`). */
  readonly json?: JsonName;
  /** Other media types the answer may have (`text/event-stream`, `text/html`), with what they hold. */
  readonly content?: Readonly<Record<string, string>>;
  /** Response headers, with what they hold. */
  readonly headers?: Readonly<Record<string, string>>;
}
/** A route's answers by status. */
export type Responses = { readonly [status: number]: ResponseSpec };

/** A JSON body as routes name it. */
export type JsonName = RecordName | `${RecordName}[]`;
/** What a JSON body's name stands for. */
type JsonOf<N extends JsonName> = N extends `${infer E extends RecordName}[]` ? RecordOf<E>[] : N extends RecordName ? RecordOf<N> : never;

/** What a handler may answer for one documented status. */
type ReplyFor<S extends number, R extends ResponseSpec> =
  | (R extends { json: infer J extends JsonName } ? { status: S; body: JsonOf<J>; headers?: Headers } : never)
  | (R extends { content: object } ? { status: S; response: Response } : never)
  | (R extends { json: JsonName } | { content: object } ? never : { status: S; headers?: Headers });
/** What a handler answers: one of its documented statuses, with a body of the documented schema. */
export type Reply<R extends Responses> = { [S in keyof R & number]: ReplyFor<S, R[S]> }[keyof R & number];

type QuerySchema = z.ZodMiniObject;
/** The body of a route: an object, a list of objects, or anything (the route checks it itself). */
type BodySchema = z.ZodMiniType;

/** The path parameters of a route (`/threads/:thread_id` -> `{ thread_id: string }`), as Hono reads them. */
type Params<P extends string> = Simplify<UnionToIntersection<ParamKeyToRecord<ParamKeys<P>>>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

/** What a handler gets. */
export interface RouteInput<P extends string, Q extends QuerySchema | undefined, B extends BodySchema | undefined> {
  /** The Hono context (headers, the raw request). */
  readonly c: Context<ApiEnv>;
  readonly request: Request;
  /** The path parameters, percent-decoded. */
  readonly params: Params<P>;
  /** The query parameters, converted. */
  readonly query: Q extends QuerySchema ? z.output<Q> : undefined;
  /** The body as sent, checked against the schema. */
  readonly body: B extends BodySchema ? z.input<B> : undefined;
  /** The runtime bound to the caller (not for public routes). */
  readonly client: HttpClient;
}

/** A route. */
export interface RouteSpec<P extends string, Q extends QuerySchema | undefined, B extends BodySchema | undefined, R extends Responses> {
  readonly method: Method;
  /** Hono's form: `/threads/:thread_id`. */
  readonly path: P;
  /** The OpenAPI `operationId`, and the call named in validation messages (`threads.search`). */
  readonly id: string;
  readonly summary: string;
  readonly description?: string;
  /** Answered without authenticating the caller (meta routes). */
  readonly public?: boolean;
  readonly query?: Q;
  readonly body?: B;
  /**
   * How a `null` field of the body is read: kept (default: the schema decides), `"drop"`ped as
   * absent, or dropped except for the fields listed (where `null` means something).
   */
  readonly nulls?: "drop" | readonly string[];
  /** Headers the route reads, with what they mean. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly responses: R;
  handle(input: RouteInput<P, Q, B>): Promise<Reply<R>>;
}

/** A 200 answer with a JSON body. */
export const ok = <T>(body: T, headers?: Headers) => ({ status: 200 as const, body, headers });
/** An answer without a body. */
export const empty = <S extends number>(status: S) => ({ status });
/** A 200 answer made elsewhere (a stream, a page). */
export const raw = (response: Response) => ({ status: 200 as const, response });

/** A declared route, as the OpenAPI document reads it. */
export interface DeclaredRoute {
  readonly group: RouteGroup;
  readonly method: Method;
  readonly path: string;
  readonly id: string;
  readonly summary: string;
  readonly description?: string;
  readonly public?: boolean;
  readonly query?: QuerySchema;
  readonly body?: BodySchema;
  readonly headers?: Readonly<Record<string, string>>;
  readonly responses: Responses;
}

/** Declares a route (see `RouteSpec`). */
export type Define = <P extends string, R extends Responses, Q extends QuerySchema | undefined = undefined, B extends BodySchema | undefined = undefined>(
  spec: RouteSpec<P, Q, B, R>,
) => void;

/** The Hono handlers of a route: authentication, the query's and the body's validation, the handler. */
export function routeHandlers<P extends string, Q extends QuerySchema | undefined, B extends BodySchema | undefined, R extends Responses>(
  spec: RouteSpec<P, Q, B, R>,
  authenticate: MiddlewareHandler<ApiEnv>,
  limits: Limits,
): MiddlewareHandler<ApiEnv>[] {
  const handlers: MiddlewareHandler<ApiEnv>[] = [];
  if (!spec.public) handlers.push(authenticate);
  const { query, body } = spec;
  if (query) handlers.push(validator("query", (value) => parse(query, value, spec.id)));
  if (body) handlers.push(jsonBody(body, spec, limits));
  // What the validators stored (nothing for a route without query or body: `valid` is then
  // undefined, as the input types say); Hono keeps an object per target, so the body is wrapped.
  type Checked = { out: { query: RouteInput<P, Q, B>["query"]; json: { value: RouteInput<P, Q, B>["body"] } } };
  const handle = async (c: Context<ApiEnv, P, Checked>): Promise<Response> => {
    c.set("route", spec.path);
    const reply: AnyReply = await spec.handle({
      c,
      request: c.req.raw,
      // Hono's type for them, spelled with its own copies of two helper types.
      params: c.req.param() as Params<P>,
      query: c.req.valid("query"),
      body: c.req.valid("json")?.value,
      client: c.var.client,
    });
    if ("response" in reply) return reply.response;
    if ("body" in reply) return json(reply.body, reply.status, reply.headers);
    return new Response(null, { status: reply.status, headers: reply.headers });
  };
  handlers.push(handle);
  return handlers;
}

type AnyReply = { status: number; headers?: Headers } & ({ body: unknown } | { response: Response } | {});

/**
 * The body validator: reads the body under the limits (413, 422 for malformed or too deep JSON),
 * reads each object's fields under their snake_case names, or their camelCase ones (the SDK's
 * `runs.createBatch` sends its payloads unrenamed), applies the route's `nulls`, and checks the
 * result against the schema (422 naming each field). Stored for the handler as Hono's validated
 * `json`, whatever the request's content type said.
 */
function jsonBody(schema: BodySchema, spec: { id: string; nulls?: "drop" | readonly string[] }, limits: Limits): MiddlewareHandler<ApiEnv> {
  const def = schema._zod.def as { type: string; shape?: Record<string, unknown>; element?: { _zod: { def: { shape?: Record<string, unknown> } } } };
  const list = def.type === "array";
  const shape = list ? def.element?._zod.def.shape : def.shape;
  const fields = shape ? Object.keys(shape).map((name) => [name, camel(name)] as const) : undefined;
  const keepNull = (name: string) => spec.nulls === undefined || (spec.nulls !== "drop" && spec.nulls.includes(name));
  const fieldsOf = (value: unknown) => {
    if (!fields || value === null || typeof value !== "object" || Array.isArray(value)) return value;
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [name, alias] of fields) {
      const v = src[name] !== undefined ? src[name] : src[alias];
      if (v !== undefined && (v !== null || keepNull(name))) out[name] = v;
    }
    return out;
  };
  return async (c, next) => {
    let value = await readJson(c.req.raw, limits);
    if (list) {
      if (Array.isArray(value)) value = value.map(fieldsOf);
    } else if (fields) {
      if (value === undefined || value === null) value = {};
      else if (typeof value !== "object" || Array.isArray(value)) {
        throw invalidInput("The request body must be a JSON object", [{ path: "", message: "expected an object" }]);
      }
      value = fieldsOf(value);
    }
    c.req.addValidatedData("json", { value: conform(schema, value, spec.id) });
    await next();
  };
}
