/**
 * A spy on the IndexedDB transactions a piece of code opens (on any database), for the tests
 * that count them: their mode, object stores and options, in the order opened.
 */

/** A transaction opened while the spy was on. */
export interface OpenedTransaction {
  mode: "readonly" | "readwrite";
  /** Its object stores, sorted. */
  names: string[];
  /** The options it was opened with (`{ durability }`), as given. */
  options: unknown;
}

/** Runs `fn` and answers the transactions opened while it ran, with its result. */
export async function openedTransactions<T>(fn: () => Promise<T>): Promise<[OpenedTransaction[], T]> {
  const proto = IDBDatabase.prototype as { transaction: (...a: unknown[]) => IDBTransaction };
  const original = proto.transaction;
  const opened: OpenedTransaction[] = [];
  proto.transaction = function (this: IDBDatabase, ...args: unknown[]) {
    opened.push({ mode: args[1] === "readwrite" ? "readwrite" : "readonly", names: ([] as string[]).concat(args[0] as string | string[]).sort(), options: args[2] });
    return original.apply(this, args);
  };
  try {
    const out = await fn();
    return [opened, out];
  } finally {
    proto.transaction = original;
  }
}
