import { describe, expect, it } from "vitest";
import { RecentIds } from "../../src/persistence/recent-ids.js";

/** The behaviour it replaces: a Set that forgets its first-inserted id beyond the bound. */
class SetModel {
  readonly set = new Set<string>();
  constructor(private readonly max: number) {}
  add(id: string) {
    this.set.add(id);
    if (this.set.size > this.max) this.set.delete(this.set.values().next().value as string);
  }
}

describe("RecentIds: a bounded set forgetting its oldest first", () => {
  it("holds exactly what a Set evicting its first-inserted id holds, over random adds, re-adds and deletes", () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (const max of [0, 1, 3, 50]) {
      const ids = new RecentIds(max);
      const model = new SetModel(max);
      for (let i = 0; i < 20_000; i++) {
        const id = `r${rand(max * 3 + 5)}`;
        if (rand(4) === 0) expect(ids.delete(id)).toBe(model.set.delete(id));
        else {
          ids.add(id);
          model.add(id);
        }
        expect(ids.size).toBe(model.set.size);
      }
      for (let k = 0; k < max * 3 + 5; k++) expect(ids.has(`r${k}`)).toBe(model.set.has(`r${k}`));
    }
  });

  it("forgets the oldest of many distinct ids, keeping the newest", () => {
    const ids = new RecentIds(4096);
    for (let i = 0; i < 100_000; i++) ids.add(`run-${i}`);
    expect(ids.size).toBe(4096);
    expect(ids.has("run-99999") && ids.has(`run-${100_000 - 4096}`)).toBe(true);
    expect(ids.has(`run-${100_000 - 4097}`)).toBe(false);
  });
});
