// A store that cannot be reached over HTTP (D70): `unavailable` answers 503 with `Retry-After`
// and a detail saying so, `GET /ok` answers 503 while `runtime.ping()` rejects, and once the
// store is back everything answers as before with nothing lost. Every answer here is checked
// against the OpenAPI document (test/setup/openapi-responses.ts), so the 503s must be documented.
import { afterEach, describe, expect, it } from "vitest";
import { unavailable } from "../../src/errors.js";
import { createFetchHandler } from "../../src/http/index.js";
import { memoryStore } from "../../src/persistence/memory.js";
import type { Store } from "../../src/persistence/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { echoGraph } from "../runtime/graphs.js";
import { call } from "./helpers.js";

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** A memory store whose reads, commits and ping fail with `unavailable` while `down` is set (as the PostgreSQL store's do). */
function flakyStore(): { store: Store; setDown(down: boolean): void } {
  const base = memoryStore();
  let down = false;
  const failing = new Set<PropertyKey>(["ping", "getThread", "commit"]);
  const fail = () => Promise.reject(unavailable("graphdock: the store is unavailable: its database cannot be reached; try again in a few seconds."));
  const store = new Proxy(base, {
    get(target, key) {
      if (down && failing.has(key)) return fail;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store, setDown: (value) => void (down = value) };
}

describe("HTTP while the store cannot be reached", () => {
  it("answers 503 with Retry-After, /ok included, and as before once the store is back", async () => {
    const { store, setDown } = flakyStore();
    runtime = await createRuntime({ graphs: { echo: echoGraph() }, store });
    const handler = createFetchHandler(runtime);

    expect((await call(handler, "GET", "/ok")).status).toBe(200);
    const created = await call(handler, "POST", "/threads", { metadata: { n: 1 } });
    expect(created.status).toBe(200);
    const { thread_id } = (await created.json()) as { thread_id: string };

    setDown(true);
    for (const [method, path, body] of [
      ["GET", "/ok", undefined],
      ["POST", "/threads", {}],
      ["GET", `/threads/${thread_id}`, undefined],
    ] as const) {
      const res = await call(handler, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const { detail } = (await res.json()) as { detail: string };
      expect(detail).toMatch(/store is unavailable/);
      expect(detail).not.toMatch(/\n|at .*\.ts/); // no stack, no source
    }

    setDown(false);
    const ok = await call(handler, "GET", "/ok");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    const read = await call(handler, "GET", `/threads/${thread_id}`);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { metadata: { n: number } }).metadata.n).toBe(1);
  });

  it("a runtime without ping (anything with the client binding) answers /ok 200", async () => {
    runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const bound = runtime;
    const handler = createFetchHandler({ client: (request) => bound.client(request) });
    const res = await call(handler, "GET", "/ok");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
});
