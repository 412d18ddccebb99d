/**
 * The auth isolation matrix: two users and a Studio user against every method of the
 * runtime, each checked for leaks in both directions, plus the isolation cases of the LangGraph
 * servers' auth tests that apply. Transport-neutral: it uses only methods of the official SDK
 * `Client` and asserts errors by `GraphdockError` code or HTTP status, so the HTTP adapter runs the
 * same matrix. Not here: `/info` (HTTP only) and the filter table
 * (test/auth/filter.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Auth, HTTPException, isStudioUser, STUDIO_USER, type AuthProvider } from "../../src/auth/index.js";
import { GraphdockError, type ErrorCode } from "../../src/errors.js";
import { END, START, StateGraph, type CompiledGraph, type Message } from "../../src/graph/index.js";
import type { ContractClient } from "../runtime/contract.js";

export interface IsolationTarget {
  /** The SDK-shaped client of the caller presenting `headers` (may authenticate eagerly). */
  clientFor(headers: Record<string, string>): ContractClient | Promise<ContractClient>;
  close(): Promise<void>;
}

/** Bearer tokens of the matrix: two writers, a read-only alias of alice, and the Studio secret. */
const TOKENS: Record<string, { identity: string; permissions: string[] }> = {
  "alice-token": { identity: "alice", permissions: ["read", "write"] },
  "bob-token": { identity: "bob", permissions: ["read", "write"] },
  "alice-readonly": { identity: "alice", permissions: ["read"] },
};
const STUDIO_TOKEN = "studio-secret";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The deployer's auth: owners are stamped and filtered on; writes need the `write` permission. */
export function matrixAuth(): AuthProvider {
  return new Auth()
    .authenticate(({ headers }) => {
      const token = /^bearer (.+)$/i.exec(headers.authorization ?? "")?.[1];
      // The deployment verifies Studio itself (D13): a shared secret stands for that check here.
      if (token === STUDIO_TOKEN) return STUDIO_USER;
      const user = token ? TOKENS[token] : undefined;
      if (!user) throw new HTTPException(401, { message: "Invalid token: sign in again", headers: { "www-authenticate": "Bearer" } });
      return { ...user, org: "acme" };
    })
    .on("*", ({ user, action, value, permissions }) => {
      if (isStudioUser(user)) return {};
      const write = ["create", "update", "delete", "create_run", "put"].includes(action);
      if (write && !permissions.includes("write")) return false;
      if (action === "create" || action === "update" || action === "create_run") {
        const v = value as { metadata?: Record<string, unknown> | null };
        v.metadata = { ...v.metadata, owner: user.identity };
      }
      return { owner: user.identity };
    })
    // Long-term memory as docs/auth.md configures it: a user's items live under namespaces naming them.
    .on("store", ({ user, action, value, permissions }) => {
      if (isStudioUser(user)) return {};
      if ((action === "put" || action === "delete") && !permissions.includes("write")) return false;
      const namespace = (value as { namespace?: string[] | null }).namespace;
      if (namespace && namespace.length > 0 && !namespace.includes(user.identity)) return false;
      return { namespace: { $contains: user.identity } };
    });
}

/** The store methods the matrix calls, as both the runtime and the SDK client have them. */
interface StoreMethods {
  putItem(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  getItem(namespace: string[], key: string): Promise<{ namespace: string[]; key: string; value: Record<string, unknown> } | null>;
  deleteItem(namespace: string[], key: string): Promise<void>;
  searchItems(prefix: string[], options?: { filter?: Record<string, unknown>; limit?: number }): Promise<{ items: Array<{ namespace: string[]; key: string; value: Record<string, unknown> }> }>;
  listNamespaces(options?: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number }): Promise<{ namespaces: string[][] }>;
}

/** One node that answers and records the auth keys it finds in `config.configurable` (D12). */
export function matrixGraphs(): Record<string, CompiledGraph> {
  const graph = new StateGraph({
    messages: { reducer: (a: Message[], b: Message[]) => [...a, ...b], default: (): Message[] => [] },
    seen: { default: (): Record<string, unknown> | null => null },
  })
    .addNode("agent", (_state, ctx) => {
      const c = ctx.config.configurable;
      const user = c.graph_auth_user as { identity?: string; org?: string } | undefined;
      return {
        messages: [{ type: "ai", content: "ok" } as unknown as Message],
        seen: {
          graph_auth_user: user?.identity ?? null,
          org: user?.org ?? null,
          langgraph_auth_user: (c.langgraph_auth_user as { identity?: string } | undefined)?.identity ?? null,
          langgraph_auth_user_id: c.langgraph_auth_user_id ?? null,
          langgraph_auth_permissions: c.langgraph_auth_permissions ?? null,
        },
      };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile();
  return { agent: graph };
}

const STATUS: Record<ErrorCode, number> = { not_found: 404, conflict: 409, invalid_input: 422, unauthenticated: 401, forbidden: 403, unavailable: 503 };

/** Asserts a call fails with `code` (in process) or its HTTP status (over HTTP). Returns the error. */
async function failsWith(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  let err: unknown;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toBeInstanceOf(Error);
  const status = (err as { status?: unknown }).status;
  expect(GraphdockError.is(err, code) || status === STATUS[code], `expected ${code}, got ${String(err)}`).toBe(true);
  return err as Error;
}

async function collect<T>(iter: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iter) out.push(item);
  return out;
}

/** A stream on something hidden either fails as not found or yields one `error` event saying so. */
async function hiddenStream(iter: AsyncIterable<{ event: string; data: unknown }>): Promise<void> {
  let events: Array<{ event: string; data: unknown }>;
  try {
    events = await collect(iter);
  } catch (err) {
    await failsWith(Promise.reject(err), "not_found");
    return;
  }
  expect(events).toHaveLength(1);
  expect(events[0].event).toBe("error");
  expect(JSON.stringify(events[0].data)).toMatch(/404|not found/i);
}

const input = (text: string) => ({ messages: [{ role: "user", content: text }] });
const ids = (list: readonly object[], key: string) => list.map((x) => (x as Record<string, unknown>)[key]);

export function isolationMatrix(name: string, create: (opts: { graphs: Record<string, CompiledGraph>; auth: AuthProvider }) => Promise<IsolationTarget>): void {
  describe(`auth isolation matrix: ${name}`, () => {
    let target: IsolationTarget;
    const clients: Record<string, ContractClient> = {};
    const as = (who: string) => clients[who];

    beforeAll(async () => {
      target = await create({ graphs: matrixGraphs(), auth: matrixAuth() });
      for (const [who, token] of [
        ["alice", "alice-token"],
        ["bob", "bob-token"],
        ["alice-readonly", "alice-readonly"],
        ["studio", STUDIO_TOKEN],
      ]) {
        clients[who] = await target.clientFor(bearer(token));
      }
    });
    afterAll(() => target?.close());

    describe("authentication", () => {
      const attempt = async (headers: Record<string, string>) => (await target.clientFor(headers)).threads.search();

      it("rejects an unknown token with 401 and the handler's detail", async () => {
        const err = await failsWith(attempt(bearer("wfh-token")), "unauthenticated");
        expect(err.message).toContain("Invalid token: sign in again");
      });

      it("rejects a call without credentials with 401", async () => {
        await failsWith(attempt({}), "unauthenticated");
      });

      it("does not let a claimed Studio scheme bypass the handler (D13)", async () => {
        await failsWith(attempt({ "x-auth-scheme": "langsmith" }), "unauthenticated");
        await failsWith(attempt({ "x-auth-scheme": "langsmith", "x-user-id": "alice" }), "unauthenticated");
      });
    });

    describe.each([
      ["alice", "bob"],
      ["bob", "alice"],
    ])("%s owns, %s is the other user", (owner, other) => {
      let assistantId: string;
      let threadId: string;
      let checkpointId: string;
      let runId: string;
      let pendingThreadId: string;
      let pendingRunId: string;
      const pageTag = `page-${owner}`;

      beforeAll(async () => {
        const o = as(owner);
        const assistant = await o.assistants.create({ graphId: "agent", name: `${owner}'s assistant`, metadata: { tag: "a" } });
        assistantId = assistant.assistant_id;
        await o.assistants.update(assistantId, { name: `${owner}'s assistant v2`, metadata: { tag: "b" } });
        const thread = await o.threads.create({ metadata: { topic: `${owner}-topic` } });
        threadId = thread.thread_id;
        await o.runs.wait(threadId, assistantId, { input: input("hello") });
        runId = (await o.runs.list(threadId))[0].run_id;
        checkpointId = (await o.threads.getState(threadId)).checkpoint!.checkpoint_id;
        const pending = await o.threads.create();
        pendingThreadId = pending.thread_id;
        pendingRunId = (await o.runs.create(pendingThreadId, "agent", { input: input("later"), afterSeconds: 3600 })).run_id;
        for (let i = 0; i < 3; i++) {
          await o.assistants.create({ graphId: "agent", metadata: { page: pageTag } });
          await o.threads.create({ metadata: { page: pageTag } });
        }
      });

      describe("assistants", () => {
        it("stamps the owner on creation and the owner reads it", async () => {
          const a = await as(owner).assistants.get(assistantId);
          expect(a.metadata).toEqual({ tag: "b", owner });
          expect(a.name).toBe(`${owner}'s assistant v2`);
        });

        it("get: hidden from the other user, like a random id", async () => {
          await failsWith(as(other).assistants.get(assistantId), "not_found");
          await failsWith(as(other).assistants.get("00000000-0000-4000-8000-000000000000"), "not_found");
        });

        it("update and delete by the other user: 404, nothing changes", async () => {
          await failsWith(as(other).assistants.update(assistantId, { name: "stolen", metadata: { owner: other } }), "not_found");
          await failsWith(as(other).assistants.delete(assistantId), "not_found");
          const a = await as(owner).assistants.get(assistantId);
          expect([a.name, a.version, a.metadata?.owner]).toEqual([`${owner}'s assistant v2`, 2, owner]);
        });

        it("getGraph and getSchemas: 404 for the other user", async () => {
          const graph = await as(owner).assistants.getGraph(assistantId);
          expect(graph.nodes.length).toBeGreaterThan(0);
          expect(graph.edges.length).toBeGreaterThan(0);
          await failsWith(as(other).assistants.getGraph(assistantId), "not_found");
          await as(owner).assistants.getSchemas(assistantId);
          await failsWith(as(other).assistants.getSchemas(assistantId), "not_found");
        });

        it("getVersions and setLatest: no version leaks to the other user", async () => {
          expect((await as(owner).assistants.getVersions(assistantId)).map((v) => v.version)).toEqual([2, 1]);
          await failsWith(as(other).assistants.getVersions(assistantId), "not_found");
          await failsWith(as(other).assistants.setLatest(assistantId, 1), "not_found");
          expect((await as(owner).assistants.get(assistantId)).version).toBe(2);
        });

        it("setLatest by the owner restores version 1", async () => {
          const a = await as(owner).assistants.setLatest(assistantId, 1);
          expect([a.version, a.name, a.metadata?.owner]).toEqual([1, `${owner}'s assistant`, owner]);
          await as(owner).assistants.setLatest(assistantId, 2);
        });

        it("search and count: each user sees only their own, filtered before paging", async () => {
          const mine = await as(owner).assistants.search({ limit: 100 });
          const theirs = await as(other).assistants.search({ limit: 100 });
          expect(ids(mine, "assistant_id")).toContain(assistantId);
          expect(ids(theirs, "assistant_id")).not.toContain(assistantId);
          expect(mine.every((a) => a.metadata?.owner === owner)).toBe(true);
          expect(theirs.every((a) => a.metadata?.owner === other)).toBe(true);
          const graphFiltered = await as(owner).assistants.search({ graphId: "agent", metadata: { tag: "b" } });
          expect(ids(graphFiltered, "assistant_id")).toEqual([assistantId]);
          // Paging happens after filtering: the pages hold the user's three, whatever others own.
          const page1 = await as(owner).assistants.search({ metadata: { page: pageTag }, limit: 2 });
          const page2 = await as(owner).assistants.search({ metadata: { page: pageTag }, limit: 2, offset: 2 });
          expect(page1).toHaveLength(2);
          expect(page2).toHaveLength(1);
          expect(await as(owner).assistants.count({ metadata: { page: pageTag } })).toBe(3);
          expect(await as(other).assistants.count({ metadata: { page: pageTag } })).toBe(0);
          expect(await as(other).assistants.search({ metadata: { page: pageTag } })).toEqual([]);
          expect(await as(owner).assistants.count()).toBe(mine.length);
        });

        it("create over the other user's id is a conflict, never their record", async () => {
          await failsWith(as(other).assistants.create({ graphId: "agent", assistantId }), "conflict");
          const r = as(other)
            .assistants.create({ graphId: "agent", assistantId, ifExists: "do_nothing" })
            .then((a) => a.metadata?.owner, (err: Error) => err);
          const outcome = await r;
          expect(outcome === other || outcome instanceof Error).toBe(true);
          expect((await as(owner).assistants.get(assistantId)).metadata?.owner).toBe(owner);
        });
      });

      describe("threads", () => {
        it("get: the owner reads it, the other user gets 404", async () => {
          expect((await as(owner).threads.get(threadId)).metadata).toMatchObject({ topic: `${owner}-topic`, owner });
          await failsWith(as(other).threads.get(threadId), "not_found");
        });

        it("update and delete by the other user: 404, nothing changes", async () => {
          await failsWith(as(other).threads.update(threadId, { metadata: { topic: "stolen" } }), "not_found");
          await failsWith(as(other).threads.delete(threadId), "not_found");
          expect((await as(owner).threads.get(threadId)).metadata?.topic).toBe(`${owner}-topic`);
        });

        it("search and count: only the caller's threads, filtered before paging", async () => {
          const mine = await as(owner).threads.search({ limit: 100 });
          const theirs = await as(other).threads.search({ limit: 100 });
          expect(ids(mine, "thread_id")).toEqual(expect.arrayContaining([threadId, pendingThreadId]));
          expect(ids(theirs, "thread_id")).not.toContain(threadId);
          expect(ids(theirs, "thread_id")).not.toContain(pendingThreadId);
          expect(theirs.every((t) => t.metadata?.owner === other)).toBe(true);
          expect(await as(other).threads.search({ ids: [threadId] })).toEqual([]);
          expect(await as(owner).threads.search({ metadata: { page: pageTag }, limit: 2 })).toHaveLength(2);
          expect(await as(owner).threads.search({ metadata: { page: pageTag }, limit: 2, offset: 2 })).toHaveLength(1);
          expect(await as(owner).threads.count({ metadata: { page: pageTag } })).toBe(3);
          expect(await as(other).threads.count({ metadata: { page: pageTag } })).toBe(0);
          expect(await as(other).threads.count({ metadata: { topic: `${owner}-topic` } })).toBe(0);
        });

        it("create over the other user's id is a conflict, never their record", async () => {
          await failsWith(as(other).threads.create({ threadId }), "conflict");
          const outcome = await as(other)
            .threads.create({ threadId, ifExists: "do_nothing" })
            .then((t) => t.metadata?.owner, (err: Error) => err);
          expect(outcome === other || outcome instanceof Error).toBe(true);
          expect((await as(owner).threads.get(threadId)).metadata?.topic).toBe(`${owner}-topic`);
        });

        it("getState, also at a checkpoint: 404 for the other user", async () => {
          const state = await as(owner).threads.getState(threadId);
          expect(JSON.stringify(state.values)).toContain("hello");
          await failsWith(as(other).threads.getState(threadId), "not_found");
          await failsWith(as(other).threads.getState(threadId, checkpointId), "not_found");
        });

        it("updateState: the owner's sticks, the other user's is 404", async () => {
          await failsWith(as(other).threads.updateState(threadId, { values: { seen: { by: other } } }), "not_found");
          await as(owner).threads.updateState(threadId, { values: { seen: { sleep: 432 } } });
          expect(((await as(owner).threads.getState(threadId)).values as Record<string, unknown>).seen).toEqual({ sleep: 432 });
        });

        it("getHistory: the owner's states, 404 for the other user", async () => {
          expect((await as(owner).threads.getHistory(threadId)).length).toBeGreaterThan(1);
          await failsWith(as(other).threads.getHistory(threadId), "not_found");
        });

        it("copy: 404 for the other user; the owner's copy is theirs alone", async () => {
          // The JS server answers 409 here (a quirk); graphdock says not found, as for every hidden read (D13).
          await failsWith(as(other).threads.copy(threadId), "not_found");
          const copy = await as(owner).threads.copy(threadId);
          expect(copy.thread_id).not.toBe(threadId);
          expect(copy.metadata?.owner).toBe(owner);
          await failsWith(as(other).threads.get(copy.thread_id), "not_found");
        });
      });

      describe("runs", () => {
        it("create on the other user's thread: 404", async () => {
          await failsWith(as(other).runs.create(threadId, "agent", { input: input("x") }), "not_found");
        });

        it("create with ifNotExists: \"create\" on the other user's thread: 404, the thread is untouched", async () => {
          const before = await as(owner).threads.get(threadId);
          await failsWith(as(other).runs.create(threadId, "agent", { input: input("x"), ifNotExists: "create" }), "not_found");
          expect(await as(owner).threads.get(threadId)).toEqual(before);
        });

        it("wait on the other user's thread: 404", async () => {
          await failsWith(as(other).runs.wait(threadId, "agent", { input: input("x") }), "not_found");
        });

        it("stream on the other user's thread: not found", async () => {
          await hiddenStream(as(other).runs.stream(threadId, "agent", { input: input("x") }));
        });

        it("list: the owner's list has the run, the other user gets 404", async () => {
          expect(ids(await as(owner).runs.list(threadId), "run_id")).toContain(runId);
          await failsWith(as(other).runs.list(threadId), "not_found");
        });

        it("get: 404 for the other user", async () => {
          expect((await as(owner).runs.get(threadId, runId)).run_id).toBe(runId);
          await failsWith(as(other).runs.get(threadId, runId), "not_found");
        });

        it("join: 404 for the other user", async () => {
          await as(owner).runs.join(threadId, runId);
          await failsWith(as(other).runs.join(threadId, runId), "not_found");
        });

        it("joinStream: the other user gets only a not-found outcome", async () => {
          await hiddenStream(as(other).runs.joinStream(threadId, runId));
          await hiddenStream(as(other).runs.joinStream(pendingThreadId, pendingRunId));
          await hiddenStream(as(other).runs.joinStream(null, runId));
        });

        it("the owner's run addressed through the other user's own thread: 404", async () => {
          const own = await as(other).threads.create();
          await failsWith(as(other).runs.get(own.thread_id, runId), "not_found");
          await failsWith(as(other).runs.join(own.thread_id, runId), "not_found");
          await failsWith(as(other).runs.cancel(own.thread_id, pendingRunId), "not_found");
          await failsWith(as(other).runs.delete(own.thread_id, runId), "not_found");
          await hiddenStream(as(other).runs.joinStream(own.thread_id, pendingRunId));
          expect((await as(owner).runs.get(pendingThreadId, pendingRunId)).status).toBe("pending");
        });

        it("a pending run: the other user cannot list, get, cancel or delete it", async () => {
          await failsWith(as(other).runs.list(pendingThreadId), "not_found");
          await failsWith(as(other).runs.get(pendingThreadId, pendingRunId), "not_found");
          await failsWith(as(other).runs.cancel(pendingThreadId, pendingRunId), "not_found");
          await failsWith(as(other).runs.cancel(pendingThreadId, pendingRunId, true), "not_found");
          await failsWith(as(other).runs.delete(pendingThreadId, pendingRunId), "not_found");
          expect((await as(owner).runs.get(pendingThreadId, pendingRunId)).status).toBe("pending");
        });

        it("the owner cancels and deletes the pending run", async () => {
          await as(owner).runs.cancel(pendingThreadId, pendingRunId);
          expect((await as(owner).runs.get(pendingThreadId, pendingRunId)).status).not.toBe("pending");
          await failsWith(as(other).runs.delete(pendingThreadId, pendingRunId), "not_found");
          await as(owner).runs.delete(pendingThreadId, pendingRunId);
          await failsWith(as(owner).runs.get(pendingThreadId, pendingRunId), "not_found");
        });

        it("a run with the other user's assistant: 404 like get, and nothing is created", async () => {
          const own = await as(other).threads.create();
          await failsWith(as(other).runs.wait(own.thread_id, assistantId, { input: input("x") }), "not_found");
          await failsWith(as(other).runs.create(own.thread_id, assistantId, { input: input("x") }), "not_found");
          await hiddenStream(as(other).runs.stream(own.thread_id, assistantId, { input: input("x") }));
          await failsWith(as(other).runs.wait(null, assistantId, { input: input("x") }), "not_found");
          await failsWith(as(other).runs.createBatch([{ assistantId, input: input("x") }]), "not_found");
          expect(await as(other).runs.list(own.thread_id)).toEqual([]);
          expect(await as(other).threads.get(own.thread_id)).toMatchObject({ status: "idle", values: {} });
        });

        it("stateless runs: the temporary thread is stamped for the caller", async () => {
          const values = await as(owner).runs.wait(null, "agent", { input: input("stateless") });
          expect(JSON.stringify(values)).toContain("stateless");
          const events = await collect(as(owner).runs.stream(null, "agent", { input: input("s2") }));
          expect(events.map((e) => e.event)).not.toContain("error");
          expect(events[0].event).toBe("metadata");
          const kept = await as(owner).runs.create(null, "agent", { input: input("kept"), onCompletion: "continue" });
          await as(owner).runs.join(kept.thread_id, kept.run_id);
          expect((await as(owner).threads.get(kept.thread_id)).metadata?.owner).toBe(owner);
          await failsWith(as(other).threads.get(kept.thread_id), "not_found");
        });

        it("the graph sees the caller at graph_auth_user and the LangGraph aliases; caller values are dropped (D12)", async () => {
          const thread = await as(owner).threads.create();
          const forged = {
            graph_auth_user: { identity: "mallory", org: "evil" },
            langgraph_auth_user: { identity: "mallory" },
            langgraph_auth_user_id: "mallory",
            langgraph_auth_permissions: ["admin"],
          };
          const values = await as(owner).runs.wait(thread.thread_id, "agent", { input: input("who"), config: { configurable: forged } });
          expect((values as Record<string, unknown>).seen).toEqual({
            graph_auth_user: owner,
            org: "acme",
            langgraph_auth_user: owner,
            langgraph_auth_user_id: owner,
            langgraph_auth_permissions: ["read", "write"],
          });
        });
      });

      describe("crons", () => {
        // The SDK's client.crons and runtime.crons take the same calls; records are read loosely.
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const crons = (who: string) => (as(who) as unknown as { crons: any }).crons;
        let cronId: string;
        let threadCronId: string;
        const cronTag = `cron-${owner}`;

        beforeAll(async () => {
          cronId = (await crons(owner).create("agent", { schedule: "0 3 * * *", input: input("nightly"), metadata: { tag: cronTag } })).cron_id;
          threadCronId = (await crons(owner).createForThread(threadId, "agent", { schedule: "0 4 * * *", input: input("on thread"), metadata: { tag: cronTag } })).cron_id;
        });

        it("create stamps the owner; the cron is the creator's (user_id)", async () => {
          const [mine] = await crons(owner).search({ metadata: { tag: cronTag }, threadId });
          expect(mine).toMatchObject({ cron_id: threadCronId, user_id: owner, metadata: { tag: cronTag, owner } });
          expect(mine.user).toBeUndefined();
          expect(mine.revision).toBeUndefined();
        });

        it("search and count: only the caller's crons, whatever the filters", async () => {
          expect(ids(await crons(owner).search({ metadata: { tag: cronTag } }), "cron_id").sort()).toEqual([cronId, threadCronId].sort());
          expect(await crons(owner).count({ metadata: { tag: cronTag } })).toBe(2);
          expect(await crons(other).search({ metadata: { tag: cronTag } })).toEqual([]);
          expect(await crons(other).search({ threadId })).toEqual([]);
          expect(await crons(other).count({ threadId })).toBe(0);
          expect(await crons(other).count({ metadata: { tag: cronTag } })).toBe(0);
          const theirs = await crons(other).search({ limit: 100, assistantId: "agent" });
          expect(theirs.every((c: { metadata: { owner?: string } }) => c.metadata.owner === other)).toBe(true);
          expect(ids(theirs, "cron_id")).not.toContain(cronId);
        });

        it("update and delete by the other user: 404, nothing changes", async () => {
          await failsWith(crons(other).update(cronId, { schedule: "* * * * *", metadata: { tag: "stolen" } }), "not_found");
          await failsWith(crons(other).delete(cronId), "not_found");
          const still = (await crons(owner).search({ metadata: { tag: cronTag } })).find((c: { cron_id: string }) => c.cron_id === cronId);
          expect(still).toMatchObject({ schedule: "0 3 * * *", metadata: { tag: cronTag, owner } });
        });

        it("a cron on the other user's thread, or with their private assistant: 404, nothing created", async () => {
          await failsWith(crons(other).createForThread(threadId, "agent", { schedule: "* * * * *" }), "not_found");
          await failsWith(crons(other).create(assistantId, { schedule: "* * * * *" }), "not_found");
          await failsWith(crons(other).createForThread(pendingThreadId, "agent", { schedule: "* * * * *" }), "not_found");
          expect(await crons(owner).count({ threadId })).toBe(1);
          expect(await crons(other).count({ assistantId })).toBe(0);
        });

        it("the owner updates and deletes their own cron", async () => {
          const temp = await crons(owner).create("agent", { schedule: "0 5 * * *", metadata: { tag: `${cronTag}-temp` } });
          const updated = await crons(owner).update(temp.cron_id, { schedule: "0 6 * * *" });
          expect(updated).toMatchObject({ schedule: "0 6 * * *", metadata: { owner } });
          await crons(owner).delete(temp.cron_id);
          expect(await crons(owner).count({ metadata: { tag: `${cronTag}-temp` } })).toBe(0);
        });

        it("each tick runs as the cron's creator: its thread and run are the owner's, hidden from the other user", async () => {
          const cron = await crons(owner).create("agent", { schedule: "* * * * * *", input: input("tick"), onRunCompleted: "keep", metadata: { tag: `${cronTag}-tick` } });
          try {
            // Real time here (the matrix's runtime has the system clock): the next second's tick.
            await vi.waitFor(async () => expect(await as(owner).threads.count({ metadata: { cron_id: cron.cron_id } })).toBeGreaterThan(0), { timeout: 5000, interval: 100 });
          } finally {
            await crons(owner).delete(cron.cron_id);
          }
          const [thread] = await as(owner).threads.search({ metadata: { cron_id: cron.cron_id }, limit: 1 });
          expect(thread.metadata?.owner).toBe(owner);
          const [run] = await as(owner).runs.list(thread.thread_id);
          const values = (await as(owner).runs.join(thread.thread_id, run.run_id)) as Record<string, unknown>;
          expect((values.seen as Record<string, unknown>).graph_auth_user).toBe(owner);
          expect(await as(other).threads.count({ metadata: { cron_id: cron.cron_id } })).toBe(0);
          await failsWith(as(other).threads.get(thread.thread_id), "not_found");
        });

        it("the Studio user sees the owner's crons when the handler allows it", async () => {
          expect(await crons("studio").count({ metadata: { tag: cronTag } })).toBe(2);
        });
      });

      describe("the Studio user", () => {
        it("sees and reads the owner's resources when the handler allows it", async () => {
          const studio = as("studio");
          expect((await studio.threads.get(threadId)).metadata?.owner).toBe(owner);
          expect((await studio.assistants.get(assistantId)).metadata?.owner).toBe(owner);
          expect(ids(await studio.threads.search({ limit: 1000 }), "thread_id")).toContain(threadId);
          expect(await studio.assistants.count({ metadata: { page: pageTag } })).toBe(3);
          expect((await studio.runs.get(threadId, runId)).run_id).toBe(runId);
        });
      });
    });

    describe("denied writes and read-only callers", () => {
      it("store: a read-only caller reads alice's items but cannot put or delete them", async () => {
        const store = (who: string) => (as(who) as unknown as { store: StoreMethods }).store;
        await store("alice").putItem(["alice", "ro"], "k", { n: 1 });
        const ro = store("alice-readonly");
        expect((await ro.getItem(["alice", "ro"], "k"))?.value).toEqual({ n: 1 });
        await failsWith(ro.putItem(["alice", "ro"], "k", { n: 2 }), "forbidden");
        await failsWith(ro.deleteItem(["alice", "ro"], "k"), "forbidden");
        expect((await store("alice").getItem(["alice", "ro"], "k"))?.value).toEqual({ n: 1 });
      });

      it("assistant creation without the write permission: 403", async () => {
        await failsWith(as("alice-readonly").assistants.create({ graphId: "agent" }), "forbidden");
      });

      it("a read-only caller reads alice's thread as she does, but cannot write or copy it", async () => {
        const thread = await as("alice").threads.create({ metadata: { kind: "ro" } });
        const ro = as("alice-readonly");
        expect(await ro.threads.get(thread.thread_id)).toEqual(await as("alice").threads.get(thread.thread_id));
        const err = await failsWith(ro.threads.copy(thread.thread_id), "forbidden");
        expect(err.message).toMatch(/Not authorized/);
        await failsWith(ro.threads.create(), "forbidden");
        await failsWith(ro.threads.update(thread.thread_id, { metadata: { kind: "x" } }), "forbidden");
        await failsWith(ro.threads.delete(thread.thread_id), "forbidden");
        await failsWith(ro.runs.create(thread.thread_id, "agent", { input: input("x") }), "forbidden");
        await failsWith(ro.threads.updateState(thread.thread_id, { values: { seen: {} } }), "forbidden");
        expect((await as("alice").threads.get(thread.thread_id)).metadata?.kind).toBe("ro");
        const copy = await as("alice").threads.copy(thread.thread_id);
        expect(copy.thread_id).not.toBe(thread.thread_id);
      });
    });

    describe.each([
      ["alice", "bob"],
      ["bob", "alice"],
    ])("store: %s owns, %s is the other user", (owner, other) => {
      const store = (who: string) => (as(who) as unknown as { store: StoreMethods }).store;
      const root = [owner, "r"];
      const mine = [...root, "memories"];
      const tag = `private-${owner}`;
      const secret = { text: `${owner}'s secret`, tag };

      beforeAll(async () => {
        await store(owner).putItem(mine, "k1", secret);
        await store(owner).putItem([...root, "prefs"], "k2", { tag });
        await store(owner).putItem([...mine, "deep"], "k3", { tag: "deep" });
      });

      it("the owner reads, searches and lists their own items", async () => {
        expect((await store(owner).getItem(mine, "k1"))?.value).toEqual(secret);
        expect((await store(owner).searchItems(root, { limit: 100 })).items.map((i) => i.key).sort()).toEqual(["k1", "k2", "k3"]);
        expect((await store(owner).searchItems([], { filter: { tag }, limit: 100 })).items.map((i) => i.key).sort()).toEqual(["k1", "k2"]);
        expect((await store(owner).listNamespaces({ prefix: root })).namespaces).toEqual([mine, [...mine, "deep"], [...root, "prefs"]]);
        expect((await store(owner).listNamespaces({ prefix: root, maxDepth: 3 })).namespaces).toEqual([mine, [...root, "prefs"]]);
      });

      it("every method on the owner's namespaces is refused to the other user: 403", async () => {
        await failsWith(store(other).getItem(mine, "k1"), "forbidden");
        await failsWith(store(other).putItem(mine, "k1", { text: "overwritten" }), "forbidden");
        await failsWith(store(other).putItem([owner, "new"], "k9", { text: "planted" }), "forbidden");
        await failsWith(store(other).deleteItem(mine, "k1"), "forbidden");
        await failsWith(store(other).searchItems([owner]), "forbidden");
        await failsWith(store(other).searchItems(mine, { filter: { tag: "private" } }), "forbidden");
        await failsWith(store(other).listNamespaces({ prefix: [owner] }), "forbidden");
        // Nothing changed.
        expect((await store(owner).getItem(mine, "k1"))?.value).toEqual(secret);
        expect(await store(owner).getItem([owner, "new"], "k9")).toBeNull();
        expect((await store(owner).searchItems(root, { limit: 100 })).items).toHaveLength(3);
      });

      it("unscoped searches and listings show the other user nothing of the owner's: 0 leaks", async () => {
        await store(other).putItem([other, "o"], `own-${owner}`, { tag, text: "mine" });
        const everything = [
          ...(await store(other).searchItems([], { limit: 1000 })).items,
          ...(await store(other).searchItems([], { filter: { tag }, limit: 1000 })).items,
          ...(await store(other).searchItems([], { filter: { text: secret.text }, limit: 1000 })).items,
        ];
        expect(everything.length).toBeGreaterThan(0);
        expect(everything.filter((i) => i.namespace.includes(owner) || JSON.stringify(i.value).includes(secret.text))).toEqual([]);
        const namespaces = [
          ...(await store(other).listNamespaces({ limit: 1000 })).namespaces,
          ...(await store(other).listNamespaces({ suffix: ["memories"], limit: 1000 })).namespaces,
          ...(await store(other).listNamespaces({ maxDepth: 1, limit: 1000 })).namespaces,
        ];
        expect(namespaces.length).toBeGreaterThan(0);
        expect(namespaces.filter((ns) => ns.includes(owner))).toEqual([]);
      });

      it("the Studio user, allowed by the handler, sees the owner's items", async () => {
        expect((await store("studio").getItem(mine, "k1"))?.value).toEqual(secret);
        expect((await store("studio").listNamespaces({ limit: 1000 })).namespaces).toContainEqual(mine);
      });
    });

    describe("read-only callers and crons", () => {
      it("a read-only caller sees alice's crons but cannot create, update or delete one", async () => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const crons = (who: string) => (as(who) as unknown as { crons: any }).crons;
        const cron = await crons("alice").create("agent", { schedule: "0 7 * * *", metadata: { kind: "ro-cron" } });
        const ro = crons("alice-readonly");
        expect(ids(await ro.search({ metadata: { kind: "ro-cron" } }), "cron_id")).toEqual([cron.cron_id]);
        await failsWith(ro.create("agent", { schedule: "* * * * *" }), "forbidden");
        await failsWith(ro.update(cron.cron_id, { enabled: false }), "forbidden");
        await failsWith(ro.delete(cron.cron_id), "forbidden");
        const [same] = await crons("alice").search({ metadata: { kind: "ro-cron" } });
        expect(same).toEqual(cron);
        await crons("alice").delete(cron.cron_id);
      });
    });

    describe("side effects across users", () => {
      it("deleting an assistant with its threads spares another user's thread that names it", async () => {
        const assistant = await as("alice").assistants.create({ graphId: "agent" });
        const alicesThread = await as("alice").threads.create();
        await as("alice").runs.wait(alicesThread.thread_id, assistant.assistant_id, { input: input("a") });
        // bob cannot run alice's assistant (it is hidden from him), but his thread may name it.
        const bobsThread = await as("bob").threads.create({ metadata: { assistant_id: assistant.assistant_id } });
        await failsWith(as("bob").runs.wait(bobsThread.thread_id, assistant.assistant_id, { input: input("b") }), "not_found");
        await as("alice").assistants.delete(assistant.assistant_id, { deleteThreads: true });
        await failsWith(as("alice").threads.get(alicesThread.thread_id), "not_found");
        expect((await as("bob").threads.get(bobsThread.thread_id)).thread_id).toBe(bobsThread.thread_id);
      });
    });

    describe("the system assistant", () => {
      it("runs on a graph id need no assistants:read, and the default assistant stays hidden from users and undeletable", async () => {
        const thread = await as("bob").threads.create();
        await as("bob").runs.wait(thread.thread_id, "agent", { input: input("hi") });
        expect((await as("bob").assistants.search({ limit: 1000 })).some((a) => a.metadata?.created_by === "system")).toBe(false);
        expect((await as("studio").assistants.search({ limit: 1000 })).some((a) => a.metadata?.created_by === "system")).toBe(true);
        // Nobody deletes it: hidden from bob (404), a conflict for Studio, which sees it.
        await failsWith(as("bob").assistants.delete("agent"), "not_found");
        await failsWith(as("studio").assistants.delete("agent"), "conflict");
        await as("bob").runs.wait(thread.thread_id, "agent", { input: input("still there") });
      });
    });
  });
}
