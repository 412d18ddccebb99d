/**
 * The v2 WebSocket transport with auth: a user connected to another user's thread is answered as
 * for a thread that does not exist (D13): no event, and no count of events either
 * (`replayed_events`, `missed_events`, the run status of `subscription.reconnect`), before, during
 * and after the owner's runs. The owner's own connection is unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type ServeHandle } from "../../src/node/index.js";
import { createRuntime, type Runtime } from "../../src/runtime/index.js";
import { matrixAuth, matrixGraphs } from "../auth/isolation.js";
import { human, wsConnect } from "./helpers.js";

type Json = Record<string, any>;
let runtime: Runtime;
let server: ServeHandle;

beforeAll(async () => {
  runtime = await createRuntime({ graphs: matrixGraphs(), auth: matrixAuth() });
  server = await serve(runtime, { port: 0, heartbeatMs: 0 });
});
afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

async function connect(threadId: string, token: string) {
  const c = await wsConnect(server.url, threadId, { authorization: `Bearer ${token}` });
  return { ...c, events: () => c.got.filter((m) => m.type === "event") };
}

const completed = (c: { events(): Json[] }) => c.events().filter((m) => m.method === "lifecycle" && m.params.data.event === "completed").length;

describe("the v2 WebSocket and another user's thread", () => {
  it("shows bob neither alice's events nor their counts", async () => {
    const alice = await connect(crypto.randomUUID(), "alice-token");
    const threadId = new URL(alice.ws.url).pathname.split("/")[2]!;
    const first = await alice.send("run.start", { assistant_id: "agent", input: human("one") });
    expect(first).toMatchObject({ type: "success" });
    const aliceSub = await alice.send("subscription.subscribe", { channels: ["lifecycle", "values"] });
    expect(aliceSub.result.replayed_events).toBeGreaterThan(0);
    await runtime.client({ headers: { authorization: "Bearer alice-token" } }).then((c) => c.runs.join(threadId, first.result.run_id));
    const aliceEventId = alice.events()[0]!.event_id as string;

    // Bob, on alice's thread: as on a thread that does not exist.
    const bob = await connect(threadId, "bob-token");
    const sub = await bob.send("subscription.subscribe", { channels: ["lifecycle", "values", "messages"] });
    expect(sub).toMatchObject({ type: "success", result: { replayed_events: 0 } });
    const re = await bob.send("subscription.reconnect", { last_event_id: aliceEventId });
    expect(re.result).toEqual({ restored: false, missed_events: 0, replayed_events: 0, current_namespaces: [{ namespace: [], status: "completed" }] });
    // The same answers as on a thread id nobody has used.
    const nobody = await connect(crypto.randomUUID(), "bob-token");
    expect((await nobody.send("subscription.subscribe", { channels: ["lifecycle", "values", "messages"] })).result.replayed_events).toBe(0);
    expect((await nobody.send("subscription.reconnect", { last_event_id: aliceEventId })).result).toEqual(re.result);
    const signals = (c: { got: Json[] }) => c.got.filter((m) => m.type === "error" && m.id === null).map((m) => ({ error: m.error, missed_events: m.missed_events }));
    expect(signals(bob)).toEqual(signals(nobody));

    // Alice runs again while bob is subscribed: bob gets nothing of it, alice everything.
    const second = await alice.send("run.start", { assistant_id: "agent", input: human("two") });
    await runtime.client({ headers: { authorization: "Bearer alice-token" } }).then((c) => c.runs.join(threadId, second.result.run_id));
    for (let i = 0; i < 300 && completed(alice) < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(completed(alice)).toBe(2);
    // A command of bob's does not release anything either.
    expect(await bob.send("state.get", {})).toMatchObject({ type: "error" });
    await new Promise((r) => setTimeout(r, 100));
    expect(bob.events()).toEqual([]);
    expect(nobody.events()).toEqual([]);
    for (const c of [alice, bob, nobody]) c.ws.close();
  });
});
