/**
 * A run's `durability`: when the checkpoints a run writes reach the store.
 *
 * - `sync`: each commit of the engine is awaited before its next step (one store commit each).
 * - `async` (the default, as the Python server's): the engine goes on as soon as a commit is
 *   queued; the queue goes to the store in order, one commit at a time, and what queued up while
 *   one was in flight goes as the next single commit (its ops concatenated, so all or nothing).
 *   The engine's own reads wait for the queue (it reads what it wrote), and the run's outcome is
 *   recorded only once everything it wrote is in the store. A commit that fails stops the engine
 *   and fails the run with the store's error; nothing queued after it is written.
 * - The commits still queued when the engine finishes (not paused, not cancelled) are not
 *   written on their own: they go in the commit that records the run's outcome, ahead of its
 *   ops, so the run's last checkpoints and its outcome are written together or not at all. If
 *   that commit loses a race (the run was ended by someone else: its lease taken over, its thread
 *   deleted), those checkpoints are dropped with it; if it fails otherwise, the run fails with
 *   the store's error, as when a queued commit fails, and its outcome is recorded without them.
 * - `exit`: as `async` (checkpoints are not held back until the run exits, so the state a crash
 *   leaves is never older than with `async`; what the run returns is the same).
 *
 * Other readers (another client's `getState` during the run) may see a step later than the
 * stream has reported, by at most the commits in the queue.
 */
import type { WriteOp } from "../persistence/types.js";
import type { RunRecord } from "../types.js";

/** Whether a run's commits are pipelined (durability `async`, the default, or `exit`). */
export function pipelined(run: Pick<RunRecord, "kwargs">): boolean {
  return run.kwargs.durability !== "sync";
}

/** The queue of a pipelined run's commits. */
export class Pipeline {
  private queued: WriteOp[][] = [];
  private flight: Promise<void> | undefined;
  /** Set by `takeQueued`: nothing more is handed to the store. */
  private holding = false;
  private waiters: Array<() => void> = [];
  /** The first commit that failed (later ones are refused with it). */
  failed: unknown;

  /**
   * @param commit hands ops to the store (one commit); resolves once they are stored.
   * @param stop called once when a commit fails (stops the engine).
   */
  constructor(
    private readonly commit: (ops: readonly WriteOp[]) => Promise<void>,
    private readonly stop: () => void,
  ) {}

  /** Commits queued or in flight. */
  get busy(): boolean {
    return this.flight !== undefined || this.queued.length > 0;
  }

  /** Queues a commit; resolves at once (rejects once a commit has failed, or after `takeQueued`). */
  push(ops: readonly WriteOp[]): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    if (this.holding) return Promise.reject(new Error("graphdock: the run's outcome is being recorded; its commits are closed."));
    this.queued.push([...ops]);
    this.drain();
    return Promise.resolve();
  }

  /** Resolves once nothing is queued or in flight (never rejects: see `failed`). */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * For the run's outcome commit: waits for the commit in flight, then hands over the ops still
   * queued (never handed to the store), for the caller to write in its own commit, and queues
   * nothing more. Undefined when a commit failed (see `failed`; nothing queued is written).
   */
  async takeQueued(): Promise<WriteOp[] | undefined> {
    this.holding = true;
    while (this.flight) await this.flight;
    const ops = this.queued.splice(0).flat();
    for (const w of this.waiters.splice(0)) w();
    return this.failed === undefined ? ops : undefined;
  }

  private drain(): void {
    if (this.flight || this.holding || this.queued.length === 0) return;
    const ops = this.queued.splice(0).flat();
    let flight!: Promise<void>;
    try {
      flight = this.commit(ops);
    } catch (err) {
      flight = Promise.reject(err);
    }
    this.flight = flight.then(
      () => undefined,
      (err: unknown) => {
        if (this.failed === undefined) {
          this.failed = err ?? new Error("graphdock: a commit of the run failed");
          this.stop();
        }
        this.queued.length = 0;
      },
    );
    void this.flight.then(() => {
      this.flight = undefined;
      this.drain();
      if (!this.busy) for (const w of this.waiters.splice(0)) w();
    });
  }
}
