/**
 * The IndexedDB store's writes: `commit` checks a commit's ops, queues it for group commit
 * (./group-commit.ts) and applies batches in one readwrite transaction each: what the ops look at
 * is read in one wave, each op's expectation is checked against the state the earlier ops left,
 * checkpoints are stored as rows against their list logs and bases (./rows.ts). Core-safe: no
 * Node built-ins.
 */
import { GraphdockError, conflict, invalidInput } from "../../errors.js";
import { checkOp } from "../common.js";
import type { ThreadRecord } from "../../types.js";
import { encodeCheckpoint, encodeThread, LIST_MIN, listRefs, type EncodedValues } from "../delta.js";
import type { PendingWrite, StoredCheckpoint, WriteOp } from "../types.js";
import { GroupCommit } from "./group-commit.js";
import { namespaceKey } from "../items.js";
import { cronExpectationFails, isScheduled, type CronRecord } from "../crons.js";
import { type CronRow, type ItemRow, type RunRow, type ThreadRow } from "./migrate.js";
import {
  cpKey,
  diffLeaves,
  indexItems,
  located,
  reshareItems,
  rowBody,
  rowRecord,
  shareItems,
  shortId,
  storedRow,
  type CpRecord,
  unionBase,
  baseId,
  homeOf,
  qualifyItems,
  type CpRow,
  type ItemIndex,
} from "./rows.js";
import { type Names, type WTx, SCOPE, under, listKey, rowKey, RUNS } from "./schema.js";
import { IdbBase, deepFreeze, type Ctx } from "./base.js";
import { encodeItem } from "./item-codec.js";
import { packRun, unpackRun } from "./run-row.js";

/** A commit waiting for (or in) a group commit's transaction: its ops and the object stores they touch. */
interface Batched {
  ops: readonly WriteOp[];
  scope: ReadonlySet<Names>;
}

/**
 * Checkpoint ids sharing this many leading characters are checked together (`absent`): for the
 * engine's time-ordered ids (uuid6, `xxxxxxxx-xx`), made within about 0.1 s of each other.
 */
const CLOSE_IDS = 11;
/** Most `by_id` keys read by one `absent` check before it gives up. */
const ABSENT_SCAN = 32;

/**
 * Every checkpoint row after this many in a (thread, namespace) starts a new base (format 5; 16
 * before). A row's diff names the same leaves whatever the base's age (time, versions, step and
 * list lengths are shifts, ./rows.ts), so an older base costs a row a few digits, and a base
 * (a whole record) is written four times less often.
 */
const BASE_EVERY = 64;

/** A cron as stored: with its due key when it is scheduled (so only those are in `by_due`). */
function cronRow(cron: CronRecord): CronRow {
  return isScheduled(cron) ? { ...cron, $due: [cron.next_run_date, cron.cron_id] } : { ...cron };
}

/** A new revision, different from `prev` (random, so a deleted and recreated thread never repeats one). */
function nextRevision(prev: number | undefined): number {
  let rev = Math.floor(Math.random() * 2 ** 48) + 1;
  if (rev === prev) rev++;
  return rev;
}

/** The writes of the IndexedDB store (./index.ts). */
export abstract class IdbWrites extends IdbBase {
  /** Reads what the commit's ops will look at, all at once (one round trip instead of one per op). */
  protected async prefetch(ctx: Ctx, ops: readonly WriteOp[]): Promise<void> {
    const { tx } = ctx;
    const reads: Array<Promise<unknown>> = [];
    const threadIds = new Set<string>();
    const runIds = new Set<string>();
    const cps = new Map<string, [string, string, string]>();
    /**
     * The latest row of each namespace a checkpoint op touches, read first: it is usually the
     * parent and the row a task's writes go to, which `rowById` then takes from it (no lookup).
     */
    const latestOf = new Map<string, Promise<unknown>>();
    const latestFor = (thread: string, ns: string): Promise<unknown> => {
      const k = `${thread}\u0000${ns}`;
      let first = latestOf.get(k);
      if (!first) {
        first = this.latestRow(tx, thread, ns, ctx);
        latestOf.set(k, first);
        reads.push(first);
      }
      return first;
    };
    const afterLatest = <T>(thread: string, ns: string, read: () => Promise<T>): Promise<T> => latestFor(thread, ns).then(read);
    /** Checkpoints put by the ops so far. */
    const put = new Set<string>();
    for (const op of ops) {
      if (op.op === "thread.put") threadIds.add(op.thread.thread_id);
      else if (op.op === "thread.delete") threadIds.add(op.thread_id);
      else if (op.op === "run.put") runIds.add(op.run.run_id);
      else if (op.op === "run.delete") runIds.add(op.run_id);
      else if (op.op === "writes.put") {
        const ns = op.checkpoint_ns ?? "";
        const key = rowKey(op.thread_id, ns, op.checkpoint_id);
        // Writes to a checkpoint put by an earlier op of the batch: that op leaves its row in `ctx.rows`.
        if (!put.has(key) && !cps.has(key)) cps.set(key, [op.thread_id, ns, op.checkpoint_id]);
      } else if (op.op === "checkpoint.put") {
        const { thread_id, checkpoint_ns, checkpoint, parent_checkpoint_id } = op.checkpoint;
        const ns = checkpoint_ns ?? "";
        // A parent put by an earlier op of the batch is not read: that op leaves it in `ctx.rows`
        // (and the lengths of its lists in `ctx.listLen`) before this one is applied.
        const parentKey = parent_checkpoint_id === null ? undefined : rowKey(thread_id, ns, parent_checkpoint_id);
        const parentPutBefore = parentKey !== undefined && put.has(parentKey);
        put.add(rowKey(thread_id, ns, checkpoint.id));
        cps.set(rowKey(thread_id, ns, checkpoint.id), [thread_id, ns, checkpoint.id]);
        if (parent_checkpoint_id !== null && !parentPutBefore) {
          // The parent, then the lengths of its lists (an append needs them), in the same batch.
          reads.push(
            afterLatest(thread_id, ns, () => this.rowById(tx, thread_id, ns, parent_checkpoint_id, ctx)).then(async (row) => {
              if (!row) return;
              const values = ((await this.recordOf(tx, row)).checkpoint as { channel_values: EncodedValues }).channel_values;
              await Promise.all(
                listRefs(values).map(async ({ l }) => {
                  const len = await this.listLength(tx, thread_id, l);
                  if (!ctx.listLen.has(listKey(thread_id, l))) ctx.listLen.set(listKey(thread_id, l), len);
                }),
              );
            }),
          );
        }
      }
    }
    for (const id of threadIds) reads.push(tx.objectStore("threads").get(id).then((row) => ctx.threadRows.set(id, row)));
    const runRead = new Map<string, Promise<RunRow | undefined>>();
    for (const id of runIds) {
      const read = tx.objectStore("runs").get(id).then(unpackRun);
      runRead.set(id, read);
      reads.push(
        read
          .then(async (row) => {
            ctx.runRows.set(id, row);
            // A new run needs the last queue position: read in this wave, not after it.
            if (!row && ctx.lastQ === undefined) {
              const last = await tx.objectStore("runs").index("by_q").openKeyCursor(null, "prev");
              ctx.lastQ ??= last ? (last.key as number) : -1;
            }
          }),
      );
    }
    // Leases a lease op checks, and the run bases this instance's hints name, in the same wave.
    for (const op of ops) {
      const key = op.op === "lease.put" && op.expect ? op.lease.key : op.op === "lease.delete" && op.owner !== undefined ? op.key : undefined;
      if (key !== undefined && !(ctx.leases ??= new Map()).has(key)) {
        ctx.leases.set(key, undefined);
        reads.push(tx.objectStore("leases").get(key).then((lease) => ctx.leases!.set(key, lease)));
      }
      const hint = op.op === "run.put" ? this.runBases.get(op.run.thread_id) : undefined;
      if (hint !== undefined && op.op === "run.put") {
        const at = `${op.run.thread_id}\u0000${hint}`;
        const thread = op.run.thread_id;
        const runBaseRows = (ctx.runBaseRows ??= new Map());
        // Only a run stored without a base of its thread takes the hint (a new run, usually):
        // checked once its row is read, in parallel with the queue position.
        reads.push(
          runRead.get(op.run.run_id)!.then(async (row) => {
            if ((row && row.thread_id === thread && row.b !== undefined) || runBaseRows.has(at)) return;
            runBaseRows.set(at, undefined);
            runBaseRows.set(at, await tx.objectStore("bases").get([thread, RUNS, hint]));
          }),
        );
      }
    }
    // The checkpoints the ops name, once the latest rows are known: those that are not one of
    // them are usually new ids, whose absence is checked with one request per namespace (`absent`).
    const checks = [...cps.values()];
    if (checks.length > 0) {
      const latestRows = checks.map(([t, ns]) => latestFor(t, ns));
      reads.push(
        Promise.all(latestRows).then(async () => {
          const unknown = checks.filter(([t, ns, id]) => {
            const k = rowKey(t, ns, id);
            const latest = ctx.latest.get(`${t}\u0000${ns}`);
            return !ctx.rows.has(k) && !ctx.missing.has(k) && !(latest && latest.id === id);
          });
          // By namespace: a run's steps are close in key order, other threads' rows between
          // them do not matter, its own earlier rows are older.
          const byNamespace = new Map<string, Array<[string, string, string]>>();
          for (const check of unknown) {
            const k = `${check[0]}\u0000${check[1]}`;
            byNamespace.set(k, [...(byNamespace.get(k) ?? []), check]);
          }
          await Promise.all(
            [...byNamespace.values()].map(async (group) => {
              if (group.length > 1 && (await this.absent(ctx, group))) return;
              await Promise.all(group.map(([t, ns, id]) => this.rowById(tx, t, ns, id, ctx)));
            }),
          );
        }),
      );
    }
    await Promise.all(reads);
  }

  /**
   * Whether none of these checkpoints exists, told by one request when their ids are close in
   * key order (time-ordered ids made within about a tenth of a second, as a run's steps are):
   * the `by_id` keys between the smallest and the largest id, none of them in one of their
   * namespaces. Then they are marked missing in `ctx`. False (nothing known, nothing marked)
   * when the ids are far apart, too many keys lie between them, or one may exist: each is then
   * looked up alone (`rowById`).
   */
  protected async absent(ctx: Ctx, checks: Array<[string, string, string]>): Promise<boolean> {
    const ids = checks.map(([, , id]) => id).sort();
    const lo = ids[0]!;
    const hi = ids[ids.length - 1]!;
    let common = 0;
    while (common < lo.length && lo[common] === hi[common]) common++;
    if (common < CLOSE_IDS) return false;
    const keys = await ctx.tx.objectStore("cps").index("by_id").getAllKeys(IDBKeyRange.bound(lo, hi), ABSENT_SCAN);
    if (keys.length >= ABSENT_SCAN) return false;
    const namespaces = new Set(checks.map(([t, ns]) => `${t}\u0000${ns}`));
    if (keys.some(([t, ns]) => namespaces.has(`${t}\u0000${ns}`))) return false;
    for (const [t, ns, id] of checks) {
      const k = rowKey(t, ns, id);
      if (!ctx.rows.has(k)) ctx.missing.add(k);
    }
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Writes.

  async commit(ops: readonly WriteOp[]): Promise<void> {
    if (ops.length === 0) return;
    const scope = new Set<Names>();
    for (const op of ops) {
      const names = SCOPE[op.op] as Names[] | undefined;
      if (!names) throw invalidInput(`graphdock store: unknown write op ${JSON.stringify(op)}`);
      for (const name of names) scope.add(name);
      checkOp(op);
    }
    if (scope.size > 0) return this.group.submit({ ops, scope });
    for (const op of ops) if (op.op === "notify") this.announce(new Set(), [{ topic: op.topic, payload: op.payload }]);
  }

  /** Commits waiting for the transaction in flight are written together in the next one (./group-commit.ts). */
  protected readonly group = new GroupCommit<Batched>((batch) => this.transact(batch));

  /** Tells this instance's listeners and the other tabs what a commit changed. */
  protected announce(threads: Set<string>, notes: Ctx["notes"]) {
    if (threads.size > 0) this.post({ k: "change", change: { threadIds: [...threads] } });
    for (const note of notes) {
      this.topics.deliver(note.topic, note.payload);
      this.post({ k: "notify", topic: note.topic, payload: note.payload });
    }
  }

  /**
   * Applies commits in one readwrite transaction, in order (each sees the ones before it), and
   * announces each once the transaction completed; any failure aborts the transaction (nothing
   * written) and rethrows.
   */
  protected async transact(batch: readonly Batched[]): Promise<void> {
    const scope = new Set<Names>();
    for (const { scope: s } of batch) for (const name of s) scope.add(name);
    const db = await this.database();
    const tx = db.transaction([...scope], "readwrite", this.options.durability ? { durability: this.options.durability } : undefined);
    const effects = batch.map(() => ({ threads: new Set<string>(), notes: [] as Ctx["notes"] }));
    const ctx: Ctx = {
      tx,
      pending: [],
      threads: effects[0]!.threads,
      notes: effects[0]!.notes,
      rows: new Map(),
      dirty: new Set(),
      missing: new Set(),
      latest: new Map(),
      threadRows: new Map(),
      runRows: new Map(),
      listLen: new Map(),
    };
    /** Lists this transaction appended to: their cached items are dropped if it fails. */
    const touched = new Set<string>();
    try {
      // What every commit of the batch reads, in one wave (as for one commit with all their ops).
      await this.prefetch(ctx, batch.length === 1 ? batch[0]!.ops : batch.flatMap((b) => b.ops));
      for (let i = 0; i < batch.length; i++) {
        ctx.threads = effects[i]!.threads;
        ctx.notes = effects[i]!.notes;
        for (const op of batch[i]!.ops) await this.applyOne(ctx, op, touched);
      }
      for (const key of ctx.dirty) {
        const row = ctx.rows.get(key)!;
        ctx.pending.push((tx as WTx).objectStore("cps").put(storedRow(row), cpKey(row)));
      }
      await Promise.all(ctx.pending);
      await tx.done;
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      await tx.done.catch(() => undefined);
      await Promise.allSettled(ctx.pending);
      for (const list of touched) this.lists.delete(list);
      if ((err as { name?: string }).name === "DataCloneError") throw invalidInput(`graphdock indexeddb: ${(err as Error).message}`);
      throw err;
    }
    for (const { threads, notes } of effects) this.announce(threads, notes);
  }

  protected threadConflict(id: string, why: string) {
    return conflict(`graphdock indexeddb: thread ${id} ${why}; the commit wrote nothing`);
  }

  protected async checkThread(ctx: Ctx, id: string, expect: NonNullable<Extract<WriteOp, { op: "thread.put" }>["expect"]> | undefined) {
    const row = ctx.threadRows.has(id) ? ctx.threadRows.get(id) : await ctx.tx.objectStore("threads").get(id);
    if (!expect) return row;
    if (expect.exists !== undefined && expect.exists !== (row !== undefined)) {
      throw this.threadConflict(id, expect.exists ? "does not exist" : "already exists");
    }
    if (expect.status && (!row || !expect.status.includes(row.status))) {
      throw this.threadConflict(id, `is ${row ? row.status : "missing"}, not ${expect.status.join(" or ")}`);
    }
    if (expect.sameAs) {
      const rev = this.revisions.get(expect.sameAs);
      if (rev === undefined) throw this.threadConflict(id, "is not known to be unchanged (expect.sameAs is not a record this store returned)");
      if (!row || (row.$rev ?? 0) !== rev) throw this.threadConflict(id, "changed since it was read");
    }
    return row;
  }

  protected async applyOne(ctx: Ctx, op: WriteOp, touched: Set<string>): Promise<void> {
    const tx = ctx.tx as WTx;
    const track = (p: Promise<unknown>) => {
      ctx.pending.push(p);
      p.catch(() => undefined);
    };
    switch (op.op) {
      case "assistant.put":
        track(tx.objectStore("assistants").put(op.assistant));
        return;
      case "assistant.delete":
        track(tx.objectStore("assistants").delete(op.assistant_id));
        track(tx.objectStore("versions").delete(under(op.assistant_id)));
        return;
      case "assistant_version.put":
        track(tx.objectStore("versions").put(op.version));
        return;
      case "thread.put": {
        const id = op.thread.thread_id;
        ctx.threads.add(id);
        const row = await this.checkThread(ctx, id, op.expect);
        const stored: ThreadRow = { ...(await this.encodeThreadValues(ctx, op.thread, row)), $rev: nextRevision(row?.$rev) };
        ctx.threadRows.set(id, stored);
        track(tx.objectStore("threads").put(stored));
        return;
      }
      case "thread.delete": {
        const id = op.thread_id;
        ctx.threads.add(id);
        await this.checkThread(ctx, id, op.expect);
        for (const [key, row] of ctx.rows) {
          if (row.thread_id !== id) continue;
          ctx.rows.delete(key);
          ctx.dirty.delete(key);
        }
        ctx.threadRows.set(id, undefined);
        ctx.listLen.clear();
        ctx.runBaseRows?.clear(); // its bases go: read again if asked
        for (const [runId, run] of ctx.runRows) if (run?.thread_id === id) ctx.runRows.set(runId, undefined);
        for (const key of ctx.latest.keys()) if (key.startsWith(`${id}\u0000`)) ctx.latest.set(key, null);
        track(tx.objectStore("threads").delete(id));
        track(tx.objectStore("cps").delete(under(id)));
        track(tx.objectStore("bases").delete(under(id)));
        track(tx.objectStore("items").delete(under(id)));
        const [runKeys, cancelKeys] = await Promise.all([
          tx.objectStore("runs").index("by_thread").getAllKeys(under(id)),
          tx.objectStore("cancels").index("by_thread").getAllKeys(id),
        ]);
        for (const key of runKeys) track(tx.objectStore("runs").delete(key));
        for (const key of cancelKeys) track(tx.objectStore("cancels").delete(key));
        return;
      }
      case "checkpoint.put":
        ctx.threads.add(op.checkpoint.thread_id);
        await this.putCheckpoint(ctx, op.checkpoint, touched, track);
        return;
      case "checkpoint.delete": {
        ctx.threads.add(op.thread_id);
        const ns = op.checkpoint_ns ?? "";
        const rows = await Promise.all(op.checkpoint_ids.map((id) => this.rowById(tx, op.thread_id, ns, id, ctx)));
        await this.keepParents(ctx, rows.filter((row): row is CpRow => row !== undefined));
        for (const row of rows) {
          if (!row) continue;
          const key = rowKey(row.thread_id, row.checkpoint_ns, row.id);
          ctx.rows.delete(key);
          ctx.dirty.delete(key);
          ctx.missing.add(key);
          ctx.latest.delete(`${row.thread_id}\u0000${row.checkpoint_ns}`);
          track(tx.objectStore("cps").delete(cpKey(row)));
        }
        return;
      }
      case "writes.put": {
        ctx.threads.add(op.thread_id);
        const ns = op.checkpoint_ns ?? "";
        const row = await this.rowById(tx, op.thread_id, ns, op.checkpoint_id, ctx);
        if (!row) {
          throw new GraphdockError(
            "not_found",
            `graphdock store: writes for unknown checkpoint ${op.checkpoint_id} of thread ${op.thread_id}`,
          );
        }
        const kept = (row.w as unknown[]).filter((w) => (w as PendingWrite)[0] !== op.task_id);
        const key = rowKey(op.thread_id, ns, op.checkpoint_id);
        ctx.rows.set(key, { ...row, w: [...kept, ...(shareItems(op.writes, new Map()) as unknown[])] });
        ctx.dirty.add(key);
        return;
      }
      case "run.put": {
        const runs = tx.objectStore("runs");
        const row = ctx.runRows.has(op.run.run_id) ? ctx.runRows.get(op.run.run_id) : unpackRun(await runs.get(op.run.run_id));
        if (op.expect) {
          if (op.expect.exists !== undefined && op.expect.exists !== (row !== undefined)) {
            throw conflict(`graphdock indexeddb: run ${op.run.run_id} ${op.expect.exists ? "does not exist" : "already exists"}; the commit wrote nothing`);
          }
          if (op.expect.status && (!row || !op.expect.status.includes(row.status))) {
            throw conflict(
              `graphdock indexeddb: run ${op.run.run_id} is ${row ? row.status : "missing"}, not ${op.expect.status.join(" or ")}; the commit wrote nothing`,
            );
          }
        }
        ctx.threads.add(op.run.thread_id);
        let q = row?.q;
        if (q === undefined) {
          if (ctx.lastQ === undefined) {
            const last = await runs.index("by_q").openKeyCursor(null, "prev");
            ctx.lastQ = last ? (last.key as number) : -1;
          }
          q = ++ctx.lastQ;
        }
        const { run_id, thread_id, status, created_at, ...rest } = op.run;
        // The rest is kept as a diff against a base run of the thread (assistant, kwargs and
        // metadata repeat).
        let b: number | undefined;
        let base: Record<string, unknown> | undefined;
        if (row && row.thread_id === thread_id && row.b !== undefined) {
          b = row.b;
          base = await this.baseById(tx, thread_id, RUNS, b);
        } else {
          const hint = this.runBases.get(thread_id);
          // The hint is checked in this transaction: another tab may have deleted the thread.
          const at = `${thread_id}\u0000${hint}`;
          base =
            hint === undefined ? undefined : ctx.runBaseRows?.has(at) ? ctx.runBaseRows.get(at) : await tx.objectStore("bases").get([thread_id, RUNS, hint]);
          if (base) {
            b = hint;
            // Read in this transaction: the next put of this run finds it cached.
            this.knownBase(thread_id, RUNS, hint!, base);
          } else {
            b = baseId(0);
            base = rest;
            // Not cached: `rest` holds the caller's objects (read back once when needed).
            track(tx.objectStore("bases").put(rest, [thread_id, RUNS, b]));
            this.runBases.delete(thread_id);
            this.runBases.set(thread_id, b);
            for (const old of this.runBases.keys()) {
              if (this.runBases.size <= 4096) break;
              this.runBases.delete(old);
            }
          }
        }
        const stored: RunRow = { run_id, thread_id, status, created_at, q, b, r: diffLeaves(rest, base ?? {}) as unknown as Record<string, unknown> };
        ctx.runRows.set(run_id, stored);
        track(runs.put(packRun(stored)));
        return;
      }
      case "run.delete": {
        const row = ctx.runRows.has(op.run_id) ? ctx.runRows.get(op.run_id) : unpackRun(await tx.objectStore("runs").get(op.run_id));
        if (op.expect) {
          if (op.expect.exists !== undefined && op.expect.exists !== (row !== undefined)) {
            throw conflict(`graphdock indexeddb: run ${op.run_id} ${op.expect.exists ? "does not exist" : "already exists"}; the commit wrote nothing`);
          }
          if (op.expect.status && (!row || !op.expect.status.includes(row.status))) {
            throw conflict(`graphdock indexeddb: run ${op.run_id} is ${row ? row.status : "missing"}, not ${op.expect.status.join(" or ")}; the commit wrote nothing`);
          }
        }
        if (row) ctx.threads.add(row.thread_id);
        ctx.runRows.set(op.run_id, undefined);
        track(tx.objectStore("runs").delete(op.run_id));
        track(tx.objectStore("cancels").delete(op.run_id));
        return;
      }
      case "cancel.put":
        ctx.threads.add(op.request.thread_id);
        track(tx.objectStore("cancels").put(op.request));
        return;
      case "lease.put": {
        if (op.expect) {
          const held = ctx.leases?.has(op.lease.key) ? ctx.leases.get(op.lease.key) : await tx.objectStore("leases").get(op.lease.key);
          const now = op.expect.now;
          const live = held !== undefined && held.expires_at >= now;
          const ok = op.expect.state === "free" ? !live : live && held!.owner === op.lease.owner;
          if (!ok) {
            throw conflict(
              `graphdock indexeddb: lease ${op.lease.key} is not ${op.expect.state}` +
                (held ? ` (held by ${held.owner} until ${held.expires_at})` : "") +
                "; the commit wrote nothing",
            );
          }
        }
        ctx.leases?.set(op.lease.key, op.lease);
        track(tx.objectStore("leases").put(op.lease));
        return;
      }
      case "lease.delete": {
        if (op.owner !== undefined) {
          const held = ctx.leases?.has(op.key) ? ctx.leases.get(op.key) : await tx.objectStore("leases").get(op.key);
          if (!held || held.owner !== op.owner) return;
        }
        ctx.leases?.set(op.key, undefined);
        track(tx.objectStore("leases").delete(op.key));
        return;
      }
      case "doc.put": {
        const docs = tx.objectStore("docs");
        const [existing, last] = await Promise.all([
          docs.get([op.collection, op.id]),
          docs.index("by_seq").openKeyCursor(under(op.collection), "prev"),
        ]);
        const seq = existing?.seq ?? (last ? (last.key[1] as number) + 1 : 0);
        track(docs.put({ collection: op.collection, id: op.id, parent: op.parent, doc: op.doc, seq }));
        return;
      }
      case "item.put": {
        const { vectors, ...rest } = op.item;
        const row: ItemRow = { ...rest, namespace: [...rest.namespace], ns: namespaceKey(rest.namespace), ...(vectors ? { vectors: vectors.map((v) => [...v]) } : {}) };
        track(tx.objectStore("store_items").put(row));
        return;
      }
      case "item.delete": {
        const key: [string, string] = [namespaceKey(op.namespace), op.key];
        if (op.expiredAt !== undefined) {
          const cur = await tx.objectStore("store_items").get(key);
          if (!cur || cur.expires_at === null || cur.expires_at > op.expiredAt) return;
        }
        track(tx.objectStore("store_items").delete(key));
        return;
      }
      case "item.touch": {
        const cur = await tx.objectStore("store_items").get([namespaceKey(op.namespace), op.key]);
        if (!cur || cur.ttl === null) return;
        track(tx.objectStore("store_items").put({ ...cur, expires_at: op.expires_at }));
        return;
      }
      case "doc.delete":
        track(tx.objectStore("docs").delete([op.collection, op.id]));
        return;
      case "cron.put":
      case "cron.delete": {
        const id = op.op === "cron.put" ? op.cron.cron_id : op.cron_id;
        const crons = tx.objectStore("crons");
        const why = cronExpectationFails(op.expect, op.expect ? await crons.get(id) : undefined);
        if (why) throw conflict(`graphdock indexeddb: ${op.op} of cron ${id}: ${why}; the commit wrote nothing`);
        track(op.op === "cron.put" ? crons.put(cronRow(op.cron)) : crons.delete(id));
        return;
      }
      case "notify":
        ctx.notes.push({ topic: op.topic, payload: op.payload });
        return;
      default: {
        const never: never = op;
        throw invalidInput(`graphdock store: unknown write op ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * Before rows are deleted: a row right after one of them that left its parent id out (its
   * parent is the row before it) gets it written in, as the row before it changes.
   */
  protected async keepParents(ctx: Ctx, deleting: CpRow[]): Promise<void> {
    const { tx } = ctx;
    const gone = new Set(deleting.map((row) => row.id));
    for (const row of deleting) {
      const c = await tx.objectStore("cps").openCursor(IDBKeyRange.bound([row.thread_id, row.checkpoint_ns, row.s], [row.thread_id, row.checkpoint_ns, []], true, false));
      if (!c) continue;
      const stored = located(c.primaryKey, c.value);
      if (gone.has(stored.id)) continue;
      const key = rowKey(stored.thread_id, stored.checkpoint_ns, stored.id);
      const next = ctx.rows.get(key) ?? stored;
      const base = await this.base(tx, next);
      const record = rowRecord(next, base);
      if (Object.hasOwn(record, "parent_checkpoint_id")) continue;
      ctx.rows.set(key, { ...next, ...rowBody({ ...record, parent_checkpoint_id: row.id }, base && { id: next.b!, record: base }) });
      ctx.dirty.add(key);
    }
  }

  /**
   * A thread with its values encoded by reference to list logs where they match: first the logs
   * its stored row already refers to (a thread's values usually extend them), else those of the
   * latest checkpoint of the root namespace.
   */
  protected async encodeThreadValues(ctx: Ctx, thread: ThreadRecord, row: ThreadRow | undefined): Promise<ThreadRecord> {
    const values = thread.values ?? {};
    const longest = Math.max(0, ...Object.values(values).map((v) => (Array.isArray(v) ? v.length : 0)));
    const inline = (): ThreadRecord => ({ ...thread, values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { v }])) });
    if (longest < LIST_MIN) return inline();
    const allListed = (t: ThreadRecord) =>
      Object.entries(values).every(([k, v]) => !Array.isArray(v) || v.length < LIST_MIN || "l" in ((t.values as EncodedValues)[k] ?? {}));
    const attempt = async (base: EncodedValues) => {
      const needs = new Map<string, number>(listRefs(base).map(({ l }) => [l, longest]));
      const lookup = await this.loadLists(ctx.tx, thread.thread_id, needs);
      return encodeThread(thread, { checkpoint: { channel_values: base } } as unknown as StoredCheckpoint, lookup);
    };
    if (row && listRefs(row.values as EncodedValues).length > 0) {
      const encoded = await attempt(row.values as EncodedValues);
      if (allListed(encoded)) return encoded;
    }
    const latest = await this.latestRow(ctx.tx, thread.thread_id, "", ctx);
    if (!latest) return inline();
    const rec = await this.recordOf(ctx.tx, latest);
    return attempt((rec.checkpoint as { channel_values: EncodedValues }).channel_values);
  }

  /**
   * Puts a checkpoint: its list channels extend the parent's logs (appending only new items);
   * values elsewhere that are items of its lists become references; the parent row is shared
   * again against the items this one appended (a task's writes become the next list items).
   */
  protected async putCheckpoint(ctx: Ctx, cp: StoredCheckpoint, touched: Set<string>, track: (p: Promise<unknown>) => void) {
    const tx = ctx.tx as WTx;
    const thread = cp.thread_id;
    const ns = cp.checkpoint_ns ?? "";
    const id = cp.checkpoint.id;
    const [existing, parentRow, latest] = await Promise.all([
      this.rowById(tx, thread, ns, id, ctx),
      cp.parent_checkpoint_id === null ? undefined : this.rowById(tx, thread, ns, cp.parent_checkpoint_id, ctx),
      this.latestRow(tx, thread, ns, ctx),
    ]);
    const parentRecord = parentRow && (await this.recordOf(tx, parentRow));
    const parentValues = parentRecord && (parentRecord.checkpoint as { channel_values: EncodedValues }).channel_values;
    // Appending needs each log's true length (another tab may have forked it): undefined = all.
    const needs = new Map<string, number | undefined>(parentValues ? listRefs(parentValues).map(({ l }) => [l, undefined]) : []);
    const lookup = await this.loadLists(tx, thread, needs, ctx);
    const { checkpoint: encoded, appends } = encodeCheckpoint(
      cp,
      parentValues && ({ checkpoint: { channel_values: parentValues } } as unknown as StoredCheckpoint),
      lookup,
      shortId,
    );
    const items = tx.objectStore("items");
    const appended: ItemIndex = new Map();
    const lists = new Map<string, unknown[]>();
    for (const { list, at, items: added } of appends) {
      touched.add(listKey(thread, list));
      const known = (lookup(list) as unknown[] | undefined) ?? [];
      if (known.length !== at) throw new Error(`graphdock indexeddb: list ${list} is not loaded before an append (bug)`);
      // The cache keeps items as stored: frozen (callers get them in the values they read), and a
      // caller's item that is not frozen is copied first, so changing it later changes nothing here.
      const kept = added.map((item) => (typeof item === "object" && item !== null && !Object.isFrozen(item) ? deepFreeze(structuredClone(item)) : item));
      const all = at === 0 ? kept : known;
      if (at > 0) all.push(...kept);
      this.remember(listKey(thread, list), all);
      lists.set(list, all);
      ctx.listLen.set(listKey(thread, list), all.length);
      kept.forEach((item, k) => track(items.put(encodeItem(item), [thread, list, at + k])));
      indexItems(appended, list, all, at);
    }
    // Objects that are items of this checkpoint's lists (near their ends) become references.
    const index: ItemIndex = new Map(appended);
    for (const { l, n } of listRefs(encoded.checkpoint.channel_values as EncodedValues)) {
      const all = lists.get(l) ?? (lookup(l) as unknown[] | undefined);
      if (all) indexItems(index, l, all, n - 8, n);
    }
    const { id: _id, ...checkpointRest } = encoded.checkpoint;
    const s = existing?.s ?? (latest ? latest.s + 1 : 0);
    // Format 4: a new row whose parent is the row just before it (the usual case) leaves the
    // parent id out; it is read from that row (`withParents`).
    const parentIsPrevious = !existing && latest !== undefined && encoded.parent_checkpoint_id === latest.id;
    // Format 5: references to items of the row's own list name the index alone.
    const home = homeOf(encoded as unknown as CpRecord);
    const record = shareItems(
      parentIsPrevious
        ? { checkpoint: checkpointRest, metadata: encoded.metadata }
        : { checkpoint: checkpointRest, metadata: encoded.metadata, parent_checkpoint_id: encoded.parent_checkpoint_id },
      index,
      home,
    ) as CpRecord;
    const w = shareItems(encoded.pending_writes, index, home) as unknown[];
    // The parent's writes and inline values may hold what this checkpoint appended: its row is
    // shared again (a task's writes become the next checkpoint's list items).
    let parentShared: CpRecord | undefined;
    if (parentRow && parentRecord) {
      const hit = { hit: false };
      const parentHome = homeOf(parentRecord);
      parentShared = appended.size > 0 ? (reshareItems(parentRecord, appended, hit, parentHome) as CpRecord) : parentRecord;
      const w2 = appended.size > 0 ? (reshareItems(parentRow.w, appended, hit, parentHome) as unknown[]) : parentRow.w;
      if (hit.hit) {
        const parentBase = await this.base(tx, parentRow);
        const key = rowKey(thread, ns, parentRow.id);
        ctx.rows.set(key, { ...parentRow, ...rowBody(parentShared, parentBase && { id: parentRow.b!, record: parentBase }), w: w2 });
        ctx.dirty.add(key);
      }
    }
    // The base: the parent's while it is recent, else a new one copied from the parent's record
    // (after the sharing above, so the base holds references, not copies; each naming its list,
    // as the base may serve a row of another home list). No parent: whole.
    let base: { id: number; record: CpRecord } | undefined;
    if (parentRow && parentShared) {
      const since = parentRow.b === undefined ? Infinity : s - Math.floor(parentRow.b);
      const parentBase = await this.base(tx, parentRow);
      if (parentBase && since < BASE_EVERY) base = { id: parentRow.b!, record: parentBase };
      else {
        base = { id: baseId(s), record: unionBase(qualifyItems(parentShared, homeOf(parentShared)) as CpRecord, parentBase) };
        track(tx.objectStore("bases").put(base.record, [thread, ns, base.id]));
      }
    }
    const row: CpRow = { thread_id: thread, checkpoint_ns: ns, s, id, ...rowBody(record, base), w };
    const key = rowKey(thread, ns, id);
    ctx.rows.set(key, row);
    // Put once at the end of the transaction, with what later ops of the batch change in it
    // (its writes, the sharing of its items by its child): one put per row per transaction.
    ctx.dirty.add(key);
    ctx.missing.delete(key);
    if (!latest || s >= latest.s) ctx.latest.set(`${thread}\u0000${ns}`, row);
  }
}
