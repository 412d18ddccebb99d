/**
 * Claiming the next run of a thread (D20): `Store.claimRun` where the store has it (PostgreSQL:
 * one statement with `FOR UPDATE SKIP LOCKED`), otherwise the generic way every store supports:
 * read the lease and the head of the thread's queue, then one conditional commit takes the lease
 * (only if free) and marks the run `running` (only if still pending). Core-safe.
 */
import { GraphdockError } from "../errors.js";
import type { RunRecord } from "../types.js";
import type { RunClaim, RunClaimResult, Store } from "./types.js";

/** Claims the thread's next run on any store (see `RunClaimResult`). */
export async function claimRun(store: Store, claim: RunClaim): Promise<RunClaimResult> {
  if (store.claimRun) return store.claimRun(claim);
  for (;;) {
    const lease = await store.getLease(claim.key);
    // Live while not expired as of `now` (a lease is free once `expires_at < now`).
    if (lease && lease.expires_at >= claim.now) return { outcome: "none" };
    const [head] = await store.queryRuns({ thread_id: claim.thread_id, status: ["pending", "running"], sortBy: "queue", limit: 1 });
    if (!head) return { outcome: "none" };
    const exec = head.execution;
    if (head.status === "running" || !exec) return { outcome: "stopped", run: head };
    if (!claim.graph_ids.includes(exec.graph_id)) return { outcome: "none" };
    if (exec.not_before > claim.now) return { outcome: "later", not_before: exec.not_before };
    const running: RunRecord = { ...head, status: "running", updated_at: claim.updated_at };
    try {
      await store.commit([
        {
          op: "lease.put",
          lease: { key: claim.key, owner: claim.owner, expires_at: claim.expires_at, data: { run_id: head.run_id } },
          expect: { state: "free", now: claim.now },
        },
        { op: "run.put", run: running, expect: { status: ["pending"] } },
      ]);
    } catch (err) {
      // Someone else claimed it, or it was cancelled: look again.
      if (GraphdockError.is(err, "conflict")) continue;
      throw err;
    }
    return { outcome: "claimed", run: running };
  }
}
