export type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointStore,
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
