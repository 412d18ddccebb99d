/**
 * Checkpoints in the PostgreSQL store: keyed by (thread, namespace, id), put in one statement when
 * they can be, read with their pending writes and the list items they refer to.
 *
 * - Top-level array channel values are prefixes of append-only list logs (`cp_logs` /
 *   `cp_chunks`): a checkpoint whose messages extend its parent's appends only the new items.
 * - Metadata is stored against a base (./meta.ts), the checkpoint record as the leaves that differ
 *   from its base's; both, and the pending writes (a column of the row), in shared form
 *   (./share.ts): objects that are items of the thread's list logs are references.
 * - The last checkpoint put per (thread, namespace) is cached with what it stored (committed puts
 *   only), so the next put extends it without reading it back.
 */
import type { PoolClient } from "pg";
import { contains, jsonEqual } from "../json.js";
import { notFound } from "../errors.js";
import type { CheckpointKey, ListCheckpointsOptions, PendingWrite, StoredCheckpoint, WriteOp } from "../persistence/types.js";
import { diffLeaves, leavesOf, patchLeaves, type LeafDiff } from "../persistence/indexeddb/rows.js";
import type { PgBatch } from "./batch.js";
import { num, type PgCore, type Row } from "./core.js";
import { baseOf, factor, lastingDiffers, unfactor } from "./meta.js";
import { setOwn } from "../persistence/item-refs.js";
import { indexItems, needs, reshare, resolve, share, type ItemIndex } from "./share.js";
import { Params, page, where } from "./sql.js";
import { appendCtes, refChunksFrom } from "./chunks.js";
import { cpKey, keySql, keysSql, keyText } from "./cp-keys.js";
import { putRunId, RUN_ID_JSONB, takeRunId } from "./cp-run-id.js";
import { absoluteVersions, relativeVersions, stepOf } from "./cp-versions.js";
import { readTs, storeTs } from "./ts.js";

/** A base (./meta.ts): its metadata, and its checkpoint record as read back from its text (leaf order). */
interface Base {
  id: number;
  record: Record<string, unknown>;
  cp: Record<string, unknown>;
}

/** How many bases of different checkpoint shapes (an input step's, a loop step's, ...) a thread's rows choose from. */
const BASES = 6;

/** Checkpoints put on a chain before a base is made for a shape of row that an existing base does not fit well (schema 6). */
const SHAPE_BASES_AFTER = 24;

/**
 * Whether a row's leaf diff against a base changes more than its channel values and `ts` (which
 * differ from row to row anyway): its versions, or which leaves it has.
 */
function shapeDiffers(diff: LeafDiff, base: Record<string, unknown>): boolean {
  const leaves = leavesOf(base);
  const volatile = (i: number) => {
    const top = leaves[i]![0][0];
    return top === "channel_values" || top === "ts";
  };
  return diff.some((d) => {
    // Shifts (the diff's last entry): a `ts` a few milliseconds off its id's time (a busy
    // machine) is a shift of the `ts` leaf, not another shape of row.
    if (!Array.isArray(d)) return Object.values(d).some((leafs) => !leafs.every(volatile));
    if (typeof d[0] !== "number" || d.length === 1) return true;
    return !volatile(d[0]);
  });
}

/** A channel value stored as the first `n` items of log `log`. */
interface ArrayRef {
  log: number;
  n: number;
}

/** What a recent checkpoint put stored for its array channels, with the items (immutable facts). */
export interface PutArrays {
  id: string;
  arrays: Map<string, { log: number; n: number; items: readonly unknown[] }>;
  /** The row's pending writes as this store last wrote them (schema 5: the `writes` column); absent when unknown. */
  writes?: RowWrites;
  /** The bases rows of this thread may use (./meta.ts), the one the row used first: one metadata record, checkpoint records of several shapes. */
  bases?: Base[];
  /** What the row stores (schema 5), to share it again against what its child appends. */
  row?: StoredRow;
  /** How many checkpoints this store put on this chain in a row, this one included (schema 6: bases per shape). */
  puts?: number;
}

/**
 * A checkpoint row's pending writes (schema 5): entries `[task, channel, value]` in shared form,
 * in the order written (a task's writes replace its earlier ones and go last); `text` is the
 * column's text as written (null: no writes).
 */
interface RowWrites {
  entries: readonly PendingWrite[];
  text: string | null;
}

/** A task's writes replacing its earlier ones. */
const mergeWrites = (entries: readonly PendingWrite[], task: string, mine: readonly PendingWrite[]) => [...entries.filter((e) => e[0] !== task), ...mine];

/**
 * The `writes` column's text: `{task: [[channel, value], ...], ...}` when each task's entries are
 * contiguous (as `writes.put` leaves them: a task's writes replace its earlier ones and go last),
 * so a task's id is stored once, not once per write; else the array of entries.
 */
const writesText = (entries: readonly PendingWrite[]) => {
  if (!entries.length) return null;
  const byTask = new Map<string, Array<[string, unknown]>>();
  let last: string | undefined;
  for (const [task, channel, value] of entries) {
    if (task !== last && byTask.has(task)) return JSON.stringify(entries);
    let list = byTask.get(task);
    if (!list) byTask.set(task, (list = []));
    list.push([channel, value]);
    last = task;
  }
  const grouped: Record<string, unknown> = {};
  for (const [task, list] of byTask) setOwn(grouped, task, list);
  return JSON.stringify(grouped);
};

/** The `writes` column as an array of entries in SQL (the grouped form of {@link writesText} expanded). */
const WRITES_ENTRIES = `CASE WHEN json_typeof(writes) = 'object' THEN (
    SELECT json_agg(json_build_array(t.task, w.e -> 0, w.e -> 1) ORDER BY t.i, w.j)
      FROM json_each(writes) WITH ORDINALITY AS t(task, list, i), json_array_elements(t.list) WITH ORDINALITY AS w(e, j)) ELSE writes END`;

/** The entries of a `writes` column as read (either form of {@link writesText}; `[task, channel, value, 0]`: a plain value written before schema 2). */
const writesOf = (column: unknown): unknown[][] =>
  Array.isArray(column)
    ? (column as unknown[][])
    : Object.entries((column ?? {}) as Record<string, Array<[string, unknown]>>).flatMap(([task, list]) => list.map(([channel, value]) => [task, channel, value]));

/** A checkpoint row as this store wrote it: its metadata and checkpoint in shared form, and the texts stored. */
interface StoredRow {
  meta: Record<string, unknown>;
  metaText: string;
  cp: Record<string, unknown>;
  cpText: string;
  base: Base;
}

const sameItem = (a: unknown, b: unknown) => a === b || jsonEqual(a, b);

const PUT_CACHE = 512;

/** A commit's puts so far: (thread, namespace) -> what its last checkpoint put stored (cached on commit). */
export type Staged = Map<string, PutArrays>;

export class PgCheckpoints {
  /** (thread, ns) -> the arrays of the last checkpoint put there (only committed puts). */
  private readonly lastPut = new Map<string, PutArrays>();

  constructor(private readonly core: PgCore) {}

  /** Caches what a committed put stored (the most recent {@link PUT_CACHE} (thread, namespace) pairs). */
  remember(key: string, put: PutArrays): void {
    this.lastPut.delete(key);
    this.lastPut.set(key, put);
    if (this.lastPut.size > PUT_CACHE) this.lastPut.delete(this.lastPut.keys().next().value as string);
  }

  /** Forgets the cached puts of a deleted thread. */
  forgetThread(threadId: string, staged: Staged): void {
    for (const key of [...this.lastPut.keys()]) if (key.startsWith(`${threadId}\u0000`)) this.lastPut.delete(key);
    for (const key of [...staged.keys()]) if (key.startsWith(`${threadId}\u0000`)) staged.delete(key);
  }

  /** `checkpoint.put` in a transaction: in one statement when it can be, else one per list, then the row. */
  async put(c: PoolClient, op: Extract<WriteOp, { op: "checkpoint.put" }>, staged: Staged): Promise<void> {
    if (!(await this.putCheckpoint(c, op.checkpoint, staged, true))) await this.putCheckpoint(c, op.checkpoint, staged);
  }

  /** `checkpoint.delete`. */
  async delete(c: PoolClient, op: Extract<WriteOp, { op: "checkpoint.delete" }>): Promise<void> {
    const s = this.core.s;
    if (op.checkpoint_ids.length === 0) return;
    const ns = op.checkpoint_ns ?? "";
    const params = [op.thread_id, ns, [...op.checkpoint_ids]];
    // Children name a parent row by its seq (`parent_seq`): they get its id before it goes. The
    // rows are locked first (a child being put holds its parent FOR SHARE until it commits), so
    // the next statement sees every child.
    const ids = keysSql("$3");
    await this.core.q(c, `SELECT 1 FROM ${s}.checkpoints WHERE thread_id = ${keySql("$1")} AND ns = $2 AND checkpoint_id = ANY(${ids}) FOR UPDATE`, params);
    await this.core.q(c,
      `WITH d AS (SELECT seq, checkpoint_id FROM ${s}.checkpoints WHERE thread_id = ${keySql("$1")} AND ns = $2 AND checkpoint_id = ANY(${ids})),
            u AS (UPDATE ${s}.checkpoints ch SET parent_id = d.checkpoint_id, parent_seq = NULL FROM d
                   WHERE ch.thread_id = ${keySql("$1")} AND ch.ns = $2 AND ch.parent_seq = d.seq AND NOT (ch.checkpoint_id = ANY(${ids})))
       DELETE FROM ${s}.checkpoints WHERE thread_id = ${keySql("$1")} AND ns = $2 AND checkpoint_id = ANY(${ids})`,
      params,
    );
  }

  /** `writes.put`. */
  async putWrites(c: PoolClient, op: Extract<WriteOp, { op: "writes.put" }>, staged: Staged): Promise<void> {
    const s = this.core.s;
    const ns = op.checkpoint_ns ?? "";
    const key = `${op.thread_id}\u0000${ns}`;
    const last = staged.get(key) ?? this.lastPut.get(key);
    const known = last && last.id === op.checkpoint_id ? last.writes : undefined;
    // Stored shared (escaped only: what they wrote is in no log yet; the next checkpoint shares them again).
    const mine = share(op.writes, new Map()) as PendingWrite[];
    const next = known && mergeWrites(known.entries, op.task_id, mine);
    // One statement; on the row as this store last wrote it, the writes as computed here (so the
    // next checkpoint can share them again), else merged in SQL.
    const r = await this.core.q<{ mine: boolean }>(
      c,
      `UPDATE ${s}.checkpoints SET writes = CASE WHEN $6::boolean AND writes::text IS NOT DISTINCT FROM $7::text THEN $8::text::json ELSE ${this.mergeWritesSql("$4", "$5")} END
        WHERE thread_id = $1::bytea AND ns = $2 AND checkpoint_id = $3::bytea RETURNING $6::boolean AND writes::text IS NOT DISTINCT FROM $8::text AS mine`,
      [cpKey(op.thread_id), ns, cpKey(op.checkpoint_id), op.task_id, JSON.stringify(mine), next !== undefined, known?.text ?? null, next ? writesText(next) : null],
    );
    if (r.rowCount === 0) {
      throw notFound(`writes for checkpoint ${op.checkpoint_id} (namespace "${ns}") of thread ${op.thread_id}: no such checkpoint`);
    }
    if (last && last.id === op.checkpoint_id) {
      staged.set(key, { ...last, writes: next && r.rows[0]!.mine ? { entries: next, text: writesText(next) } : undefined });
    }
  }

  /** The `writes` column with the writes of task `task` replaced by the entries of the JSON array `mine` (put last). */
  private mergeWritesSql(task: string, mine: string): string {
    return `(SELECT json_agg(e ORDER BY k, i) FROM (
              SELECT e, 0 AS k, i FROM json_array_elements(${WRITES_ENTRIES}) WITH ORDINALITY AS a(e, i) WHERE e ->> 0 IS DISTINCT FROM ${task}::text
              UNION ALL SELECT e, 1 AS k, i FROM json_array_elements(${mine}::text::json) WITH ORDINALITY AS b(e, i)) x)`;
  }

  /** Thread values with the lists that are prefixes of the latest root checkpoint's logs (this store's put) as references. */
  threadRefs(
    threadId: string,
    values: Record<string, unknown>,
    staged: Staged,
  ): { vals: Record<string, unknown>; refs: Record<string, [number, number]> } | undefined {
    // The root checkpoint put earlier in this commit (a run's last step goes with its outcome), else the last one.
    const key = `${threadId}\u0000`;
    const last = staged.get(key) ?? this.lastPut.get(key);
    if (!last) return undefined;
    const vals: Record<string, unknown> = {};
    const refs: Record<string, [number, number]> = {};
    let any = false;
    for (const [channel, v] of Object.entries(values)) {
      const a = last.arrays.get(channel);
      if (Array.isArray(v) && v.length > 0 && a && v.length <= a.n && v.every((item, i) => sameItem(item, a.items[i]))) {
        vals[channel] = null;
        refs[channel] = [a.log, v.length];
        any = true;
      } else vals[channel] = v;
    }
    return any ? { vals, refs } : undefined;
  }

  /** The arrays the parent checkpoint stored (from this transaction, the cache, or the database). */
  private async parentArrays(c: PoolClient, threadId: string, ns: string, parentId: string, staged: Map<string, PutArrays>): Promise<PutArrays | undefined> {
    const key = `${threadId}\u0000${ns}`;
    const hit = staged.get(key) ?? this.lastPut.get(key);
    if (hit && hit.id === parentId) return hit;
    const { rows } = await c.query<{ refs: Record<string, [number | string, number]> | null }>(
      `SELECT refs FROM ${this.core.s}.checkpoints WHERE thread_id = $1::bytea AND ns = $2 AND checkpoint_id = $3::bytea`,
      [cpKey(threadId), ns, cpKey(parentId)],
    );
    const refs = rows[0]?.refs;
    if (!refs) return undefined;
    const items = await this.loadRefs(c, Object.values(refs).map(([log, n]) => ({ log: num(log), n })));
    const arrays = new Map<string, { log: number; n: number; items: readonly unknown[] }>();
    for (const [channel, [log, n]] of Object.entries(refs)) arrays.set(channel, { log: num(log), n, items: items.get(num(log))!.slice(0, n) });
    return { id: parentId, arrays };
  }

  /** Items of logs: for each log, at least its first `n` (max over the refs) items. */
  private async loadRefs(q: Pick<PoolClient, "query">, refs: ArrayRef[]): Promise<Map<number, unknown[]>> {
    const need = new Map<number, number>();
    for (const r of refs) need.set(r.log, Math.max(need.get(r.log) ?? 0, r.n));
    const out = new Map<number, unknown[]>();
    if (need.size === 0) return out;
    const { rows } = await this.core.q<{ log_id: string; items: unknown[] }>(q, 
      `SELECT c.log_id, c.items FROM ${this.core.s}.cp_chunks c
         JOIN unnest($1::bigint[], $2::int[]) AS r(log_id, n) ON c.log_id = r.log_id AND c.start < r.n
        ORDER BY c.log_id, c.start`,
      [[...need.keys()], [...need.values()]],
    );
    for (const row of rows) {
      const log = num(row.log_id);
      let list = out.get(log);
      if (!list) out.set(log, (list = []));
      for (const item of row.items) list.push(item);
    }
    for (const log of need.keys()) if (!out.has(log)) out.set(log, []);
    return out;
  }

  /**
   * Stores a checkpoint. `fast`: only when everything it needs is cached here (the parent's
   * arrays and bases) and every list extends or repeats its parent's, in ONE statement whose
   * writes all depend on its check that the logs it appends to are as cached; answers false when
   * it cannot (or the check failed: a log changed meanwhile, which only a writer racing on the
   * same thread does; an append that went through then stays unreferenced). Otherwise one
   * statement per list, then the row.
   */
  async putCheckpoint(
    c: PoolClient,
    input: StoredCheckpoint,
    staged: Map<string, PutArrays>,
    fast = false,
    /** Fast only: one task's writes on the parent, committed with it (the engine's step commit). */
    parentWrites?: Extract<WriteOp, { op: "writes.put" }>,
    /** Fast only: add the statement to this commit sent in one round trip (./batch.ts), its check failing the transaction, instead of running it. */
    batch?: PgBatch,
  ): Promise<boolean> {
    const s = this.core.s;
    const threadId = input.thread_id;
    const ns = input.checkpoint_ns ?? "";
    const values = input.checkpoint.channel_values;
    const cacheKey = `${threadId}\u0000${ns}`;
    const parentId = input.parent_checkpoint_id;
    const last = parentId === null ? undefined : (staged.get(cacheKey) ?? this.lastPut.get(cacheKey));
    if (fast && parentId !== null && last?.id !== parentId) return false;
    const parent = parentId === null ? undefined : last?.id === parentId ? last : await this.parentArrays(c, threadId, ns, parentId, staged);
    // The thread's id ($1, text: list logs and bases are keyed by it), the namespace, and the
    // checkpoint's and its parent's keys (bytea, ./cp-keys.ts); then the thread's key.
    const params: unknown[] = [threadId, ns, cpKey(input.checkpoint.id), parentId === null ? null : cpKey(parentId)];
    const p$ = (v: unknown) => `$${params.push(v)}`;
    const threadKey = `${p$(cpKey(threadId))}::bytea`;
    /** Fast: CTEs that check and append the lists; and the CTEs that must each see their (one) row. */
    const ctes: string[] = [];
    const checks: string[] = [];
    const index: ItemIndex = new Map();
    const stored: Record<string, unknown> = {};
    const refs: Record<string, [number, number]> = {};
    const arrays = new Map<string, { log: number; n: number; items: readonly unknown[] }>();
    let anyRef = false;
    for (const channel of Object.keys(values)) {
      const v = values[channel];
      if (!Array.isArray(v) || v.length === 0) {
        stored[channel] = v;
        continue;
      }
      const p = parent?.arrays.get(channel);
      let ref: ArrayRef | undefined;
      if (p) {
        const common = Math.min(p.n, v.length);
        let i = 0;
        while (i < common && sameItem(v[i], p.items[i])) i++;
        if (i === common) {
          const k = ctes.length;
          if (v.length <= p.n) {
            // A prefix of the parent's items: share them, if the log still exists (a thread deleted elsewhere drops its logs).
            if (fast) {
              ctes.push(`l${k} AS (SELECT 1 FROM ${s}.cp_logs WHERE log_id = ${p$(p.log)}::bigint FOR SHARE)`);
              checks.push(`l${k}`);
              ref = { log: p.log, n: v.length };
            } else {
              const r = await this.core.q(c, `SELECT 1 FROM ${s}.cp_logs WHERE log_id = $1 FOR SHARE`, [p.log]);
              if (r.rowCount === 1) ref = { log: p.log, n: v.length };
            }
          } else if (fast) {
            ctes.push(...appendCtes(s, String(k), p$, p.log, p.n, v.length, JSON.stringify(v.slice(p.n))));
            checks.push(`l${k}`);
            ref = { log: p.log, n: v.length };
          } else {
            // Append the new items when nobody appended to the log after the parent's prefix.
            const ps: unknown[] = [];
            const ctes1 = appendCtes(s, "", (x) => `$${ps.push(x)}`, p.log, p.n, v.length, JSON.stringify(v.slice(p.n)));
            const r = await this.core.q<{ n: number }>(c, `WITH ${ctes1.join(",\n")}\nSELECT count(*)::int AS n FROM l`, ps);
            if (r.rows[0]?.n === 1) ref = { log: p.log, n: v.length };
          }
        }
      }
      if (!ref) {
        if (fast) return false;
        const r = await this.core.q<{ log_id: string }>(c, 
          `WITH l AS (INSERT INTO ${s}.cp_logs (log_id, thread_id, len) VALUES (nextval('${s}.cp_log_ids'), $1, $2) RETURNING log_id)
           INSERT INTO ${s}.cp_chunks (log_id, start, items) SELECT log_id, 0, $3::json FROM l RETURNING log_id`,
          [threadId, v.length, JSON.stringify(v)],
        );
        ref = { log: num(r.rows[0]!.log_id), n: v.length };
      }
      stored[channel] = null;
      refs[channel] = [ref.log, ref.n];
      arrays.set(channel, { log: ref.log, n: ref.n, items: v });
      anyRef = true;
      // The items this checkpoint appended (a new log's are all new): what its step wrote.
      indexItems(index, ref.log, v, p && p.log === ref.log ? p.n : 0);
    }
    // The id is the row's key; metadata and pending writes refer to the items appended here.
    const { id: _id, ...rest } = input.checkpoint;
    // Shared form (schema 5, `cp_shared`): items this checkpoint appended are references, marker-like objects escaped.
    let checkpoint = share({ ...rest, channel_values: stored }, index) as Record<string, unknown>;
    // `ts` as its offset from the id's time (./ts.ts): usually 0, the same in every row.
    if (Object.hasOwn(checkpoint, "ts")) checkpoint.ts = storeTs(checkpoint.ts, input.checkpoint.id);
    // Versions less the step (schema 6, ./cp-versions.ts): the same numbers in every row of a shape.
    const relative = relativeVersions(checkpoint, stepOf(input.metadata));
    if (relative) checkpoint = relative;
    const shared = share(input.metadata ?? {}, index) as Record<string, unknown>;
    let bases = (last?.id === parentId ? last?.bases : undefined) ?? [];
    const puts = (last?.id === parentId ? (last?.puts ?? 0) : 0) + 1;
    // The base whose metadata record and checkpoint record differ least; a new one when none
    // holds the metadata or even the best differs in most leaves.
    let base: Base | undefined;
    let metadata: Record<string, unknown> | undefined;
    let cpStored: LeafDiff = [];
    let best = Infinity;
    for (const b of bases) {
      const own = factor(shared, b.record);
      if (!own) continue;
      const diff = diffLeaves(checkpoint, b.cp);
      const size = JSON.stringify(diff).length + JSON.stringify(own).length;
      if (size < best) (base = b), (metadata = own), (cpStored = diff), (best = size);
    }
    // A new base also when the best one's versions, shape or lasting metadata (its source, ...)
    // differ and there is room for one (schema 6): with versions less the step
    // (./cp-versions.ts), rows of one shape then store none of them. Only on a chain of some
    // length: a base (about 600 bytes) pays for itself over a dozen rows, a short thread's rows
    // store their differences instead.
    const mandatory = !base || cpStored.length > 0.8 * leavesOf(checkpoint).length;
    const forShape = !mandatory && puts > SHAPE_BASES_AFTER && bases.length < BASES && (shapeDiffers(cpStored, base!.cp) || lastingDiffers(metadata!));
    /** An existing base that must still exist (the thread was not deleted meanwhile). */
    const guard = base;
    let inline = false;
    if (!base || mandatory || forShape) {
      const record = baseOf(shared);
      // A ts offset of 0 (./ts.ts), the usual one, in the base, whatever this row's.
      const cpText = JSON.stringify(typeof checkpoint.ts === "number" ? { ...checkpoint, ts: 0 } : checkpoint);
      let id: number;
      if (fast) {
        // A new base in the one statement (a run's step keeps its single round trip),
        // under an id chosen here: negative, so never one the sequence gives; a clash (about one
        // in 2^52 for two bases of a thread) fails the statement, and the path statement by
        // statement stores the checkpoint instead. A statement whose other checks fail leaves
        // the base unused (it goes with its thread).
        id = -(Math.floor(Math.random() * 2 ** 52) + 1);
        ctes.push(
          `nb AS (INSERT INTO ${s}.cp_meta (thread_id, base_id, record, cp) VALUES ($1, ${p$(id)}::bigint, ${p$(JSON.stringify(record))}::jsonb, ${p$(cpText)}::json)
                  ON CONFLICT DO NOTHING RETURNING 1)`,
        );
        checks.push(`nb`);
        inline = true;
      } else {
        const r = await this.core.q<{ base_id: string }>(
          c,
          `INSERT INTO ${s}.cp_meta (thread_id, base_id, record, cp) VALUES ($1, nextval('${s}.cp_meta_ids'), $2::jsonb, $3::json) RETURNING base_id`,
          [threadId, JSON.stringify(record), cpText],
        );
        id = num(r.rows[0]!.base_id);
      }
      // Leaf positions follow key order: diff against the record as it reads back (json keeps the text).
      base = { id, record, cp: JSON.parse(cpText) as Record<string, unknown> };
      metadata = factor(shared, record)!;
      cpStored = diffLeaves(checkpoint, base.cp);
    }
    bases = [base, ...bases.filter((b) => b !== base)].slice(0, BASES);
    const pending = share(input.pending_writes, index) as PendingWrite[];
    const pendingText = writesText(pending);
    // The base (cached here) still exists: a thread deleted elsewhere takes its bases along.
    const exists = inline ? guard : base;
    if (exists) {
      ctes.push(`bs AS (SELECT 1 FROM ${s}.cp_meta WHERE thread_id = $1 AND base_id = ${p$(exists.id)}::bigint FOR SHARE)`);
      checks.push(`bs`);
    }
    // The parent row, when it exists, is named by its seq (8 bytes, not its id's text), locked
    // against a delete (which gives the row its parent's id first, ./checkpoints.ts `delete`).
    // Newest first: the parent is nearly always the thread's latest row. Until PostgreSQL has
    // statistics on the table (autovacuum's first ANALYZE), it rates the primary key and the
    // (thread_id, ns, seq) index alike for a lookup by id and may take the latter, reading the
    // whole thread's rows; in seq order from the newest, that way also stops at the first row.
    if (parentId !== null) {
      ctes.push(`pp AS (SELECT seq FROM ${s}.checkpoints WHERE thread_id = ${threadKey} AND ns = $2 AND checkpoint_id = $4::bytea ORDER BY seq DESC LIMIT 1 FOR SHARE)`);
    }
    // With a task's writes on the parent, it must exist, as `writes.put` requires.
    if (parentWrites) checks.push(`pp`);
    // Read in `ok`, which the parent's UPDATE below waits for: a row updated by the same statement
    // is no longer seen by a locking read.
    const parentSeq = parentId === null ? "NULL::bigint" : "(SELECT pseq FROM ok)";
    // Every list checked or appended saw its row, or nothing else is written.
    // (Each checked CTE has at most one row; one count over all of them, not one per CTE: an
    // aggregate is costly to set up at every execution.)
    const counted = checks.map((cte) => `SELECT 1 FROM ${cte}`).join(" UNION ALL ");
    ctes.push(`ok AS (SELECT ${checks.length ? `(SELECT count(*) FROM (${counted}) c) = ${checks.length}` : "true"} AS ok${parentId === null ? "" : ", (SELECT seq FROM pp) AS pseq"})`);
    const ok = `(SELECT ok FROM ok)`;
    // Metadata is stored as json text (schema 5) but must read as jsonb (a metadata filter casts it): what jsonb refuses (\u0000) is refused here.
    // The run id in its uuid column (schema 6, ./cp-run-id.ts) when it can be.
    const taken = takeRunId(metadata!, base.record);
    metadata = taken.own;
    const metaText = JSON.stringify(metadata);
    const cpText = JSON.stringify(cpStored);
    const meta = p$(metaText);
    ctes.push(
      `cp AS (INSERT INTO ${s}.checkpoints (thread_id, ns, checkpoint_id, seq, parent_id, parent_seq, metadata, checkpoint, refs, shared, meta_base, cp_shared, writes, vrel, run_id)
              SELECT ${threadKey}, $2, $3::bytea, nextval('${s}.cp_seq'), CASE WHEN ${parentSeq} IS NULL THEN $4::bytea END, ${parentSeq}, ${meta}::text::json, ${p$(cpText)}::json,
                ${p$(anyRef ? JSON.stringify(refs) : null)}::json, true, ${p$(base.id)}::bigint, true, ${p$(pendingText)}::text::json, ${p$(relative !== undefined)}::boolean, ${p$(taken.runId)}::uuid
               WHERE ${ok} AND ${meta}::text::jsonb IS NOT NULL
              ON CONFLICT (thread_id, ns, checkpoint_id) DO UPDATE SET parent_id = EXCLUDED.parent_id, parent_seq = EXCLUDED.parent_seq, metadata = EXCLUDED.metadata,
                checkpoint = EXCLUDED.checkpoint, refs = EXCLUDED.refs, shared = true, meta_base = EXCLUDED.meta_base, cp_shared = true, writes = EXCLUDED.writes, vrel = EXCLUDED.vrel, run_id = EXCLUDED.run_id)`,
    );
    // The parent, in one UPDATE: the task's writes (the engine's step commit), and what it repeats
    // of what this checkpoint appended stored as references (an input step's message is in its
    // metadata's writes, its __start__ channel and its pending writes, then appended to the list
    // by the next step), each only where the row still holds what this store wrote.
    const up = last?.id === parentId ? last : undefined;
    const sets: string[] = [];
    if (up?.row && index.size) {
      const changed = { hit: false };
      const meta2 = reshare(up.row.meta, index, changed) as Record<string, unknown>;
      const cp2 = reshare(up.row.cp, index, changed) as Record<string, unknown>;
      if (changed.hit) {
        const same = `(cp_shared AND meta_base = ${p$(up.row.base.id)}::bigint AND metadata::text = ${p$(up.row.metaText)}::text AND checkpoint::text = ${p$(up.row.cpText)}::text)`;
        sets.push(
          `metadata = CASE WHEN ${same} THEN ${p$(JSON.stringify(meta2))}::text::json ELSE metadata END`,
          `checkpoint = CASE WHEN ${same} THEN ${p$(JSON.stringify(diffLeaves(cp2, up.row.base.cp)))}::text::json ELSE checkpoint END`,
        );
      }
    }
    const changed = { hit: false };
    const others = up?.writes && index.size ? (up.writes.entries.map((e) => (parentWrites && e[0] === parentWrites.task_id ? e : reshare(e, index, changed))) as PendingWrite[]) : undefined;
    const old = () => p$(up!.writes!.text);
    if (parentWrites) {
      // Shared at once against what this checkpoint appended (what the task wrote).
      const mine = share(parentWrites.writes, index) as PendingWrite[];
      const merged = `${this.mergeWritesSql(p$(parentWrites.task_id), p$(JSON.stringify(mine)))}`;
      if (up?.writes) {
        const next = writesText(mergeWrites(others ?? up.writes.entries, parentWrites.task_id, mine));
        sets.push(`writes = CASE WHEN writes::text IS NOT DISTINCT FROM ${old()}::text THEN ${p$(next)}::text::json ELSE ${merged} END`);
      } else sets.push(`writes = ${merged}`);
    } else if (others && changed.hit) {
      sets.push(`writes = CASE WHEN writes::text IS NOT DISTINCT FROM ${old()}::text THEN ${p$(writesText(others))}::text::json ELSE writes END`);
    }
    // By its seq too: one row whichever index serves it (see `pp`).
    if (sets.length) ctes.push(`pr AS (UPDATE ${s}.checkpoints SET ${sets.join(", ")} WHERE thread_id = ${threadKey} AND ns = $2 AND seq = (SELECT pseq FROM ok) AND checkpoint_id = $4::bytea AND ${ok})`);
    if (batch && fast) batch.addChecked(`WITH ${ctes.join(",\n")}`, params);
    else {
      const { rows } = await this.core.q<{ ok: boolean }>(c, `WITH ${ctes.join(",\n")}\nSELECT ok FROM ok`, params);
      if (!rows[0]?.ok) {
        if (fast) return false;
        throw new Error("graphdock/postgres: a checkpoint's list log or base changed while it was written (its thread was deleted meanwhile)");
      }
    }
    staged.set(cacheKey, { id: input.checkpoint.id, arrays, bases, row: { meta: metadata!, metaText, cp: checkpoint, cpText, base }, writes: { entries: pending, text: pendingText }, puts });
    return true;
  }

  /** The rows of one thread, whose id (text) is `thread` (a parameter). */
  private checkpointSelect(thread: string): string {
    const s = this.core.s;
    const parent = `COALESCE(c.parent_id, (SELECT p.checkpoint_id FROM ${s}.checkpoints p WHERE p.thread_id = c.thread_id AND p.ns = c.ns AND p.seq = c.parent_seq))`;
    // The keys as stored (bytea), decoded by `assemble` (./cp-keys.ts).
    return `SELECT c.thread_id, c.ns, c.checkpoint_id, ${parent} AS parent_id, c.metadata, c.checkpoint, c.refs, c.shared, c.cp_shared, ${this.metaBase(thread)} AS base,
              ${this.metaBase(thread, "cp")} AS base_cp, c.writes, c.vrel, c.run_id AS run_uuid
              FROM ${s}.checkpoints c`;
  }

  /** The metadata base of checkpoint row `c` of the thread whose id (text) is `thread` (jsonb; NULL without one). */
  private metaBase(thread: string, column: "record" | "cp" = "record"): string {
    return `(SELECT b.${column} FROM ${this.core.s}.cp_meta b WHERE b.thread_id = ${thread} AND b.base_id = c.meta_base)`;
  }

  /** The log items a checkpoint row needs: its array channels' and those its shared values refer to. */
  private rowNeeds(row: Row, out: Map<number, number>): Map<number, number> {
    const r = row.refs as Record<string, [number | string, number]> | null;
    if (r) for (const [log, n] of Object.values(r)) out.set(num(log), Math.max(out.get(num(log)) ?? 0, n));
    if (row.shared) needs([row.metadata, row.base], out);
    if (row.cp_shared) needs(this.storedCheckpoint(row), out);
    // Entries `[task, channel, value]` are shared; `[task, channel, value, 0]` (written before schema 2) plain.
    for (const w of writesOf(row.writes)) if (w.length === 3) needs(w[2], out);
    return out;
  }

  /** Rows of `checkpointSelect` -> checkpoints, their arrays read in one more query. */
  private async toCheckpoints(rows: Row[]): Promise<StoredCheckpoint[]> {
    const want = new Map<number, number>();
    for (const row of rows) this.rowNeeds(row, want);
    const items = want.size ? await this.loadRefs(this.core.pool, [...want].map(([log, n]) => ({ log, n }))) : new Map<number, unknown[]>();
    return rows.map((row) => this.assemble(row, items));
  }

  /** The checkpoint record a row stores (its leaves patched onto its base's), as stored (shared form from schema 5 on). */
  private storedCheckpoint(row: Row): Record<string, unknown> {
    return (row.patched ??= Array.isArray(row.checkpoint) ? patchLeaves(row.base_cp as Record<string, unknown>, row.checkpoint as LeafDiff) : row.checkpoint) as Record<
      string,
      unknown
    >;
  }

  /** A checkpoint row with its arrays put back from the items of their logs, and its shared values resolved. */
  private assemble(row: Row, items: Map<number, unknown[]>): StoredCheckpoint {
    let stored = this.storedCheckpoint(row);
    const id = keyText(row.checkpoint_id)!;
    const own = putRunId(unfactor(row.base as Record<string, unknown> | null, row.metadata as Record<string, unknown>), row.run_uuid);
    const metadata = resolve(own, row.shared ? items : undefined) as StoredCheckpoint["metadata"];
    if (row.vrel === true) stored = absoluteVersions(stored, stepOf(metadata));
    if (row.cp_shared && Object.hasOwn(stored, "ts")) stored = { ...stored, ts: readTs(stored.ts, id) };
    if (row.cp_shared) stored = resolve(stored, items) as Record<string, unknown>;
    // Schema 2 leaves the id (the row's key) out of the stored checkpoint.
    const cp = ("id" in stored ? stored : { v: stored.v, id, ...stored }) as unknown as StoredCheckpoint["checkpoint"];
    const r = row.refs as Record<string, [number | string, number]> | null;
    if (r) {
      const values = cp.channel_values;
      for (const [channel, [log, n]] of Object.entries(r)) values[channel] = (items.get(num(log)) ?? []).slice(0, n);
    }
    const writes = writesOf(row.writes).map((w): PendingWrite => [w[0] as string, w[1] as string, w.length === 3 ? resolve(w[2], items) : w[2]]);
    return {
      thread_id: keyText(row.thread_id)!,
      checkpoint_ns: row.ns as string,
      checkpoint: cp,
      metadata,
      parent_checkpoint_id: keyText(row.parent_id),
      pending_writes: writes,
    };
  }

  async getCheckpoint(key: CheckpointKey): Promise<StoredCheckpoint | undefined> {
    const ns = key.checkpoint_ns ?? "";
    // One query: the row, its pending writes and the chunks of its arrays.
    const chunks = `(SELECT json_agg(json_build_array(ch.log_id, ch.start, ch.items) ORDER BY ch.log_id, ch.start)
                       FROM ${refChunksFrom(this.core.s, "c.refs")}) AS chunks`;
    const select = this.checkpointSelect("$1").replace("c.writes", `c.writes, ${chunks}`);
    const { rows } =
      key.checkpoint_id === undefined
        ? await this.core.q(this.core.pool, `${select} WHERE c.thread_id = $3::bytea AND c.ns = $2 ORDER BY c.seq DESC LIMIT 1`, [key.thread_id, ns, cpKey(key.thread_id)])
        : // Newest first, as the parent of a put (`putCheckpoint`): one row read whichever index serves it.
          await this.core.q(this.core.pool, `${select} WHERE c.thread_id = $3::bytea AND c.ns = $2 AND c.checkpoint_id = $4::bytea ORDER BY c.seq DESC LIMIT 1`, [
            key.thread_id,
            ns,
            cpKey(key.thread_id),
            cpKey(key.checkpoint_id),
          ]);
    const row = rows[0];
    if (!row) return undefined;
    let items = new Map<number, unknown[]>();
    for (const [log, , part] of (row.chunks as Array<[number | string, number, unknown[]]> | null) ?? []) {
      const id = num(log);
      let list = items.get(id);
      if (!list) items.set(id, (list = []));
      for (const item of part) list.push(item);
    }
    // Pending writes shared with what a child checkpoint appended refer past this row's items.
    const want = this.rowNeeds(row, new Map());
    if ([...want].some(([log, n]) => (items.get(log)?.length ?? 0) < n)) {
      items = await this.loadRefs(this.core.pool, [...want].map(([log, n]) => ({ log, n })));
    }
    return this.assemble(row, items);
  }

  async listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): Promise<StoredCheckpoint[]> {
    const ps = new Params();
    const t = ps.p(threadId);
    const ns = ps.p(options.checkpoint_ns ?? "");
    const parts = [`c.thread_id = ${keySql(t)}`, `c.ns = ${ns}`];
    if (options.before !== undefined) {
      parts.push(`c.seq < (SELECT b.seq FROM ${this.core.s}.checkpoints b WHERE b.thread_id = ${keySql(t)} AND b.ns = ${ns} AND b.checkpoint_id = ${keySql(ps.p(options.before))})`);
    }
    // `writes` of shared metadata hold references: a filter on it is judged on the read checkpoints.
    const { writes: _w, ...sqlFilter } = options.filter ?? {};
    // So is a filter holding objects that look like the store's markers (stored escaped).
    const lookalike = options.filter !== undefined && JSON.stringify(options.filter).includes("\\u0001");
    const inJs = options.filter !== undefined && (Object.hasOwn(options.filter, "writes") || lookalike);
    if (options.filter && !lookalike) parts.push(`(COALESCE(${this.metaBase(t)}, '{}'::jsonb) || c.metadata::jsonb || ${RUN_ID_JSONB}) @> ${ps.jsonb(sqlFilter)}`);
    const { rows } = await this.core.pool.query(
      `${this.checkpointSelect(t)}${where(parts)} ORDER BY c.seq DESC${inJs ? "" : page(ps, { limit: options.limit })}`,
      ps.values,
    );
    const out = await this.toCheckpoints(rows);
    if (!inJs) return out;
    const hit = out.filter((cp) => contains(cp.metadata, options.filter));
    return options.limit === undefined ? hit : hit.slice(0, Math.max(0, Math.floor(options.limit)));
  }

  async listCheckpointNamespaces(threadId: string): Promise<string[]> {
    const { rows } = await this.core.q<{ ns: string }>(this.core.pool, `SELECT DISTINCT ns FROM ${this.core.s}.checkpoints WHERE thread_id = ${keySql("$1")} ORDER BY ns`, [threadId]);
    return rows.map((r) => r.ns);
  }
}
