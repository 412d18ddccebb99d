import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createFetchHandler } from "../../src/http/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { call } from "./helpers.js";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../examples/upload/${name}.json`, import.meta.url), "utf8"));
const UPLOAD = "/api/v1/datasets/upload-experiment";

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function setup(apiKey?: string) {
  runtime = await createRuntime({ graphs: {} });
  return createFetchHandler(runtime, { apiKey });
}

describe("experiment endpoints over HTTP", () => {
  it("uploads with x-api-key and serves datasets, experiments and the comparison", async () => {
    const handler = await setup("secret");
    const key = { "x-api-key": "secret" };
    const first = await call(handler, "POST", UPLOAD, fixture("baseline"), key);
    expect(first.status).toBe(200);
    const a = await first.json();
    expect(a.dataset).toMatchObject({ name: "support-faq", externally_managed: true, data_type: "kv" });
    expect(a.experiment).toMatchObject({ name: "support-bot v1", reference_dataset_id: a.dataset.id });
    const b = await (await call(handler, "POST", UPLOAD, fixture("prompt-v2"), key)).json();
    expect(b.dataset.id).toBe(a.dataset.id);

    const datasets = await (await call(handler, "GET", "/api/v1/datasets", undefined, key)).json();
    expect(datasets.map((d: { id: string }) => d.id)).toEqual([a.dataset.id]);
    expect((await (await call(handler, "GET", `/api/v1/datasets/${a.dataset.id}`, undefined, key)).json()).id).toBe(a.dataset.id);
    const examples = await (await call(handler, "GET", `/api/v1/datasets/${a.dataset.id}/examples`, undefined, key)).json();
    expect(examples).toHaveLength(fixture("baseline").results.length);
    const experiments = await (await call(handler, "GET", `/api/v1/experiments?dataset_id=${a.dataset.id}`, undefined, key)).json();
    expect(experiments.map((e: { id: string }) => e.id)).toEqual([a.experiment.id, b.experiment.id]);
    expect((await (await call(handler, "GET", `/api/v1/experiments/${b.experiment.id}`, undefined, key)).json()).name).toBe(b.experiment.name);
    const runs = await (await call(handler, "GET", `/api/v1/experiments/${a.experiment.id}/runs`, undefined, key)).json();
    expect(runs).toHaveLength(fixture("baseline").results.length);

    const q = `/api/v1/experiments/compare?id=${a.experiment.id}&id=${b.experiment.id}`;
    const comparison = await (await call(handler, "GET", q, undefined, key)).json();
    expect(comparison.experiments.map((e: { id: string }) => e.id)).toEqual([a.experiment.id, b.experiment.id]);
    const html = await call(handler, "GET", `${q}&format=html`, undefined, key);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await html.text();
    expect(page).toContain("<table");
    expect(page).toContain(b.experiment.name);
    const viaAccept = await call(handler, "GET", q, undefined, { ...key, accept: "text/html" });
    expect(viaAccept.headers.get("content-type")).toMatch(/^text\/html/);
    const csv = await call(handler, "GET", `${q}&format=csv`, undefined, key);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect((await csv.text()).split("\n")[0]).toContain("example_id");
  });

  it("answers 401 with a detail and writes nothing when the x-api-key is missing or wrong", async () => {
    const handler = await setup("secret");
    for (const headers of [{}, { "x-api-key": "wrong" }] as Record<string, string>[]) {
      const res = await call(handler, "POST", UPLOAD, fixture("baseline"), headers);
      expect(res.status).toBe(401);
      expect((await res.json()).detail).toMatch(/x-api-key/);
    }
    expect(await (await call(handler, "GET", "/api/v1/datasets", undefined, { "x-api-key": "secret" })).json()).toEqual([]);
  });

  it("maps upload validation to 422 with problems and a reused experiment name to 409", async () => {
    const handler = await setup();
    const bad = { ...fixture("baseline"), dataset_id: undefined, dataset_name: undefined };
    const res = await call(handler, "POST", UPLOAD, bad);
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(typeof body.detail).toBe("string");
    expect(Array.isArray(body.problems)).toBe(true);
    const malformed = await call(handler, "POST", UPLOAD, "{ not json");
    expect(malformed.status).toBe(422);
    expect(await (await call(handler, "GET", "/api/v1/datasets")).json()).toEqual([]);
    expect((await call(handler, "GET", "/api/v1/experiments/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    const cmp = await call(handler, "GET", "/api/v1/experiments/compare?id=x");
    expect(cmp.status).toBe(422);
    expect((await call(handler, "POST", UPLOAD, fixture("baseline"))).status).toBe(200);
    const again = await call(handler, "POST", UPLOAD, fixture("baseline"));
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toMatch(/support-bot v1/);
  });
});
