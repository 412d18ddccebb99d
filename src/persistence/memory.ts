/**
 * The memory store: everything in Maps, nothing persisted. The default store of `createRuntime`
 * and the reference implementation of the `Store` contract. Records are frozen (shallowly) when
 * stored and returned as they are, so reads cost no copies; callers never mutate them.
 */
import { contains } from "../json.js";
import type {
  AssistantRecord,
  AssistantVersionRecord,
  RunRecord,
  ThreadRecord,
} from "../types.js";
import type {
  DocCollection,
  ListCheckpointsOptions,
  Store,
  StoredCheckpoint,
  StoredDoc,
  WriteOp,
} from "./types.js";

interface ThreadCheckpoints {
  /** In put order; the last is the latest. */
  list: StoredCheckpoint[];
  /** checkpoint id -> index in `list`. */
  index: Map<string, number>;
}

/** State of a memory store; exported for stores that keep a memory image of their data. */
export class MemoryData {
  assistants = new Map<string, AssistantRecord>();
  versions = new Map<string, AssistantVersionRecord[]>();
  threads = new Map<string, ThreadRecord>();
  checkpoints = new Map<string, ThreadCheckpoints>();
  runs = new Map<string, RunRecord>();
  runsByThread = new Map<string, Set<string>>();
  docs = new Map<DocCollection, Map<string, StoredDoc>>();

  /**
   * Applies ops in order. If one throws, the ones already applied are undone, so the data is
   * as before the call (all or nothing).
   */
  apply(ops: readonly WriteOp[]): void {
    const undo: Array<() => void> = [];
    try {
      for (const op of ops) this.applyOne(op, undo);
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    }
  }

  private setIn<K, V>(map: Map<K, V>, key: K, value: V | undefined, undo: Array<() => void>) {
    const had = map.has(key);
    const prev = map.get(key);
    if (value === undefined) map.delete(key);
    else map.set(key, value);
    undo.push(() => (had ? map.set(key, prev as V) : map.delete(key)));
  }

  private applyOne(op: WriteOp, undo: Array<() => void>): void {
    switch (op.op) {
      case "assistant.put":
        this.setIn(this.assistants, op.assistant.assistant_id, Object.freeze({ ...op.assistant }), undo);
        return;
      case "assistant.delete":
        this.setIn(this.assistants, op.assistant_id, undefined, undo);
        this.setIn(this.versions, op.assistant_id, undefined, undo);
        return;
      case "assistant_version.put": {
        const id = op.version.assistant_id;
        const list = (this.versions.get(id) ?? []).filter((v) => v.version !== op.version.version);
        list.push(Object.freeze({ ...op.version }));
        list.sort((a, b) => a.version - b.version);
        this.setIn(this.versions, id, list, undo);
        return;
      }
      case "thread.put":
        this.setIn(this.threads, op.thread.thread_id, Object.freeze({ ...op.thread }), undo);
        return;
      case "thread.delete": {
        const id = op.thread_id;
        this.setIn(this.threads, id, undefined, undo);
        this.setIn(this.checkpoints, id, undefined, undo);
        for (const runId of this.runsByThread.get(id) ?? []) this.setIn(this.runs, runId, undefined, undo);
        this.setIn(this.runsByThread, id, undefined, undo);
        return;
      }
      case "checkpoint.put": {
        const cp = Object.freeze({ ...op.checkpoint });
        const id = cp.checkpoint.id;
        const tc = this.checkpoints.get(cp.thread_id);
        if (!tc) {
          this.setIn(this.checkpoints, cp.thread_id, { list: [cp], index: new Map([[id, 0]]) }, undo);
          return;
        }
        const at = tc.index.get(id);
        if (at === undefined) {
          // The hot path: append in place, undone by popping.
          tc.index.set(id, tc.list.length);
          tc.list.push(cp);
          undo.push(() => {
            tc.list.pop();
            tc.index.delete(id);
          });
        } else {
          const old = tc.list[at]!;
          tc.list[at] = cp;
          undo.push(() => {
            tc.list[at] = old;
          });
        }
        return;
      }
      case "checkpoint.delete": {
        const prev = this.checkpoints.get(op.thread_id);
        if (!prev) return;
        const drop = new Set(op.checkpoint_ids);
        const list = prev.list.filter((c) => !drop.has(c.checkpoint.id));
        const index = new Map(list.map((c, i) => [c.checkpoint.id, i]));
        this.setIn(this.checkpoints, op.thread_id, { list, index }, undo);
        return;
      }
      case "writes.put": {
        const tc = this.checkpoints.get(op.thread_id);
        const at = tc?.index.get(op.checkpoint_id);
        if (!tc || at === undefined) {
          throw new Error(`agentdock store: writes for unknown checkpoint ${op.checkpoint_id} of thread ${op.thread_id}`);
        }
        const cp = tc.list[at]!;
        const kept = cp.pending_writes.filter((w) => w[0] !== op.task_id);
        const updated = Object.freeze({ ...cp, pending_writes: Object.freeze([...kept, ...op.writes]) });
        tc.list[at] = updated;
        undo.push(() => {
          tc.list[at] = cp;
        });
        return;
      }
      case "run.put": {
        const run = Object.freeze({ ...op.run });
        this.setIn(this.runs, run.run_id, run, undo);
        const set = this.runsByThread.get(run.thread_id);
        if (set) {
          if (!set.has(run.run_id)) {
            set.add(run.run_id);
            undo.push(() => set.delete(run.run_id));
          }
        } else {
          this.setIn(this.runsByThread, run.thread_id, new Set([run.run_id]), undo);
        }
        return;
      }
      case "run.delete": {
        const run = this.runs.get(op.run_id);
        if (!run) return;
        this.setIn(this.runs, op.run_id, undefined, undo);
        const set = this.runsByThread.get(run.thread_id);
        if (set?.delete(op.run_id)) undo.push(() => set.add(op.run_id));
        return;
      }
      case "doc.put": {
        let coll = this.docs.get(op.collection);
        if (!coll) {
          coll = new Map();
          this.setIn(this.docs, op.collection, coll, undo);
        }
        this.setIn(coll, op.id, Object.freeze({ id: op.id, parent: op.parent, doc: op.doc }), undo);
        return;
      }
      case "doc.delete": {
        const coll = this.docs.get(op.collection);
        if (coll) this.setIn(coll, op.id, undefined, undo);
        return;
      }
      default: {
        const never: never = op;
        throw new Error(`agentdock store: unknown write op ${JSON.stringify(never)}`);
      }
    }
  }

  listCheckpoints(threadId: string, options: ListCheckpointsOptions = {}): StoredCheckpoint[] {
    const tc = this.checkpoints.get(threadId);
    if (!tc) return [];
    let start = tc.list.length - 1;
    if (options.before !== undefined) {
      const at = tc.index.get(options.before);
      start = at === undefined ? -1 : at - 1;
    }
    const limit = options.limit ?? Infinity;
    const out: StoredCheckpoint[] = [];
    for (let i = start; i >= 0 && out.length < limit; i--) {
      const cp = tc.list[i]!;
      if (options.filter && !contains(cp.metadata, options.filter)) continue;
      out.push(cp);
    }
    return out;
  }

  getCheckpoint(threadId: string, checkpointId?: string): StoredCheckpoint | undefined {
    const tc = this.checkpoints.get(threadId);
    if (!tc) return undefined;
    if (checkpointId === undefined) return tc.list[tc.list.length - 1];
    const at = tc.index.get(checkpointId);
    return at === undefined ? undefined : tc.list[at];
  }

  listRuns(threadId?: string): RunRecord[] {
    if (threadId === undefined) return [...this.runs.values()];
    return [...(this.runsByThread.get(threadId) ?? [])].map((id) => this.runs.get(id)!);
  }

  listDocs(collection: DocCollection, parent?: string): StoredDoc[] {
    const all = [...(this.docs.get(collection)?.values() ?? [])];
    return parent === undefined ? all : all.filter((d) => d.parent === parent);
  }
}

/** A `Store` over a `MemoryData`; other stores can reuse it for their in-memory image. */
export class MemoryStore implements Store {
  readonly kind: string = "memory";
  readonly capabilities = { persistent: false, shared: false };
  protected data = new MemoryData();

  async open(): Promise<void> {}
  async close(): Promise<void> {}

  async commit(ops: readonly WriteOp[]): Promise<void> {
    this.data.apply(ops);
  }

  async getAssistant(id: string) {
    return this.data.assistants.get(id);
  }
  async listAssistants() {
    return [...this.data.assistants.values()];
  }
  async listAssistantVersions(id: string) {
    return [...(this.data.versions.get(id) ?? [])];
  }
  async getThread(id: string) {
    return this.data.threads.get(id);
  }
  async listThreads() {
    return [...this.data.threads.values()];
  }
  async getCheckpoint(threadId: string, checkpointId?: string) {
    return this.data.getCheckpoint(threadId, checkpointId);
  }
  async listCheckpoints(threadId: string, options?: ListCheckpointsOptions) {
    return this.data.listCheckpoints(threadId, options);
  }
  async getRun(id: string) {
    return this.data.runs.get(id);
  }
  async listRuns(threadId?: string) {
    return this.data.listRuns(threadId);
  }
  async getDoc<T>(collection: DocCollection, id: string) {
    return this.data.docs.get(collection)?.get(id) as StoredDoc<T> | undefined;
  }
  async listDocs<T>(collection: DocCollection, parent?: string) {
    return this.data.listDocs(collection, parent) as StoredDoc<T>[];
  }
}

/** An in-memory store: fast, nothing survives the process. The default of `createRuntime`. */
export function memoryStore(): Store {
  return new MemoryStore();
}
