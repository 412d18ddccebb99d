/**
 * Every answer the tests receive from graphdock's API is checked against the OpenAPI document it
 * serves (GET /openapi.json, D81): installed for the whole default project by vitest.config.ts,
 * it wraps the `fetch` of every app `createApp` makes (so `createFetchHandler` and `serve` too,
 * behind their custom routes), finds the documented operation of each request, and checks the
 * status is documented (or the default error), the media type is one documented for it, and a
 * JSON body validates against the documented schema (Ajv, JSON Schema 2020-12). Answers of
 * endpoints beside the API are not the document's and are left alone. The checks run off the
 * test's path; each file ends by asserting none failed.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, expect, vi } from "vitest";
import type * as App from "../../src/http/app.js";
import type { FetchHandlerOptions } from "../../src/http/index.js";

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

const failures: string[] = [];
const pending: Promise<void>[] = [];
let checked = 0;

/** The document of an app with every route group (what the handler serves, before `disable`). */
let reference: Promise<{ doc: Document; ops: Array<{ method: string; pattern: RegExp; op: Operation; path: string }>; ajv: Ajv2020 }> | undefined;
function documentOf(http: typeof App) {
  return (reference ??= (async () => {
    const app = http.createApp({ client: () => Promise.reject(new Error("not used")) });
    const doc = (await (await app.fetch(new Request("http://doc/openapi.json"))).json()) as Document;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: "https://graphdock.test/openapi.json", components: doc.components });
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
        .map(([method, op]) => ({ method: method.toUpperCase(), path, op, pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}/?$`) })),
    );
    return { doc, ops, ajv };
  })());
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(ajv: Ajv2020, schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    // Component references resolve against the document.
    v = ajv.compile({ $id: `https://graphdock.test/answer/${validators.size}`, ...JSON.parse(key.replaceAll('"#/components/', '"https://graphdock.test/openapi.json#/components/')) });
    validators.set(key, v);
  }
  return v;
}

/** `copy`: the answer's body, cloned before the test read it (JSON answers only). */
async function check(http: typeof App, request: Request, response: Response, copy: Response | undefined, options: FetchHandlerOptions) {
  const { ops, ajv } = await documentOf(http);
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  let path = new URL(request.url).pathname;
  if (base && (path === base || path.startsWith(`${base}/`))) path = path.slice(base.length) || "/";
  const what = `${request.method} ${path} -> ${response.status}`;
  const matching = ops.filter((o) => o.pattern.test(path));
  const op = matching.find((o) => o.method === request.method);
  if (!op) {
    // Not an operation of the API: an endpoint's, or an error answer.
    if (options.endpoints?.length) return;
    if (![404, 405, 401, 500].includes(response.status)) failures.push(`${what}: answered, but the document has no such operation`);
    if (response.status === 405 && !matching.length) failures.push(`${what}: 405 on a path the document does not list`);
    return;
  }
  const documented = op.op.responses[String(response.status)] ?? op.op.responses.default;
  if (!documented) return void failures.push(`${what}: status not documented for ${op.method} ${op.path}`);
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
  if (!type) {
    if (documented.content && response.status !== 204) failures.push(`${what}: no content type, documented ${Object.keys(documented.content)}`);
    return;
  }
  const media = documented.content?.[type];
  if (!media) return void failures.push(`${what}: ${type} not documented (${Object.keys(documented.content ?? {}).join(", ") || "no body"})`);
  if (!copy || !media.schema) return;
  const text = await copy.text();
  const validate = validatorFor(ajv, media.schema);
  checked++;
  if (!validate(JSON.parse(text))) {
    failures.push(`${what}: body does not match ${op.method} ${op.path}: ${ajv.errorsText(validate.errors?.slice(0, 3))}: ${text.slice(0, 300)}`);
  }
}

vi.mock("../../src/http/app.js", async (importOriginal) => {
  const http = await importOriginal<typeof App>();
  const createApp: typeof App.createApp = (runtime, options = {}) => {
    const app = http.createApp(runtime, options);
    const fetch = app.fetch;
    app.fetch = async (request, ...rest) => {
      const response = await fetch(request, ...rest);
      const copy = /^application\/json/.test(response.headers.get("content-type") ?? "") ? response.clone() : undefined;
      pending.push(check(http, request, response, copy, options).catch((err) => void failures.push(`${request.method} ${request.url}: ${String(err)}`)));
      return response;
    };
    return app;
  };
  return { ...http, createApp };
});

afterAll(async () => {
  await Promise.all(pending.splice(0));
  if (process.env.GRAPHDOCK_OPENAPI_COUNT) console.log(`openapi: ${checked} JSON answers checked against the document`);
  expect(failures.splice(0)).toEqual([]);
});
