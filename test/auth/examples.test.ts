import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AuthProvider } from "../../src/auth/index.js";
import { GraphdockError } from "../../src/errors.js";
import { createFetchHandler } from "../../src/http/index.js";
import { loadAuth } from "../../src/node/auth-loader.js";
import { loadExport } from "../../src/node/load.js";
import { createRuntime } from "../../src/runtime/index.js";
import { matrixGraphs } from "./isolation.js";

const dir = join(import.meta.dirname, "../../examples/node");
const load = async (file: string) => (await loadAuth({ auth: { path: `./${file}:auth` } }, dir))!;
const fails = (p: Promise<unknown>, code: string) => expect(p).rejects.toSatisfy((e) => GraphdockError.is(e, code as never));

describe("examples/node/auth-api-key.ts", () => {
  it("authenticates x-api-key and rejects other keys with 401 and a detail", async () => {
    const auth = await load("auth-api-key.ts");
    expect(await auth.authenticate({ headers: { "x-api-key": "key-alice" } })).toMatchObject({ identity: "alice", role: "admin" });
    await fails(auth.authenticate({ headers: { "x-api-key": "wrong" } }), "unauthenticated");
    await expect(auth.authenticate({ headers: {} })).rejects.toThrow(/x-api-key/);
  });

  it("looks keys up as own properties: __proto__, constructor and friends are 401s, also over HTTP", async () => {
    const auth = await load("auth-api-key.ts");
    for (const key of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"]) {
      await fails(auth.authenticate({ headers: { "x-api-key": key } }), "unauthenticated");
    }
    const runtime = await createRuntime({ graphs: matrixGraphs(), auth });
    try {
      const handler = createFetchHandler(runtime);
      for (const key of ["__proto__", "constructor"]) {
        const res = await handler(new Request("http://in-process/threads/search", { method: "POST", headers: { "x-api-key": key }, body: "{}" }));
        expect(res.status).toBe(401);
        expect((await res.json()).detail).toMatch(/x-api-key/);
      }
    } finally {
      await runtime.close();
    }
  });

  it("stamps the owner on creations and filters by it", async () => {
    const auth = await load("auth-api-key.ts");
    const bob = await auth.authenticate({ headers: { "x-api-key": "key-bob" } });
    const value: Record<string, unknown> = { metadata: { topic: "t" } };
    expect(await auth.authorize(bob, { resource: "threads", action: "create", value })).toEqual({ owner: "bob" });
    expect(value.metadata).toEqual({ topic: "t", owner: "bob" });
  });
  it("isolates two API keys end to end in a runtime", async () => {
    const runtime = await createRuntime({ graphs: matrixGraphs(), auth: await load("auth-api-key.ts") });
    try {
      const alice = await runtime.client({ headers: { "x-api-key": "key-alice" } });
      const bob = await runtime.client({ headers: { "x-api-key": "key-bob" } });
      const thread = await alice.threads.create({ metadata: { topic: "plans" } });
      await alice.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hi" }] } });
      expect((await alice.threads.get(thread.thread_id)).metadata).toMatchObject({ topic: "plans", owner: "alice" });
      await fails(bob.threads.get(thread.thread_id), "not_found");
      expect(await bob.threads.search()).toEqual([]);
      expect(await alice.threads.count()).toBe(1);
      await expect(runtime.client({ headers: { "x-api-key": "stolen" } })).rejects.toThrow(/Invalid API key/);
    } finally {
      await runtime.close();
    }
  });
});

describe("examples/node/auth-jwt.ts", () => {
  it("verifies HS256 bearer tokens: good, tampered, expired, missing", async () => {
    const auth = await load("auth-jwt.ts");
    const sign = await loadExport<(sub: string, scopes?: string[], exp?: string | number) => Promise<string>>("./auth-jwt.ts:signToken", dir);
    const token = await sign("alice", ["assistants:write"]);
    expect(await auth.authenticate({ headers: { authorization: `Bearer ${token}` } })).toMatchObject({ identity: "alice", permissions: ["assistants:write"] });
    const tampered = token.slice(0, -2) + (token.endsWith("AA") ? "BB" : "AA");
    await fails(auth.authenticate({ headers: { authorization: `Bearer ${tampered}` } }), "unauthenticated");
    await fails(auth.authenticate({ headers: { authorization: `Bearer ${await sign("alice", [], Math.floor(Date.now() / 1000) - 60)}` } }), "unauthenticated");
    await fails(auth.authenticate({ headers: {} }), "unauthenticated");
  });

  it("requires the assistants:write scope to create assistants, stamping the owner", async () => {
    const auth: AuthProvider = await load("auth-jwt.ts");
    const sign = await loadExport<(sub: string, scopes?: string[]) => Promise<string>>("./auth-jwt.ts:signToken", dir);
    const reader = await auth.authenticate({ headers: { authorization: `Bearer ${await sign("bob")}` } });
    const writer = await auth.authenticate({ headers: { authorization: `Bearer ${await sign("bob", ["assistants:write"])}` } });
    const value: Record<string, unknown> = { graph_id: "agent" };
    await fails(auth.authorize(reader, { resource: "assistants", action: "create", value }), "forbidden");
    expect(await auth.authorize(writer, { resource: "assistants", action: "create", value })).toBeUndefined();
    expect(value.metadata).toEqual({ owner: "bob" });
    expect(await auth.authorize(reader, { resource: "threads", action: "search", value: {} })).toEqual({ owner: "bob" });
  });
});
