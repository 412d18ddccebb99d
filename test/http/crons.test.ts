/**
 * Crons over HTTP: the crons contract through the official SDK client on the fetch
 * handler, and the routes' wire details.
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import { cronsContract, T0, TestClock, type CronsClient } from "../runtime/crons.js";
import { Gate, testGraphs } from "../runtime/graphs.js";
import { call, inProcessClient } from "./helpers.js";

cronsContract("official client over HTTP, memory store", async (clock, diagnostics) => {
  const gate = new Gate();
  const runtime = await createRuntime({ graphs: testGraphs(gate), clock: clock.now, diagnostics });
  // The SDK client answers as the runtime does: the contract reads it with the runtime's types.
  const client = inProcessClient(createFetchHandler(runtime)) as unknown as CronsClient;
  return {
    client,
    runtime,
    gate,
    close: async () => {
      gate.release();
      await runtime.close();
    },
  };
});

describe("cron routes", () => {
  it("answer snake_case records, 204 on delete, 404 for an unknown cron, 422 for bad input; /info advertises crons", async () => {
    const clock = new TestClock(T0);
    const runtime = await createRuntime({ graphs: testGraphs(new Gate()), clock: clock.now });
    const handler = createFetchHandler(runtime);
    const info = await (await call(handler, "GET", "/info")).json();
    expect(info.flags.crons).toBe(true);
    const created = await call(handler, "POST", "/runs/crons", { assistant_id: "agent", schedule: "*/5 * * * *", end_time: "2026-02-01T00:00:00Z", on_run_completed: "keep" });
    expect(created.status).toBe(200);
    const cron = await created.json();
    expect(cron).toMatchObject({ schedule: "*/5 * * * *", end_time: "2026-02-01T00:00:00.000Z", on_run_completed: "keep", next_run_date: "2026-01-01T00:05:00.000Z" });
    const count = await call(handler, "POST", "/runs/crons/count", {});
    expect(await count.json()).toBe(1);
    const patched = await call(handler, "PATCH", `/runs/crons/${cron.cron_id}`, { end_time: null, enabled: false });
    expect(await patched.json()).toMatchObject({ end_time: null, enabled: false });
    const bad = await call(handler, "POST", "/runs/crons", { assistant_id: "agent", schedule: "* * *" });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail).toMatch(/schedule/);
    expect((await call(handler, "POST", "/runs/crons", { schedule: "* * * * *" })).status).toBe(422);
    const camel = await call(handler, "POST", "/runs/crons", { assistantId: "agent", schedule: "0 0 * * *", onRunCompleted: "keep", endTime: "2026-03-01T00:00:00Z" });
    expect(await camel.json()).toMatchObject({ on_run_completed: "keep", end_time: "2026-03-01T00:00:00.000Z" });
    expect((await call(handler, "DELETE", `/runs/crons/${cron.cron_id}`)).status).toBe(204);
    expect((await call(handler, "DELETE", `/runs/crons/${cron.cron_id}`)).status).toBe(404);
    expect((await call(handler, "PATCH", `/runs/crons/${cron.cron_id}`, { enabled: true })).status).toBe(404);
    expect((await (await call(handler, "POST", "/runs/crons/search", {})).json()).map((c: { cron_id: string }) => c.cron_id)).not.toContain(cron.cron_id);
    expect(await (await call(handler, "POST", "/runs/crons/count", {})).json()).toBe(1);
    await runtime.close();
  });
});
