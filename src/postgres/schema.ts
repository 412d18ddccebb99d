/**
 * The PostgreSQL schema of `graphdock/postgres`, versioned in `<schema>.meta` and migrated on
 * open under a transaction-scoped advisory lock, so that several processes opening one database
 * at once migrate it once (the others wait for the lock, then find it current).
 *
 * Conventions:
 * - Every table lives in one schema (default `graphdock`); several stores can share a database
 *   under different schemas.
 * - Text columns that are sorted or compared as ids use `COLLATE "C"`: byte order, which is the
 *   code-point order the in-memory evaluator (src/persistence/query.ts) sorts by.
 * - `jsonb` only where the store filters through an index (metadata, with GIN `jsonb_path_ops`
 *   indexes for `@>`); every other value is `json`, stored as the exact text we wrote (key order
 *   kept, no re-encoding), checkpoint metadata included (filtered within one thread's rows, cast).
 */
import type { PoolClient } from "pg";
import { itemsSchema } from "./items.js";
import { cronMigration } from "./crons.js";
import { v6Migration } from "./schema-v6.js";
import { v7Migration } from "./schema-v7.js";

/** The schema version this code reads and writes. */
export const PG_SCHEMA_VERSION = 7;

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Migration n takes a database at version n-1 to version n. */
function migrations(s: string): string[][] {
  return [
    [],
    [
      `CREATE SEQUENCE ${s}.revisions`,
      `CREATE SEQUENCE ${s}.run_queue`,
      `CREATE SEQUENCE ${s}.write_seq`,
      `CREATE SEQUENCE ${s}.cp_seq`,
      `CREATE SEQUENCE ${s}.cp_log_ids`,
      `CREATE SEQUENCE ${s}.doc_seq`,
      `CREATE TABLE ${s}.assistants (
        assistant_id text COLLATE "C" PRIMARY KEY,
        graph_id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL,
        metadata jsonb NOT NULL,
        doc json NOT NULL)`,
      `CREATE INDEX ON ${s}.assistants USING gin (metadata jsonb_path_ops)`,
      `CREATE INDEX ON ${s}.assistants (created_at, assistant_id)`,
      `CREATE INDEX ON ${s}.assistants (graph_id)`,
      `CREATE TABLE ${s}.assistant_versions (
        assistant_id text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        metadata jsonb NOT NULL,
        doc json NOT NULL,
        PRIMARY KEY (assistant_id, version))`,
      `CREATE TABLE ${s}.threads (
        thread_id text COLLATE "C" PRIMARY KEY,
        status text COLLATE "C" NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL,
        state_updated_at text COLLATE "C" NOT NULL,
        metadata jsonb NOT NULL,
        vals json NOT NULL,
        doc json NOT NULL,
        revision bigint NOT NULL)`,
      `CREATE INDEX ON ${s}.threads USING gin (metadata jsonb_path_ops)`,
      `CREATE INDEX ON ${s}.threads (created_at, thread_id)`,
      `CREATE INDEX ON ${s}.threads (updated_at, thread_id)`,
      `CREATE INDEX ON ${s}.threads (status, thread_id)`,
      // Checkpoints: one row each; `seq` is the put order (kept when a checkpoint is replaced).
      // Top-level array channel values live in append-only logs (cp_logs / cp_chunks): `refs`
      // maps a channel to [log_id, n] = the first n items of the log, so a checkpoint whose
      // messages extend its parent's stores only the new items.
      `CREATE TABLE ${s}.checkpoints (
        thread_id text COLLATE "C" NOT NULL,
        ns text COLLATE "C" NOT NULL,
        checkpoint_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL,
        parent_id text,
        metadata jsonb NOT NULL,
        checkpoint json NOT NULL,
        refs json,
        PRIMARY KEY (thread_id, ns, checkpoint_id))`,
      `CREATE INDEX ON ${s}.checkpoints (thread_id, ns, seq)`,
      `CREATE TABLE ${s}.cp_logs (
        log_id bigint PRIMARY KEY,
        thread_id text COLLATE "C" NOT NULL,
        len integer NOT NULL)`,
      `CREATE INDEX ON ${s}.cp_logs (thread_id)`,
      `CREATE TABLE ${s}.cp_chunks (
        thread_id text COLLATE "C" NOT NULL,
        log_id bigint NOT NULL,
        start integer NOT NULL,
        items json NOT NULL,
        PRIMARY KEY (thread_id, log_id, start))`,
      `CREATE TABLE ${s}.cp_writes (
        thread_id text COLLATE "C" NOT NULL,
        ns text COLLATE "C" NOT NULL,
        checkpoint_id text COLLATE "C" NOT NULL,
        task_id text NOT NULL,
        seq bigint NOT NULL,
        idx integer NOT NULL,
        channel text NOT NULL,
        value json NOT NULL,
        PRIMARY KEY (thread_id, ns, checkpoint_id, seq, idx))`,
      `CREATE TABLE ${s}.runs (
        run_id text COLLATE "C" PRIMARY KEY,
        thread_id text COLLATE "C" NOT NULL,
        assistant_id text COLLATE "C" NOT NULL,
        status text NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        queue_seq bigint NOT NULL,
        doc json NOT NULL)`,
      `CREATE INDEX ON ${s}.runs (thread_id, queue_seq)`,
      `CREATE INDEX ON ${s}.runs (queue_seq) WHERE status IN ('pending', 'running')`,
      `CREATE INDEX ON ${s}.runs (created_at, run_id)`,
      `CREATE INDEX ON ${s}.runs (assistant_id)`,
      `CREATE TABLE ${s}.cancels (
        run_id text COLLATE "C" PRIMARY KEY,
        thread_id text COLLATE "C" NOT NULL,
        doc json NOT NULL)`,
      `CREATE INDEX ON ${s}.cancels (thread_id)`,
      `CREATE TABLE ${s}.leases (
        key text COLLATE "C" PRIMARY KEY,
        owner text NOT NULL,
        expires_at bigint NOT NULL,
        data json NOT NULL)`,
      `CREATE INDEX ON ${s}.leases (expires_at)`,
      `CREATE TABLE ${s}.docs (
        collection text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        parent text,
        seq bigint NOT NULL,
        doc json NOT NULL,
        PRIMARY KEY (collection, id))`,
      `CREATE INDEX ON ${s}.docs (collection, seq)`,
      // Run events (D20): one log per run; ended logs are pruned after their retention window.
      `CREATE TABLE ${s}.run_logs (
        run_id text COLLATE "C" PRIMARY KEY,
        resumable boolean NOT NULL,
        opened_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz)`,
      `CREATE INDEX ON ${s}.run_logs (ended_at) WHERE ended_at IS NOT NULL`,
      `CREATE TABLE ${s}.run_events (
        run_id text COLLATE "C" NOT NULL,
        seq integer NOT NULL,
        event text NOT NULL,
        data json NOT NULL,
        PRIMARY KEY (run_id, seq))`,
    ],
    [
      // Version 2. Leases also carry their expiry on the database's clock (`leaseClock:
      // "database"`): leases written by version 1 are taken to be on the system clock.
      `ALTER TABLE ${s}.leases ADD COLUMN expires_db timestamptz`,
      `UPDATE ${s}.leases SET expires_db = to_timestamp(expires_at / 1000.0)`,
      `ALTER TABLE ${s}.leases ALTER COLUMN expires_db SET NOT NULL`,
      `CREATE INDEX ON ${s}.leases (expires_db)`,
      // A claim marks a run running without rewriting its document: `status` (always) and
      // `updated_at` (when set) of the row override the document's.
      `ALTER TABLE ${s}.runs ADD COLUMN updated_at text`,
      // Checkpoint metadata and pending writes written from version 2 on are shared (./share.ts):
      // objects that are items of the thread's list logs are references. Older rows are plain.
      `ALTER TABLE ${s}.checkpoints ADD COLUMN shared boolean NOT NULL DEFAULT false`,
      `ALTER TABLE ${s}.cp_writes ADD COLUMN shared boolean NOT NULL DEFAULT false`,
      // Bases (./meta.ts): a row stores the metadata keys that differ from its base's, and its
      // checkpoint as the leaves that differ from the base's checkpoint record (a JSON array).
      `CREATE SEQUENCE ${s}.cp_meta_ids`,
      `CREATE TABLE ${s}.cp_meta (
        thread_id text COLLATE "C" NOT NULL,
        base_id bigint NOT NULL,
        record jsonb NOT NULL,
        cp json NOT NULL,
        PRIMARY KEY (thread_id, base_id))`,
      `ALTER TABLE ${s}.checkpoints ADD COLUMN meta_base bigint`,
      // Thread values whose lists are the latest checkpoint's refer to its logs: channel -> [log, n].
      `ALTER TABLE ${s}.threads ADD COLUMN vals_refs json`,
      claimFunction(s),
    ],
    // 3: long-term memory items (./items.ts).
    itemsSchema(s),
    // 4: crons (./crons.ts)
    cronMigration(s),
    compactRows(s),
    // 6: smaller checkpoint rows (./schema-v6.ts).
    v6Migration(s),
    // 7: an index of each thread's runs in flight (./schema-v7.ts).
    v7Migration(s),
  ];
}

/**
 * Version 5: smaller rows (a 500-turn chat's storage, bench/postgres.bench.ts). Rows written
 * before stay as they are and read back as before.
 * - A run's document leaves out what its columns hold (run_id, thread_id, assistant_id,
 *   created_at, status, updated_at): `updated_at` is now always set on the row, and `claim_run`
 *   returns the row's columns with the document (`{ run_id, ..., doc }`).
 * - A run's kwargs are stored as the keys that differ from the defaults (./run-doc.ts).
 * - Chunks of list logs are keyed by (log_id, start) alone: a log id is unique in the schema, and
 *   `cp_logs` says which thread it belongs to.
 * - Checkpoint metadata is `json` (the exact text written, smaller than `jsonb` and kept in key
 *   order); a metadata filter casts it (no index serves it: a thread's rows are read by the
 *   (thread_id, ns, seq) index).
 * - Runs are indexed by (thread_id, created_at, run_id) (a thread's runs newest first, paged)
 *   instead of (created_at, run_id), which no query used.
 * - A checkpoint's pending writes are a column of its row (`writes`: a JSON array of
 *   `[task, channel, value]` in shared form, `[task, channel, value, 0]` for plain values moved
 *   from rows of `cp_writes` written before schema 2), not one row each in `cp_writes`; or, when
 *   each task's entries are together (as `writes.put` leaves them), `{task: [[channel, value], ...]}`
 *   with each task's id once.
 * - A checkpoint row's `checkpoint` (and its base's) is in shared form when `cp_shared` (./share.ts):
 *   an input step's message, written to `__start__` and recorded in the metadata's writes, is
 *   stored once, in the list log the next step appends it to (that step shares the row again).
 * - A checkpoint row names its parent by the parent row's `seq` (`parent_seq`, 8 bytes) when the
 *   parent row exists as it is put, `parent_id` (its id's text) then NULL; a delete gives the
 *   children of the rows it removes their parent's id first. A checkpoint's `ts` is stored as its
 *   offset from its uuid6 id's time when that reads back the same text (./ts.ts).
 */
function compactRows(s: string): string[] {
  return [
    `ALTER TABLE ${s}.cp_chunks DROP COLUMN thread_id`,
    `ALTER TABLE ${s}.cp_chunks ADD PRIMARY KEY (log_id, start)`,
    `ALTER TABLE ${s}.checkpoints ALTER COLUMN metadata TYPE json USING metadata::json`,
    `ALTER TABLE ${s}.checkpoints ADD COLUMN cp_shared boolean`,
    `ALTER TABLE ${s}.checkpoints ADD COLUMN writes json`,
    `UPDATE ${s}.checkpoints c SET writes = w.entries
       FROM (SELECT thread_id, ns, checkpoint_id,
                    json_agg(CASE WHEN shared THEN json_build_array(task_id, channel, value) ELSE json_build_array(task_id, channel, value, 0) END ORDER BY seq, idx) AS entries
               FROM ${s}.cp_writes GROUP BY thread_id, ns, checkpoint_id) w
      WHERE c.thread_id = w.thread_id AND c.ns = w.ns AND c.checkpoint_id = w.checkpoint_id`,
    `DROP TABLE ${s}.cp_writes`,
    `DROP SEQUENCE ${s}.write_seq`,
    ...rebuildCheckpoints(s),
    // No query lists runs across threads by creation time; a thread's runs are listed so (runs.list).
    `DROP INDEX ${s}.runs_created_at_run_id_idx`,
    `CREATE INDEX ON ${s}.runs (thread_id, created_at, run_id)`,
    `DROP FUNCTION ${s}.claim_run(text, text, text, bigint, bigint, boolean, text[], text)`,
    claimFunction(s, 5),
    expectFunction(s),
  ];
}

/**
 * Version 5: `commit_expect(ok)`, true when `ok` is, else raising SQLSTATE `AD409` (`EXPECT_FAILED`):
 * the expectation checks of a commit sent in one round trip (./batch.ts), which must fail the
 * transaction themselves.
 */
function expectFunction(s: string): string {
  return `CREATE FUNCTION ${s}.commit_expect(ok boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      IF ok IS NOT TRUE THEN RAISE EXCEPTION 'graphdock: an expectation of the commit does not hold' USING ERRCODE = '${EXPECT_FAILED}'; END IF;
      RETURN true;
    END $$`;
}

/** The SQLSTATE `commit_expect` raises. */
export const EXPECT_FAILED = "AD409";

/**
 * Version 5 rewrites the checkpoints table (its metadata's type changes anyway) with its columns
 * in an order that wastes no alignment padding (8-byte columns first, then 1-byte ones, then the
 * variable-length ones), about 14 bytes a row; a dropped column (`cp_writes` folded in) leaves
 * nothing behind. Rows written before name their parent by id (`parent_seq` NULL).
 */
function rebuildCheckpoints(s: string): string[] {
  const cols = `seq, meta_base, shared, cp_shared, thread_id, ns, checkpoint_id, parent_id, metadata, checkpoint, refs, writes`;
  return [
    `CREATE TABLE ${s}.checkpoints_v5 (
      seq bigint NOT NULL,
      parent_seq bigint,
      meta_base bigint,
      shared boolean NOT NULL DEFAULT false,
      cp_shared boolean,
      thread_id text COLLATE "C" NOT NULL,
      ns text COLLATE "C" NOT NULL,
      checkpoint_id text COLLATE "C" NOT NULL,
      parent_id text,
      metadata json NOT NULL,
      checkpoint json NOT NULL,
      refs json,
      writes json)`,
    `INSERT INTO ${s}.checkpoints_v5 (${cols}) SELECT ${cols} FROM ${s}.checkpoints`,
    `DROP TABLE ${s}.checkpoints`,
    `ALTER TABLE ${s}.checkpoints_v5 RENAME TO checkpoints`,
    `ALTER TABLE ${s}.checkpoints ADD PRIMARY KEY (thread_id, ns, checkpoint_id)`,
    `CREATE INDEX ON ${s}.checkpoints (thread_id, ns, seq)`,
  ];
}

/**
 * `claim_run`: claims the thread's next run in one round trip (`RunClaimResult`'s outcomes).
 * The lease row and the head run are locked with `FOR UPDATE SKIP LOCKED`: a claimer that finds
 * either locked (another claimer, the holder renewing or releasing it, a cancel) answers `none`
 * at once instead of waiting; whoever holds the lock starts the run or notifies `runs` after it.
 */
function claimFunction(s: string, version: 2 | 5 = 2): string {
  // The run as returned: version 2, its document; version 5, its columns and its document.
  const run = version === 2 ? `h.doc` : `json_build_object('run_id', h.run_id, 'thread_id', h.thread_id, 'assistant_id', h.assistant_id, 'created_at', h.created_at, 'status', h.status, 'updated_at', h.updated_at, 'doc', h.doc)`;
  const claimed = version === 2 ? `h.doc` : `json_build_object('run_id', h.run_id, 'thread_id', h.thread_id, 'assistant_id', h.assistant_id, 'created_at', h.created_at, 'status', 'running', 'updated_at', p_updated_at, 'doc', h.doc)`;
  return `CREATE FUNCTION ${s}.claim_run(p_thread text, p_key text, p_owner text, p_now bigint, p_expires bigint,
      p_db_clock boolean, p_graphs text[], p_updated_at text)
    RETURNS TABLE (outcome text, doc json, not_before float8)
    LANGUAGE plpgsql AS $claim$
    DECLARE
      l record;
      head text;
      h record;
      nb float8;
    BEGIN
      SELECT k.expires_at, k.expires_db INTO l FROM ${s}.leases k WHERE k.key = p_key FOR UPDATE SKIP LOCKED;
      IF FOUND THEN
        IF (p_db_clock AND l.expires_db >= clock_timestamp()) OR (NOT p_db_clock AND l.expires_at >= p_now) THEN
          RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
          RETURN;
        END IF;
      ELSIF EXISTS (SELECT 1 FROM ${s}.leases k WHERE k.key = p_key) THEN
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      SELECT r.run_id INTO head FROM ${s}.runs r
       WHERE r.thread_id = p_thread AND r.status IN ('pending', 'running') ORDER BY r.queue_seq LIMIT 1;
      IF head IS NULL THEN
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      -- Only the head itself: a SKIP LOCKED over the queue would pass a locked head by.
      SELECT r.run_id, r.thread_id, r.assistant_id, r.created_at, r.status, r.doc, r.updated_at INTO h FROM ${s}.runs r
       WHERE r.run_id = head AND r.status IN ('pending', 'running') FOR UPDATE SKIP LOCKED;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      -- The lease was absent (or expired) as of an earlier snapshot: a claimer that committed
      -- since then holds it now (the head run we locked is the one it claimed).
      IF EXISTS (SELECT 1 FROM ${s}.leases k WHERE k.key = p_key
                  AND ((p_db_clock AND k.expires_db >= clock_timestamp()) OR (NOT p_db_clock AND k.expires_at >= p_now))) THEN
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      IF h.status = 'running' OR (h.doc -> 'execution') IS NULL OR json_typeof(h.doc -> 'execution') <> 'object' THEN
        RETURN QUERY SELECT 'stopped'::text, ${run}, NULL::float8;
        RETURN;
      END IF;
      IF NOT ((h.doc -> 'execution' ->> 'graph_id') = ANY(p_graphs)) THEN
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      nb := COALESCE((h.doc -> 'execution' ->> 'not_before')::float8, 0);
      IF nb > p_now THEN
        RETURN QUERY SELECT 'later'::text, NULL::json, nb;
        RETURN;
      END IF;
      INSERT INTO ${s}.leases AS k (key, owner, expires_at, expires_db, data)
        VALUES (p_key, p_owner, p_expires, clock_timestamp() + (p_expires - p_now) * interval '1 millisecond', json_build_object('run_id', h.run_id))
        ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, expires_db = EXCLUDED.expires_db, data = EXCLUDED.data
        WHERE (p_db_clock AND k.expires_db < clock_timestamp()) OR (NOT p_db_clock AND k.expires_at < p_now);
      IF NOT FOUND THEN
        -- Taken meanwhile by a writer that does not claim (an admission, a state update).
        RETURN QUERY SELECT 'none'::text, NULL::json, NULL::float8;
        RETURN;
      END IF;
      UPDATE ${s}.runs SET status = 'running', updated_at = p_updated_at WHERE run_id = h.run_id;
      RETURN QUERY SELECT 'claimed'::text, ${claimed}, NULL::float8;
    END
    $claim$`;
}

/**
 * Creates or migrates the schema in one transaction under an advisory lock. Refuses a database
 * written by a newer graphdock. `target` (tests only) stops at an older version.
 */
export async function migrate(client: PoolClient, schema: string, target = PG_SCHEMA_VERSION): Promise<void> {
  const s = quoteIdent(schema);
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`graphdock:migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL)`);
    const { rows } = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`);
    const current = rows.length ? Number(rows[0]!.value) : 0;
    if (current > PG_SCHEMA_VERSION) {
      throw new Error(
        `graphdock/postgres: schema "${schema}" is at version ${current}, newer than this graphdock understands (${PG_SCHEMA_VERSION}); upgrade graphdock`,
      );
    }
    const steps = migrations(s);
    for (let v = current + 1; v <= target; v++) for (const sql of steps[v]!) await client.query(sql);
    if (current < target) {
      await client.query(
        `INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [String(target)],
      );
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}
