import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { Auth, HTTPException, isStudioUser, OWNER_USER, STUDIO_USER, type AuthEvent, type AuthUser } from "../../src/auth/index.js";

const user = (identity: string, permissions: string[] = []): AuthUser => ({ identity, permissions, is_authenticated: true, display_name: identity });
const ev = (resource: AuthEvent["resource"], action: AuthEvent["action"], value: Record<string, unknown> = {}): AuthEvent => ({ resource, action, value });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

describe("authenticate: normalisation", () => {
  it("turns a bare string into a user with defaults", async () => {
    const auth = new Auth().authenticate(() => "alice");
    expect(await auth.authenticate({ headers: {} })).toEqual({ identity: "alice", display_name: "alice", permissions: [], is_authenticated: true });
  });

  it("keeps custom fields and fills defaults of an object result", async () => {
    const auth = new Auth().authenticate(() => ({ identity: "bob", org_id: "o1", token: { a: 1 } }));
    const u = await auth.authenticate({ headers: {} });
    expect(u).toEqual({ identity: "bob", org_id: "o1", token: { a: 1 }, display_name: "bob", permissions: [], is_authenticated: true });
  });

  it("keeps given permissions, display_name and is_authenticated", async () => {
    const auth = new Auth().authenticate(() => ({ identity: "c", permissions: ["read"], display_name: "Cee", is_authenticated: false }));
    expect(await auth.authenticate({ headers: {} })).toMatchObject({ permissions: ["read"], display_name: "Cee", is_authenticated: false });
  });

  it.each([[null], [undefined], [42], [""], [{ name: "x" }], [{ identity: 7 }], [{ identity: "x", permissions: "read" }]])(
    "rejects the invalid result %j with a clear, non-auth error",
    async (result) => {
      const auth = new Auth().authenticate(() => result as never);
      const err = await rejection(auth.authenticate({ headers: {} }));
      expect(GraphdockError.is(err)).toBe(false);
      expect((err as Error).message).toMatch(/authenticate handler returned .*identity|permissions/);
    },
  );

  it("passes lower-cased header names and the transport fields to the handler", async () => {
    let seen: unknown;
    const auth = new Auth().authenticate((req) => {
      seen = req;
      return req.headers["x-api-key"] ?? "none";
    });
    const u = await auth.authenticate({ headers: { "X-Api-Key": "k1" }, method: "GET", path: "/threads/x" });
    expect(u.identity).toBe("k1");
    expect(seen).toEqual({ headers: { "x-api-key": "k1" }, method: "GET", path: "/threads/x" });
  });

  it("resolves the owner without an authenticate handler", async () => {
    expect(await new Auth().authenticate({ headers: { authorization: "Bearer whatever" } })).toBe(OWNER_USER);
  });

  it("refuses a second authenticate handler", () => {
    const auth = new Auth().authenticate(() => "a");
    expect(() => auth.authenticate(() => "b")).toThrow(/already has an authenticate handler/);
  });
});

describe("authenticate: failures", () => {
  it("maps a thrown HTTPException to unauthenticated, keeping the message as detail", async () => {
    const exc = new HTTPException(401, { message: "Invalid API key", headers: { "www-authenticate": "Bearer" } });
    const auth = new Auth().authenticate(() => {
      throw exc;
    });
    const err = await rejection(auth.authenticate({ headers: {} }));
    expect(GraphdockError.is(err, "unauthenticated")).toBe(true);
    expect((err as Error).message).toBe("Invalid API key");
    expect((err as Error).cause).toBe(exc);
  });

  it("defaults HTTPException to 401 with the reason phrase", async () => {
    const auth = new Auth().authenticate(() => {
      throw new HTTPException();
    });
    const err = await rejection(auth.authenticate({ headers: {} }));
    expect(GraphdockError.is(err, "unauthenticated")).toBe(true);
    expect((err as Error).message).toBe("Unauthorized");
  });

  it.each([
    [403, "forbidden"],
    [404, "not_found"],
    [409, "conflict"],
    [422, "invalid_input"],
    [400, "invalid_input"],
  ] as const)("maps status %i to %s", async (status, code) => {
    const auth = new Auth().authenticate(() => {
      throw new HTTPException(status, { message: "m" });
    });
    expect(GraphdockError.is(await rejection(auth.authenticate({ headers: {} })), code)).toBe(true);
  });

  it("fails closed on other statuses: unauthenticated", async () => {
    const auth = new Auth().authenticate(() => {
      throw new HTTPException(500, { message: "down" });
    });
    const err = await rejection(auth.authenticate({ headers: {} }));
    expect(GraphdockError.is(err, "unauthenticated")).toBe(true);
    expect((err as Error).message).toBe("down");
  });

  it("reports other errors with context instead of treating them as a user", async () => {
    const boom = new TypeError("db down");
    const auth = new Auth().authenticate(() => {
      throw boom;
    });
    const err = (await rejection(auth.authenticate({ headers: {} }))) as Error;
    expect(GraphdockError.is(err)).toBe(false);
    expect(err.message).toContain("authenticate handler threw: db down");
    expect(err.cause).toBe(boom);
  });
});

describe("on: handler selection", () => {
  const keys = ["threads:create", "threads", "*:create", "*"] as const;
  // For each subset of registered keys, only the most specific one runs.
  const subsets = Array.from({ length: 15 }, (_, i) => keys.filter((_, b) => (i + 1) & (1 << b)));
  it.each(subsets.map((s) => [s.join(" + "), s] as const))("with %s registered, only the most specific runs", async (_, registered) => {
    const calls: string[] = [];
    const auth = new Auth();
    for (const key of registered) auth.on(key, () => void calls.push(key));
    await auth.authorize(user("u"), ev("threads", "create"));
    expect(calls).toEqual([registered[0]]);
  });

  it("falls through to *:action and * for other resources", async () => {
    const calls: string[] = [];
    const auth = new Auth().on("threads", () => void calls.push("threads")).on("*:read", () => void calls.push("*:read")).on("*", () => void calls.push("*"));
    await auth.authorize(user("u"), ev("assistants", "read"));
    await auth.authorize(user("u"), ev("assistants", "delete"));
    await auth.authorize(user("u"), ev("threads", "read"));
    expect(calls).toEqual(["*:read", "*", "threads"]);
  });

  it("registers one handler under every key of an array", async () => {
    const calls: string[] = [];
    const auth = new Auth().on(["threads", "assistants"], ({ resource }) => void calls.push(resource));
    await auth.authorize(user("u"), ev("threads", "search"));
    await auth.authorize(user("u"), ev("assistants", "update"));
    expect(await auth.authorize(user("u"), ev("store", "put"))).toBeUndefined();
    expect(calls).toEqual(["threads", "assistants"]);
  });

  it("allows with no filter when no handler matches", async () => {
    const auth = new Auth().on("store", () => false);
    expect(await auth.authorize(user("u"), ev("threads", "read"))).toBeUndefined();
  });

  it("passes user, event, resource, action, value and permissions", async () => {
    let args: unknown;
    const auth = new Auth().on("threads:update", (a) => void (args = a));
    const u = user("u", ["write"]);
    const value = { thread_id: "t1", metadata: {} };
    await auth.authorize(u, ev("threads", "update", value));
    expect(args).toEqual({ user: u, event: "threads:update", resource: "threads", action: "update", value, permissions: ["write"] });
    expect((args as { value: unknown }).value).toBe(value);
  });

  it("lets a handler mutate value (owner stamping)", async () => {
    const auth = new Auth().on("threads:create", ({ user, value }) => {
      value.metadata = { ...value.metadata, owner: user.identity };
    });
    const value: Record<string, unknown> = { metadata: { a: 1 } };
    await auth.authorize(user("alice"), ev("threads", "create", value));
    expect(value.metadata).toEqual({ a: 1, owner: "alice" });
  });

  it.each(["thread", "threads:put", "*:nope", "runs", "", "store:create_run"])("rejects the unknown key %j", (key) => {
    expect(() => new Auth().on(key as never, () => true)).toThrow(GraphdockError);
  });

  it("refuses a second handler for the same key, registering nothing of the batch", async () => {
    const auth = new Auth().on("threads", () => ({ a: 1 }));
    expect(() => auth.on(["assistants", "threads"], () => false)).toThrow(/already registered/);
    expect(await auth.authorize(user("u"), ev("assistants", "read"))).toBeUndefined();
  });

  it("runs handlers for the owner when no authenticate handler is set", async () => {
    const auth = new Auth().on("threads:delete", () => false);
    const owner = await auth.authenticate({ headers: {} });
    await expect(auth.authorize(owner, ev("threads", "delete"))).rejects.toMatchObject({ code: "forbidden" });
  });
});

describe("on: outcomes", () => {
  const outcome = (result: unknown) => new Auth().on("*", () => result as never).authorize(user("alice"), ev("threads", "read"));

  it.each([[undefined], [null], [true], [{}]])("%j allows with no filter", async (result) => {
    expect(await outcome(result)).toBeUndefined();
  });

  it("false is forbidden, naming the event and user", async () => {
    const err = await rejection(outcome(false));
    expect(GraphdockError.is(err, "forbidden")).toBe(true);
    expect((err as Error).message).toMatch(/threads:read.*alice/);
  });

  it("an object is the filter", async () => {
    const filter = { owner: "alice", tags: { $contains: "x" }, org: { $eq: "o" } };
    expect(await outcome(filter)).toEqual(filter);
  });

  it.each([["yes"], [1], [["owner"]]])("the invalid result %j is reported, not allowed", async (result) => {
    const err = (await rejection(outcome(result))) as Error;
    expect(GraphdockError.is(err)).toBe(false);
    expect(err.message).toMatch(/handler returned/);
  });

  it("a filter with an unknown operator is reported, not applied loosely", async () => {
    const err = (await rejection(outcome({ owner: { $ne: "bob" } }))) as Error;
    expect(err.message).toMatch(/\$eq.*\$contains/);
  });

  it("an operator mixed with plain keys is reported, not applied with the plain keys ignored", async () => {
    const err = (await rejection(outcome({ owner: { $eq: "alice", org: "o1" } }))) as Error;
    expect(err.message).toMatch(/\$eq.*\$contains/);
  });

  it("a thrown HTTPException maps to its code with the message kept", async () => {
    const auth = new Auth().on("*", () => {
      throw new HTTPException(403, { message: "Not authorized" });
    });
    const err = await rejection(auth.authorize(user("u"), ev("threads", "read")));
    expect(GraphdockError.is(err, "forbidden")).toBe(true);
    expect((err as Error).message).toBe("Not authorized");
  });

  it("a thrown HTTPException with another status fails closed: forbidden", async () => {
    const auth = new Auth().on("*", () => {
      throw new HTTPException(418);
    });
    expect(GraphdockError.is(await rejection(auth.authorize(user("u"), ev("threads", "read"))), "forbidden")).toBe(true);
  });

  it("a thrown GraphdockError passes through unchanged", async () => {
    const thrown = new GraphdockError("not_found", "nope");
    const auth = new Auth().on("*", () => {
      throw thrown;
    });
    expect(await rejection(auth.authorize(user("u"), ev("threads", "read")))).toBe(thrown);
  });

  it("any other error is reported with the event and user, never swallowed into allow", async () => {
    const auth = new Auth().on("threads", async () => {
      throw new Error("lookup failed");
    });
    const err = (await rejection(auth.authorize(user("bob"), ev("threads", "search")))) as Error;
    expect(GraphdockError.is(err)).toBe(false);
    expect(err.message).toMatch(/"threads".*threads:search.*bob.*lookup failed/);
  });
});

describe("Studio users", () => {
  it("isStudioUser recognises the Studio kind or identity only", () => {
    expect(isStudioUser(STUDIO_USER)).toBe(true);
    expect(isStudioUser({ identity: "x", kind: "StudioUser" })).toBe(true);
    expect(isStudioUser({ identity: "langgraph-studio-user" })).toBe(true);
    expect(isStudioUser(user("alice"))).toBe(false);
    expect(isStudioUser(OWNER_USER)).toBe(false);
    expect(isStudioUser(null)).toBe(false);
  });

  it("a Studio scheme header does not bypass the authenticate handler (D13)", async () => {
    const auth = new Auth().authenticate(({ headers }) => {
      if (headers["x-api-key"] !== "k") throw new HTTPException(401, { message: "bad key" });
      return "alice";
    });
    const err = await rejection(auth.authenticate({ headers: { "x-auth-scheme": "langsmith" } }));
    expect(GraphdockError.is(err, "unauthenticated")).toBe(true);
  });
});
