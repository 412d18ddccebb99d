/**
 * `graphdock/indexeddb`: a durable store in an IndexedDB database, for browser apps and workers
 * (no Node built-ins; under Node it runs on `fake-indexeddb`). Several tabs on one database act
 * as one service (D20): the database is the only source of truth, tabs learn of each other's
 * commits, notifications and run events through a BroadcastChannel named after the database.
 *
 * Schema 6, storage format 5 (./rows.ts): one record per thread, checkpoint, run, list item,
 * lease, cancel request and persisted run event, so a commit writes only what it changes.
 * Commits made while a transaction is in flight share the next readwrite transaction (group
 * commit, ./group-commit.ts), each with its own outcome: expectations are checked inside the
 * transaction before anything is written, so of two tabs racing on the same expectation exactly
 * one wins; a failed expectation or op writes nothing of its commit. Values are checked before
 * the transaction opens (`invalid_input`). Reads go to IndexedDB every time; the only caches are
 * of immutable data (a prefix of an append-only list log, checkpoint and run bases), which cannot
 * disagree with the database.
 *
 * Schemas 1 to 5 are migrated inside the upgrade transaction on first open (./migrate.ts); a
 * newer schema or format is refused with `conflict`. Opening otherwise reads one record.
 *
 * The store is built in layers, one concern per file: ./schema.ts (database schema, options,
 * keys), ./base.ts (connection, caches, reading checkpoint rows), ./writes.ts (commits),
 * ./reads.ts (reads and queries), and this file (run events, the other tabs, locks).
 */
import type { ExternalChange, Store } from "../types.js";
import { IdbRunEvents, type EventMessage } from "./events.js";
import { type IndexedDbStoreOptions, type TabMessage, under } from "./schema.js";
import { IdbReads } from "./reads.js";

export { DB_VERSION, INDEXEDDB_FORMAT, type GraphdockDB, type IndexedDbStoreOptions } from "./schema.js";

/** In-process fallback for Web Locks: promise chains per lock name. */
const localLocks = new Map<string, Promise<unknown>>();

class IndexedDbStore extends IdbReads implements Store {
  readonly kind = "indexeddb";
  readonly capabilities = { persistent: true, shared: true };
  readonly events: IdbRunEvents;
  private channel: BroadcastChannel | undefined;
  private changeListeners = new Set<(change: ExternalChange) => void>();
  private eventListeners = new Set<(m: EventMessage) => void>();
  private runtimeListeners = new Set<(owner: string) => void>();

  constructor(name: string, options: IndexedDbStoreOptions) {
    super(name, options);
    this.events = new IdbRunEvents({
      putLog: async (run, log) => {
        const db = await this.database();
        await db.put("logs", { run_id: run, ...log });
      },
      getLog: async (run) => {
        const db = await this.database();
        const row = await db.get("logs", run);
        return row && { resumable: row.resumable, ended: row.ended, last: row.last };
      },
      putEvents: async (batch) => {
        const db = await this.database();
        const tx = db.transaction("events", "readwrite");
        for (const { run, rec } of batch) void tx.store.put({ event: rec.event, data: rec.data }, [run, rec.seq]).catch(() => undefined);
        await tx.done;
      },
      readEvents: async (run, after) => {
        const db = await this.database();
        const range = IDBKeyRange.bound([run, after], [run, Infinity], true, false);
        const tx = db.transaction("events", "readonly");
        const [keys, values] = await Promise.all([tx.store.getAllKeys(range), tx.store.getAll(range)]);
        return values.map((v, i) => ({ seq: keys[i]![1], event: v.event, data: v.data }));
      },
      dropLog: async (run) => {
        const db = await this.database();
        const tx = db.transaction(["logs", "events"], "readwrite");
        void tx.objectStore("logs").delete(run);
        void tx.objectStore("events").delete(under(run));
        await tx.done;
      },
      post: (m) => this.post({ k: "event", m }),
      listen: (fn) => {
        this.eventListeners.add(fn);
        return () => this.eventListeners.delete(fn);
      },
    });
  }

  async open(): Promise<void> {
    this.closed = false;
    await this.database();
    this.port();
    this.events.attach();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.events.detach().catch(() => undefined);
    // Commits made before close are written (or fail) as they would without group commit.
    await this.group.idle();
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.channel?.close();
    this.channel = undefined;
    if (db) (await db.catch(() => undefined))?.close();
  }

  // ---------------------------------------------------------------------------------------------
  // Other tabs.

  /** The channel to the other runtimes on this database, where BroadcastChannel exists. */
  private port(): BroadcastChannel | undefined {
    if (!this.channel && !this.closed && typeof BroadcastChannel !== "undefined") {
      this.channel = new BroadcastChannel(`graphdock:${this.name}`);
      // Node keeps the process alive for an open channel; browsers have no unref.
      (this.channel as { unref?: () => void }).unref?.();
      this.channel.onmessage = (event: MessageEvent<TabMessage>) => this.receive(event.data);
    }
    return this.channel;
  }

  protected override post(message: TabMessage) {
    try {
      this.port()?.postMessage(message);
    } catch {
      // a value the channel cannot clone: other tabs miss it (run events read back from storage)
    }
  }

  private receive(message: TabMessage) {
    if (message.k === "change") for (const l of this.changeListeners) l(message.change);
    else if (message.k === "notify") this.topics.deliver(message.topic, message.payload);
    else if (message.k === "event") for (const l of this.eventListeners) l(message.m);
    else if (message.k === "runtime") for (const l of this.runtimeListeners) l(message.owner);
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    this.port();
    return this.topics.subscribe(topic, listener);
  }

  onExternalChange(listener: (change: ExternalChange) => void): () => void {
    this.port();
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Liveness of the runtimes on this database (D64). Each holds an exclusive Web Lock named after
   * it while it runs; the browser releases it when the tab closes (or crashes). Every other
   * runtime asks for a shared lock of the same name, granted only then, and learns at once that
   * its runs may be resumed. Runtimes find each other through `navigator.locks.query()` and a
   * message on the channel when one starts; a runtime starting also reports the owners of stored
   * leases that hold no lock (a tab closed or reloaded before it started). Without Web Locks
   * (Node) nothing is watched: leases expire as usual.
   */
  watchOwners(owner: string, onGone: (owner: string) => void): () => void {
    const locks = (globalThis.navigator as Navigator | undefined)?.locks;
    if (!locks) return () => undefined;
    const prefix = `graphdock:${this.name}:runtime:`;
    const watching = new Map<string, AbortController>();
    let stopped = false;
    const watch = (other: string) => {
      if (stopped || other === owner || watching.has(other)) return;
      const abort = new AbortController();
      watching.set(other, abort);
      locks
        .request(prefix + other, { mode: "shared", signal: abort.signal }, () => {
          watching.delete(other);
          if (!stopped) onGone(other);
        })
        .catch(() => watching.delete(other)); // stopped watching
    };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    this.port();
    this.runtimeListeners.add(watch);
    void locks.request(prefix + owner, async () => {
      if (stopped) return;
      // Held from here: the others may watch it now.
      this.post({ k: "runtime", owner });
      const state = await locks.query();
      // Alive: those holding their lock, and those starting (their exclusive request pending).
      const alive = new Set<string>();
      for (const lock of [...(state.held ?? []), ...(state.pending ?? []).filter((l) => l.mode === "exclusive")]) {
        if (lock.name?.startsWith(prefix)) alive.add(lock.name.slice(prefix.length));
      }
      for (const other of alive) watch(other);
      // Leases held by a runtime that is gone already (the tab this one reloads) are void too.
      try {
        const gone = new Set((await this.expiredLeases("", Number.POSITIVE_INFINITY)).map((l) => l.owner).filter((o) => o !== owner && !alive.has(o)));
        for (const other of gone) if (!stopped) onGone(other);
      } catch {
        // unreadable now: those leases expire
      }
      await held;
    });
    return () => {
      stopped = true;
      this.runtimeListeners.delete(watch);
      for (const abort of watching.values()) abort.abort();
      watching.clear();
      release();
    };
  }

  withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const name = `graphdock:${this.name}:${key}`;
    const locks = (globalThis.navigator as Navigator | undefined)?.locks;
    if (locks) return locks.request(name, fn) as Promise<T>;
    const run = (localLocks.get(name) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    localLocks.set(name, tail);
    void tail.then(() => {
      if (localLocks.get(name) === tail) localLocks.delete(name);
    });
    return run;
  }
}

/**
 * A store in the IndexedDB database `name` (created on first open). Several tabs on the same
 * database act as one store: commits are transactions with expectations checked inside them,
 * reads always see other tabs' commits, and notifications and run events reach every tab.
 */
export function indexedDbStore(name: string, options: IndexedDbStoreOptions = {}): Store {
  return new IndexedDbStore(name, options);
}
