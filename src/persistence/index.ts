export type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointStore,
  CronExpectation,
  CronQuery,
  CronRecord,
  DocCollection,
  ExternalChange,
  ListCheckpointsOptions,
  PendingWrite,
  Store,
  StoreCapabilities,
  StoredCheckpoint,
  StoredDoc,
  WriteOp,
} from "./types.js";
export { memoryStore, MemoryStore, MemoryData } from "./memory.js";
