/**
 * Tool calls in flight and their cancellation (D102). With stateless Streamable HTTP a client's
 * `notifications/cancelled` arrives in a request of its own, possibly at another process, so a
 * call is found by its key: the session label the client echoes (`Mcp-Session-Id`, given at
 * `initialize`) and the JSON-RPC id of the `tools/call`. This process's calls are kept in a map;
 * a call running elsewhere is found through the store, by the key in its run's metadata.
 */
import type { HttpClient } from "../http/types.js";

/** The run metadata key holding a call's key. */
export const CALL_METADATA_KEY = "mcp_call";

/** The key of a call: the session label (`-` without one) and the request id. */
export const callKey = (session: string | undefined, requestId: string | number) => `${session ?? "-"} ${JSON.stringify(requestId)}`;

interface Call {
  run?: { threadId: string; runId: string };
  /** Set by a cancellation that came before the run existed: the run is cancelled once it does. */
  cancelledBy?: HttpClient;
}

const cancelRun = (client: HttpClient, run: { threadId: string; runId: string }) =>
  client.runs.cancel(run.threadId, run.runId, false, "interrupt").catch(() => undefined); // already ended: nothing to cancel

/** The tool calls of one MCP endpoint that run in this process. */
export class CallsInFlight {
  readonly #calls = new Map<string, Call>();

  /** Registers a call; `created` is to be called with its run once it exists, `end` when it ends. */
  start(key: string): { created(run: { threadId: string; runId: string }): void; end(): void } {
    const call: Call = {};
    this.#calls.set(key, call);
    return {
      created: (run) => {
        call.run = run;
        if (call.cancelledBy) void cancelRun(call.cancelledBy, run);
      },
      end: () => {
        if (this.#calls.get(key) === call) this.#calls.delete(key);
      },
    };
  }

  /**
   * Cancels the call `key` on behalf of `client` (whose authorization applies): here when it runs
   * here, else through the store among the runs in flight on the caller's busy threads.
   */
  async cancel(client: HttpClient, key: string): Promise<void> {
    const call = this.#calls.get(key);
    if (call) {
      if (call.run) await cancelRun(client, call.run);
      else call.cancelledBy = client;
      return;
    }
    const busy = await client.threads.search({ status: "busy", limit: 100, select: ["thread_id"] });
    for (const { thread_id } of busy) {
      const runs = await client.runs.list(thread_id, { limit: 20 }).catch(() => []);
      for (const run of runs) {
        if ((run.status === "pending" || run.status === "running") && run.metadata?.[CALL_METADATA_KEY] === key) {
          await cancelRun(client, { threadId: thread_id, runId: run.run_id });
        }
      }
    }
  }
}
