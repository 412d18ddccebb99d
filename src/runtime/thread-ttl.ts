/**
 * Threads' time to live (D94; langgraph.json's `checkpointer.ttl`, `threads.create/update({ ttl })`)
 * and pruning (`threads.prune`). A thread with a TTL has an expiry in the store as a lease
 * `ttl:<thread id>` (owner `ttl`, data `{ ttl, strategy }`), so every store finds the expired ones
 * through its lease index, and no write of a run pays for it. The sweep (every
 * `sweepIntervalMinutes`, at most `sweepLimit` threads a pass) takes the expired ones: a thread
 * written since its expiry was set (its `updated_at` plus its TTL still ahead) gets its expiry
 * moved there; a busy one is left for the next pass; the others are pruned by their strategy:
 * `delete` removes the thread (its runs, checkpoints and crons), `keep_latest` keeps the thread and
 * the latest checkpoint of each namespace and removes the older ones.
 */
import { invalidInput } from "../errors.js";
import { isPlainObject } from "../json.js";
import type { WriteOp } from "../persistence/types.js";
import type { RunControl } from "./control.js";
import type { Core } from "./core.js";
import { IN_FLIGHT } from "./outcome.js";
import { LostRace, commitIf } from "./races.js";

/** What happens to a thread when its TTL runs out. */
export type ThreadTtlStrategy = "delete" | "keep_latest";

/** `createRuntime({ threadTtl })`: threads' TTL by default and its sweep. */
export interface ThreadTtlConfig {
  /** What an expired thread undergoes (default `delete`). */
  strategy?: ThreadTtlStrategy;
  /** Minutes a new thread lives after its last write, unless it is created with its own `ttl` (default: none). */
  defaultTtl?: number;
  /** Minutes between sweeps (default 5). */
  sweepIntervalMinutes?: number;
  /** Threads handled per sweep at most (default 1000). */
  sweepLimit?: number;
}

const MINUTE = 60_000;
const PREFIX = "ttl:";
const OWNER = "ttl";
/** The longest TTL accepted, as for items (minutes). */
const MAX_TTL = 1e10;

const positive = (v: unknown, max = MAX_TTL) => v === undefined || (typeof v === "number" && Number.isFinite(v) && v > 0 && v <= max);

/** Checks `createRuntime`'s `threadTtl`. */
export function checkThreadTtl(value: unknown): ThreadTtlConfig | undefined {
  if (value === undefined) return undefined;
  if (
    !isPlainObject(value) ||
    !(value.strategy === undefined || value.strategy === "delete" || value.strategy === "keep_latest") ||
    !positive(value.defaultTtl) ||
    !positive(value.sweepIntervalMinutes) ||
    !(value.sweepLimit === undefined || (Number.isSafeInteger(value.sweepLimit) && (value.sweepLimit as number) > 0))
  ) {
    throw invalidInput(
      'graphdock: createRuntime: threadTtl must be { strategy?: "delete" | "keep_latest", defaultTtl?: minutes > 0, sweepIntervalMinutes?: minutes > 0, sweepLimit?: integer > 0 }.',
    );
  }
  return value as ThreadTtlConfig;
}

/** A thread's TTL as a call gives it (`ttl: minutes` or `{ ttl, strategy }`), with the runtime's default strategy. */
export function threadTtlOf(ttl: number | { ttl: number; strategy?: ThreadTtlStrategy } | undefined, config: ThreadTtlConfig | undefined) {
  if (ttl === undefined) return config?.defaultTtl !== undefined ? { ttl: config.defaultTtl, strategy: config.strategy ?? "delete" } : undefined;
  const minutes = typeof ttl === "number" ? ttl : ttl.ttl;
  if (!positive(minutes)) throw invalidInput(`ttl must be a positive number of minutes up to ${MAX_TTL}, got ${JSON.stringify(minutes)}`, [{ path: "ttl", message: "expected minutes > 0" }]);
  const strategy = (typeof ttl === "object" ? ttl.strategy : undefined) ?? config?.strategy ?? "delete";
  return { ttl: minutes, strategy };
}

/** The op that sets a thread's expiry `ttl` minutes after `fromMs`. */
export function expiryOp(threadId: string, ttl: { ttl: number; strategy: ThreadTtlStrategy }, fromMs: number): WriteOp {
  return { op: "lease.put", lease: { key: `${PREFIX}${threadId}`, owner: OWNER, expires_at: Math.round(fromMs + ttl.ttl * MINUTE), data: ttl } };
}

/** The ops removing a thread's checkpoints but the latest of each namespace. */
async function olderCheckpoints(core: Core, threadId: string): Promise<WriteOp[]> {
  const ops: WriteOp[] = [];
  for (const ns of await core.store.listCheckpointNamespaces(threadId)) {
    const ids = (await core.store.listCheckpoints(threadId, { checkpoint_ns: ns })).slice(1).map((c) => c.checkpoint.id);
    if (ids.length) ops.push({ op: "checkpoint.delete", thread_id: threadId, ...(ns ? { checkpoint_ns: ns } : {}), checkpoint_ids: ids });
  }
  return ops;
}

/**
 * Prunes one thread by `strategy` (`remove` deletes it as `threads.delete` does); true when it
 * was pruned, false when it is busy (a run in flight) or gone.
 */
export async function pruneThread(core: Core, threadId: string, strategy: ThreadTtlStrategy, remove: (threadId: string) => Promise<void>): Promise<boolean> {
  const thread = await core.store.getThread(threadId);
  if (!thread) return false;
  if (strategy === "delete") {
    await remove(threadId);
    return true;
  }
  if ((await core.store.countRuns({ thread_id: threadId, status: IN_FLIGHT })) > 0) return false;
  const ops = await olderCheckpoints(core, threadId);
  if (ops.length === 0) return true;
  try {
    // Only while the thread is as read: a run admitted meanwhile changes it.
    await commitIf(core.store, [{ op: "thread.put", thread, expect: { sameAs: thread } }, ...ops]);
  } catch (err) {
    if (err instanceof LostRace) return false;
    throw err;
  }
  return true;
}

/** Sweeps expired threads (see the module comment). */
export class ThreadTtlSweeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(
    private readonly core: Core,
    private readonly config: ThreadTtlConfig,
    private readonly remove: (threadId: string) => Promise<void>,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.sweeping || this.core.closed) return;
      this.sweeping = this.sweep()
        .catch((err: unknown) => {
          if (!this.core.closed) this.core.log.error({ err }, "graphdock: sweeping expired threads failed");
        })
        .finally(() => (this.sweeping = undefined));
    }, (this.config.sweepIntervalMinutes ?? 5) * MINUTE);
    (this.timer as { unref?: () => void }).unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One pass: resolves how many threads were pruned. */
  async sweep(): Promise<number> {
    const { core } = this;
    const now = core.clock();
    let pruned = 0;
    for (const lease of await core.store.expiredLeases(PREFIX, now, this.config.sweepLimit ?? 1000)) {
      if (core.closed) break;
      const threadId = lease.key.slice(PREFIX.length);
      const ttl = { ttl: Number(lease.data.ttl), strategy: lease.data.strategy === "keep_latest" ? "keep_latest" : "delete" } as const;
      const thread = await core.store.getThread(threadId);
      const drop: WriteOp = { op: "lease.delete", key: lease.key, owner: OWNER };
      if (!thread) {
        await core.store.commit([drop]);
        continue;
      }
      // Written since its expiry was set: it lives on from that write.
      const due = Date.parse(thread.updated_at) + ttl.ttl * MINUTE;
      if (due > now) {
        await core.store.commit([expiryOp(threadId, ttl, Date.parse(thread.updated_at))]);
        continue;
      }
      // A thread with a run in flight is left for a later pass (its runs are not cancelled).
      if ((await core.store.countRuns({ thread_id: threadId, status: IN_FLIGHT })) > 0) continue;
      if (!(await pruneThread(core, threadId, ttl.strategy, this.remove))) continue;
      pruned++;
      // A deleted thread needs no expiry; a kept one expires again a TTL from now.
      await core.store.commit([ttl.strategy === "delete" ? drop : expiryOp(threadId, ttl, now)]);
    }
    return pruned;
  }
}
