/**
 * A keyed mutex within one process: `run(key, fn)` runs `fn` after every earlier `fn` of the same
 * key has settled. The runtime uses it only to spare itself retries of its own conditional commits
 * (several admissions on one thread at once); correctness across runtimes comes from the store's
 * conditional commits, never from this lock. The LangGraph.js saver orders one checkpoint's put
 * and writes with it. Core-safe.
 */
/** What a settled `fn` leaves in the tail (one function for all: none made per call). */
const settled = (): undefined => undefined;

export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** True while a `fn` of `key` runs or waits. */
  held(key: string): boolean {
    return this.tails.has(key);
  }

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key);
    const result = prev ? prev.then(fn, fn) : fn();
    const tail = result.then(settled, settled);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

