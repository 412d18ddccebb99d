/**
 * Conditional commits that may lose a race with another runtime on the same store, and the
 * retry loop around them.
 */
import { GraphdockError } from "../errors.js";
import type { Store, WriteOp } from "../persistence/types.js";

/** A conditional commit that lost a race with another runtime: read again and retry. */
export class LostRace extends Error {
  constructor(readonly conflict: GraphdockError) {
    super(conflict.message);
  }
}

/** `store.commit`, turning a failed expectation (`conflict`) into `LostRace` for `retryLostRaces`. */
export async function commitIf(store: Pick<Store, "commit">, ops: readonly WriteOp[]): Promise<void> {
  try {
    await store.commit(ops);
  } catch (err) {
    if (GraphdockError.is(err, "conflict")) throw new LostRace(err);
    throw err;
  }
}

/**
 * Runs `attempt` again while it throws `LostRace` (its conditional commit lost to another
 * runtime), at most `tries` times; then the store's `conflict` is rethrown.
 */
export async function retryLostRaces<T>(attempt: () => Promise<T>, tries = 50): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      if (i >= tries) throw err.conflict;
      // Randomized back-off so two runtimes racing on one record do not collide again.
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** i, 20)));
    }
  }
}
