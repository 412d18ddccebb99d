/**
 * Read batching for the IndexedDB store (the readonly counterpart of ./group-commit.ts).
 * Core-safe: no Node built-ins.
 *
 * Each IndexedDB transaction costs round trips to the browser's storage process whatever it
 * reads. Reads issued in the same microtask turn (a `Promise.all` of store reads, or several
 * callers reading at once) share one readonly transaction over the union of the object stores
 * they name; each read still runs its own code against that transaction and gets its own result.
 * One transaction also means they see one snapshot of the database.
 *
 * A read of a shared transaction that fails (its own error, or the transaction aborting because
 * another read's request failed) is tried again alone in a transaction of its own, so its
 * outcome, result or error, is the one it would have had unbatched. Reads write nothing, so
 * trying one again is harmless.
 */

/** Most reads sharing one transaction. */
export const MAX_READS = 64;

/** A read waiting for its transaction. */
interface Waiting<Tx, N> {
  names: readonly N[];
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the reads submitted in one microtask turn and runs them in one readonly transaction
 * opened by `open(names)`.
 */
export class ReadBatch<Tx, N extends string> {
  private queue: Array<Waiting<Tx, N>> = [];
  private scheduled = false;

  /** `open(names)` opens a readonly transaction over the object stores `names`. */
  constructor(private readonly open: (names: N[]) => Promise<Tx>) {}

  /** Runs `fn` in a readonly transaction over at least `names`, shared with the reads of this turn. */
  submit<T>(names: readonly N[], fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ names, fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) void this.run(this.queue.splice(0, MAX_READS));
  }

  private async run(batch: Array<Waiting<Tx, N>>): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]!);
    const names = new Set<N>();
    for (const w of batch) for (const name of w.names) names.add(name);
    let tx: Tx;
    try {
      tx = await this.open([...names]);
    } catch {
      // e.g. the connection closing: each read opens (or fails to open) its own
      for (const w of batch) void this.alone(w);
      return;
    }
    // Every read issues its first request now, before the transaction can auto-commit.
    for (const w of batch) {
      let pending: Promise<unknown>;
      try {
        pending = w.fn(tx);
      } catch (err) {
        pending = Promise.reject(err);
      }
      pending.then(w.resolve, () => void this.alone(w));
    }
  }

  /** A read in a transaction of its own: its own outcome. */
  private async alone(w: Waiting<Tx, N>): Promise<void> {
    try {
      w.resolve(await w.fn(await this.open([...w.names])));
    } catch (err) {
      w.reject(err);
    }
  }
}
