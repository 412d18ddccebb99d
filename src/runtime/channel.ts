/**
 * The event channel of one run: numbers events from "0", fans them out to every reader, and
 * for `streamResumable` runs keeps them all so a join can replay from any id (api.md 5.5).
 * Readers of a non-resumable run see events from the moment they attach; their queues hold
 * only what they have not read yet.
 */
import type { RunEvent } from "./types.js";

interface Reader {
  /** Events not read yet from `next` on (compacted as the reader catches up). */
  queue: RunEvent[];
  next: number;
  wake: (() => void) | null;
}

export class RunChannel {
  private seq = 0;
  private readers = new Set<Reader>();
  /** Every event, for resumable runs; null otherwise. */
  private readonly history: RunEvent[] | null;
  private closed = false;

  constructor(resumable: boolean) {
    this.history = resumable ? [] : null;
  }

  push(event: RunEvent["event"], data: unknown): void {
    if (this.closed) return;
    const ev = { id: String(this.seq++), event, data } as RunEvent;
    this.history?.push(ev);
    for (const r of this.readers) {
      r.queue.push(ev);
      r.wake?.();
    }
  }

  /** No more events; readers drain what they have and end. */
  close(): void {
    this.closed = true;
    for (const r of this.readers) r.wake?.();
  }

  /**
   * Attaches a reader. With `lastEventId` on a resumable run, replays the events after it
   * (`"-1"` or any id before the first: from the start). `onStop(finished)` runs when the
   * reader ends, `finished` false when the consumer left early.
   */
  read(lastEventId?: string, onStop?: (finished: boolean) => void): AsyncGenerator<RunEvent> {
    const reader: Reader = { queue: [], next: 0, wake: null };
    if (this.history && lastEventId !== undefined) {
      const after = Number(lastEventId);
      reader.queue.push(...this.history.filter((e) => Number(e.id) > (Number.isFinite(after) ? after : -1)));
    }
    this.readers.add(reader);
    const events = this.drain(reader, onStop);
    // A generator returned before its first next() never runs its finally block: detach here too,
    // so a reader given up before it started (a join refused by auth) does not stay attached.
    const finish = events.return.bind(events);
    events.return = (value) => {
      this.readers.delete(reader);
      return finish(value);
    };
    return events;
  }

  /** Readers attached now (for tests and leak checks). */
  get readerCount(): number {
    return this.readers.size;
  }

  private async *drain(reader: Reader, onStop?: (finished: boolean) => void): AsyncGenerator<RunEvent> {
    let finished = false;
    try {
      for (;;) {
        if (reader.next < reader.queue.length) {
          const ev = reader.queue[reader.next++]!;
          if (reader.next === reader.queue.length) {
            reader.queue = [];
            reader.next = 0;
          }
          yield ev;
          continue;
        }
        if (this.closed) break;
        await new Promise<void>((resolve) => (reader.wake = resolve));
        reader.wake = null;
      }
      finished = true;
    } finally {
      this.readers.delete(reader);
      onStop?.(finished);
    }
  }
}
