/**
 * The cron records section of the Store contract, run by `storeContract` on every
 * store. Imports only `vitest` and core-safe src modules (the browser harness bundles it).
 */
import { describe, expect, it } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import type { CronRecord, Store } from "../../src/persistence/types.js";

export const cron = (id: string, over: Partial<CronRecord> = {}): CronRecord => ({
  cron_id: id,
  assistant_id: "a1",
  thread_id: null,
  on_run_completed: "delete",
  end_time: null,
  schedule: "* * * * *",
  timezone: null,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  payload: { input: { messages: [{ role: "user", content: "hi" }] }, multitask_strategy: "enqueue" },
  user_id: "ann",
  next_run_date: "2026-01-01T00:01:00.000Z",
  metadata: { owner: "ann" },
  enabled: true,
  revision: 1,
  user: { identity: "ann", permissions: ["write"], is_authenticated: true, display_name: "Ann" },
  ...over,
});

const ids = (list: CronRecord[]) => list.map((c) => c.cron_id);
const at = (minute: number) => `2026-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`;

export function cronStoreContract(o: { store: () => Store; reopen?: () => Promise<Store> }): void {
  describe("cron records", () => {
    it("puts, gets, replaces and deletes crons exactly as given", async () => {
      const s = o.store();
      const c1 = cron("c1");
      const c2 = cron("c2", { thread_id: "t1", on_run_completed: undefined, timezone: "Europe/Paris", end_time: at(30), next_run_date: null, enabled: false, user: null, user_id: null });
      delete (c2 as Partial<CronRecord>).on_run_completed;
      await s.commit([
        { op: "cron.put", cron: c1 },
        { op: "cron.put", cron: c2 },
      ]);
      expect(await s.getCron("c1")).toEqual(c1);
      expect(await s.getCron("c2")).toEqual(c2);
      expect(await s.getCron("nope")).toBeUndefined();
      const moved = { ...c1, next_run_date: at(2), revision: 2 };
      await s.commit([{ op: "cron.put", cron: moved }]);
      expect(await s.getCron("c1")).toEqual(moved);
      await s.commit([{ op: "cron.delete", cron_id: "c1" }, { op: "cron.delete", cron_id: "never-there" }]);
      expect(await s.getCron("c1")).toBeUndefined();
      expect(ids(await s.queryCrons({}))).toEqual(["c2"]);
    });

    it("filters by ids, assistant, thread, enabled, metadata and auth; counts ignore paging", async () => {
      const s = o.store();
      await s.commit([
        { op: "cron.put", cron: cron("c1", { assistant_id: "a1", thread_id: "t1", metadata: { owner: "ann", team: "x" } }) },
        { op: "cron.put", cron: cron("c2", { assistant_id: "a2", thread_id: "t1", metadata: { owner: "bob" } }) },
        { op: "cron.put", cron: cron("c3", { assistant_id: "a1", thread_id: null, enabled: false, metadata: { owner: "bob", team: "x" } }) },
      ]);
      const sorted = async (q: Parameters<Store["queryCrons"]>[0]) => ids(await s.queryCrons({ ...q, sortBy: "cron_id", sortOrder: "asc" }));
      expect(await sorted({})).toEqual(["c1", "c2", "c3"]);
      expect(await sorted({ ids: ["c3", "c1", "zz"] })).toEqual(["c1", "c3"]);
      expect(await sorted({ assistant_id: "a1" })).toEqual(["c1", "c3"]);
      expect(await sorted({ thread_id: "t1" })).toEqual(["c1", "c2"]);
      expect(await sorted({ enabled: false })).toEqual(["c3"]);
      expect(await sorted({ enabled: true })).toEqual(["c1", "c2"]);
      expect(await sorted({ metadata: { team: "x" } })).toEqual(["c1", "c3"]);
      expect(await sorted({ auth: { owner: "bob" } })).toEqual(["c2", "c3"]);
      expect(await sorted({ auth: { owner: { $eq: "ann" } }, metadata: { team: "x" } })).toEqual(["c1"]);
      expect(await s.countCrons({ auth: { owner: "bob" }, limit: 1 })).toBe(2);
      expect(await s.countCrons({ assistant_id: "a1", thread_id: "t1" })).toBe(1);
      expect(await s.countCrons({ auth: { owner: "carl" } })).toBe(0);
    });

    it("sorts by every field in both orders, ties broken by cron_id in the same direction, then pages", async () => {
      const s = o.store();
      await s.commit([
        { op: "cron.put", cron: cron("c2", { assistant_id: "b", thread_id: "t2", created_at: at(1), updated_at: at(9), next_run_date: at(5) }) },
        { op: "cron.put", cron: cron("c1", { assistant_id: "a", thread_id: null, created_at: at(1), updated_at: at(8), next_run_date: null }) },
        { op: "cron.put", cron: cron("c3", { assistant_id: "a", thread_id: "t1", created_at: at(2), updated_at: at(7), next_run_date: at(5) }) },
      ]);
      const q = async (sortBy: NonNullable<Parameters<Store["queryCrons"]>[0]["sortBy"]>, sortOrder: "asc" | "desc") => ids(await s.queryCrons({ sortBy, sortOrder }));
      expect(await q("cron_id", "asc")).toEqual(["c1", "c2", "c3"]);
      expect(await q("created_at", "asc")).toEqual(["c1", "c2", "c3"]);
      expect(await q("created_at", "desc")).toEqual(["c3", "c2", "c1"]);
      expect(await q("updated_at", "asc")).toEqual(["c3", "c1", "c2"]);
      expect(await q("assistant_id", "asc")).toEqual(["c1", "c3", "c2"]);
      expect(await q("assistant_id", "desc")).toEqual(["c2", "c3", "c1"]);
      // A missing thread or next run sorts first ascending.
      expect(await q("thread_id", "asc")).toEqual(["c1", "c3", "c2"]);
      expect(await q("next_run_date", "asc")).toEqual(["c1", "c2", "c3"]);
      expect(await q("next_run_date", "desc")).toEqual(["c3", "c2", "c1"]);
      expect(ids(await s.queryCrons({}))).toEqual(["c3", "c2", "c1"]); // default: created_at desc
      expect(ids(await s.queryCrons({ sortBy: "cron_id", sortOrder: "asc", offset: 1, limit: 1 }))).toEqual(["c2"]);
      expect(ids(await s.queryCrons({ sortBy: "cron_id", sortOrder: "asc", offset: 2 }))).toEqual(["c3"]);
      expect(ids(await s.queryCrons({ limit: 0 }))).toEqual([]);
    });

    it("answers due crons earliest first, as of a time (inclusive), enabled ones with a next run only, and follows every change", async () => {
      const s = o.store();
      await s.commit([
        { op: "cron.put", cron: cron("c3", { next_run_date: at(3) }) },
        { op: "cron.put", cron: cron("c1", { next_run_date: at(1) }) },
        { op: "cron.put", cron: cron("c2", { next_run_date: at(1) }) },
        { op: "cron.put", cron: cron("off", { next_run_date: at(0), enabled: false }) },
        { op: "cron.put", cron: cron("ended", { next_run_date: null }) },
      ]);
      expect(ids(await s.dueCrons())).toEqual(["c1", "c2", "c3"]);
      expect(ids(await s.dueCrons(at(1)))).toEqual(["c1", "c2"]);
      expect(ids(await s.dueCrons(at(0)))).toEqual([]);
      expect(ids(await s.dueCrons(undefined, 2))).toEqual(["c1", "c2"]);
      expect(ids(await s.dueCrons(at(9), 1))).toEqual(["c1"]);
      // Moving a tick on, disabling, ending, enabling and deleting all show at once.
      await s.commit([
        { op: "cron.put", cron: cron("c1", { next_run_date: at(4), revision: 2 }) },
        { op: "cron.put", cron: cron("off", { next_run_date: at(2), enabled: true }) },
        { op: "cron.put", cron: cron("c3", { next_run_date: at(3), enabled: false }) },
      ]);
      expect(ids(await s.dueCrons())).toEqual(["c2", "off", "c1"]);
      await s.commit([{ op: "cron.delete", cron_id: "off" }, { op: "cron.put", cron: cron("c2", { next_run_date: null }) }]);
      expect(ids(await s.dueCrons())).toEqual(["c1"]);
      expect((await s.dueCrons(at(4)))[0]).toEqual(cron("c1", { next_run_date: at(4), revision: 2 }));
    });

    it("expectations: exists and revision; a failed one writes nothing, the due index included", async () => {
      const s = o.store();
      await s.commit([{ op: "cron.put", cron: cron("c1"), expect: { exists: false } }]);
      const conflict = async (p: Promise<unknown>) => {
        const err = await p.then(() => undefined, (e: unknown) => e);
        expect(GraphdockError.is(err, "conflict"), String(err)).toBe(true);
      };
      await conflict(s.commit([{ op: "cron.put", cron: cron("c1", { schedule: "0 * * * *" }), expect: { exists: false } }]));
      await conflict(s.commit([{ op: "cron.delete", cron_id: "zz", expect: { exists: true } }]));
      await conflict(
        s.commit([
          { op: "cron.put", cron: cron("c2", { next_run_date: at(0) }) },
          { op: "cron.put", cron: cron("c1", { next_run_date: at(9), revision: 2 }), expect: { revision: 7 } },
        ]),
      );
      expect(await s.getCron("c2")).toBeUndefined();
      expect(await s.getCron("c1")).toEqual(cron("c1"));
      expect(ids(await s.dueCrons())).toEqual(["c1"]);
      // Compare-and-set: of two claims read at revision 1, one lands.
      const claim = (minute: number) => s.commit([{ op: "cron.put", cron: cron("c1", { next_run_date: at(minute), revision: 2 }), expect: { revision: 1 } }]);
      const results = await Promise.allSettled([claim(5), claim(6)]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((await s.getCron("c1"))?.revision).toBe(2);
      await s.commit([{ op: "cron.delete", cron_id: "c1", expect: { exists: true, revision: 2 } }]);
      expect(await s.dueCrons()).toEqual([]);
    });

    it("refuses a cron that is not JSON with invalid_input, writing nothing", async () => {
      const s = o.store();
      const bad = cron("c1", { payload: { input: { when: new Date(0) } } });
      const err = await s.commit([{ op: "cron.put", cron: bad }]).then(() => undefined, (e: unknown) => e);
      expect(GraphdockError.is(err, "invalid_input"), String(err)).toBe(true);
      expect(await s.getCron("c1")).toBeUndefined();
    });

    if (o.reopen) {
      it("keeps crons and their due order after close and open", async () => {
        let s = o.store();
        await s.commit([
          { op: "cron.put", cron: cron("c2", { next_run_date: at(2) }) },
          { op: "cron.put", cron: cron("c1", { next_run_date: at(3) }) },
          { op: "cron.put", cron: cron("gone") },
        ]);
        await s.commit([{ op: "cron.put", cron: cron("c1", { next_run_date: at(1), revision: 2 }), expect: { revision: 1 } }, { op: "cron.delete", cron_id: "gone" }]);
        s = await o.reopen!();
        expect(await s.getCron("c1")).toEqual(cron("c1", { next_run_date: at(1), revision: 2 }));
        expect(ids(await s.dueCrons())).toEqual(["c1", "c2"]);
        expect(await s.countCrons({})).toBe(2);
      });
    }
  });
}
