/**
 * Helpers every store shares: checking and naming an op, and a wake-up signal for readers
 * waiting on a run's event log. Core-safe.
 */
import { SILENT, type DiagnosticsLogger } from "../diagnostics.js";
import { invalidInput } from "../errors.js";
import { checkJson } from "../json.js";
import { checkStoredItem } from "./items.js";
import type { WriteOp } from "./types.js";

/**
 * Checks that what an op stores can be stored (JSON-safe values, a well-formed item, string
 * topics) before a store encodes anything, so a bad op fails the commit and writes nothing.
 * Throws `invalid_input`, also for an op the stores do not know.
 */
export function checkOp(op: WriteOp): void {
  switch (op.op) {
    case "assistant.put":
      return checkJson(op.assistant, `assistant ${op.assistant.assistant_id}`);
    case "assistant_version.put":
      return checkJson(op.version, `version ${op.version.version} of assistant ${op.version.assistant_id}`);
    case "thread.put":
      return checkJson(op.thread, `thread ${op.thread.thread_id}`);
    case "checkpoint.put":
      return checkJson(op.checkpoint, `checkpoint ${op.checkpoint.checkpoint?.id} of thread ${op.checkpoint.thread_id}`);
    case "writes.put":
      return checkJson(op.writes, `writes of task ${op.task_id} on checkpoint ${op.checkpoint_id}`);
    case "run.put":
      return checkJson(op.run, `run ${op.run.run_id}`);
    case "cancel.put":
      return checkJson(op.request, `cancel request of run ${op.request.run_id}`);
    case "lease.put":
      return checkJson(op.lease, `lease ${op.lease.key}`);
    case "doc.put":
      return checkJson(op.doc, `document ${op.id} of ${op.collection}`);
    case "item.put":
      return checkStoredItem(op.item);
    case "item.touch":
      if (!Number.isFinite(op.expires_at)) throw invalidInput("item.touch: expires_at must be epoch ms");
      return;
    case "cron.put":
      return checkJson(op.cron, `cron ${op.cron.cron_id}`);
    case "notify":
      if (typeof op.topic !== "string" || (op.payload !== undefined && typeof op.payload !== "string")) {
        throw invalidInput("notify: topic and payload must be strings");
      }
      return;
    case "assistant.delete":
    case "thread.delete":
    case "checkpoint.delete":
    case "run.delete":
    case "lease.delete":
    case "doc.delete":
    case "item.delete":
    case "cron.delete":
      return;
    default: {
      const never: never = op;
      throw invalidInput(`graphdock store: unknown write op ${JSON.stringify((never as { op?: unknown }).op)}`);
    }
  }
}

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

  /** Where a throwing listener is reported (the runtime's diagnostics, through `Store.useDiagnostics`). */
  log: DiagnosticsLogger = SILENT;

  /** `onError` receives what a listener threw (default: the diagnostics logger). */
  constructor(private readonly onError: (err: unknown, topic: string) => void = (err, topic) => this.log.error({ err, topic }, "graphdock: a store listener threw")) {}

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

  /**
   * Calls every listener of every topic with no payload: notifications may have been missed (a
   * store's notification channel was lost), so each checks again what it waits for.
   */
  deliverAll(): void {
    for (const topic of [...this.topics.keys()]) this.deliver(topic, undefined);
  }

  /** Calls the topic's current listeners. */
  deliver(topic: string, payload: string | undefined): void {
    const set = this.topics.get(topic);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (err) {
        this.onError(err, topic);
      }
    }
  }
}
