/**
 * A set of ids bounded by count that forgets its oldest first (CPU per run). A `Set`
 * used that way (add the newest, delete `values().next().value`) costs more per eviction the
 * more evictions it has seen since the set last grew: deleted entries stay as holes at the front
 * of its table until it is rebuilt, and every `values().next()` walks past them (about 1.5 µs per
 * eviction at 4,096 ids). Here the insertion order is kept in an array of its own. Same
 * behaviour as the `Set`: adding an id it has keeps its place; one deleted and added again is
 * the newest. Core-safe.
 */
export class RecentIds {
  /** Id -> the stamp of its insertion (the one in `order` that is current). */
  private readonly stamps = new Map<string, number>();
  /** Insertions in order, as id and stamp pairs, from `head`; stale ones (deleted since) are skipped. */
  private order: Array<string | number> = [];
  private head = 0;
  private stamp = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.stamps.size;
  }

  has(id: string): boolean {
    return this.stamps.has(id);
  }

  delete(id: string): boolean {
    return this.stamps.delete(id);
  }

  /** Adds `id` (unless it is in), then forgets the oldest ids beyond the bound. */
  add(id: string): void {
    if (!this.stamps.has(id)) {
      const stamp = ++this.stamp;
      this.stamps.set(id, stamp);
      this.order.push(id, stamp);
    }
    while (this.stamps.size > this.max && this.head < this.order.length) {
      const oldest = this.order[this.head] as string;
      const stamp = this.order[this.head + 1] as number;
      this.head += 2;
      if (this.stamps.get(oldest) === stamp) this.stamps.delete(oldest);
    }
    this.compact();
  }

  /** Drops the consumed front of `order`, and the stale pairs once they outnumber the live ones. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 >= this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
    if (this.order.length - this.head > 4 * (this.stamps.size + 256)) {
      const live: Array<string | number> = [];
      for (let i = this.head; i < this.order.length; i += 2) {
        const id = this.order[i] as string;
        if (this.stamps.get(id) === this.order[i + 1]) live.push(id, this.order[i + 1]!);
      }
      this.order = live;
      this.head = 0;
    }
  }
}
