import "fake-indexeddb/auto";
import { describe, expect, it, vi } from "vitest";
import { GraphdockError, OWNER_USER, createRuntime, memoryStore, sequentialIds } from "../../src/index.js";
import type { AuthEvent, AuthProvider, AuthUser, Runtime, RuntimeEvent, WriteOp } from "../../src/index.js";
import { forbidden, unauthenticated } from "../../src/errors.js";
import { expectCode, runtimeContract } from "./contract.js";
import { Gate, echoGraph, testGraphs } from "./graphs.js";

runtimeContract(
  "in process, memory store",
  async ({ graphs }) => {
    const runtime = await createRuntime({ graphs });
    return { client: runtime, close: () => runtime.close() };
  },
  { inProcess: true },
);

const hi = { messages: [{ role: "user", content: "hi" }] };

describe("lifecycle events", () => {
  it("reports run and thread transitions in order; unsubscribe stops delivery; a throwing listener breaks nothing", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const seen: string[] = [];
    const off = runtime.subscribe((e: RuntimeEvent) => {
      seen.push(e.type === "thread.status" ? `thread:${e.previous}->${e.status}` : `${e.type}:${e.run.status}`);
    });
    const offThrowing = runtime.subscribe("run.started", () => {
      throw new Error("listener bug");
    });
    const errors = console.error;
    console.error = () => undefined;
    try {
      const t = await runtime.threads.create();
      const out = await runtime.runs.wait(t.thread_id, "echo", { input: hi });
      expect((out.messages as unknown[]).length).toBe(2);
      expect(seen).toEqual(["run.created:pending", "thread:idle->busy", "run.started:running", "run.finished:success", "thread:busy->idle"]);
      off();
      offThrowing();
      await runtime.runs.wait(t.thread_id, "echo", { input: hi });
      expect(seen).toHaveLength(5);
    } finally {
      console.error = errors;
      await runtime.close();
    }
  });

  it("typed subscription to one event type reports failures", async () => {
    const gate = new Gate();
    const runtime = await createRuntime({ graphs: testGraphs(gate) });
    const finished: Array<{ status: string; error?: { error: string; message: string; stack?: string } }> = [];
    runtime.subscribe("run.finished", (e) => finished.push({ status: e.run.status, ...(e.error ? { error: e.error } : {}) }));
    const t = await runtime.threads.create();
    await runtime.runs.wait(t.thread_id, "failing", { input: {}, raiseError: false });
    // The stack of what the graph threw comes with it (the command's error log prints it).
    expect(finished).toEqual([{ status: "error", error: { error: "CustomError", message: "Boo!", stack: expect.stringContaining("CustomError: Boo!") } }]);
    await runtime.close();
  });
});

describe("runtime options", () => {
  it("uses the runtime's default multitask strategy and injected ids and clock (D9, D19)", async () => {
    const gate = new Gate();
    let now = Date.UTC(2026, 0, 1);
    const runtime = await createRuntime({ graphs: testGraphs(gate), multitaskStrategy: "enqueue", ids: sequentialIds(), clock: () => now });
    const t = await runtime.threads.create();
    expect(t.thread_id).toBe("00000000-0000-4000-8000-000000000001");
    expect(t.created_at).toBe("2026-01-01T00:00:00.000Z");
    now += 1000;
    const first = await runtime.runs.create(t.thread_id, "slow", { input: {} });
    const second = await runtime.runs.create(t.thread_id, "chain", { input: {} });
    expect(second.multitask_strategy).toBe("enqueue");
    await gate.reached(1);
    gate.release();
    await runtime.runs.join(t.thread_id, second.run_id);
    expect((await runtime.runs.get(t.thread_id, first.run_id)).status).toBe("success");
    await runtime.close();
  });

  it("D20: a second runtime on the same store leaves the first's live run alone and sees it finish", async () => {
    const gate = new Gate();
    const store = memoryStore();
    const first = await createRuntime({ graphs: testGraphs(gate), store });
    const t = await first.threads.create();
    const run = await first.runs.create(t.thread_id, "slow", { input: {} });
    await gate.reached(1);
    const second = await createRuntime({ graphs: testGraphs(new Gate()), store });
    expect(await second.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "running" });
    gate.release();
    expect(await second.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: [`first:${run.run_id}`, "wait", "last"] });
    expect(await second.threads.get(t.thread_id)).toMatchObject({ status: "idle" });
    await second.close();
    await first.close();
  });

  it("a thread left busy with no run in flight (an older version stopped mid-rollback) takes new runs and gets its status back", async () => {
    const store = memoryStore();
    const first = await createRuntime({ graphs: testGraphs(new Gate()), store });
    const paused = await first.threads.create();
    await first.runs.wait(paused.thread_id, "approval", { input: {} });
    const thread = (await store.getThread(paused.thread_id))!;
    await store.commit([{ op: "thread.put", thread: { ...thread, status: "busy" } }]);
    const out = await first.runs.wait(paused.thread_id, "approval", { command: { resume: true } });
    expect(out).toMatchObject({ approved: true });
    expect((await first.threads.get(paused.thread_id)).status).toBe("idle");
    await first.close();
  });

  it("a store object shared by two runtimes stays open until the last of them closes (json-file)", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { jsonFileStore } = await import("../../src/persistence/json-file/index.js");
    const dir = mkdtempSync(join(tmpdir(), "graphdock-shared-"));
    try {
      const store = jsonFileStore(dir);
      const first = await createRuntime({ graphs: { echo: echoGraph() }, store });
      const second = await createRuntime({ graphs: { echo: echoGraph() }, store });
      const t = await first.threads.create();
      await first.close();
      expect(await second.runs.wait(t.thread_id, "echo", { input: hi })).toMatchObject({ messages: expect.any(Array) });
      await second.close();
      const again = await createRuntime({ graphs: { echo: echoGraph() }, store: jsonFileStore(dir) });
      expect((await again.threads.getState(t.thread_id)).values).toMatchObject({ messages: expect.any(Array) });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a run an older version left queued (no execution part) ends error and frees its thread", async () => {
    const store = memoryStore();
    const first = await createRuntime({ graphs: testGraphs(new Gate()), store });
    const t = await first.threads.create();
    await first.runs.wait(t.thread_id, "chain", { input: {} });
    await first.close();
    const thread = (await store.getThread(t.thread_id))!;
    const now = new Date().toISOString();
    const runId = "00000000-0000-4000-8000-0000000001d1";
    await store.commit([
      { op: "thread.put", thread: { ...thread, status: "busy" } },
      {
        op: "run.put",
        run: { run_id: runId, thread_id: t.thread_id, assistant_id: thread.metadata.assistant_id as string, created_at: now, updated_at: now, status: "pending", metadata: {}, kwargs: { input: {} }, multitask_strategy: "reject" },
      },
    ]);
    const second = await createRuntime({ graphs: testGraphs(new Gate()), store });
    await vi.waitFor(async () => expect((await second.runs.get(t.thread_id, runId)).status).toBe("error"), { timeout: 5_000, interval: 20 });
    expect(await second.runs.wait(t.thread_id, "chain", { input: {} })).toMatchObject({ log: ["a", "b", "c", "a", "b", "c"] });
    await second.close();
  });

  it("close drains in-flight runs back to the queue (their waiters here get conflict) and is idempotent; the next runtime resumes them", async () => {
    const gate = new Gate();
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: testGraphs(gate), store });
    const t = await runtime.threads.create();
    const run = await runtime.runs.create(t.thread_id, "slow", { input: {} });
    await gate.reached(1);
    const joined = runtime.runs.join(t.thread_id, run.run_id);
    await Promise.all([runtime.close(), runtime.close()]);
    await expectCode(joined, "conflict");
    await expectCode(runtime.threads.get(t.thread_id), "conflict");
    // Handed back: pending as its next attempt, the drain not counted against maxAttempts.
    expect(await store.getRun(run.run_id)).toMatchObject({ status: "pending", attempt: 2, execution: { drains: 1 } });
    const next = await createRuntime({ graphs: testGraphs(gate), store, maxAttempts: 1 });
    await gate.reached(2);
    gate.release();
    // Resumed from its checkpoint: `first` ran once, `wait` (cut off) again.
    expect(await next.runs.join(t.thread_id, run.run_id)).toMatchObject({ log: [`first:${run.run_id}`, "wait", "last"] });
    expect(await next.runs.get(t.thread_id, run.run_id)).toMatchObject({ status: "success", attempt: 2 });
    await next.close();
  });

  it("close waits for a run still recording its outcome, so that write never meets a closed store", async () => {
    const inner = memoryStore();
    let closed = false;
    let lateWrite = false;
    let outcomeReached!: () => void;
    const reached = new Promise<void>((r) => (outcomeReached = r));
    let releaseOutcome!: () => void;
    const released = new Promise<void>((r) => (releaseOutcome = r));
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === "close") return () => ((closed = true), target.close());
        if (key === "commit") {
          return async (ops: WriteOp[]) => {
            if (ops.some((op) => op.op === "run.put" && op.run.status === "success")) {
              outcomeReached();
              await released;
              lateWrite ||= closed;
            }
            return target.commit(ops);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const runtime = await createRuntime({ graphs: testGraphs(new Gate()), store });
    const t = await runtime.threads.create();
    const run = await runtime.runs.create(t.thread_id, "chain", { input: {} });
    await reached;
    const closing = runtime.close();
    // Released on a later task, after everything close does without waiting has happened.
    setTimeout(releaseOutcome, 0);
    await closing;
    expect(lateWrite).toBe(false);
    expect((await inner.getRun(run.run_id))?.status).toBe("success");
  });

  it("an aborted wait or join stops waiting, and cancels the run when asked to", async () => {
    const gate = new Gate();
    const runtime = await createRuntime({ graphs: testGraphs(gate) });
    const t = await runtime.threads.create();
    const waiting = new AbortController();
    const waited = runtime.runs.wait(t.thread_id, "slow", { input: {}, signal: waiting.signal, onDisconnect: "cancel" });
    await gate.reached(1);
    waiting.abort(new Error("client went away"));
    await expect(waited).rejects.toThrow("client went away");
    const [run] = await runtime.runs.list(t.thread_id);
    const outcome = await runtime.runs.join(t.thread_id, run!.run_id);
    expect(outcome).toEqual({ log: [`first:${run!.run_id}`] });
    expect((await runtime.runs.get(t.thread_id, run!.run_id)).status).toBe("interrupted");

    const second = await runtime.runs.create(t.thread_id, "slow", { input: {} });
    await gate.reached(2);
    const joining = new AbortController();
    const joined = runtime.runs.join(t.thread_id, second.run_id, { signal: joining.signal });
    joining.abort(new Error("stop"));
    await expect(joined).rejects.toThrow("stop");
    expect((await runtime.runs.get(t.thread_id, second.run_id)).status).toBe("running");
    gate.release();
    await runtime.runs.join(t.thread_id, second.run_id);
    expect((await runtime.runs.get(t.thread_id, second.run_id)).status).toBe("success");
    await runtime.close();
  });

  it("releases a non-resumable run's events once it is done", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const t = await runtime.threads.create();
    const run = await runtime.runs.create(t.thread_id, "echo", { input: hi });
    await runtime.runs.join(t.thread_id, run.run_id);
    const replay = [];
    for await (const e of runtime.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" })) replay.push(e);
    expect(replay).toEqual([]);
    await runtime.close();
  });

  it("starts a run after afterSeconds, posts its webhook to an allowed URL, and reports onRunCreated", async () => {
    const posted: Array<{ url: string; body: Record<string, unknown> }> = [];
    const fetch = (async (url: string, init: RequestInit) => {
      posted.push({ url, body: JSON.parse(String(init.body)) });
      return new Response(null, { status: 204 });
    }) as typeof globalThis.fetch;
    const runtime = await createRuntime({ graphs: testGraphs(new Gate()), webhooks: { allow: (url) => url.hostname === "hooks.example", fetch } });
    try {
      const t = await runtime.threads.create();
      const created: Array<{ run_id: string; thread_id?: string }> = [];
      const run = await runtime.runs.create(t.thread_id, "chain", {
        input: {},
        afterSeconds: 0.02,
        webhook: "https://hooks.example/done",
        onRunCreated: (p) => created.push(p),
      });
      expect(created).toEqual([{ run_id: run.run_id, thread_id: t.thread_id }]);
      expect((await runtime.runs.get(t.thread_id, run.run_id)).status).toBe("pending");
      expect(await runtime.runs.join(t.thread_id, run.run_id)).toEqual({ log: ["a", "b", "c"] });
      expect(posted).toEqual([
        { url: "https://hooks.example/done", body: expect.objectContaining({ run_id: run.run_id, status: "success", values: { log: ["a", "b", "c"] } }) },
      ]);
    } finally {
      await runtime.close();
    }
  });

  it("keeps a run due weeks ahead pending without overflowing its timer (no polling every millisecond)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    try {
      const t = await runtime.threads.create();
      const run = await runtime.runs.create(t.thread_id, "echo", { input: hi, afterSeconds: 40 * 24 * 3600 });
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(warnings.filter((w) => w === "TimeoutOverflowWarning")).toEqual([]);
      expect((await runtime.runs.get(t.thread_id, run.run_id)).status).toBe("pending");
    } finally {
      process.off("warning", onWarning);
      await runtime.close();
    }
  });

  it("refuses a webhook unless createRuntime's webhooks allow its URL, creating nothing (no SSRF)", async () => {
    const posted: string[] = [];
    const fetch = (async (url: string) => {
      posted.push(url);
      return new Response(null, { status: 204 });
    }) as typeof globalThis.fetch;
    const closed = await createRuntime({ graphs: testGraphs(new Gate()) });
    const open = await createRuntime({ graphs: testGraphs(new Gate()), webhooks: { allow: (url) => url.origin === "https://hooks.example", fetch } });
    try {
      for (const [runtime, webhook, hint] of [
        [closed, "https://hooks.example/done", /createRuntime\(\{ webhooks/],
        [open, "http://169.254.169.254/latest/meta-data", /webhooks\.allow/],
        [open, "file:///etc/passwd", /http\(s\)/],
        [open, "not a url", /http\(s\)/],
      ] as const) {
        const t = await runtime.threads.create();
        const err = await runtime.runs.create(t.thread_id, "chain", { input: {}, webhook }).catch((e: unknown) => e);
        expect(GraphdockError.is(err, "invalid_input")).toBe(true);
        expect((err as Error).message).toMatch(hint);
        await expectCode(runtime.runs.wait(t.thread_id, "chain", { input: {}, webhook }), "invalid_input");
        await expectCode(runtime.runs.wait(null, "chain", { input: {}, webhook }), "invalid_input");
        expect(await runtime.runs.list(t.thread_id)).toEqual([]);
        expect(await runtime.threads.get(t.thread_id)).toMatchObject({ status: "idle", values: {} });
      }
      // The refused stateless runs left no temporary thread behind.
      expect([await closed.threads.count(), await open.threads.count()]).toEqual([1, 3]);
      expect(posted).toEqual([]);
      await expectCode(createRuntime({ graphs: {}, webhooks: {} as never }), "invalid_input");
    } finally {
      await closed.close();
      await open.close();
    }
  });

  it("reports webhook delivery failures as webhook.failed events", async () => {
    const fetch = (async (url: string) => {
      if (url.endsWith("/down")) throw new TypeError("fetch failed");
      return new Response("nope", { status: 500 });
    }) as typeof globalThis.fetch;
    const runtime = await createRuntime({ graphs: testGraphs(new Gate()), webhooks: { allow: () => true, fetch } });
    try {
      const failures: Array<Extract<RuntimeEvent, { type: "webhook.failed" }>> = [];
      const twoFailures = new Promise<void>((resolve) =>
        runtime.subscribe("webhook.failed", (e) => {
          if (failures.push(e) === 2) resolve();
        }),
      );
      const t = await runtime.threads.create();
      const down = await runtime.runs.create(t.thread_id, "chain", { input: {}, webhook: "https://hooks.example/down" });
      await runtime.runs.join(t.thread_id, down.run_id);
      const refused = await runtime.runs.create(t.thread_id, "chain", { input: {}, webhook: "https://hooks.example/500" });
      await runtime.runs.join(t.thread_id, refused.run_id);
      await twoFailures;
      const byUrl = Object.fromEntries(failures.map((f) => [f.url, f]));
      expect(byUrl["https://hooks.example/down"]).toMatchObject({ run: { run_id: down.run_id, status: "success" }, error: { error: "TypeError", message: "fetch failed" } });
      expect(byUrl["https://hooks.example/500"]).toMatchObject({ run: { run_id: refused.run_id }, error: { error: "WebhookError", message: expect.stringContaining("HTTP 500") } });
    } finally {
      await runtime.close();
    }
  });

  it("refuses options that are not graphs or strategies", async () => {
    await expectCode(createRuntime({ graphs: { echo: {} as never } }), "invalid_input");
    await expectCode(createRuntime({ graphs: {}, multitaskStrategy: "later" as never }), "invalid_input");
  });

  it("rejects wrong option types with invalid_input naming the call and field (D4)", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const err = await runtime.threads.create({ metadata: "x" as never }).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    expect((err as GraphdockError).message).toContain("threads.create");
    expect((err as GraphdockError).problems?.[0]?.path).toBe("metadata");
    // Unknown keys are ignored.
    await expect(runtime.threads.create({ ttl: 5, extra: 1 } as never)).resolves.toMatchObject({ status: "idle" });
    await runtime.close();
  });
});

/** An auth provider over `x-user` headers: owner-scoped threads and assistants. */
function ownerAuth(log: AuthEvent[] = []): AuthProvider {
  return {
    async authenticate(request) {
      const identity = request.headers["x-user"];
      if (!identity) throw unauthenticated("graphdock test: missing x-user header");
      return { identity, permissions: ["read"], is_authenticated: true, display_name: identity, role: "tester" };
    },
    async authorize(user: AuthUser, event: AuthEvent) {
      log.push(event);
      if (user.identity === "mallory") throw forbidden("graphdock test: mallory may not");
      if (event.action === "create" || event.action === "create_run" || event.action === "update") {
        const value = event.value as { metadata?: Record<string, unknown> };
        value.metadata = { ...(value.metadata ?? {}), owner: user.identity };
      }
      if (event.resource === "assistants") return undefined;
      return { owner: user.identity };
    },
  };
}

describe("auth hooks (D12, D13)", () => {
  async function setup(log?: AuthEvent[]): Promise<{ runtime: Runtime; gate: Gate }> {
    const gate = new Gate();
    return { runtime: await createRuntime({ graphs: testGraphs(gate), auth: ownerAuth(log) }), gate };
  }

  it("authenticates bound clients; the unbound runtime goes through the handler with no headers", async () => {
    const { runtime } = await setup();
    await expectCode(runtime.client({ headers: {} }), "unauthenticated");
    await expectCode(runtime.threads.create(), "unauthenticated");
    const alice = await runtime.client({ headers: { "X-User": "alice" } });
    expect((await alice.threads.create()).metadata).toEqual({ owner: "alice" });
    const mallory = await runtime.client({ headers: { "x-user": "mallory" } });
    await expectCode(mallory.threads.create(), "forbidden");
    expect(await alice.threads.count()).toBe(1);
    await runtime.close();
  });

  it("hides other users' threads and runs as not found, stamps handler metadata and passes the user to graphs", async () => {
    const log: AuthEvent[] = [];
    const { runtime } = await setup(log);
    const alice = await runtime.client({ headers: { "x-user": "alice" } });
    const bob = await runtime.client({ headers: { "x-user": "bob" } });
    const t = await alice.threads.create({ metadata: { topic: "a" } });
    const run = await alice.runs.create(t.thread_id, "echo", {
      input: hi,
      config: { configurable: { graph_auth_user: { identity: "forged" } } },
    });
    const out = await alice.runs.join(t.thread_id, run.run_id);
    const configurable = (out.seen as { configurable: Record<string, unknown> }).configurable;
    expect(configurable).toMatchObject({
      langgraph_auth_user_id: "alice",
      langgraph_auth_permissions: ["read"],
      graph_auth_user: { identity: "alice", role: "tester" },
      langgraph_auth_user: { identity: "alice" },
      user_id: "alice",
    });
    // The thread carries its config over to the next run, never the user.
    const carried = (await alice.threads.get(t.thread_id)).config.configurable ?? {};
    for (const key of ["user_id", "graph_auth_user", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"]) {
      expect(carried).not.toHaveProperty(key);
    }
    expect(run.metadata).toEqual({ owner: "alice" });
    await expectCode(bob.threads.get(t.thread_id), "not_found");
    await expectCode(bob.threads.getState(t.thread_id), "not_found");
    await expectCode(bob.runs.get(t.thread_id, run.run_id), "not_found");
    await expectCode(bob.runs.list(t.thread_id), "not_found");
    await expectCode(bob.runs.create(t.thread_id, "echo", { input: hi }), "not_found");
    await expectCode(bob.threads.delete(t.thread_id), "not_found");
    await expectCode(bob.threads.copy(t.thread_id), "not_found");
    await expectCode(bob.runs.cancel(t.thread_id, run.run_id), "not_found");
    expect(await bob.threads.search()).toEqual([]);
    expect(await bob.threads.count()).toBe(0);
    expect((await alice.threads.search()).map((x) => x.thread_id)).toEqual([t.thread_id]);
    const events = log.map((e) => `${e.resource}:${e.action}`);
    expect(events).toEqual(expect.arrayContaining(["threads:create", "threads:create_run", "threads:read", "threads:search", "threads:delete", "threads:update"]));
    expect(log.find((e) => e.action === "create_run")!.value).toMatchObject({ thread_id: t.thread_id, assistant_id: "echo", run_id: run.run_id, kwargs: expect.any(Object) });
    await runtime.close();
  });

  it("without auth every caller is the owner and no user keys reach the graph", async () => {
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    const bound = await runtime.client({ headers: { authorization: "anything" } });
    const t = await bound.threads.create();
    const out = await runtime.runs.wait(t.thread_id, "echo", { input: hi, config: { configurable: { langgraph_auth_user_id: "forged" } } });
    expect((out.seen as { configurable: Record<string, unknown> }).configurable).not.toHaveProperty("langgraph_auth_user_id");
    expect(OWNER_USER.identity).toBe("owner");
    await runtime.close();
  });
});

describe("assistants.delete with deleteThreads", () => {
  it("cancels the in-flight runs of the threads it removes, so no run outlives its thread", async () => {
    const gate = new Gate();
    const store = memoryStore();
    const runtime = await createRuntime({ graphs: testGraphs(gate), store });
    try {
      const slow = await runtime.assistants.create({ graphId: "slow" });
      const thread = await runtime.threads.create();
      const finished = new Promise((resolve) => runtime.subscribe("run.finished", resolve));
      await runtime.runs.create(thread.thread_id, slow.assistant_id, { input: {} });
      await gate.reached(1);
      await runtime.assistants.delete(slow.assistant_id, { deleteThreads: true });
      gate.release();
      await finished;
      expect(await store.getThread(thread.thread_id)).toBeUndefined();
      expect(await store.queryRuns({ thread_id: thread.thread_id })).toEqual([]);
      expect(await store.listCheckpoints(thread.thread_id)).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});

describe("caller signals", () => {
  it("a signal reused across waits and joins keeps no listener once each run has ended", async () => {
    const { EventEmitter } = await import("node:events");
    const runtime = await createRuntime({ graphs: { echo: echoGraph() } });
    try {
      const controller = new AbortController();
      const t = await runtime.threads.create();
      for (let i = 0; i < 5; i++) {
        await runtime.runs.wait(t.thread_id, "echo", { input: hi, signal: controller.signal, onDisconnect: "cancel" });
      }
      const run = await runtime.runs.create(t.thread_id, "echo", { input: hi });
      await runtime.runs.join(t.thread_id, run.run_id, { signal: controller.signal, cancelOnDisconnect: true });
      expect(EventEmitter.getEventListeners(controller.signal, "abort")).toHaveLength(0);
    } finally {
      await runtime.close();
    }
  });
});
