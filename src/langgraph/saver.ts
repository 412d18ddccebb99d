/**
 * `GraphdockSaver`: a LangGraph.js `BaseCheckpointSaver` over graphdock's `Store` (D23). A
 * LangGraph thread's checkpoints and pending writes live in the same store, under the same keys
 * (thread, checkpoint namespace, checkpoint id), as a thread run by graphdock's own engine, so
 * it is read, copied, forked, rolled back and listed the same way.
 *
 * Checkpoint and write values go through the saver's serde (LangChain messages and other
 * serializable objects become their `lc` JSON form) and are stored as plain JSON the store can
 * hold, compress and copy; they come back as the same objects.
 */
import { KeyedMutex } from "../mutex.js";
import { load as loadSerialized } from "@langchain/core/load";
import type { RunnableConfig } from "@langchain/core/runnables";
// Everything from LangGraph comes through its browser-safe entry (no Node built-ins), so the
// adapter runs in a browser tab as well; the types it does not re-export are derived.
import { BaseCheckpointSaver, type Checkpoint as LgCheckpoint, type CheckpointMetadata as LgCheckpointMetadata, type CheckpointTuple } from "@langchain/langgraph/web";
import { invalidInput } from "../errors.js";
import { contains } from "../json.js";
import { NOT_PLAIN, plainJsonCopy, revivePlainJson } from "./plain-json.js";
import { isMessageInstance, type SerializedMessage } from "./wire.js";
import type { Checkpoint, CheckpointMetadata, CheckpointStore, PendingWrite, StoredCheckpoint, WriteOp } from "../persistence/types.js";

/** Options of `GraphdockSaver`. */
export interface GraphdockSaverOptions {
  /**
   * Merged into the metadata of every checkpoint this saver writes (the runtime passes the run's
   * metadata: run_id, graph_id, assistant_id, ...), under what LangGraph writes.
   */
  metadata?: Record<string, unknown>;
  /** Serializer of channel and write values; LangGraph's JSON serializer by default. */
  serde?: SerializerProtocol;
}

/** Special write channels and their fixed index (LangGraph's `WRITES_IDX_MAP`): a new write replaces the old one. */
const SPECIAL_INDEX: Record<string, number> = { __error__: -1, __scheduled__: -2, __interrupt__: -3, __resume__: -4 };

const decoder = new TextDecoder();

const SOURCES: readonly CheckpointMetadata["source"][] = ["input", "loop", "update", "fork"];

type CheckpointListOptions = NonNullable<Parameters<BaseCheckpointSaver["list"]>[1]>;
type LgPendingWrite = Parameters<BaseCheckpointSaver["putWrites"]>[1][number];
type SerializerProtocol = NonNullable<ConstructorParameters<typeof BaseCheckpointSaver>[0]>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A LangGraph.js checkpointer storing in an graphdock `Store` (or the runtime's `CheckpointStore` view of one). */
export class GraphdockSaver extends BaseCheckpointSaver<number> {
  private readonly extraMetadata: Record<string, unknown>;
  /** Operations per checkpoint key, one at a time (see `serially`). */
  private readonly queues = new KeyedMutex();
  /** Writes of checkpoints this saver created, by checkpoint key then task id (no store read needed). */
  private readonly own = new Map<string, Map<string, PendingWrite[]>>();
  /**
   * Writes against a checkpoint the store does not have (LangGraph records a `Command` input's
   * writes against a new thread's empty checkpoint before any checkpoint exists): kept here and
   * stored with that checkpoint if it is put later.
   */
  private readonly unplaced = new Map<string, Map<string, PendingWrite[]>>();
  /** The last checkpoint this saver stored per thread and namespace. */
  private readonly latest = new Map<string, string>();
  /** Whether values go through LangGraph's own JSON serializer (no `serde` option given). */
  private readonly defaultSerde: boolean;
  /** The `toJSON()` form of the messages of the root checkpoint `put` last (see `serializedMessage`). */
  private lastPutMessages = new WeakMap<object, SerializedMessage>();

  constructor(
    readonly store: CheckpointStore,
    options: GraphdockSaverOptions = {},
  ) {
    super(options.serde);
    this.extraMetadata = options.metadata ?? {};
    this.defaultSerde = options.serde === undefined;
  }

  /**
   * The `toJSON()` form of a message of the root checkpoint this saver was last asked to put
   * (made when it was put), or `undefined`. Valid for as long as no node ran since that put: the
   * adapter uses it for the values of a run that ended with that checkpoint, so a long chat's
   * messages are not serialized once more for the run's result.
   */
  readonly serializedMessage = (m: object): SerializedMessage | undefined => this.lastPutMessages.get(m);

  /**
   * Channel values with each message (a channel's value, or an item of a list) replaced by its
   * `toJSON()` form, recorded in `into`: what LangGraph's serializer would produce from it anyway
   * (JSON serialization calls `toJSON`), made once so the run's result can reuse it.
   */
  private withSerializedMessages(values: Record<string, unknown>, into: WeakMap<object, SerializedMessage>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(values)) out[k] = serializedMessages(v, into);
    return out;
  }

  /**
   * A value's serde form made at once, without the serializer, or `NOT_PLAIN`: plain JSON (a
   * chat's state once its messages are in their toJSON form) is its own serde form.
   */
  private dumpNow(value: unknown): unknown {
    return this.defaultSerde ? plainJsonCopy(value) : NOT_PLAIN;
  }

  /** A value as JSON the store can hold (its serde form). */
  private async dump(value: unknown): Promise<unknown> {
    const copy = this.dumpNow(value);
    if (copy !== NOT_PLAIN) return copy;
    const [type, bytes] = await this.serde.dumpsTyped(value);
    if (type !== "json") throw new Error(`graphdock: GraphdockSaver stores JSON; the serializer produced "${type}".`);
    return JSON.parse(typeof bytes === "string" ? bytes : decoder.decode(bytes));
  }

  private load(value: unknown): Promise<unknown> {
    if (this.defaultSerde) {
      // The serializer's own path, without its async walk over every node of a long chat's state.
      const revived = revivePlainJson(value, (text) => loadSerialized(text));
      if (revived !== NOT_PLAIN) return revived;
    }
    return this.serde.loadsTyped("json", JSON.stringify(value));
  }

  private async toTuple(stored: StoredCheckpoint): Promise<CheckpointTuple> {
    const { thread_id, checkpoint_ns, checkpoint: cp } = stored;
    const channelValues = (await this.load(cp.channel_values)) as Record<string, unknown>;
    const checkpoint: LgCheckpoint = {
      // graphdock's Checkpoint records version 1 of its own format; LangGraph's format 4 is what this saver writes.
      v: 4,
      id: cp.id,
      ts: cp.ts,
      channel_values: channelValues,
      channel_versions: { ...cp.channel_versions },
      versions_seen: Object.fromEntries(Object.entries(cp.versions_seen).map(([k, v]) => [k, { ...v }])),
    };
    const pendingWrites: CheckpointTuple["pendingWrites"] = await Promise.all(
      stored.pending_writes.map(async ([taskId, channel, value]) => [taskId, channel, await this.load(value)] as [string, string, unknown]),
    );
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id, checkpoint_ns, checkpoint_id: cp.id } },
      checkpoint,
      metadata: { ...stored.metadata },
      pendingWrites,
    };
    if (stored.parent_checkpoint_id !== null) {
      tuple.parentConfig = { configurable: { thread_id, checkpoint_ns, checkpoint_id: stored.parent_checkpoint_id } };
    }
    return tuple;
  }

  /** The id of the last checkpoint this saver stored for the thread and namespace, if any. */
  lastCheckpointId(threadId: string, checkpointNs = ""): string | undefined {
    return this.latest.get(`${threadId}\u0000${checkpointNs}`);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id, checkpoint_ns, checkpoint_id } = keyOf(config);
    if (thread_id === undefined) return undefined;
    const stored = await this.store.getCheckpoint({ thread_id, checkpoint_ns, ...(checkpoint_id ? { checkpoint_id } : {}) });
    return stored ? this.toTuple(stored) : undefined;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const threadId = configurable.thread_id;
    if (typeof threadId !== "string") {
      throw invalidInput("graphdock: GraphdockSaver.list needs configurable.thread_id (a store lists checkpoints per thread).");
    }
    const onlyId = typeof configurable.checkpoint_id === "string" && configurable.checkpoint_id ? configurable.checkpoint_id : undefined;
    const before = options?.before?.configurable?.checkpoint_id;
    let remaining = options?.limit;
    const namespaces = typeof configurable.checkpoint_ns === "string" ? [configurable.checkpoint_ns] : await this.store.listCheckpointNamespaces(threadId);
    for (const ns of namespaces) {
      if (remaining !== undefined && remaining <= 0) return;
      if (onlyId !== undefined) {
        const stored = await this.store.getCheckpoint({ thread_id: threadId, checkpoint_ns: ns, checkpoint_id: onlyId });
        if (!stored || (typeof before === "string" && stored.checkpoint.id >= before)) continue;
        if (options?.filter && !contains(stored.metadata, options.filter)) continue;
        if (remaining !== undefined) remaining--;
        yield await this.toTuple(stored);
        continue;
      }
      const page = await this.store.listCheckpoints(threadId, {
        checkpoint_ns: ns,
        ...(remaining !== undefined ? { limit: remaining } : {}),
        ...(typeof before === "string" ? { before } : {}),
        ...(options?.filter ? { filter: options.filter } : {}),
      });
      for (const stored of page) {
        if (remaining !== undefined) remaining--;
        yield await this.toTuple(stored);
      }
    }
  }

  /**
   * Runs `fn` after every earlier operation on the same checkpoint: LangGraph issues a
   * checkpoint's put and its tasks' writes concurrently (and writes may come first).
   */
  private serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.queues.run(key, fn);
  }

  /** Stores a checkpoint (`newVersions` is not needed: the whole checkpoint is stored). */
  async put(config: RunnableConfig, checkpoint: LgCheckpoint, metadata: LgCheckpointMetadata, _newVersions?: Record<string, number | string>): Promise<RunnableConfig> {
    const { thread_id, checkpoint_ns, checkpoint_id: parentId } = keyOf(config);
    if (thread_id === undefined) throw invalidInput("graphdock: GraphdockSaver.put needs configurable.thread_id.");
    const key = cpKey(thread_id, checkpoint_ns, checkpoint.id);
    let channelValues = checkpoint.channel_values;
    if (this.defaultSerde) {
      // Made now, before any await: LangGraph calls `put` in checkpoint order, and the
      // record is of the messages as this checkpoint holds them.
      const messages = new WeakMap<object, SerializedMessage>();
      channelValues = this.withSerializedMessages(channelValues, messages);
      if (checkpoint_ns === "") this.lastPutMessages = messages;
    }
    let dumpedValues = this.dumpNow(channelValues);
    if (dumpedValues === NOT_PLAIN) dumpedValues = await this.dump(channelValues);
    const stored: Checkpoint = {
      v: 1,
      id: checkpoint.id,
      ts: checkpoint.ts,
      channel_values: dumpedValues as Record<string, unknown>,
      channel_versions: versions(checkpoint.channel_versions),
      versions_seen: Object.fromEntries(Object.entries(checkpoint.versions_seen).map(([node, seen]) => [node, versions(seen)])),
    };
    const merged = { ...this.extraMetadata, ...metadata };
    let dumpedMeta = this.dumpNow(merged);
    if (dumpedMeta === NOT_PLAIN) dumpedMeta = await this.dump(merged);
    const meta = dumpedMeta as Record<string, unknown>;
    const storedMeta: CheckpointMetadata = {
      ...meta,
      source: SOURCES.find((s) => s === meta.source) ?? "loop",
      step: typeof meta.step === "number" ? meta.step : -1,
      parents: isRecord(meta.parents) ? (meta.parents as Record<string, string>) : {},
    };
    await this.serially(key, async () => {
      const early = this.unplaced.get(key) ?? new Map<string, PendingWrite[]>();
      const ops: WriteOp[] = [
        {
          op: "checkpoint.put",
          checkpoint: { thread_id, checkpoint_ns, checkpoint: stored, metadata: storedMeta, parent_checkpoint_id: parentId ?? null, pending_writes: [...early.values()].flat() },
        },
      ];
      await this.store.commit(ops);
      this.unplaced.delete(key);
      this.own.set(key, early);
      this.latest.set(`${thread_id}\u0000${checkpoint_ns}`, checkpoint.id);
    });
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /** Records a task's writes against a checkpoint (stored in the order written; `taskPath` is not kept). */
  async putWrites(config: RunnableConfig, writes: LgPendingWrite[], taskId: string, _taskPath?: string): Promise<void> {
    const { thread_id, checkpoint_ns, checkpoint_id } = keyOf(config);
    if (thread_id === undefined || !checkpoint_id) throw invalidInput("graphdock: GraphdockSaver.putWrites needs configurable.thread_id and checkpoint_id.");
    const key = cpKey(thread_id, checkpoint_ns, checkpoint_id);
    // A write's messages go in their toJSON form (what the serializer makes of them), so a node's
    // usual write (a list of messages) takes the plain-JSON path too.
    let dumped: PendingWrite[] = [];
    for (const [channel, value] of writes) {
      const now = this.dumpNow(this.defaultSerde ? serializedMessages(value) : value);
      if (now === NOT_PLAIN) {
        dumped = await Promise.all(writes.map(async ([c, v]) => [taskId, c, await this.dump(v)] as PendingWrite));
        break;
      }
      dumped.push([taskId, channel, now]);
    }
    await this.serially(key, async () => {
      let byTask = this.own.get(key) ?? this.unplaced.get(key);
      const placed = !this.unplaced.has(key);
      let existing = byTask?.get(taskId);
      if (!byTask) {
        const stored = await this.store.getCheckpoint({ thread_id, checkpoint_ns, checkpoint_id });
        existing = (stored?.pending_writes ?? []).filter((w) => w[0] === taskId);
        if (!stored) {
          byTask = new Map();
          this.unplaced.set(key, byTask);
        }
      }
      existing ??= [];
      // LangGraph's semantics: a special channel's write replaces the previous one; a regular
      // write at an index already written is kept (a retried task does not duplicate it).
      const regular = existing.filter((e) => SPECIAL_INDEX[e[1]] === undefined).length;
      const next = [...existing];
      dumped.forEach((w, idx) => {
        if (SPECIAL_INDEX[w[1]] !== undefined) {
          const at = next.findIndex((e) => e[1] === w[1]);
          if (at >= 0) next[at] = w;
          else next.push(w);
        } else if (idx >= regular) next.push(w);
      });
      if (placed && !this.unplaced.has(key)) {
        await this.store.commit([{ op: "writes.put", thread_id, checkpoint_ns, checkpoint_id, task_id: taskId, writes: next }]);
      }
      byTask?.set(taskId, next);
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    const ops: WriteOp[] = [];
    for (const ns of await this.store.listCheckpointNamespaces(threadId)) {
      const ids = (await this.store.listCheckpoints(threadId, { checkpoint_ns: ns })).map((c) => c.checkpoint.id);
      if (ids.length) ops.push({ op: "checkpoint.delete", thread_id: threadId, checkpoint_ns: ns, checkpoint_ids: ids });
    }
    if (ops.length) await this.store.commit(ops);
  }
}

/**
 * A channel value with each message (the value itself, or an item of a list) replaced by its
 * `toJSON()` form, recorded in `into` when given: what LangGraph's serializer would produce from
 * it anyway (JSON serialization calls `toJSON`). A message whose `toJSON` fails is left as is:
 * the serializer meets the failure as it would have.
 */
function serializedMessages(value: unknown, into?: WeakMap<object, SerializedMessage>): unknown {
  const serialize = (v: unknown): unknown => {
    if (!isMessageInstance(v) || typeof (v as { toJSON?: unknown }).toJSON !== "function") return v;
    let json: unknown;
    try {
      json = (v as unknown as { toJSON(): unknown }).toJSON();
    } catch {
      return v;
    }
    if (into && isRecord(json) && isRecord(json.kwargs)) into.set(v, json as unknown as SerializedMessage);
    return json;
  };
  return Array.isArray(value) ? value.map(serialize) : serialize(value);
}

function keyOf(config: RunnableConfig): { thread_id: string | undefined; checkpoint_ns: string; checkpoint_id: string | undefined } {
  const c = (config.configurable ?? {}) as Record<string, unknown>;
  const id = c.checkpoint_id ?? c.thread_ts;
  return {
    thread_id: typeof c.thread_id === "string" ? c.thread_id : typeof c.thread_id === "number" ? String(c.thread_id) : undefined,
    checkpoint_ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
    checkpoint_id: typeof id === "string" && id ? id : undefined,
  };
}

const cpKey = (thread: string, ns: string, id: string) => `${thread}\u0000${ns}\u0000${id}`;

/** Channel versions as the store keeps them (numbers); LangGraph's default versions are numbers. */
function versions(v: Record<string, number | string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) {
    const n = typeof x === "number" ? x : Number(x);
    if (!Number.isFinite(n)) throw new Error(`graphdock: GraphdockSaver stores numeric channel versions; channel "${k}" has version ${JSON.stringify(x)}.`);
    out[k] = n;
  }
  return out;
}
