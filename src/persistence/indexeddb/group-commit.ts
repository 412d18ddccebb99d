/**
 * Group commit for the IndexedDB store. Core-safe: no Node built-ins.
 *
 * Each IndexedDB transaction costs a few round trips to the browser's storage process whatever
 * it writes, and readwrite transactions over the same object stores run one after another. So
 * commits submitted while a transaction is in flight wait in a queue, and the next transaction
 * applies all of them, in submission order. Each commit keeps its own semantics:
 *
 * - A batch is applied as the commits one after another (a commit sees the ones before it), so
 *   its outcome is the outcome of running them one by one, in order.
 * - If any commit of a batch fails (a failed expectation, an op that throws, the transaction
 *   aborting), the whole transaction is aborted (nothing of the batch is written) and the
 *   commits are retried one by one, each in its own transaction: the failing one fails alone,
 *   with its own error, and the others are applied as if they had never been batched.
 * - A commit's promise resolves only after the transaction holding it completed (its data is
 *   in IndexedDB), and rejects only with that commit's own error.
 */

/** A commit waiting for its transaction. */
interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Most commits merged into one transaction (a bound on a transaction's size). */
export const MAX_BATCH = 64;

/**
 * Queues commits and writes them in batches with `write` (one transaction per call, all or
 * nothing), one batch at a time.
 */
export class GroupCommit<T> {
  private queue: Array<Waiting<T>> = [];
  private busy = false;
  private idlers: Array<() => void> = [];

  /** `write(items)` applies the items in one transaction, in order, or throws and writes nothing. */
  constructor(private readonly write: (items: readonly T[]) => Promise<void>) {}

  /** Resolves once `item` is written (in a batch or alone); rejects with its own error. */
  submit(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Commits queued or being written. */
  get size(): number {
    return this.queue.length + (this.busy ? 1 : 0);
  }

  /** Resolves once every commit submitted so far has settled (nothing queued or being written). */
  idle(): Promise<void> {
    if (!this.busy && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idlers.push(resolve));
  }

  private pump(): void {
    if (this.busy || this.queue.length === 0) {
      if (!this.busy) for (const idle of this.idlers.splice(0)) idle();
      return;
    }
    this.busy = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    void this.run(batch).finally(() => {
      this.busy = false;
      this.pump();
    });
  }

  private async run(batch: Array<Waiting<T>>): Promise<void> {
    if (batch.length > 1) {
      let ok = false;
      try {
        await this.write(batch.map((w) => w.item));
        ok = true;
      } catch {
        // one of them failed: each is tried alone below, so only that one fails
      }
      if (ok) {
        for (const w of batch) w.resolve();
        return;
      }
    }
    for (const w of batch) {
      try {
        await this.write([w.item]);
        w.resolve();
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
