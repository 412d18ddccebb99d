import { describe, expect, it } from "vitest";
import { GraphdockError, LOCAL_TENANT_ID, userTenantId } from "../../src/index.js";
import type { DocCollection, WriteOp } from "../../src/persistence/types.js";
import { request, row, rowId, setup } from "./helpers.js";

const CHILDREN: DocCollection[] = ["examples", "experiment_runs", "feedback"];

describe("tenants of createUploadApi", () => {
  it("reads data uploaded before tenants (no tenant_id) as the local tenant's, and re-uploads update it", async () => {
    const { store, experiments, datasets, forTenant } = setup();
    const first = await experiments.upload(request({ experiment_name: "old", results: [row(1, 1, { evaluation_scores: [{ key: "k", score: 1 }] })] }));
    // Rewrite the children as the previous version stored them: without a tenant_id, and each
    // record under its own id (an example under its bare row id).
    const ops: WriteOp[] = [];
    for (const collection of CHILDREN) {
      for (const d of await store.listDocs<Record<string, unknown>>(collection)) {
        const { tenant_id: _dropped, ...doc } = d.doc;
        if (d.id !== doc.id) ops.push({ op: "doc.delete", collection, id: d.id });
        ops.push({ op: "doc.put", collection, id: String(doc.id), parent: d.parent, doc });
      }
    }
    await store.commit(ops);
    expect((await store.listDocs<Record<string, unknown>>("examples"))[0]!.doc).not.toHaveProperty("tenant_id");

    expect((await datasets.examples(first.dataset.id)).map((e) => e.tenant_id)).toEqual([LOCAL_TENANT_ID]);
    const [run] = await experiments.runs(first.experiment.id);
    expect([run!.tenant_id, run!.feedback[0]!.tenant_id]).toEqual([LOCAL_TENANT_ID, LOCAL_TENANT_ID]);
    // Row 1 is found again (not a second example) and row 2 is new.
    const again = await experiments.upload(request({ experiment_name: "new", results: [row(1, 1, { inputs: { q: "v2" } }), row(2, 1)] }));
    expect(again.dataset.example_count).toBe(2);
    expect((await datasets.examples(first.dataset.id)).map((e) => [e.id, e.inputs])).toEqual([
      [rowId(1), { q: "v2" }],
      [rowId(2), { q: "question 2" }],
    ]);

    // Another tenant sees none of it, and may use the same name and row ids.
    const carol = forTenant(userTenantId("carol"));
    expect(await carol.datasets.list()).toEqual([]);
    await expect(carol.datasets.get(first.dataset.id)).rejects.toSatisfy((e) => GraphdockError.is(e, "not_found"));
    const hers = await carol.experiments.upload(request({ experiment_name: "old", results: [row(1, 1)] }));
    expect([hers.dataset.name, hers.dataset.example_count, hers.experiment.test_run_number]).toEqual(["ds", 1, 1]);
    expect((await datasets.examples(first.dataset.id)).map((e) => e.inputs)).toEqual([{ q: "v2" }, { q: "question 2" }]);
  });

  it("resolves the tenant before anything else: a failing resolver writes and reads nothing", async () => {
    const { store, forTenant } = setup();
    const denied = forTenant(() => Promise.reject(new GraphdockError("unauthenticated", "no credentials")));
    await expect(denied.experiments.upload({} as never)).rejects.toSatisfy((e) => GraphdockError.is(e, "unauthenticated"));
    await expect(denied.datasets.list()).rejects.toSatisfy((e) => GraphdockError.is(e, "unauthenticated"));
    expect(await store.listDocs("datasets")).toEqual([]);
  });
});
