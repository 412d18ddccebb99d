/**
 * Time to live of threads (D94: `threadTtl`, `threads.create/update({ ttl })`, `threads.prune`)
 * and the defaults of items' (`itemTtl`), on the real clock: sweeps every few tens of
 * milliseconds, TTLs of a fraction of a minute.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Auth, createRuntime, END, START, StateGraph, type Runtime, type RuntimeClient } from "../../src/index.js";

const MINUTE = 60_000;
const minutes = (ms: number) => ms / MINUTE;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const counter = new StateGraph({ n: { default: () => 0 } })
  .addNode("inc", (s) => ({ n: s.n + 1 }))
  .addEdge(START, "inc")
  .addEdge("inc", END)
  .compile();

const open: Runtime[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});
async function runtimeWith(options: Partial<Parameters<typeof createRuntime>[0]>): Promise<Runtime> {
  const runtime = await createRuntime({ graphs: { counter }, ...options });
  open.push(runtime);
  return runtime;
}
const exists = (runtime: RuntimeClient, id: string) => runtime.threads.get(id).then(() => true, () => false);

describe("thread TTL", () => {
  it("threadTtl.defaultTtl deletes a thread (created directly or by a run) once it is idle that long; a write moves its expiry", async () => {
    const runtime = await runtimeWith({ threadTtl: { defaultTtl: minutes(600), sweepIntervalMinutes: minutes(40) } });
    const direct = await runtime.threads.create();
    const byRun = await runtime.threads.create().then(async (t) => (await runtime.threads.delete(t.thread_id), t));
    await runtime.runs.wait(byRun.thread_id, "counter", { input: {}, ifNotExists: "create" });
    const touched = await runtime.threads.create();
    const untouched = await runtime.threads.create({ ttl: minutes(60_000) });
    await sleep(500);
    await runtime.threads.update(touched.thread_id, { metadata: { still: "here" } });
    await sleep(400);
    // 900 ms after creation: the first two are gone, the updated one is 400 ms into a new 600.
    expect(await exists(runtime, direct.thread_id)).toBe(false);
    expect(await exists(runtime, byRun.thread_id)).toBe(false);
    expect(await exists(runtime, touched.thread_id)).toBe(true);
    expect(await exists(runtime, untouched.thread_id)).toBe(true);
    await sleep(600);
    expect(await exists(runtime, touched.thread_id)).toBe(false);
    expect(await exists(runtime, untouched.thread_id)).toBe(true);
  });

  it("keep_latest keeps the thread and its latest checkpoint, and the thread goes on from it", async () => {
    const runtime = await runtimeWith({ threadTtl: { strategy: "keep_latest", sweepIntervalMinutes: minutes(40) } });
    const t = await runtime.threads.create({ ttl: minutes(200) });
    for (let i = 0; i < 3; i++) await runtime.runs.wait(t.thread_id, "counter", { input: {} });
    expect((await runtime.threads.getHistory(t.thread_id)).length).toBeGreaterThan(3);
    const before = await runtime.threads.getState(t.thread_id);
    await sleep(400);
    const history = await runtime.threads.getHistory(t.thread_id);
    expect(history).toHaveLength(1);
    expect(history[0]!.checkpoint_id).toBe(before.checkpoint_id);
    expect((await runtime.threads.getState(t.thread_id)).values).toEqual({ n: 3 });
    // The thread goes on: a run continues from the kept checkpoint.
    expect(await runtime.runs.wait(t.thread_id, "counter", { input: {} })).toEqual({ n: 4 });
  });

  it("threads.update({ ttl }) gives a thread a TTL of its own strategy", async () => {
    const runtime = await runtimeWith({ threadTtl: { sweepIntervalMinutes: minutes(40) } });
    const kept = await runtime.threads.create();
    const dropped = await runtime.threads.create();
    await runtime.runs.wait(kept.thread_id, "counter", { input: {} });
    await runtime.runs.wait(kept.thread_id, "counter", { input: {} });
    await runtime.threads.update(kept.thread_id, { ttl: { ttl: minutes(100), strategy: "keep_latest" } });
    await runtime.threads.update(dropped.thread_id, { ttl: minutes(100) });
    await sleep(300);
    expect(await exists(runtime, dropped.thread_id)).toBe(false);
    expect(await runtime.threads.getHistory(kept.thread_id)).toHaveLength(1);
  });

  it("refuses a TTL that is not a positive number of minutes, writing nothing", async () => {
    const runtime = await runtimeWith({});
    await expect(runtime.threads.create({ ttl: -1 })).rejects.toMatchObject({ code: "invalid_input" });
    expect(await runtime.threads.count()).toBe(0);
    await expect(createRuntime({ graphs: { counter }, threadTtl: { strategy: "forget" as never } })).rejects.toMatchObject({ code: "invalid_input" });
  });
});

describe("threads.prune", () => {
  it("delete removes the threads; keep_latest keeps each thread's latest checkpoint; missing and hidden ones are not counted", async () => {
    const runtime = await runtimeWith({
      auth: new Auth()
        .authenticate(({ headers }) => headers["x-user"] ?? "anonymous")
        .on("*", ({ user, value }) => {
          const v = value as { metadata?: Record<string, unknown> | null };
          if (v && typeof v === "object" && "metadata" in v) v.metadata = { ...v.metadata, owner: user.identity };
          return { owner: user.identity };
        }),
    });
    const alice = await runtime.client({ headers: { "x-user": "alice" } });
    const bob = await runtime.client({ headers: { "x-user": "bob" } });
    const [a1, a2, a3] = [await alice.threads.create(), await alice.threads.create(), await alice.threads.create()];
    const b1 = await bob.threads.create();
    for (const t of [a1, a2]) for (let i = 0; i < 2; i++) await alice.runs.wait(t.thread_id, "counter", { input: {} });

    expect(await alice.threads.prune([a1.thread_id, a2.thread_id, b1.thread_id, "00000000-0000-4000-8000-000000000000"], { strategy: "keep_latest" })).toEqual({ pruned_count: 2 });
    expect(await alice.threads.getHistory(a1.thread_id)).toHaveLength(1);
    expect((await alice.threads.getState(a2.thread_id)).values).toEqual({ n: 2 });

    expect(await alice.threads.prune([a1.thread_id, a3.thread_id, b1.thread_id])).toEqual({ pruned_count: 2 });
    expect(await exists(alice, a1.thread_id)).toBe(false);
    expect(await exists(alice, a3.thread_id)).toBe(false);
    expect(await exists(alice, a2.thread_id)).toBe(true);
    // Bob's thread was not Alice's to prune.
    expect(await exists(bob, b1.thread_id)).toBe(true);
  });
});

describe("item TTL defaults", () => {
  it("itemTtl.defaultTtl applies to puts without a ttl; refreshOnRead: false leaves reads alone unless they ask", async () => {
    let now = Date.UTC(2026, 0, 1);
    const runtime = await runtimeWith({ clock: () => now, itemTtl: { defaultTtl: 10, refreshOnRead: false } });
    await runtime.store.putItem(["notes"], "default", { text: "a" });
    await runtime.store.putItem(["notes"], "forever", { text: "b" }, { ttl: null });
    await runtime.store.putItem(["notes"], "refreshed", { text: "c" });
    now += 8 * MINUTE;
    expect(await runtime.store.getItem(["notes"], "default")).not.toBeNull();
    expect(await runtime.store.getItem(["notes"], "refreshed", { refreshTtl: true })).not.toBeNull();
    now += 4 * MINUTE;
    // 12 minutes: the plain read did not refresh `default`; `refreshed` was read at 8 with refreshTtl.
    expect(await runtime.store.getItem(["notes"], "default")).toBeNull();
    expect(await runtime.store.getItem(["notes"], "refreshed")).not.toBeNull();
    expect(await runtime.store.getItem(["notes"], "forever")).not.toBeNull();
  });
});
