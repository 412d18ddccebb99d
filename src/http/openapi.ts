/**
 * The OpenAPI 3.1 document of an app (D81), built from its route declarations (src/http/route.ts):
 * request bodies and answers are JSON Schemas converted from the same zod schemas that validate
 * the requests (bodies as they are sent) and type the answers (src/http/records.ts, as they are
 * answered), under `components.schemas`; query parameters say what they carry. Endpoints beside
 * the API are listed with the paths they contribute, or as opaque paths. Loaded on the first
 * `GET /openapi.json` only, so pages that never ask pay nothing for the schema conversion.
 */
import * as z from "zod/mini";
import type { HttpEndpoint } from "./endpoints.js";
import { records, type RecordOf } from "./records.js";
import type { DeclaredRoute, ResponseSpec } from "./route.js";
import { queryDocs } from "./wire.js";

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** `components.schemas` of a registry, without the per-schema `$schema` and `$id` of a standalone document. */
function components(registry: z.core.$ZodRegistry<{ id: string }>, io: "input" | "output"): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` }).schemas)) {
    const { $schema: _schema, $id: _id, ...rest } = schema;
    out[name] = rest;
  }
  return out;
}
/** One schema as JSON Schema (a parameter's, which has no component of its own). */
function inline(schema: z.ZodMiniType): Json {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: "input" });
  return rest;
}

/** A query parameter's schema (its optional wrapper peeled) and whether it is required. */
function queryParameter(name: string, field: z.ZodMiniType): Json {
  const def = field._zod.def as { type: string; innerType?: z.ZodMiniType };
  const inner = def.type === "optional" && def.innerType ? def.innerType : field;
  const doc = queryDocs.get(inner);
  let schema: Json;
  if (doc) {
    const items = doc.items;
    schema = items instanceof Object && "_zod" in items ? { ...doc, items: inline(items as z.ZodMiniType) } : doc;
  } else schema = inline(inner);
  return { name, in: "query", required: inner === field, schema };
}

/** `/threads/:thread_id` -> `/threads/{thread_id}`. */
const openApiPath = (path: string) => path.replace(/:([a-z_]+)/g, "{$1}");
/** `threads.getState` -> `ThreadsGetState`. */
const pascal = (id: string) => id.replace(/(^|[._])([a-z])/g, (_, _sep: string, c: string) => c.toUpperCase());

function response(spec: ResponseSpec): Json {
  const content: Json = {};
  if (spec.json) content["application/json"] = { schema: spec.json.endsWith("[]") ? { type: "array", items: ref(spec.json.slice(0, -2)) } : ref(spec.json) };
  for (const type of Object.keys(spec.content ?? {})) content[type] = { schema: { type: "string" } };
  const notes = Object.entries(spec.content ?? {}).map(([type, what]) => `\`${type}\`: ${what}`);
  return {
    description: [spec.description, ...notes].join(" "),
    ...(spec.headers
      ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([name, description]) => [name, { description, schema: { type: "string" } }])) }
      : {}),
    ...(Object.keys(content).length ? { content } : {}),
  };
}

/** The OpenAPI document of `routes` and `endpoints`, served under `mount` (`""`: the root). */
export function openApiDocument(routes: readonly DeclaredRoute[], endpoints: readonly HttpEndpoint[], mount: string): RecordOf<"OpenApiDocument"> {
  const answers = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(records)) answers.add(schema, { id: name });
  const bodies = z.registry<{ id: string }>();
  const bodyNames = new Map<z.ZodMiniType, string>();
  for (const route of routes) {
    if (!route.body || bodyNames.has(route.body)) continue;
    const name = `${pascal(route.id)}Body`;
    bodyNames.set(route.body, name);
    bodies.add(route.body, { id: name });
  }

  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const parameters: Json[] = [...route.path.matchAll(/:([a-z_]+)/g)].map(([, name]) => ({ name, in: "path", required: true, schema: { type: "string" } }));
    for (const [name, field] of Object.entries(route.query?.shape ?? {})) parameters.push(queryParameter(name, field as z.ZodMiniType));
    for (const [name, description] of Object.entries(route.headers ?? {})) parameters.push({ name, in: "header", description, schema: { type: "string" } });
    const responses: Json = {};
    for (const [status, spec] of Object.entries(route.responses)) responses[status] = response(spec);
    responses.default = {
      description:
        "An error, as `{ detail }` (with `problems` per field for invalid input): 401 or 403 from the auth handler, 404 an unknown (or hidden) id, 405 another method, 409 a conflict, 413 a body over the limit, 422 invalid input, 500 an internal fault, 503 the store cannot be reached now (with `Retry-After`).",
      content: { "application/json": { schema: ref("Error") } },
    };
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = {
      operationId: route.id,
      tags: [route.group],
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: route.body._zod.optin !== "optional", content: { "application/json": { schema: ref(bodyNames.get(route.body)!) } } } } : {}),
      responses,
      ...(route.public ? { security: [] } : {}),
    };
  }
  for (const endpoint of endpoints) {
    const described = endpoint.openapi ?? {};
    for (const path of endpoint.paths) {
      paths[path] = described[path] ?? {
        summary: `The ${endpoint.name} endpoint`,
        description: `Served by the \`${endpoint.name}\` endpoint, below this path too; its requests and answers are its own.`,
      };
    }
    for (const [path, item] of Object.entries(described)) paths[path] ??= item;
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "graphdock agent server",
      // The document's own version (not graphdock's): the agent-server API it describes.
      version: "1.0",
      description: "The LangGraph agent-server API, served by graphdock: the official SDK's client speaks it.",
    },
    servers: [{ url: mount || "/" }],
    tags: [...new Set(routes.map((r) => r.group))].map((name) => ({ name })),
    paths,
    components: { schemas: { ...components(answers, "output"), ...components(bodies, "input") } },
  };
}
