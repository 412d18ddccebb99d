import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { loadAuth } from "../../src/node/auth-loader.js";

const fixtures = join(import.meta.dirname, "fixtures");

describe("loadAuth (graph.json auth.path, D17)", () => {
  it("loads the Auth instance named in a graph.json file, relative to the file", async () => {
    const auth = await loadAuth(join(fixtures, "graph.json"));
    expect((await auth!.authenticate({ headers: { "x-user": "alice" } })).identity).toBe("alice");
  });

  it("accepts a parsed config with a base directory, and a plain AuthProvider object", async () => {
    const auth = await loadAuth({ auth: { path: "./providers.ts:plain" } }, fixtures);
    expect(await auth!.authorize((await auth!.authenticate({ headers: {} }))!, { resource: "threads", action: "read", value: {} })).toEqual({
      owner: "plain",
    });
  });

  it("adapts an Auth from @langchain/langgraph-sdk/auth: its handlers see a Request and run as usual", async () => {
    const auth = (await loadAuth({ auth: { path: "./providers.ts:langgraph" } }, fixtures))!;
    const user = await auth.authenticate({ headers: { "x-api-key": "k-alice" }, method: "POST", path: "/threads/search" });
    expect(user).toMatchObject({ identity: "alice", permissions: ["read"], path: "/threads/search", method: "POST" });
    await expect(auth.authenticate({ headers: { "x-api-key": "nope" } })).rejects.toSatisfy(
      (e) => GraphdockError.is(e, "unauthenticated") && (e as Error).message === "Invalid API key",
    );
    expect(await auth.authorize(user, { resource: "threads", action: "read", value: {} })).toEqual({ owner: "alice" });
    await expect(auth.authorize(user, { resource: "threads", action: "delete", value: {} })).rejects.toSatisfy((e) => GraphdockError.is(e, "forbidden"));
  });

  it("resolves undefined when the config has no auth", async () => {
    expect(await loadAuth({ graphs: {} }, fixtures)).toBeUndefined();
  });

  it.each([[{ auth: "./providers.ts:auth" }], [{ auth: {} }], [{ auth: { path: 3 } }]])("rejects the malformed auth section %j", async (config) => {
    await expect(loadAuth(config as never, fixtures)).rejects.toSatisfy((e) => GraphdockError.is(e, "invalid_input") && /auth/.test((e as Error).message));
  });

  it("rejects an export that is not an auth provider, naming the specifier", async () => {
    await expect(loadAuth({ auth: { path: "./providers.ts:notAProvider" } }, fixtures)).rejects.toThrow(/providers\.ts:notAProvider.*Auth instance/);
  });

  it("rejects a missing export or file with invalid_input", async () => {
    await expect(loadAuth({ auth: { path: "./providers.ts:missing" } }, fixtures)).rejects.toSatisfy((e) => GraphdockError.is(e, "invalid_input"));
    await expect(loadAuth({ auth: { path: "./nope.ts:auth" } }, fixtures)).rejects.toSatisfy((e) => GraphdockError.is(e, "invalid_input"));
  });

  it("rejects an unreadable config file", async () => {
    await expect(loadAuth(join(fixtures, "missing.json"))).rejects.toSatisfy((e) => GraphdockError.is(e, "invalid_input"));
  });
});
