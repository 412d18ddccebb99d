/**
 * The memory store: everything in Maps, nothing persisted. The default store of `createRuntime`
 * and the reference implementation of the `Store` contract. Several runtimes over one instance
 * act as one service (D20): the run queue, leases, cancel requests and run events live here.
 *
 * Records are frozen when stored and returned as they are, so reads cost no copies; callers
 * never mutate them (checkpoints are the exception: kept as compact entries, their records are
 * built on read, the last read cached). Every op's new data is checked to be JSON (`checkJson`) before anything is
 * applied, expectations are judged op by op against the state the earlier ops left, and a
 * failing op undoes the ones before it: a commit is all or nothing.
 *
 * Layout: this file is the `Store` over the data; ./memory/data.ts holds the data and applies
 * ops, ./memory/checkpoints.ts the checkpoints (long growing arrays shared between consecutive
 * checkpoints), ./memory/records.ts the record helpers, ./memory-events.ts the run event port.
 */
import type { DiagnosticsLogger } from "../diagnostics.js";
import { MemoryRunEvents } from "./memory-events.js";
import { MemoryData } from "./memory/data.js";
import type {
  AssistantQuery,
  AssistantVersionQuery,
  CheckpointKey,
  DocCollection,
  ItemNamespaceQuery,
  ItemQuery,
  ListCheckpointsOptions,
  RunEventPort,
  RunQuery,
  Store,
  StoredDoc,
  ThreadQuery,
  WriteOp,
} from "./types.js";
import { TopicListeners } from "./common.js";
import type { CronQuery } from "./crons.js";

export { MemoryData } from "./memory/data.js";

/** A `Store` over a `MemoryData`; other stores can reuse it for their in-memory image. */
export class MemoryStore implements Store {
  readonly kind: string = "memory";
  readonly capabilities = { persistent: false, shared: false };
  readonly events: RunEventPort;
  protected data = new MemoryData();
  private readonly listeners = new TopicListeners();

  constructor(options: { events?: RunEventPort } = {}) {
    this.events = options.events ?? new MemoryRunEvents();
  }

  async open(): Promise<void> {}
  async close(): Promise<void> {}

  useDiagnostics(log: DiagnosticsLogger): void {
    this.listeners.log = log;
  }

  async commit(ops: readonly WriteOp[]): Promise<void> {
    this.data.apply(ops);
    this.deliver(ops);
  }

  /** Delivers the `notify` ops of a committed commit to this instance's listeners, each in a microtask. */
  protected deliver(ops: readonly WriteOp[]): void {
    if (this.listeners.size === 0) return;
    for (const op of ops) if (op.op === "notify") queueMicrotask(() => this.listeners.deliver(op.topic, op.payload));
  }

  subscribe(topic: string, listener: (payload: string | undefined) => void): () => void {
    return this.listeners.subscribe(topic, listener);
  }


  async getAssistant(id: string) {
    return this.data.assistants.get(id);
  }
  async queryAssistants(query: AssistantQuery) {
    return this.data.queryAssistants(query);
  }
  async countAssistants(query: AssistantQuery) {
    return this.data.countAssistants(query);
  }
  async queryAssistantVersions(query: AssistantVersionQuery) {
    return this.data.queryAssistantVersions(query);
  }
  async getThread(id: string) {
    return this.data.threads.get(id);
  }
  async queryThreads(query: ThreadQuery) {
    return this.data.queryThreads(query);
  }
  async countThreads(query: ThreadQuery) {
    return this.data.countThreads(query);
  }
  async getCheckpoint(key: CheckpointKey) {
    return this.data.getCheckpoint(key);
  }
  async listCheckpoints(threadId: string, options?: ListCheckpointsOptions) {
    return this.data.listCheckpoints(threadId, options);
  }
  async listCheckpointNamespaces(threadId: string) {
    return this.data.listCheckpointNamespaces(threadId);
  }
  async getRun(id: string) {
    return this.data.runs.get(id)?.run;
  }
  async queryRuns(query: RunQuery) {
    return this.data.queryRuns(query);
  }
  async countRuns(query: RunQuery) {
    return this.data.countRuns(query);
  }
  async getCancelRequest(runId: string) {
    return this.data.cancels.get(runId);
  }
  async getLease(key: string) {
    return this.data.leases.get(key);
  }
  async expiredLeases(prefix: string, now: number, limit?: number) {
    return this.data.expiredLeases(prefix, now, limit);
  }
  async getDoc<T>(collection: DocCollection, id: string) {
    return this.data.docs.get(collection)?.get(id) as StoredDoc<T> | undefined;
  }
  async listDocs<T>(collection: DocCollection, parent?: string) {
    return this.data.listDocs(collection, parent) as StoredDoc<T>[];
  }
  async getItem(namespace: readonly string[], key: string) {
    return this.data.getItem(namespace, key);
  }
  async searchItems(query: ItemQuery) {
    return this.data.searchItems(query);
  }
  async listItemNamespaces(query: ItemNamespaceQuery) {
    return this.data.listItemNamespaces(query);
  }
  async expiredItems(now: number, limit?: number) {
    return this.data.itemExpiry.expired(now, limit);
  }
  async getCron(id: string) {
    return this.data.crons.get(id);
  }
  async queryCrons(query: CronQuery) {
    return this.data.queryCrons(query);
  }
  async countCrons(query: CronQuery) {
    return this.data.countCrons(query);
  }
  async dueCrons(asOf?: string, limit?: number) {
    return this.data.dueCrons(asOf, limit);
  }
}

/** An in-memory store: fast, nothing survives the process. The default of `createRuntime`. */
export function memoryStore(): Store {
  return new MemoryStore();
}
