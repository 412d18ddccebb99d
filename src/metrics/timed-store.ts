/**
 * A store whose queries and commits are timed (D95): the same store, each of its reads and its
 * `commit` reporting its duration and outcome to `record` (the metrics' `observeStore`). Nothing
 * else changes: the event port, subscriptions and the store's own identity checks go to the store.
 */
import { performance } from "node:perf_hooks";
import type { Store } from "../persistence/types.js";

/** The operations timed: a store's reads and its one write. */
const TIMED = /^(commit|get[A-Z]\w*|query\w+|count\w+|list\w+|search\w+|expiredLeases)$/;

/** `store` with its operations timed into `record` (which may be set later: `undefined` records nothing). */
export function timedStore(store: Store, record: () => ((operation: string, seconds: number, ok: boolean) => void) | undefined): Store {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof key !== "string" || typeof value !== "function" || !TIMED.test(key)) return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const sink = record();
        if (!sink) return (value as (...a: unknown[]) => unknown).apply(target, args);
        const start = performance.now();
        const done = (ok: boolean) => sink(key, (performance.now() - start) / 1000, ok);
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) {
          done(true);
          return result;
        }
        return result.then(
          (v) => (done(true), v),
          (err: unknown) => {
            done(false);
            throw err;
          },
        );
      };
    },
  });
}
