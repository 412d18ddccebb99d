/** Endpoints served beside the API (protocols, studio): routing, base path, the caller's auth. */
import { afterEach, expect, it } from "vitest";
import { Auth, createRuntime, HTTPException, type Runtime } from "../../src/index.js";
import { createFetchHandler, type HttpEndpoint } from "../../src/http/index.js";
import { echoGraph } from "./graphs.js";

let runtime: Runtime | undefined;
afterEach(() => runtime?.close());

/** An endpoint answering with what it was given, and the caller's visible thread count. */
const probe: HttpEndpoint = {
  name: "probe",
  paths: ["/probe", "/.well-known/probe.json"],
  async fetch(request, { runtime, path, basePath }) {
    const client = await runtime.client({ headers: Object.fromEntries(request.headers) });
    const threads = await client.threads.search({});
    return Response.json({ path, basePath, threads: threads.length });
  },
};

it("routes a request under an endpoint's paths to it, below the base path, with the caller bound by the runtime's auth", async () => {
  const auth = new Auth()
    .authenticate(async ({ headers }) => {
      const key = headers["x-api-key"];
      if (!key) throw new HTTPException(401, { message: "no key" });
      return { identity: key };
    })
    .on("*", ({ user, value }) => {
      if ("metadata" in value) value.metadata = { ...value.metadata, owner: user.identity };
      return { owner: user.identity };
    });
  runtime = await createRuntime({ graphs: { echo: echoGraph() }, auth });
  await (await runtime.client({ headers: { "x-api-key": "alice" } })).threads.create();
  const handler = createFetchHandler(runtime, { basePath: "/api", endpoints: [probe] });
  const get = (path: string, key?: string) => handler(new Request(`http://x${path}`, { headers: key ? { "x-api-key": key } : {} }));

  expect(await (await get("/api/probe/sub", "alice")).json()).toEqual({ path: "/probe/sub", basePath: "/api", threads: 1 });
  expect(await (await get("/api/.well-known/probe.json", "bob")).json()).toEqual({ path: "/.well-known/probe.json", basePath: "/api", threads: 0 });
  expect((await get("/api/probe", undefined)).status).toBe(401);
  // A path that only starts with the same letters is not the endpoint's.
  expect((await get("/api/prober", "alice")).status).toBe(404);
});
