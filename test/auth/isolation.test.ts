import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import { createRuntime } from "../../src/runtime/index.js";
import { isolationMatrix, matrixAuth, matrixGraphs } from "./isolation.js";

isolationMatrix("in process", async ({ graphs, auth }) => {
  const runtime = await createRuntime({ graphs, auth });
  return { clientFor: (headers) => runtime.client({ headers }), close: () => runtime.close() };
});

describe("auth in process only", () => {
  it("the runtime's own namespaces are an unauthenticated caller when auth is configured (D13)", async () => {
    const runtime = await createRuntime({ graphs: matrixGraphs(), auth: matrixAuth() });
    try {
      await expect(runtime.threads.search()).rejects.toSatisfy((e) => GraphdockError.is(e, "unauthenticated"));
      await expect(runtime.client({ headers: { Authorization: "Bearer alice-token" } })).resolves.toBeDefined();
    } finally {
      await runtime.close();
    }
  });

  it("without auth every caller is the owner, and forged user keys never reach the graph (D12)", async () => {
    const runtime = await createRuntime({ graphs: matrixGraphs() });
    try {
      const a = await runtime.client({ headers: { authorization: "Bearer alice-token" } });
      const b = await runtime.client({ headers: {} });
      const thread = await a.threads.create();
      expect((await b.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
      const forged = { graph_auth_user: { identity: "mallory" }, langgraph_auth_user_id: "mallory", langgraph_auth_permissions: ["admin"] };
      const values = await b.runs.wait(thread.thread_id, "agent", {
        input: { messages: [{ role: "user", content: "hi" }] },
        config: { configurable: forged },
      });
      expect(values.seen).toEqual({ graph_auth_user: null, org: null, langgraph_auth_user: null, langgraph_auth_user_id: null, langgraph_auth_permissions: null });
    } finally {
      await runtime.close();
    }
  });
});
