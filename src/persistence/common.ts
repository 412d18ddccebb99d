/**
 * Helpers every store shares: naming an op in error messages, and a wake-up signal for readers
 * waiting on a run's event log. Core-safe.
 */
import type { WriteOp } from "./types.js";

/** How an op is named in a `conflict` / `invalid_input` message. */
export function describeOp(op: WriteOp): string {
  switch (op.op) {
    case "thread.put":
      return `thread.put of thread ${op.thread.thread_id}`;
    case "thread.delete":
      return `thread.delete of thread ${op.thread_id}`;
    case "run.put":
      return `run.put of run ${op.run.run_id}`;
    case "run.delete":
      return `run.delete of run ${op.run_id}`;
    case "lease.put":
      return `lease.put of lease ${op.lease.key}`;
    default:
      return op.op;
  }
}

/** A promise every waiter shares until the next `notify`, then a fresh one. */
export class WakeSignal {
  private wake: (() => void) | undefined;
  private waiting: Promise<void> | undefined;

  /** Resolves at the next `notify`. */
  changed(): Promise<void> {
    return (this.waiting ??= new Promise<void>((resolve) => (this.wake = resolve)));
  }

  notify(): void {
    const wake = this.wake;
    if (wake) {
      this.wake = undefined;
      this.waiting = undefined;
      wake();
    }
  }
}

/** The `subscribe(topic)` listeners of one store instance; a throwing listener is isolated. */
export class TopicListeners {
  private readonly topics = new Map<string, Set<(payload: string | undefined) => void>>();

  /** `onError` receives what a listener threw (default: logged). */
  constructor(
    private readonly onError: (err: unknown, topic: string) => void = (err, topic) => console.error(`agentdock: a listener of "${topic}" threw`, err),
  ) {}

  get size(): number {
    return this.topics.size;
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    // Wrapped, so one function subscribed twice is two subscriptions.
    const entry = (payload: string | undefined) => listener(payload);
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.topics.get(topic) === set) this.topics.delete(topic);
    };
  }

  /** Calls the topic's current listeners. */
  deliver(topic: string, payload: string | undefined): void {
    for (const listener of [...(this.topics.get(topic) ?? [])]) {
      try {
        listener(payload);
      } catch (err) {
        this.onError(err, topic);
      }
    }
  }
}
